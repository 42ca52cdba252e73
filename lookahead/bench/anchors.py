"""Drafters measured side by side in `lookahead bench replay`, behind one small interface:

    s = adapter.begin(prompt_ids, output_ids)   # output_ids: only the oracle may look
    s.append(token_ids); s.propose(budget) -> (tokens, parents) ; s.end()

Anchors are imported lazily and skipped when not installed: vLLM's ngram proposer core, ArcticInference's
SuffixDecodingCache (vLLM's `suffix` method), and HF transformers' PromptLookupCandidateGenerator.
"""
import numpy as np

import lookahead

_CHAIN = np.arange(-1, 1023, dtype=np.int32)


def _chain(tokens):
    t = np.asarray(tokens, np.int32)
    return t, _CHAIN[:len(t)]


_NONE = np.empty(0, np.int32)


class LookaheadAdapter:
    def __init__(self, tree, budget, learn=True, **kw):
        self.name = "lookahead tree" if tree else "lookahead chain"
        self.d = lookahead.Drafter(max_draft=budget, tree=tree, learn=learn, **kw)

    def begin(self, prompt, output):
        return _LookaheadSession(self.d, self.d.begin(prompt))

    def memory_bytes(self):
        return self.d.memory_bytes()


class _LookaheadSession:
    """Appended tokens are handed over with the next proposal: one `Drafter.step` call per engine step."""

    def __init__(self, d, h):
        self.d, self.h = d, h
        self.pending = _NONE

    def append(self, toks):
        self.pending = toks  # Drafter.step checks and converts it (an int32 array passes as is)

    def propose(self, budget):
        dr = self.d.step(self.h, self.pending, budget)
        self.pending = _NONE
        return dr.tokens, dr.parents

    def end(self):
        self.d.end(self.h)


class NgramAdapter:
    """vLLM's ngram proposer core (the numba function its NgramProposer calls per request)."""
    name = "vllm ngram"

    def __init__(self, budget, min_n=2, max_n=5):
        from vllm.v1.spec_decode.ngram_proposer import _find_longest_matched_ngram_and_propose_tokens as f

        self.f, self.min_n, self.max_n = f, min_n, max_n

    def begin(self, prompt, output):
        return _NgramSession(self, prompt)

    def memory_bytes(self):
        return 0


class _NgramSession:
    def __init__(self, a, prompt):
        self.a = a
        self.buf = np.empty(max(1024, 2 * len(prompt)), np.int32)
        self.n = len(prompt)
        self.buf[:self.n] = prompt

    def append(self, toks):
        if self.n + len(toks) > len(self.buf):
            nb = np.empty(2 * (self.n + len(toks)), np.int32)
            nb[:self.n] = self.buf[:self.n]
            self.buf = nb
        self.buf[self.n:self.n + len(toks)] = toks
        self.n += len(toks)

    def propose(self, budget):
        return _chain(self.a.f(self.buf[:self.n], self.a.min_n, self.a.max_n, 1 << 30, budget))

    def end(self):
        pass


class ArcticAdapter:
    """ArcticInference's SuffixDecodingCache, driven as vLLM's `suffix` method drives it, with vLLM 0.32's
    defaults: max_tree_depth 24 (match + speculation), 10000 cached requests, spec factor 1, min prob 0.1."""

    DEPTH = 24

    def __init__(self, budget, tree=False):
        from arctic_inference.suffix_decoding import SuffixDecodingCache

        self.name = "arctic suffix tree" if tree else "arctic suffix"
        self.cache = SuffixDecodingCache(max_tree_depth=self.DEPTH, max_cached_requests=10000)
        self.tree = tree
        self.next_id = 0

    def begin(self, prompt, output):
        self.next_id += 1
        self.cache.start_request(self.next_id, prompt)
        return _ArcticSession(self, self.next_id, prompt)

    def memory_bytes(self):
        return 0


