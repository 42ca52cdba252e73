"""Compiled entry points: a numba function called for one fixed signature without its dispatcher.

A call through a numba dispatcher first resolves the arguments' types and looks the compiled version up; for
the six arguments of address.step_at that is ~0.12 of the call's ~0.28 us, and a single request's step (append
one token + propose) costs ~1 us natively. The compiled version's own CPython entry point converts the arguments
just as the dispatcher's call does, but checks only that arrays are arrays: the caller must pass exactly the
types it was resolved for (the same dtypes, dimensions and layouts; Python ints for ints), and falls back to the
dispatcher for anything else.
"""
from numba import typeof

_ENTRIES = {}


def entry_point(fn, *example):
    """The compiled entry point of numba function `fn` for the types of the `example` arguments (compiled, or
    loaded from numba's cache, when needed)."""
    sig = tuple(typeof(a) for a in example)
    ep = _ENTRIES.get((fn, sig))
    if ep is None:
        ep = fn.compile(sig)  # the existing version when there is one
        if not callable(ep):
            raise RuntimeError(f"numba gave no entry point for {fn.__name__}{sig}; check the numba install "
                               "(numba -s)")
        _ENTRIES[(fn, sig)] = ep
    return ep
