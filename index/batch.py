"""Batched proposals: one native call drafts (or appends then drafts) for many requests, and the work arrays
every proposal writes its trie into (sized once per budget, reused across calls)."""
import numpy as np
from numba import njit

from .borrow import borrow
from .cursors import append_core, check_ids
from .propose import MAX_BACKOFF, MAX_TIERS, propose_one


def scratch_cols(budget, occ):
    """Columns of the work arrays a proposal of `budget` nodes with `occ` occurrences per source needs."""
    return max(occ * MAX_TIERS * (1 + MAX_BACKOFF) * (budget + 1) + 1, 3 * MAX_TIERS + 4 * MAX_TIERS * (1 + MAX_BACKOFF),
               budget, 64)


def scratch(budget, occ):
    """Work arrays for propose_*: (int32 [10, T], float64 [2, T])."""
    T = scratch_cols(budget, occ)
    return np.empty((10, T), np.int32), np.empty((2, T), np.float64)


@njit(cache=True)
def propose_batch(B, slots, ext, params, out_tok, out_par, out_prob, out_n, scratch_i, scratch_f, sp):
    """propose_one for every slot; out_* are [len(slots), >= budget], out_n [len(slots)]; params and sp as
    propose_one."""
    for r in range(slots.shape[0]):
        out_n[r] = propose_one(B, slots[r], ext, params, borrow(out_tok[r]), borrow(out_par[r]),
                               borrow(out_prob[r]), scratch_i, scratch_f, sp)


@njit(cache=True)
def step_batch(B, slots, tokens, offsets, ext, params, vocab, out_tok, out_par, out_prob, out_n, grown,
               scratch_i, scratch_f, sp):
    """For every row r: append tokens[offsets[r]:offsets[r + 1]] to request slots[r], then propose_one into
    out_*[r] (the per-step hot path of a serving loop, one native call for the whole batch).

    Returns -1 when any id is out of range (then nothing is done), else the number k of rows whose buffer grew
    (stored back into B), listed in grown[:k] (int64 [>= len(slots)]): mirror just those with Arena.sync, since
    with requests of mixed lengths some row grows at most steps and a sync costs ~1.6 us a row."""
    if check_ids(tokens, vocab):
        return -1
    B = borrow(B)
    ext = borrow(ext)
    window = int(params[6])
    grew = 0
    for r in range(slots.shape[0]):
        s = slots[r]
        toks = borrow(tokens[offsets[r]:offsets[r + 1]])
        if toks.shape[0]:
            n_old = B[s].shape[0]
            b = append_core(B, s, toks, ext, window, sp)
            if b.shape[0] != n_old:
                B[s] = b
                grown[grew] = r
                grew += 1
        out_n[r] = propose_one(B, s, ext, params, borrow(out_tok[r]), borrow(out_par[r]), borrow(out_prob[r]),
                               scratch_i, scratch_f, sp)
    return grew
