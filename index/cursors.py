"""Match cursors of a request into external automata (memory segments, corpus), kept in its header.

A cursor is (slot, generation, state, matched length). Generations are unique across a drafter's life, so a
cursor whose automaton was dropped or replaced is recognised and re-synced from the request's last `window`
tokens (O(window), once). Extending an external automaton keeps old cursors usable: a cursor may then name a
state that was split, which only narrows the occurrences it sees, never makes them wrong.

`B` is any indexable container of automata: the drafter's typed List (batched calls) or a fixed-size tuple
(single-request calls, address.py, which avoid the typed List's ~1 us unboxing). `ext` is int64 [2, K]: slots, generations
(generation -1 = unused).
"""
from numba import njit

from ._layout import CUR_W, H_CUR, H_N_TX, H_OFF_TX, N_CUR
from .automaton import extend_many
from .borrow import borrow
from .analogy import follow
from .pointer import track
from .template import key_step, keeps


@njit(cache=True)
def _resync(ext_b, self_b, window):
    n = self_b[H_N_TX]
    ot = self_b[H_OFF_TX]
    v = 0
    L = 0
    kv = -1
    kn = 0
    for i in range(max(0, n - window), n):
        v2, L, key = key_step(ext_b, v, L, self_b[ot + i])
        if key and not keeps(self_b, kn, i):
            kv = v
            kn = i
        v = v2
    return v, L, kv, kn


@njit(cache=True, inline="always")
def _find_entry(b, gen):
    for k in range(N_CUR):
        if b[H_CUR + CUR_W * k + 1] == gen:
            return k
    return -1


@njit(cache=True, inline="always")
def cursor_entry(B, b, j, ext, window):
    """Index of request b's cursor entry for external tier j, created and synced when missing."""
    gen = ext[1, j]
    k = _find_entry(b, gen)
    if k != -1:
        return k
    free = 0
    for i in range(N_CUR):  # reuse an entry whose automaton is no longer a tier
        g = b[H_CUR + CUR_W * i + 1]
        live = False
        for q in range(ext.shape[1]):
            if ext[1, q] == g and g != -1:
                live = True
        if not live:
            free = i
            break
    v, L, kv, kn = _resync(B[ext[0, j]], b, window)
    o = H_CUR + CUR_W * free
    b[o] = ext[0, j]
    b[o + 1] = gen
    b[o + 2] = v
    b[o + 3] = L
    b[o + 4] = kv
    b[o + 5] = kn
    return free


@njit(cache=True)
def check_ids(tokens, vocab):
    """0 when every id is in [0, vocab) (vocab == 0: no upper bound; vocab < 0: no check at all, for internal
    text that holds SEP), else 1."""
    if vocab < 0:
        return 0
    for i in range(tokens.shape[0]):
        t = tokens[i]
        if t < 0 or (vocab > 0 and t >= vocab):
            return 1
    return 0


@njit(cache=True)
def append_core(B, slot, tokens, ext, window, sp):
    """Extends request `slot` by tokens and moves its cursors, copy pointer and analogous place; returns its
    (possibly grown) buffer. sp: the tokens' spellings with a leading space (spacing.py)."""
    # borrowed views below (borrow.py): b owns the buffer while they are used
    tokens = borrow(tokens)
    ext = borrow(ext)
    sp = borrow(sp)
    b = B[slot]
    k = tokens.shape[0]
    if k > 1:
        # the pointer sees the accepted tokens before the last one: in an engine that one is the target's own
        # (the bonus token), often where the copy breaks, and the text's end may then match nothing at all
        b = extend_many(b, tokens[:k - 1])
        track(borrow(b), k - 1, sp)
    b = extend_many(b, tokens[k - 1:])
    bb = borrow(b)
    track(bb, 1, sp)
    follow(bb, k, sp)
    for j in range(ext.shape[1]):
        if ext[1, j] == -1:
            continue
        k = _find_entry(bb, ext[1, j])
        if k == -1:
            continue  # created (and synced over these tokens too) when first needed
        o = H_CUR + CUR_W * k
        ext_b = borrow(B[ext[0, j]])
        v = bb[o + 2]
        L = bb[o + 3]
        n0 = bb[H_N_TX] - tokens.shape[0]
        for i in range(tokens.shape[0]):
            v2, L, key = key_step(ext_b, v, L, tokens[i])
            if key and not keeps(bb, bb[o + 5], n0 + i):  # a long match broke off: the key before a value
                bb[o + 4] = v
                bb[o + 5] = n0 + i
            v = v2
        bb[o + 2] = v
        bb[o + 3] = L
    return b


@njit(cache=True)
def append_tokens(B, slot, tokens, ext, window, sp):
    """append_core on a typed List, storing the grown buffer back."""
    B[slot] = append_core(B, slot, tokens, ext, window, sp)
