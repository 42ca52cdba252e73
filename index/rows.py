"""Rows of an engine's token table: content keys and the new tokens of a step, for the whole batch at once.

An engine such as vLLM hands a proposer a token table (int32 [rows, max_len]) and each row's token count, and
moves requests between rows as it condenses its batch. A request is recognised by a key of its text: its
length, its first `w` tokens and its last `w` tokens, hashed to one int64 (FNV-1a over the ids). Per row in
Python this cost several microseconds (slices, bytes, tuples); here it is one native call per step.
A hash collision between two texts could only give a request another's drafts (the engine verifies every
draft, so never a wrong output); with 64 bits it does not happen in practice.
"""
import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, inline="always")
def _mix(h, x):
    return (h ^ np.uint64(np.uint32(x))) * _FNV_PRIME


@njit(cache=True)
def _row_keys(table, rows, lens, w, out):
    for j in range(rows.shape[0]):
        i = rows[j]
        n = lens[j]
        h = _mix(_FNV_OFFSET, n)
        for t in range(min(n, w)):
            h = _mix(h, table[i, t])
        for t in range(max(0, n - w), n):
            h = _mix(h, table[i, t])
        out[j] = np.int64(h)


@njit(cache=True)
def _gather(table, rows, starts, ends, flat, offs):
    k = 0
    offs[0] = 0
    for j in range(rows.shape[0]):
        i = rows[j]
        for t in range(starts[j], ends[j]):
            flat[k] = table[i, t]
            k += 1
        offs[j + 1] = k


def _table(table):
    t = np.asarray(table)
    if t.ndim != 2 or t.dtype != np.int32:
        raise TypeError(f"the token table must be a 2-D int32 array (vLLM's token_ids_cpu), got "
                        f"{t.ndim}-D {t.dtype}")
    return t


def _bounds(t, rows, *lens):
    rows = np.ascontiguousarray(rows, np.int64)
    out = [np.ascontiguousarray(x, np.int64) for x in lens]
    if rows.shape[0] and (rows.min() < 0 or rows.max() >= t.shape[0]):
        raise IndexError(f"rows must be in 0..{t.shape[0] - 1}")
    for x in out:
        if x.shape != rows.shape:
            raise ValueError(f"give one length per row ({rows.shape[0]}), got {x.shape[0]}")
        if x.shape[0] and (x.min() < 0 or x.max() > t.shape[1]):
            raise ValueError(f"lengths must be in 0..{t.shape[1]} (the table's width)")
    return rows, out


def row_keys(table, rows, lens, w=16):
    """int64 [len(rows)]: the key of table[rows[j], :lens[j]] (length, first w and last w tokens)."""
    t = _table(table)
    rows, (lens,) = _bounds(t, rows, lens)
    out = np.empty(rows.shape[0], np.int64)
    _row_keys(t, rows, lens, int(w), out)
    return out


def gather_rows(table, rows, starts, ends):
    """(flat int32, offsets int64 [len(rows) + 1]): table[rows[j], starts[j]:ends[j]] one after another."""
    t = _table(table)
    rows, (starts, ends) = _bounds(t, rows, starts, ends)
    if np.any(ends < starts):
        raise ValueError("every start must be <= its end")
    flat = np.empty(int((ends - starts).sum()), np.int32)
    offs = np.empty(rows.shape[0] + 1, np.int64)
    _gather(t, rows, starts, ends, flat, offs)
    return flat, offs


