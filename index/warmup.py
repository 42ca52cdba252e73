"""Compiles (or loads from numba's cache) every native entry point, and checks that it really did."""
import numpy as np


def warmup():
    """Runs each hot path once on a tiny input through a real Drafter-like setup; returns the number of
    compiled signatures. Raises RuntimeError when a function has no compiled signature afterwards."""
    from .arena import Arena
    from .automaton import new_automaton, text_of
    from .address import address_of, address_table, append_at, propose_at, step_at
    from .cursors import append_tokens
    from .memory import Memory
    from .batch import propose_batch, scratch, step_batch
    from .propose import N_PARAMS
    from .paths import _best_paths, best_root_paths
    from .rows import _cut, _gather, _row_keys, _track, cut_lengths, gather_rows, row_keys, track_rows

    arena = Arena()
    mem = Memory(arena, 1024, 2)
    mem.add(np.arange(10, dtype=np.int32))
    slot, _ = arena.add(new_automaton(16))
    ms, mg = mem.tiers()
    ext = np.full((2, 5), -1, np.int64)
    ext[0] = 0
    ext[0, :len(ms)] = ms
    ext[1, :len(mg)] = mg
    toks = np.array([1, 2, 3, 1, 2], np.int32)
    sp = np.array([-1, 3, -1, -1], np.int32)  # token 3 is token 1 spelled with a leading space (spacing.py)
    append_tokens(arena.buffers, slot, toks, ext, 16, sp)
    arena.sync(slot)
    ext_t = ext.copy()
    ext_t[0] = np.arange(1, 6)
    externals = tuple(arena[s] for s in ms) + (new_automaton(8),) * (5 - len(ms))
    si, sf = scratch(4, 8)
    tab = address_table(externals, ext_t, si, sf, sp)
    grown, ok = append_at(tab, arena.addr[slot], toks[:1], 16, 0)
    assert ok
    if grown is not None:
        arena.set(slot, grown)
    for tree in (0, 1):
        params = np.array([4, tree, 8, 0.0, 1.0, 4.0, 16, 2, 2.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.1, 8, 1.0],
                          np.float64)
        assert params.shape == (N_PARAMS,)  # propose_one reads every knob: a shorter array is read past its end
        out = (np.empty((1, 4), np.int32), np.empty((1, 4), np.int32), np.empty((1, 4), np.float32),
               np.empty(1, np.int64))
        propose_batch(arena.buffers, np.array([slot], np.int64), ext, params, *out, si, sf, sp)
        packed = np.empty(12, np.int32)
        propose_at(tab, arena.addr[slot], address_of(params), address_of(packed))
        grown, n = step_at(tab, arena.addr[slot], toks[:1], address_of(params), address_of(packed), 0)
        assert n >= 0
        if grown is not None:
            arena.set(slot, grown)
        if step_batch(arena.buffers, np.array([slot], np.int64), toks[:1], np.array([0, 1], np.int64), ext, params,
                      0, *out, np.empty(1, np.int64), si, sf, sp):
            arena.sync(slot)
    # an engine's token table (vLLM's proposer)
    table = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert row_keys(table, [0, 2], [4, 2]).shape == (2,)
    assert gather_rows(table, [2], [1], [3])[0].tolist() == [9, 10]
    e = np.zeros(0, np.int64)
    assert track_rows(table, np.array([1, 0]), np.array([3, 2]), 64, e, e, e, 1)[0].tolist() == [0]
    assert cut_lengths(np.ones((1, 4), np.float32), [3], [2], 0.5).tolist() == [2]
    assert best_root_paths(table[:1], np.array([[-1, 0, -1, 1]], np.int32), np.ones((1, 4), np.float32),
                           [4])[2].tolist() == [3]
    # five, then one by append_at, and per tree setting one by step_at and one by step_batch
    assert text_of(arena[slot]).shape[0] == 10
    n = 0
    for fn in (append_tokens, append_at, propose_batch, propose_at, step_at, step_batch, address_of, _row_keys,
               _gather, _track, _cut, _best_paths):
        if not fn.signatures:
            raise RuntimeError(f"numba did not compile {fn.__name__}; check the numba install (numba -s)")
        n += len(fn.signatures)
    return n
