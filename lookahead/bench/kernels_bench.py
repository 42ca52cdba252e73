"""`lookahead bench kernels`: verify() paths timed against each other (and vLLM's rejection sampler, FlashInfer's
chain kernel when installed and on CUDA), over batch x draft nodes x vocab. Reports µs per call and effective
GB/s against the logits' bytes (one read of the logits is the floor for any verifier that samples every row).
"""
import argparse
import time

import torch

from .report import json_line, progress, table


def _case(B, n, V, device, dtype, temperature):
    g = torch.Generator(device=device).manual_seed(0)  # drawn where they are used: GBs of logits on a GPU
    R = B * (n + 1)
    logits = torch.randn(R, V, generator=g, device=device).to(dtype)
    toks = torch.randint(0, V, (B * n,), generator=g, device=device)
    pars = (torch.arange(n).repeat(B) - 1).to(device)  # chains
    off = (torch.arange(B + 1) * n).to(device)
    temp = torch.full((B,), temperature, device=device)
    return logits, toks, pars, off, temp


def _time(fn, device, reps):
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e6


def _vllm_sampler():
    try:
        from vllm.v1.sample import rejection_sampler as rs
    except Exception:  # noqa: BLE001 - any import failure means "not available here"
        return None
    return rs


def main(argv):
    ap = argparse.ArgumentParser(prog="lookahead bench kernels")
    ap.add_argument("--batch", default="1,8,64,256")
    ap.add_argument("--nodes", default="1,4,16,64")
    ap.add_argument("--vocab", default="32768,151936")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--max-gb", type=float, default=None, help="skip shapes whose logits exceed this (default: 2 on "
                    "CPU, 40 on CUDA)")
    ap.add_argument("--temperature", type=float, default=1.0, help="0: greedy (argmax, no noise)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--tune", action="store_true", help="time the Triton draw kernel's (chunk, warps) settings on "
                    "each shape instead (CUDA), beside the default choice; the best go into triton_verify.DRAW_CONFIG")
    ap.add_argument("--with-reference", action="store_true", help="also time the loop reference (tiny shapes)")
    args = ap.parse_args(argv)
    from lookahead.kernels import verify

    dev = args.device
    dtype = getattr(torch, args.dtype)
    max_gb = args.max_gb if args.max_gb is not None else (2.0 if dev == "cpu" else 40.0)
    reps = args.reps or (3 if dev == "cpu" else 20)
    if args.tune:
        return _tune(args, dev, dtype, reps)
    impls = ["vectorized"] + (["triton"] if dev == "cuda" else [])
    if args.with_reference:
        impls.insert(0, "reference")
    rows, skipped = [], []
    shapes = [(int(b), int(n), int(v)) for v in args.vocab.split(",") for n in args.nodes.split(",")
              for b in args.batch.split(",")]
    for B, n, V in progress(shapes, desc="shapes"):
        gb = B * (n + 1) * V * torch.finfo(dtype).bits / 8 / 1e9
        if gb > max_gb:
            skipped.append(f"B={B} n={n} V={V} ({gb:.1f} GB of logits)")
            continue
        logits, toks, pars, off, temp = _case(B, n, V, dev, dtype, args.temperature)
        row = {"batch": B, "nodes": n, "vocab": V, "logits_mb": gb * 1e3}
        # the floor: torch's own argmax reads the logits once and does nothing else
        row["argmax_us"] = _time(lambda: torch.argmax(logits, dim=-1), dev, reps)
        for impl in impls:
            if impl == "reference" and B * (n + 1) * V > 2e5:
                continue
            us = _time(lambda: verify(logits, toks, pars, off, temperature=temp, impl=impl), dev, reps)
            row[f"{impl}_us"] = us
            row[f"{impl}_GBps"] = gb * 1e9 / (us * 1e-6) / 1e9
        rows.append(row)
        del logits
    cols = ["batch", "nodes", "vocab", "logits_mb", "argmax_us"] + [f"{i}_{u}" for i in impls for u in ("us", "GBps")]
    print(table(rows, cols, f"verify() on {dev}, {args.dtype}, chains, temperature {args.temperature:g} (µs per "
                            "call; GB/s = logits bytes / time; argmax_us: torch.argmax over the same logits, one "
                            "read and nothing else)"))
    notes = []
    if dev != "cuda":
        notes.append("triton: timed only on CUDA (on CPU it runs under TRITON_INTERPRET, for correctness)")
    if _vllm_sampler() is None or dev != "cuda":
        notes.append("vLLM rejection sampler: needs vLLM with CUDA; not timed here")
    try:
        import flashinfer  # noqa: F401
    except ImportError:
        notes.append("FlashInfer chain kernel: not installed")
    for s in skipped:
        notes.append(f"skipped {s}")
    for x in notes:
        print("note:", x)
    print(json_line({"bench": "kernels", "device": dev, "dtype": args.dtype, "temperature": args.temperature,
                     "results": rows, "notes": notes}))
    return 0


TUNE = [(256, 4), (512, 4), (1024, 4), (2048, 4), (1024, 8), (2048, 8), (4096, 8)]


def _tune(args, dev, dtype, reps):
    from lookahead.kernels import triton_verify, verify

    if dev != "cuda":
        raise SystemExit("--tune times compiled Triton kernels: it needs --device cuda")
    rows = []
    shapes = [(int(b), int(n), int(v)) for v in args.vocab.split(",") for n in args.nodes.split(",")
              for b in args.batch.split(",")]
    try:
        for B, n, V in progress(shapes, desc="shapes"):
            logits, toks, pars, off, temp = _case(B, n, V, dev, dtype, args.temperature)
            row = {"batch": B, "nodes": n, "vocab": V}
            for cfg in [None] + TUNE:
                triton_verify.FORCE_CONFIG = cfg
                row["default" if cfg is None else f"{cfg[0]}x{cfg[1]}"] = _time(
                    lambda: verify(logits, toks, pars, off, temperature=temp, impl="triton"), dev, reps)
            rows.append(row)
            del logits
    finally:
        triton_verify.FORCE_CONFIG = None
    cols = ["batch", "nodes", "vocab", "default"] + [f"{c[0]}x{c[1]}" for c in TUNE]
    print(table(rows, cols, f"verify(impl='triton') µs per call by draw-kernel (BLOCK_V x num_warps), {args.dtype}, "
                            f"temperature {args.temperature:g}"))
    print(json_line({"bench": "kernels-tune", "dtype": args.dtype, "temperature": args.temperature, "results": rows}))
    return 0
