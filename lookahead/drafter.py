"""`Drafter`: model-free drafts for many concurrent requests, from their own text, earlier requests and a corpus.

    d = Drafter(max_draft=16, tree=False, corpus=None, learn=True)
    h = d.begin(prompt_ids, reference=None)   # -> int handle
    d.append(h, new_token_ids)                 # tokens that entered the sequence since the last call
    draft = d.propose(h)                       # Draft(tokens, parents, probs)
    drafts = d.propose_many([h1, h2])          # one native call for the whole batch
    d.end(h)                                   # with learn=True, prompt + output join cross-request memory
"""
import itertools
import weakref

import numpy as np

from .index import Arena, Memory, as_token_ids, new_automaton, text_of
from .index.address import K_EXT, address_of, address_table, append_at, propose_at, step_at
from .index.batch import propose_batch, scratch, scratch_cols, step_batch
from .index.spacing import NO_SPACING, spaced_ids
from .index.corpus import CorpusIndex, load_corpus
from .index.entry import entry_point
from .index.substitute import carried_substitutions, seed_substitutions
from .index.value_end import carried_ends, seed_ends
from .index._layout import H_N_TX, H_NOSUB, H_PE, H_SIZE, SEP
from .config import DrafterConfig
from .draft import _CHAINS, MAX_DRAFT_LIMIT, Draft, _check_budget, _new_draft, _view

EXT_TIERS = K_EXT  # memory segments (<= 4) + corpus: a fixed tuple size keeps one compiled variant
_DUMMY = np.zeros(H_SIZE, np.int32)
_I32 = np.dtype(np.int32)
_STRIDE = (4,)  # a 1-D contiguous int32 array's strides: one comparison checks both
# single-request drafts are carved out of one allocation (numpy's np.empty costs ~0.3 us); 64 KiB, so that a
# kept Draft holds little memory alive (a budget of 16 carves 341 drafts from one)
_SLAB_INTS = 16384


_SPACINGS = weakref.WeakKeyDictionary()  # tokenizer -> its spacing map


def _spacing_of(tokenizer):
    """The tokenizer's spacing map (index/spacing.py), read once per tokenizer: reading the vocabulary takes
    ~25 ms, and a drafter is made per benchmark run (work done just before a timed loop changed its timing by
    up to 13% on this machine)."""
    try:
        sp = _SPACINGS.get(tokenizer)
    except TypeError:  # a tokenizer that takes no weak reference
        return spaced_ids(tokenizer)
    if sp is None:
        sp = _SPACINGS[tokenizer] = spaced_ids(tokenizer)
    return sp


