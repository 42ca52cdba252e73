"""index/borrow.py: a borrowed view reads and writes the owner's memory and is accepted only for arrays, typed
Lists and tuples of arrays."""
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError
from numba.typed import List

from lookahead.index.borrow import borrow


@njit
def _sum_then_write(a, i, x):
    v = borrow(a)
    s = v.sum()
    v[i] = x  # through the view, into the owner
    return s


@njit
def _list_item_sum(B, j):
    L = borrow(B)
    return borrow(L[j]).sum() + len(L)


@njit
def _tuple_item(t, j, i):
    u = borrow(t)
    return u[j][i]


@njit
def _bad(x):
    return borrow(x)


def test_borrowed_array_is_the_same_memory():
    a = np.arange(10, dtype=np.int32)
    assert _sum_then_write(a, 3, 100) == 45
    assert a[3] == 100
    g = np.arange(12, dtype=np.float64).reshape(3, 4)
    row = g[1]
    assert _sum_then_write(row, 0, -5.0) == 4 + 5 + 6 + 7
    assert g[1, 0] == -5.0
    c = np.arange(10, dtype=np.int64)
    assert _sum_then_write(c[::3], 2, -1) == 0 + 3 + 6 + 9  # strides are kept
    assert c[6] == -1


def test_borrowed_list_and_tuple():
    B = List()
    for n in (3, 5, 2):
        B.append(np.arange(n, dtype=np.int32))
    assert _list_item_sum(B, 1) == 10 + 3
    t = (np.arange(4, dtype=np.int32), np.arange(4, 8, dtype=np.int32))
    assert _tuple_item(t, 1, 2) == 6


def test_borrow_names_what_it_takes():
    with pytest.raises(TypingError, match="borrow takes an array, a typed List or a tuple of arrays"):
        _bad(3)
