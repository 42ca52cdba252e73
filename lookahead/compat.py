"""Work-arounds for other libraries' bugs that our imports would otherwise trigger.

vLLM's CPU platform (0.32), when spec decoding is on and Triton has no CPU backend, scans every loaded module
and calls vars() on any value with a __dict__. llvmlite's FFI library object (loaded with numba, hence with
lookahead) answers any attribute, __dict__ included, with a function wrapper, and the scan crashes the engine
at start ("'_lib_fn_wrapper' object has no attribute 'get'"). Giving that object a real (empty) __dict__
entry makes vars() return a dict; llvmlite never reads it. Forked vLLM processes inherit the fix.
"""


def patch_llvmlite_for_vllm():
    try:
        from llvmlite.binding import ffi
    except ImportError:
        return
    tab = getattr(ffi.lib, "_fntab", None)
    if isinstance(tab, dict):
        tab.setdefault("__dict__", {})