class Drafter:
    """Proposes drafts for many requests. Not thread-safe: one drafter per engine worker (every
    tensor-parallel rank runs its own; same inputs give the same drafts)."""

    def __init__(self, max_draft=16, tree=False, corpus=None, learn=True, *, vocab_size=None, config=None,
                 tokenizer=None):
        """tokenizer (optional, a Hugging Face tokenizer of the target model): tells which token is another's
        spelling with a leading space, so that a value copied from the input is found from the first token the
        output writes without that space (index/spacing.py; JSON from "Key: value" lines: templated /
        multi_turn tau, tree, +2.0% / +1.4%). Without it tokens are compared exactly."""
        self.max_draft = _check_budget(max_draft)
        self.tree = bool(tree)
        self.learn = bool(learn)
        self.config = config or DrafterConfig()
        c = self.config
        self.arena = Arena()
        self.memory = Memory(self.arena, c.memory_tokens, c.memory_segments)
        self.corpus = None
        self._corpus_tier = None
        if corpus is not None:
            self.corpus = corpus if isinstance(corpus, CorpusIndex) else load_corpus(corpus)
            self._corpus_tier = self.arena.add(self.corpus.buffer)
            if vocab_size is None:
                vocab_size = self.corpus.vocab_size
        self.vocab_size = vocab_size
        self._vocab = int(vocab_size or 0)
        self._spacing = NO_SPACING if tokenizer is None else _spacing_of(tokenizer)
        # handle -> [slot, start of the prompt in the request's text, the value ends it began with or None]
        self._requests = {}
        # what the last finished request learned well, which starts the next one's: value ends
        # (index/value_end.py) and substitutions (index/substitute.py), or None
        self._ends = self._subs = None
        self._handles = itertools.count(1)
        self._params = {}  # budget -> (knobs float64 [N_PARAMS], their address)
        self._scratch = scratch(MAX_DRAFT_LIMIT if self.max_draft > 64 else 64, c.occurrences)
        self._out = None
        self._slab = self._slab_f = np.empty(0, np.int32)
        self._slab_at = 0
        self._slab_addr = 0
        self._slab_n = 0
        self._src = {}  # budget -> the Draft source tuple of the current slab
        self._refresh_tiers()
        # the single-request calls without numba's dispatcher (index/entry.py): their arguments are always of
        # these types (token ids: a contiguous int32 array, as _ids and step make sure)
        ids = np.zeros(1, np.int32)
        self._append_at = entry_point(append_at, self._tab, 0, ids, 0, 0)
        self._propose_at = entry_point(propose_at, self._tab, 0, 0, 0)
        self._step_at = entry_point(step_at, self._tab, 0, ids, 0, 0, 0)

    # -- tiers -------------------------------------------------------------------------------------
    def _refresh_tiers(self):
        """External automata as the native calls see them: arena slots for the typed List, tuple positions
        (1..EXT_TIERS) for single-request calls; generation -1 marks an unused position."""
        slots, gens = self.memory.tiers()
        if self._corpus_tier is not None:
            slots.append(self._corpus_tier[0])
            gens.append(self._corpus_tier[1])
        k = len(slots)
        ext = np.full((2, EXT_TIERS), -1, np.int64)
        ext[0, :k] = slots
        ext[1, :k] = gens
        ext[0, k:] = 0
        self._ext_list = ext
        self._ext_tuple = ext.copy()
        self._ext_tuple[0] = np.arange(1, EXT_TIERS + 1)
        # the single-request calls' address table; these attributes keep what it names alive
        self._ext_bufs = tuple(self.arena[s] for s in slots) + (_DUMMY,) * (EXT_TIERS - k)
        self._retable()

    def _retable(self):
        """The single-request calls' address table (index/address.py); the attributes it names keep their
        arrays alive."""
        self._tab = address_table(self._ext_bufs, self._ext_tuple, *self._scratch, self._spacing)
        self._tab_changes = self.memory.changes

    def _table(self):
        """The address table, re-read when memory changed behind the drafter's back (d.memory.add)."""
        if self.memory.changes != self._tab_changes:
            self._refresh_tiers()
        return self._tab

    def _slot(self, h):
        try:
            return self._requests[h][0]
        except (KeyError, TypeError):
            raise KeyError(f"unknown or ended drafter handle {h!r}; use the handle returned by begin() and "
                           "call end() once") from None

    def _slots(self, handles):
        """Slots of many handles as int64 (one list comprehension, no Python call per handle)."""
        reqs = self._requests
        try:
            return np.array([reqs[h][0] for h in handles], np.int64)
        except (KeyError, TypeError):
            for h in handles:
                self._slot(h)  # raises, naming the bad handle
            raise

    def _param_array(self, budget):
        return self._knobs(budget)[0]

    def _knobs(self, budget):
        """(params, address of params) for a budget; grows the work arrays when the budget needs more."""
        p = self._params.get(budget)
        if p is None:
            c = self.config
            if scratch_cols(budget, c.occurrences) > self._scratch[1].shape[1]:
                self._scratch = scratch(budget, c.occurrences)
                self._retable()
            backoff = (1 if self.tree else 0) if c.backoff is None else c.backoff
            p = np.array([budget, self.tree, c.occurrences, c.min_prob, c.alpha, c.half_len, c.window,
                          backoff, c.power, c.self_weight, c.normalize, c.copy_weight, c.analogy_weight,
                          c.value_ends, c.response_start, c.template_weight, c.backoff_ratio, c.backoff_depth,
                          c.predict_weight],
                         np.float64)
            p = self._params[budget] = (p, address_of(p))
        return p

    def _ids(self, token_ids):
        """token_ids as int32; a contiguous int32 array passes as is (its range is checked in the native call)."""
        if (type(token_ids) is np.ndarray and token_ids.dtype is _I32 and token_ids.ndim == 1
                and token_ids.flags.c_contiguous):
            return token_ids
        return as_token_ids(token_ids, "token_ids", self.vocab_size)

    def _name_bad_id(self, toks):
        """A native call refused toks (an id out of range): the full check raises the error naming it."""
        as_token_ids(toks.astype(np.int64), "token_ids", self.vocab_size or 2**31)

    def _append_slot(self, slot, toks, vocab=None):
        grown, ok = self._append_at(self._table(), self.arena.addr[slot], toks, self.config.window,
                                    self._vocab if vocab is None else vocab)
        if not ok:  # an id out of range
            self._name_bad_id(toks)
        if grown is not None:
            self.arena.set(slot, grown)

    # -- request lifecycle -------------------------------------------------------------------------
    def begin(self, prompt_ids, reference=None):
        """Starts a request from its prompt (and optional reference text, e.g. the file being edited)."""
        prompt = as_token_ids(prompt_ids, "prompt_ids", self.vocab_size)
        start = 0
        if reference is not None:
            ref = as_token_ids(reference, "reference", self.vocab_size)
            start = len(ref) + 1
        # headroom for the output: growing copies the whole automaton (amortized O(1), but a visible pause)
        n = start + len(prompt)
        slot, _ = self.arena.add(new_automaton(n + max(256, n // 4)))
        h = next(self._handles)
        self._requests[h] = [slot, start, self._ends]
        if start:
            # the reference, then SEP: matches never run across it, and cursors re-sync on the prompt
            self._append_slot(slot, np.concatenate([ref, np.array([SEP], np.int32)]), vocab=-1)
        self._append_slot(slot, prompt)
        b = self.arena[slot]
        b[H_PE] = b[H_N_TX]  # the input ends here: substitutions rewrite only text before it, values come from it
        b[H_NOSUB] = not self.config.substitute
        if self._ends is not None:
            seed_ends(b, self._ends)
        if self._subs is not None:
            seed_substitutions(b, self._subs)
        return h

    def append(self, h, token_ids):
        """Adds tokens that entered request h's sequence since the last call (accepted + bonus tokens)."""
        slot = self._slot(h)
        toks = self._ids(token_ids)
        if toks.shape[0]:
            self._append_slot(slot, toks)

    def end(self, h):
        """Finishes request h; with learn=True its prompt and output join cross-request memory, and the value
        ends and substitutions it learned well start the next request's."""
        slot = self._slot(h)
        _, start, began = self._requests.pop(h)
        if self.learn:
            b = self.arena[slot]
            self._ends = carried_ends(b, seeded=began) if self.config.value_ends else None
            self._subs = carried_substitutions(b) if self.config.substitute else None
            if self.memory.budget > 0:
                try:
                    self.memory.add(np.array(text_of(b)[start:]), response_start=int(b[H_PE]) - start)
                finally:  # a segment may have been dropped or grown even when add failed half-way
                    self._refresh_tiers()
        self.arena.free(slot)

    def tokens(self, h):
        """The request's text so far (prompt + appended tokens), int32."""
        slot = self._slot(h)
        return np.array(text_of(self.arena[slot])[self._requests[h][1]:])

    @property
    def active(self):
        return len(self._requests)

    # -- proposals ---------------------------------------------------------------------------------
    def propose(self, h, max_draft=None):
        """Draft for request h: at most max_draft (default: the drafter's) nodes."""
        slot = self._slot(h)
        budget = self.max_draft if max_draft is None else _check_budget(max_draft)
        p_addr = self._knobs(budget)[1]
        at = self._carve(budget)
        n = self._propose_at(self._table(), self.arena.addr[slot], p_addr, self._slab_addr + 4 * at)
        return self._draft(at, n, budget)

    def step(self, h, token_ids, max_draft=None):
        """append(h, token_ids) then propose(h), in one native call: the cheapest per-step path."""
        # _slot, _ids, _carve, _table and _draft written out for their common case: a step's Python part is about
        # as long as its native part at a 1k-token context (~1 us each), and each method call is ~60 ns of it
        try:
            slot = self._requests[h][0]
        except (KeyError, TypeError):
            slot = self._slot(h)  # raises, naming the handle
        t = token_ids
        toks = t if (type(t) is np.ndarray and t.dtype is _I32 and t.strides == _STRIDE) else \
            as_token_ids(t, "token_ids", self.vocab_size)
        budget = max_draft if type(max_draft) is int and 0 < max_draft <= MAX_DRAFT_LIMIT else \
            self.max_draft if max_draft is None else _check_budget(max_draft)
        p = self._params.get(budget) or self._knobs(budget)
        at = self._slab_at
        if at + 3 * budget > self._slab_n:
            at = self._carve(budget)
        else:
            self._slab_at = at + 3 * budget
        tab = self._tab if self.memory.changes == self._tab_changes else self._table()
        arena = self.arena
        grown, n = self._step_at(tab, arena.addr[slot], toks, p[1], self._slab_addr + 4 * at, self._vocab)
        if n < 0:
            self._name_bad_id(toks)
        if grown is not None:
            arena.set(slot, grown)
        slab = self._slab
        d = _new_draft(Draft)
        d._src = self._src.get(budget) or self._source(budget)
        d._o = at
        d._e = at + n
        d._t = slab[at:at + n]
        d._p = slab[at + budget:at + budget + n] if self.tree else _CHAINS[n]
        d._q = None
        return d

    def _carve(self, budget):
        """The offset of the next unused int32 [3 * budget] piece of the slab (a single-request draft's own
        storage, at address _slab_addr + 4 * offset). Drafts view their piece, so a full slab is replaced, never
        reused."""
        at = self._slab_at
        if at + 3 * budget > self._slab_n:
            self._slab = np.empty(max(3 * budget, _SLAB_INTS), np.int32)
            self._slab_f = self._slab.view(np.float32)
            self._slab_addr = address_of(self._slab)
            self._slab_n = self._slab.shape[0]
            self._src = {}
            at = 0
        self._slab_at = at + 3 * budget
        return at

    def _source(self, budget):
        """The Draft source tuple of the current slab's pieces for a budget (see _view)."""
        src = self._src[budget] = (self._slab, self._slab, self._slab_f, 0, budget, 2 * budget)
        return src

    def _draft(self, at, n, budget):
        """The Draft a native call wrote into the piece at `at`: n tokens, then parents, then the probabilities'
        float32 bits, each part `budget` long. The tokens' view is made here (nearly every caller reads them, and
        a property that makes it costs twice the slice), and so are a tree's parents (a chain's are shared:
        _CHAINS); the probabilities' view is made where they are read."""
        src = self._src.get(budget) or self._source(budget)
        d = _new_draft(Draft)
        d._src = src
        d._o = at
        d._e = at + n
        d._t = self._slab[at:at + n]
        d._p = self._slab[at + budget:at + budget + n] if self.tree else _CHAINS[n]
        d._q = None
        return d

    def propose_many(self, handles, max_draft=None):
        """Drafts for several requests in one native call; returns a list of Draft."""
        toks, pars, probs, n = self.propose_arrays(handles, max_draft)
        # one flat copy per field for the whole batch (the arrays above are reused by the next call); each Draft
        # views its own row of them once a field is read (1-D slices with precomputed ends: the cheapest views)
        w = toks.shape[1]
        starts = np.arange(0, w * len(n), w)
        src = (toks.flatten(), pars.flatten(), probs.flatten(), 0, 0, 0)
        return list(map(_view, itertools.repeat(src), starts.tolist(), (starts + n).tolist()))

    def step_arrays(self, handles, token_ids, max_draft=None):
        """append + propose for a whole batch in one native call (what a serving loop does every step).

        token_ids: one array-like of new tokens per handle (may be empty), or a pair (flat int32 array,
        offsets int64 [B + 1]) with row r's tokens at flat[offsets[r]:offsets[r + 1]]. Returns what
        propose_arrays returns. Out-of-range ids raise before anything is appended."""
        B = len(handles)
        if isinstance(token_ids, tuple) and len(token_ids) == 2 and isinstance(token_ids[1], np.ndarray):
            flat = self._ids(token_ids[0])
            offs = np.ascontiguousarray(token_ids[1], np.int64)
            if offs.shape != (B + 1,) or offs[0] != 0 or offs[-1] != flat.shape[0] or np.any(np.diff(offs) < 0):
                raise ValueError(f"offsets must be non-decreasing, of length len(handles) + 1 = {B + 1}, from 0 to "
                                 f"len(flat) = {flat.shape[0]}")
        else:
            if len(token_ids) != B:
                raise ValueError(f"give one token list per handle ({B}), got {len(token_ids)}")
            rows = [self._ids(t) for t in token_ids]
            offs = np.zeros(B + 1, np.int64)
            np.cumsum([r.shape[0] for r in rows], out=offs[1:])
            flat = np.concatenate(rows) if rows else np.zeros(0, np.int32)
        slots = self._slots(handles)
        toks, pars, probs, n, budget = self._outputs(B, max_draft)
        grown = np.empty(B, np.int64)  # the rows whose buffer grew (step_batch lists them)
        grew = step_batch(self.arena.buffers, slots, flat, offs, self._ext_list, self._param_array(budget), self._vocab,
                          toks, pars, probs, n, grown, *self._scratch, self._spacing)
        if grew < 0:  # nothing was appended
            self._name_bad_id(flat)
        for r in grown[:grew].tolist():
            self.arena.sync(slots[r])
        return toks[:, :budget], pars[:, :budget], probs[:, :budget], n

    def _outputs(self, B, max_draft):
        budget = self.max_draft if max_draft is None else _check_budget(max_draft)
        # output rows are reused between calls; whole rows keep them C-contiguous (one compiled variant)
        if self._out is None or self._out[0].shape[0] < B or self._out[0].shape[1] < budget:
            rows = max(B, 0 if self._out is None else self._out[0].shape[0])
            cols = max(budget, 0 if self._out is None else self._out[0].shape[1])
            self._out = (np.empty((rows, cols), np.int32), np.empty((rows, cols), np.int32),
                         np.empty((rows, cols), np.float32), np.empty(rows, np.int64))
        return (*(o[:B] for o in self._out), budget)

    def propose_arrays(self, handles, max_draft=None):
        """Like propose_many without Python objects per request: (tokens, parents, probs) as [B, budget]
        arrays (row i valid up to n[i]) and n [B]. The arrays are reused by the next call."""
        slots = self._slots(handles)
        toks, pars, probs, n, budget = self._outputs(len(slots), max_draft)
        propose_batch(self.arena.buffers, slots, self._ext_list, self._param_array(budget), toks, pars, probs,
                      n, *self._scratch, self._spacing)
        return toks[:, :budget], pars[:, :budget], probs[:, :budget], n

    def memory_bytes(self):
        """Bytes held by all automata (requests, memory segments, corpus)."""
        return self.arena.nbytes()