class _ArcticSession:
    def __init__(self, a, rid, prompt):
        self.a, self.rid = a, rid
        self.ctx = list(prompt)

    def append(self, toks):
        self.a.cache.add_active_response(self.rid, toks)
        self.ctx.extend(int(t) for t in toks)

    def propose(self, budget):
        # vLLM passes the last max_tree_depth tokens as context, with its default min_token_prob of 0.1
        d = self.a.cache.speculate(self.rid, self.ctx[-self.a.DEPTH:], max_spec_tokens=budget, max_spec_factor=1.0,
                                   min_token_prob=0.1, use_tree_spec=self.a.tree)
        t = np.asarray(d.token_ids, np.int32)
        return t, np.asarray(d.parents, np.int32) if self.a.tree else _CHAIN[:len(t)]

    def end(self):
        self.a.cache.stop_request(self.rid)


class PromptLookupAdapter:
    """HF transformers' prompt lookup (max_matching_ngram_size=2), as `generate(prompt_lookup_num_tokens=)`."""
    name = "hf prompt lookup"

    def __init__(self, budget):
        import torch
        from transformers.generation.candidate_generator import PromptLookupCandidateGenerator

        self.torch = torch
        self.gen = PromptLookupCandidateGenerator(num_output_tokens=budget, max_matching_ngram_size=2,
                                                  max_length=1 << 30)

    def begin(self, prompt, output):
        return _PLSession(self, prompt)

    def memory_bytes(self):
        return 0


class _PLSession:
    def __init__(self, a, prompt):
        self.a = a
        self.ids = list(int(t) for t in prompt)

    def append(self, toks):
        self.ids.extend(int(t) for t in toks)

    def propose(self, budget):
        a = self.a
        a.gen.num_output_tokens = budget
        x = a.torch.tensor([self.ids], dtype=a.torch.long)
        cand, _ = a.gen.get_candidates(x)
        return _chain(cand[0, x.shape[1]:].numpy())

    def end(self):
        pass


class OracleAdapter:
    """Peeks at the recorded output: proposes its longest next piece that occurs verbatim in the text seen so
    far (this request's, or all requests' with cross=True). Bounds every drafter that copies seen text."""

    def __init__(self, cross):
        self.name = "oracle (all)" if cross else "oracle (request)"
        self.cross = cross
        self.mem = lookahead.index.Arena()
        self.mem_slot = self.mem.add(lookahead.index.new_automaton(1024))[0] if cross else None

    def begin(self, prompt, output):
        return _OracleSession(self, prompt, output)

    def memory_bytes(self):
        return 0


class _OracleSession:
    def __init__(self, a, prompt, output):
        from lookahead.index import Arena, new_automaton

        self.a = a
        self.ar = Arena()
        self.slot = self.ar.add(new_automaton(len(prompt) + len(output) + 16))[0]
        self.prompt = np.asarray(prompt, np.int32)
        self.out = np.asarray(output, np.int32)
        self.pos = 0
        self._none = np.empty((2, 0), np.int64)
        self.append(self.prompt)
        self.pos = 0

    def append(self, toks):
        lookahead.index.append_tokens(self.ar.buffers, self.slot, np.asarray(toks, np.int32), self._none, 0,
                                      lookahead.index.NO_SPACING)
        self.ar.sync(self.slot)
        self.pos += len(toks)

    @staticmethod
    def _longest(buf, want):
        n = 0
        while n < len(want) and lookahead.index.find_state(buf, want[:n + 1]) != -1:
            n += 1
        return n

    def propose(self, budget):
        want = self.out[self.pos:self.pos + budget]
        n = self._longest(self.ar[self.slot], want)
        if self.a.cross:
            n = max(n, self._longest(self.a.mem[self.a.mem_slot], want))
        return _chain(want[:n])

    def end(self):
        if self.a.cross:
            lookahead.index.add_document(self.a.mem.buffers, self.a.mem_slot,
                                         np.concatenate([self.prompt, self.out]))
            self.a.mem.sync(self.a.mem_slot)
