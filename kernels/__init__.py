"""lookahead.kernels: lossless verification of chains and token trees (torch and triton only; never imports
the index).

sampling.py       the target distribution (temperature, top-k, top-p) and Gumbel noise
reference.py      loop-based verifier that reads like the math
vectorized.py     the CPU default (and a correct fallback on any device)
triton_verify.py  the GPU kernels (CPU under TRITON_INTERPRET=1)
verify.py         `verify(...)`: checks input, picks the path
"""
from .verify import VerifyResult, verify

__all__ = ["VerifyResult", "verify"]
