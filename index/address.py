"""Single-request native calls that receive their arrays as addresses (the per-step hot path of an engine).

Passing a numpy array into a numba function costs its unboxing (~60-80 ns) and, inside, reference counting on
every view and inlined call that touches it; a single request's step passes thirteen arrays (its automaton,
five external ones, cursors' tier table, knobs, two work arrays, the draft's storage). Passing one int64 table
of addresses instead and viewing the memory with `carray` (views with no reference to their memory, like
borrow.py's) took a step (append one token + propose, 1k context) from 5.4-5.6 to 3.6-3.7 us, chain, and
5.8-5.9 to 3.8-3.9 us, tree, measured side by side.

The caller keeps every array named in the table, and the request's automaton, alive for the duration of the
call (the Drafter holds them all), and rebuilds the table whenever one of them is replaced.

Table (int64 [T_SIZE]): the addresses of the five external automata (T_EXT), of the tiers' int64 [2, K_EXT]
slot / generation table (T_TIERS), of the int32 and float64 work arrays with their shapes (T_SI, T_SF), of the
int32 spacing map with its length (T_SP, spacing.py).
"""
import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._layout import H_CAP_ED, H_CAP_HS, H_CAP_ST, H_CAP_TX, H_SIZE, _buffer_size
from .cursors import append_core, check_ids
from .propose import N_PARAMS, propose_one

K_EXT = 5  # external automata a request sees: memory segments (<= 4) + corpus
T_EXT = 0
T_TIERS = K_EXT
T_SI = T_TIERS + 1  # address, rows, columns
T_SF = T_SI + 3  # address, columns (2 rows)
T_SP = T_SF + 2  # address, length
T_SIZE = T_SP + 2


@intrinsic
def _voidptr(typingctx, addr):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@njit(cache=True)
def address_of(a):
    """The address of a contiguous array's first element."""
    return a.ctypes.data


@njit(cache=True, inline="always")
def automaton_at(addr):
    """The automaton buffer (int32) starting at addr; its size is read from its header."""
    h = carray(_voidptr(addr), (H_SIZE,), np.int32)
    return carray(_voidptr(addr), (_buffer_size(h[H_CAP_TX], h[H_CAP_ST], h[H_CAP_ED], h[H_CAP_HS]),), np.int32)


@njit(cache=True, inline="always")
def _externals(tab):
    return (automaton_at(tab[T_EXT]), automaton_at(tab[T_EXT + 1]), automaton_at(tab[T_EXT + 2]),
            automaton_at(tab[T_EXT + 3]), automaton_at(tab[T_EXT + 4]))


@njit(cache=True, inline="always")
def _tiers(tab):
    return carray(_voidptr(tab[T_TIERS]), (2, K_EXT), np.int64)


@njit(cache=True, inline="always")
def _spacing(tab):
    return carray(_voidptr(tab[T_SP]), (tab[T_SP + 1],), np.int32)


@njit(cache=True, inline="always")
def _params(p_addr):
    return carray(_voidptr(p_addr), (N_PARAMS,), np.float64)


@njit(cache=True, inline="always")
def _append(tab, b_addr, tokens, window):
    """append_core on the request automaton at b_addr; returns (its buffer before, after (grown or the same),
    the external automata)."""
    b = automaton_at(b_addr)
    es = _externals(tab)
    nb = append_core((b, es[0], es[1], es[2], es[3], es[4]), 0, tokens, _tiers(tab), window, _spacing(tab))
    return b, nb, es


@njit(cache=True, inline="always")
def _propose_into(b, es, tab, params, out_addr):
    """propose_one into the draft storage at out_addr (int32 [3 * budget]: tokens, parents, the probabilities'
    float32 bits, each part `budget` long); returns n. Writing into storage the caller made, instead of
    returning a fresh array, saves the boxing of a returned array."""
    si = carray(_voidptr(tab[T_SI]), (tab[T_SI + 1], tab[T_SI + 2]), np.int32)
    sf = carray(_voidptr(tab[T_SF]), (2, tab[T_SF + 1]), np.float64)
    budget = int(params[0])
    out = carray(_voidptr(out_addr), (3 * budget,), np.int32)
    return propose_one((b, es[0], es[1], es[2], es[3], es[4]), 0, _tiers(tab), params, out[:budget],
                       out[budget:2 * budget], out[2 * budget:].view(np.float32), si, sf, _spacing(tab))


@njit(cache=True)
def append_at(tab, b_addr, tokens, window, vocab):
    """Appends tokens to the request automaton at b_addr (see cursors.append_core). Returns (grown, ok): the
    request's new buffer when it had to grow, else None (boxing an array costs ~1 us); ok is False when an id
    is out of range (nothing appended)."""
    if check_ids(tokens, vocab):
        return None, False
    b, nb, _ = _append(tab, b_addr, tokens, window)
    return (nb if nb.shape[0] != b.shape[0] else None), True


@njit(cache=True)
def propose_at(tab, b_addr, p_addr, out_addr):
    """The draft of the request automaton at b_addr with the knobs at p_addr (float64 [N_PARAMS], see
    propose.propose_one) into out_addr (see _propose_into); returns n."""
    return _propose_into(automaton_at(b_addr), _externals(tab), tab, _params(p_addr), out_addr)


@njit(cache=True)
def step_at(tab, b_addr, tokens, p_addr, out_addr, vocab):
    """append_at then propose_at in one call. Returns (grown, n); n = -1 when an id is out of range (then
    nothing is done)."""
    if check_ids(tokens, vocab):
        return None, -1
    params = _params(p_addr)
    b, nb, es = _append(tab, b_addr, tokens, int(params[6]))
    n = _propose_into(nb, es, tab, params, out_addr)
    return (nb if nb.shape[0] != b.shape[0] else None), n


def address_table(externals, tiers, scratch_i, scratch_f, spacing):
    """The int64 table of the calls above. externals: K_EXT automata (padding with a dummy automaton); tiers:
    int64 [2, K_EXT] (tuple positions 1..K_EXT in row 0, generations in row 1); scratch_*: batch.scratch;
    spacing: int32 [>= 1] (spacing.py)."""
    if len(externals) != K_EXT or tiers.shape != (2, K_EXT) or tiers.dtype != np.int64:
        raise ValueError("address_table needs K_EXT externals and an int64 [2, K_EXT] tier table")
    for a in (*externals, tiers, scratch_i, scratch_f, spacing):
        if not a.flags.c_contiguous:
            raise ValueError("address_table needs C-contiguous arrays")
    if any(e.dtype != np.int32 for e in externals) or scratch_i.dtype != np.int32 or scratch_f.dtype != np.float64:
        raise ValueError("address_table needs int32 automata, int32 and float64 work arrays (batch.scratch)")
    if spacing.dtype != np.int32 or spacing.ndim != 1 or spacing.shape[0] == 0:
        raise ValueError("address_table needs an int32 [>= 1] spacing map (spacing.spaced_ids, or spacing.NO_SPACING)")
    tab = np.zeros(T_SIZE, np.int64)
    tab[T_EXT:T_EXT + K_EXT] = [address_of(e) for e in externals]
    tab[T_TIERS] = address_of(tiers)
    tab[T_SI:T_SI + 3] = address_of(scratch_i), scratch_i.shape[0], scratch_i.shape[1]
    tab[T_SF:T_SF + 2] = address_of(scratch_f), scratch_f.shape[1]
    tab[T_SP:T_SP + 2] = address_of(spacing), spacing.shape[0]
    return tab
