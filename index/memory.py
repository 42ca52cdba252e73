"""Cross-request memory: finished requests (prompt + response) in a few automata, oldest dropped first.

A suffix automaton cannot forget text, so memory is split into `segments` automata of at most
budget / segments tokens each. New documents go into the newest segment; when it is full a new one opens,
and when there are more than `segments`, the oldest is dropped whole. Memory thus stays within about the
token budget (and the process's memory flat) however many requests pass through.
"""
import numpy as np

from ._layout import H_N_TX, H_OPEN, N_OPEN
from .automaton import new_automaton, text_of
from .propose import add_document

MAX_SEGMENTS = 4


class Memory:
    def __init__(self, arena, budget_tokens, segments=4):
        if budget_tokens < 0:
            raise ValueError(f"memory_tokens must be >= 0, got {budget_tokens}; use 0 to disable memory")
        if segments < 1 or segments > MAX_SEGMENTS:
            raise ValueError(f"memory_segments must be in 1..{MAX_SEGMENTS}, got {segments}")
        self.arena = arena
        self.budget = int(budget_tokens)
        self.seg_cap = max(1, self.budget // segments)
        self.max_segments = segments
        self._segs = []  # [slot, generation, tokens], oldest first
        self.documents = 0
        self.changes = 0  # counts add() calls: whoever keeps the segments' addresses re-reads them after one

    def add(self, tokens, response_start=-1):
        """Adds one finished document (int32 array). Keeps its last seg_cap - 1 tokens when longer.
        response_start: where in `tokens` the response begins (after the prompt); -1 = not a request."""
        self.changes += 1
        if self.budget == 0 or len(tokens) == 0:
            return
        cut = max(len(tokens) - max(self.seg_cap - 1, 1), 0)
        tokens = np.ascontiguousarray(tokens[cut:], dtype=np.int32)
        if not self._segs or self._segs[-1][2] + len(tokens) + 1 > self.seg_cap:
            slot, gen = self.arena.add(new_automaton(min(self.seg_cap, 4 * len(tokens) + 64)))
            self.arena[slot][H_OPEN:H_OPEN + N_OPEN] = 0
            self._segs.append([slot, gen, 0])
            if len(self._segs) > self.max_segments:
                old = self._segs.pop(0)
                self.arena.free(old[0])
        seg = self._segs[-1]
        at = int(self.arena[seg[0]][H_N_TX])  # where the document starts in the segment's text
        add_document(self.arena.buffers, seg[0], tokens)
        self.arena.sync(seg[0])
        if 0 <= response_start - cut < len(tokens):
            b = self.arena[seg[0]]
            b[H_OPEN + 1:H_OPEN + N_OPEN] = b[H_OPEN:H_OPEN + N_OPEN - 1].copy()
            b[H_OPEN] = at + response_start - cut + 1
        seg[2] += len(tokens) + 1
        self.documents += 1

    def openings(self):
        """Text positions in the newest segment where its newest documents' responses start, newest first."""
        if not self._segs:
            return []
        b = self.arena[self._segs[-1][0]]
        return [int(p) - 1 for p in b[H_OPEN:H_OPEN + N_OPEN] if p > 0]

    def tiers(self):
        """(slots, generations) of the live segments, newest first."""
        segs = self._segs[::-1]
        return [s[0] for s in segs], [s[1] for s in segs]

    @property
    def tokens(self):
        return sum(s[2] for s in self._segs)

    def texts(self):
        return [text_of(self.arena[s[0]]) for s in self._segs]
