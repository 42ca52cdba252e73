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
