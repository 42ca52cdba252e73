"""lookahead: model-free speculative decoding.

    import lookahead
    d = lookahead.Drafter(max_draft=16)
    ...
    outs = lookahead.generate(model, prompts, tokenizer=tok)
"""
from .drafter import Draft, Drafter, DrafterConfig

__version__ = "0.1.0"
__all__ = ["Draft", "Drafter", "DrafterConfig", "__version__"]