@njit(cache=True)
def _track(table, n_new, n_tok, max_len, w, keys, handles, seen, step, stale_steps):
    B = n_new.shape[0]
    R = 0
    for i in range(B):
        if n_new[i] > n_tok[i] or n_tok[i] > table.shape[1]:
            raise ValueError("every row needs new tokens <= its token count <= the table's width")
        R += n_new[i] > 0 and n_tok[i] < max_len
    rows = np.empty(R, np.int64)
    lens = np.empty(R, np.int64)
    prev = np.empty(R, np.int64)
    j = 0
    for i in range(B):
        if n_new[i] > 0 and n_tok[i] < max_len:
            rows[j] = i
            lens[j] = n_tok[i]
            prev[j] = n_tok[i] - n_new[i]
            j += 1
    key_prev = np.empty(R, np.int64)
    key_now = np.empty(R, np.int64)
    _row_keys(table, rows, prev, w, key_prev)
    _row_keys(table, rows, lens, w, key_now)
    # each row's text before this step is looked up among the live requests' keys; among equal keys, rows
    # (in row order) take the requests in the order they were kept (stable sort, taken ones skipped)
    M = keys.shape[0]
    order = np.argsort(keys, kind="mergesort")
    sk = keys[order]
    taken = np.zeros(M, np.bool_)
    row_h = np.full(R, -1, np.int64)
    n_fresh = 0
    for j in range(R):
        k = key_prev[j]
        p = np.searchsorted(sk, k)
        while p < M and sk[p] == k and taken[order[p]]:
            p += 1
        if p < M and sk[p] == k:
            taken[order[p]] = True
            row_h[j] = handles[order[p]]
        else:
            prev[j] = lens[j]  # a new request: its whole text goes into begin, nothing is appended
            n_fresh += 1
    fresh = np.empty(n_fresh, np.int64)
    f = 0
    for j in range(R):
        if row_h[j] < 0:
            fresh[f] = j
            f += 1
    n_keep = 0
    for i in range(M):
        n_keep += not taken[i] and step - seen[i] < stale_steps
    stale = np.empty(M - n_keep - (R - n_fresh), np.int64)
    nk = np.empty(R + n_keep, np.int64)
    nh = np.empty(R + n_keep, np.int64)
    ns = np.empty(R + n_keep, np.int64)
    nk[:R] = key_now
    nh[:R] = row_h
    ns[:R] = step
    a = R
    s = 0
    for i in range(M):
        if taken[i]:
            continue
        if step - seen[i] < stale_steps:
            nk[a] = keys[i]
            nh[a] = handles[i]
            ns[a] = seen[i]
            a += 1
        else:
            stale[s] = handles[i]
            s += 1
    total = 0
    for j in range(R):
        total += lens[j] - prev[j]
    flat = np.empty(total, np.int32)
    offs = np.empty(R + 1, np.int64)
    _gather(table, rows, prev, lens, flat, offs)
    return rows, lens, row_h, fresh, flat, offs, nk, nh, ns, stale


def track_rows(table, n_new, n_tok, max_len, keys, handles, seen, step, stale_steps=2, w=16):
    """One engine step's bookkeeping for the whole batch in one native call (what lookahead.rowtrack needs).

    table: int32 [B_max, width], the engine's token table; n_new / n_tok: int64 [B], each row's tokens sampled
    since the last step and its token count. Rows with new tokens and n_tok < max_len draft. keys / handles /
    seen: int64 [M], the live requests' keys (of their text at the end of their last step), handles and the
    step they were last seen in. Returns (rows, lens, row_handles, fresh, flat, offsets, keys, handles, seen,
    stale), all int64 except flat (int32): the drafting rows, their token counts, the live request each
    continues (-1 for the rows listed in `fresh`, which start one), their new tokens as gather_rows gives them
    (none for fresh rows), the live requests after this step (this step's rows first, then the ones kept
    because they were missing for fewer than stale_steps steps) and the handles of the requests to finish."""
    t = _table(table)
    n_new = np.ascontiguousarray(n_new, np.int64)
    n_tok = np.ascontiguousarray(n_tok, np.int64)
    if n_new.shape != n_tok.shape or n_new.ndim != 1 or n_new.shape[0] > t.shape[0]:
        raise ValueError(f"give one new-token count and one token count per row (at most {t.shape[0]} rows), got "
                         f"{n_new.shape} and {n_tok.shape}")
    return _track(t, n_new, n_tok, int(max_len), int(w), keys, handles, seen, int(step), int(stale_steps))


@njit(cache=True)
def _cut(probs, n_nodes, caps, floor, out):
    f = np.float32(floor)  # compared as float32, as numpy compares a float32 array with a Python float
    for j in range(n_nodes.shape[0]):
        m = max(0, min(caps[j], n_nodes[j]))
        if floor > 0.0:
            for t in range(m):
                if probs[j, t] < f:
                    m = t
                    break
        out[j] = m


def cut_lengths(probs, n_nodes, caps, floor):
    """int64 [B]: how many of each chain's tokens to keep: at most caps[j] and n_nodes[j], and none from the first
    one reached with an estimated probability below floor (probs: float32 [B, width]; n_nodes, caps: [B])."""
    probs = np.asarray(probs, np.float32)
    n_nodes = np.ascontiguousarray(n_nodes, np.int64)
    caps = np.ascontiguousarray(caps, np.int64)
    if probs.ndim != 2 or n_nodes.shape != caps.shape or n_nodes.shape != probs.shape[:1] or \
            (n_nodes.shape[0] and n_nodes.max() > probs.shape[1]):
        raise ValueError("give probs [B, width] and n_nodes, caps [B] with n_nodes <= width")
    out = np.empty(n_nodes.shape[0], np.int64)
    _cut(probs, n_nodes, caps, float(floor), out)
    return out
