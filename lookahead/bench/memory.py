"""`lookahead bench memory`: many requests through cross-request memory with a small token budget; the
process's resident memory is sampled as they pass and must stay flat."""
import resource
import time

import numpy as np

from .report import json_line, progress, table


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(args):
    import lookahead

    n = args.requests
    d = lookahead.Drafter(max_draft=16, config=lookahead.DrafterConfig(memory_tokens=args.memory_tokens))
    rng = np.random.default_rng(0)
    base = rng.integers(0, 49152, 4096).astype(np.int32)
    samples = []
    t0 = time.perf_counter()
    marks = set(np.linspace(0, n - 1, 11).astype(int).tolist())
    for i in progress(range(n), desc="requests", total=n):
        off = int(rng.integers(0, 4096 - 96))
        h = d.begin(base[off:off + 48])
        d.append(h, base[off + 48:off + 64])
        d.propose(h)
        d.end(h)
        if i in marks:
            samples.append({"requests": i + 1, "rss_mb": rss_mb(), "memory_tokens": d.memory.tokens,
                            "drafter_mb": d.memory_bytes() / 2**20})
    dt = time.perf_counter() - t0
    print(table(samples, ["requests", "rss_mb", "memory_tokens", "drafter_mb"],
                f"{n} requests through memory with a budget of {args.memory_tokens} tokens ({dt:.0f} s)"))
    growth = samples[-1]["rss_mb"] - samples[1]["rss_mb"] if len(samples) > 2 else 0.0
    print(f"RSS growth after the first tenth: {growth:+.1f} MB")
    print(json_line({"bench": "memory", "requests": n, "memory_tokens": args.memory_tokens, "samples": samples,
                     "rss_growth_mb": growth, "us_per_request": 1e6 * dt / n}))
    return 0
