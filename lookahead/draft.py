"""`Draft`: a proposal's tokens, parents and probabilities, viewed lazily from the drafter's storage."""
import numpy as np

MAX_DRAFT_LIMIT = 1024
# a chain's parents are always -1, 0, 1, ...: single-request chain drafts share read-only views of one array
# instead of slicing their own (a numpy slice costs ~0.3 us, a list index ~0.05)
_CHAIN = np.arange(-1, MAX_DRAFT_LIMIT - 1, dtype=np.int32)
_CHAIN.setflags(write=False)
_CHAINS = [_CHAIN[:n] for n in range(MAX_DRAFT_LIMIT + 1)]


class Draft:
    """A chain or tree of proposed tokens (read-only by convention).

    tokens: int32[n]; parents: int32[n], -1 for a child of the last accepted token, else parents[i] < i;
    probs: float32[n], the estimated probability that the target reaches node i.

    The drafter's own drafts view a batch's (or a slab's) storage and make each field's view when it is
    first read: a serving loop makes one Draft per request and step and often reads only the tokens, and
    three numpy views cost three times what the object does (propose_many over 256 requests: 0.9 -> 0.25 us
    per request in Python). A single request's draft (propose, step) makes its tokens' and parents' views
    at once instead (nearly every caller reads both, and a view made in a property costs twice the slice); a
    chain's parents are then one shared read-only array's.
    """
    __slots__ = ("_src", "_o", "_e", "_t", "_p", "_q")  # _t, _p, _q: the fields, None where not read yet

    def __init__(self, tokens, parents, probs):
        self._src = None
        self._t, self._p, self._q = tokens, parents, probs

    # each field's view is made where it is read (a property calling a shared helper cost ~0.1 us more a read)
    @property
    def tokens(self):
        x = self._t
        if x is None:
            s = self._src
            x = self._t = s[0][self._o + s[3]:self._e + s[3]]
        return x

    @property
    def parents(self):
        x = self._p
        if x is None:
            s = self._src
            x = self._p = s[1][self._o + s[4]:self._e + s[4]]
        return x

    @property
    def probs(self):
        x = self._q
        if x is None:
            s = self._src
            x = self._q = s[2][self._o + s[5]:self._e + s[5]]
        return x

    def __repr__(self):
        return f"Draft(tokens={self.tokens!r}, parents={self.parents!r}, probs={self.probs!r})"

    def __len__(self):
        return self._e - self._o if self._src is not None else int(self._t.shape[0])

    @property
    def is_chain(self):
        return bool(np.array_equal(self.parents, np.arange(-1, len(self) - 1, dtype=np.int32)))

    def best_path(self):
        """Token ids along the root path that ends at the deepest most probable node (what a chain verifier
        such as vLLM's can use)."""
        return self.tokens[self.best_path_nodes()]

    def best_path_nodes(self):
        """Node indices of best_path, root first (int64)."""
        n = len(self)
        if n == 0:
            return np.zeros(0, np.int64)
        parents, probs = self.parents, self.probs
        depth = np.zeros(n, np.int64)
        for i in range(n):
            p = parents[i]
            depth[i] = 0 if p < 0 else depth[p] + 1
        # deepest first, then most probable: a longer path never has fewer expected accepted tokens here
        leaf = max(range(n), key=lambda i: (depth[i], probs[i], -i))
        path = []
        while leaf >= 0:
            path.append(leaf)
            leaf = int(parents[leaf])
        return np.asarray(path[::-1], np.int64)


def _check_budget(n, what="max_draft"):
    if type(n) is int and 0 < n <= MAX_DRAFT_LIMIT:  # the common case first: the checks below cost ~0.3 us
        return n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(n).__name__}")
    if n < 1 or n > MAX_DRAFT_LIMIT:
        raise ValueError(f"{what} must be in 1..{MAX_DRAFT_LIMIT}, got {n}; verification cost grows with the "
                         "draft, 4-64 is the useful range (use no drafter to switch speculation off)")
    return int(n)


_new_draft = object.__new__  # a Draft without __init__ (Drafter._draft sets every slot itself)


def _view(src, o, e, _new=object.__new__, _cls=Draft):
    """A draft whose field i (tokens, parents, probs) is src[i][o + src[3 + i]:e + src[3 + i]]."""
    d = _new(_cls)
    d._src = src
    d._o = o
    d._e = e
    d._t = d._p = d._q = None
    return d
