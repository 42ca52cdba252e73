"""Compiled entry points: a numba function called for one fixed signature without its dispatcher.

A call through a numba dispatcher first resolves the arguments' types and looks the compiled version up; for
the six arguments of address.step_at that is ~0.12 of the call's ~0.28 us, and a single request's step (append
one token + propose) costs ~1 us natively. The compiled version's own CPython entry point converts the arguments
as the dispatcher's call does, but checks less: it refuses an array of another dtype (TypeError), while a 2-D
array where a 1-D one was compiled for crashes the process. So the caller passes exactly the types it resolved
the entry point for (the same dtypes, dimensions and layouts; Python ints for ints) and converts anything else
first (the Drafter: as_token_ids, which returns a contiguous 1-D int32 array). Flags are not part of that: a
read-only or misaligned array of the same layout is read as the dispatcher's own version for it would read it.
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
