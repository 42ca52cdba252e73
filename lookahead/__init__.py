"""lookahead: model-free speculative decoding.

    import lookahead
    d = lookahead.Drafter(max_draft=16)
    ...
    outs = lookahead.generate(model, prompts, tokenizer=tok)
"""
from .compat import patch_llvmlite_for_vllm
from .drafter import Draft, Drafter, DrafterConfig

patch_llvmlite_for_vllm()  # numba (hence llvmlite) is loaded now; see compat.py

__version__ = "0.1.0"
__all__ = ["Draft", "Drafter", "DrafterConfig", "Generation", "GenerationStats", "StreamChunk", "generate",
           "__version__"]


def __getattr__(name):
    # the engine needs torch and transformers: imported on first use only
    if name in ("generate", "Generation", "GenerationStats", "StreamChunk"):
        import importlib

        return getattr(importlib.import_module("lookahead.engine"), name)
    raise AttributeError(f"module 'lookahead' has no attribute {name!r}")
