"""`lookahead bench e2e`: tokens/s on a real model (default SmolLM2-135M-Instruct, CPU): plain HF `generate`, HF
prompt lookup (10 tokens), this engine without drafts, lookahead chain and lookahead tree, at batch 1 and 8.

Prompts are the chat-templated prompts of model_outputs.jsonl (the public workloads). At batch 1 the methods run
alternately on each prompt (so drift hits all alike); each lookahead variant keeps one Drafter per workload, as
a server would (cross-request memory). Outputs are checked against plain greedy decoding.
"""
import argparse
import time

import torch

from .report import json_line, progress, table
from .workloads import data_path, read_jsonl


def _prompts(workload, n):
    recs = [r for r in read_jsonl(data_path("model_outputs.jsonl")) if r["id"].startswith(workload)]
    return [r["prompt_token_ids"] for r in recs[:n]]


def _hf(model, tok, ids, max_new, pld):
    x = torch.tensor([ids])
    kw = dict(max_new_tokens=max_new, do_sample=False, pad_token_id=tok.eos_token_id)
    if pld:
        kw["prompt_lookup_num_tokens"] = 10
    t0 = time.perf_counter()
    with torch.inference_mode():
        y = model.generate(x, **kw)[0, x.shape[1]:].tolist()
    return y, time.perf_counter() - t0


def _hf_batch(model, tok, batch, max_new):
    L = max(len(p) for p in batch)
    pad = tok.eos_token_id
    x = torch.tensor([[pad] * (L - len(p)) + p for p in batch])
    att = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in batch])
    t0 = time.perf_counter()
    with torch.inference_mode():
        y = model.generate(x, attention_mask=att, max_new_tokens=max_new, do_sample=False, pad_token_id=pad)
    dt = time.perf_counter() - t0
    outs = []
    for row in y[:, L:].tolist():
        if pad in row:  # generation after EOS is padding
            row = row[:row.index(pad) + 1]
        outs.append(row)
    return outs, dt


def main(argv):
    ap = argparse.ArgumentParser(prog="lookahead bench e2e")
    ap.add_argument("--model", default=None)
    ap.add_argument("--workloads", default="code_edit,completion,templated,multi_turn")
    ap.add_argument("--prompts", type=int, default=3, help="prompts per workload at batch 1")
    ap.add_argument("--batch", type=int, default=8, help="batch size of the batched run (0: skip)")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--max-draft", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
    import lookahead
    from lookahead.index import warmup
    from lookahead.models import load_model

    torch.set_num_threads(args.threads)
    model, tok = load_model(args.model)
    V = model.config.vocab_size
    warmup()  # every numba hot path, before timing (the tiny run below does not reach memory learning)
    lookahead.generate(model, [[1, 2, 3]], max_new_tokens=4)  # warm-up (numba cache, allocator)
    _hf(model, tok, [1, 2, 3], 4, True)
    rows, batch_rows, mismatches = [], [], []
    for wl in args.workloads.split(","):
        prompts = _prompts(wl, args.prompts)
        drafters = {"lookahead chain": lookahead.Drafter(args.max_draft, tree=False, vocab_size=V),
                    "lookahead tree": lookahead.Drafter(args.max_draft, tree=True, vocab_size=V)}
        # "lookahead, no drafts": this engine decoding plainly (max_draft=0), to show how much of the gain is its
        # CPU forward path (lookahead.fastpath) and how much is speculation
        acc = {k: [0, 0.0, 0, 0] for k in ("plain", "hf prompt lookup", "lookahead, no drafts", *drafters)}
        for ids in progress(prompts, desc=f"{wl} b=1"):
            ref, dt = _hf(model, tok, ids, args.max_new_tokens, False)
            acc["plain"][0] += len(ref)
            acc["plain"][1] += dt
            y, dt = _hf(model, tok, ids, args.max_new_tokens, True)
            acc["hf prompt lookup"][0] += len(y)
            acc["hf prompt lookup"][1] += dt
            if y != ref:
                mismatches.append(f"{wl}: hf prompt lookup")
            for name, d in [("lookahead, no drafts", None), *drafters.items()]:
                t0 = time.perf_counter()
                g = lookahead.generate(model, [ids], tokenizer=tok, drafter=d, max_new_tokens=args.max_new_tokens,
                                       max_draft=args.max_draft if d is not None else 0)[0]
                acc[name][0] += len(g.token_ids)
                acc[name][1] += time.perf_counter() - t0
                acc[name][2] += g.stats.steps
                if g.token_ids != ref:
                    mismatches.append(f"{wl}: {name}")
        base = acc["plain"][0] / acc["plain"][1]
        pld = acc["hf prompt lookup"][0] / acc["hf prompt lookup"][1]
        for name, (n_tok, s, steps, _) in acc.items():
            tps = n_tok / s
            rows.append({"workload": wl, "batch": 1, "method": name, "tokens": n_tok, "tokens_per_s": tps,
                         "vs_plain": tps / base, "vs_pld": tps / pld,
                         "tau": n_tok / steps if steps else (None if name == "hf prompt lookup" else 1.0)})
        if args.batch:
            bprompts = _prompts(wl, args.batch)
            refs, dt = _hf_batch(model, tok, bprompts, args.max_new_tokens)
            n_tok = sum(len(r) for r in refs)
            batch_rows.append({"workload": wl, "batch": len(bprompts), "method": "plain (HF batched)",
                               "tokens": n_tok, "tokens_per_s": n_tok / dt, "vs_plain": 1.0})
            for tree in (None, False, True):
                d = lookahead.Drafter(args.max_draft, tree=tree, vocab_size=V) if tree is not None else None
                t0 = time.perf_counter()
                gs = lookahead.generate(model, bprompts, tokenizer=tok, drafter=d, max_new_tokens=args.max_new_tokens,
                                        max_draft=args.max_draft if d is not None else 0)
                dtl = time.perf_counter() - t0
                m = sum(len(g.token_ids) for g in gs)
                name = {None: "lookahead, no drafts", False: "lookahead chain", True: "lookahead tree"}[tree]
                batch_rows.append({"workload": wl, "batch": len(bprompts), "method": name, "tokens": m,
                                   "tokens_per_s": m / dtl, "vs_plain": (m / dtl) / (n_tok / dt)})
    print(table(rows, ["workload", "batch", "method", "tokens", "tokens_per_s", "vs_plain", "vs_pld", "tau"],
                f"end to end, greedy, {args.max_new_tokens} new tokens, {args.threads} threads, batch 1"))
    if batch_rows:
        print()
        print(table(batch_rows, ["workload", "batch", "method", "tokens", "tokens_per_s", "vs_plain"],
                    "batched (HF prompt lookup supports batch 1 only)"))
    print("outputs identical to plain greedy: " + ("all" if not mismatches else "NOT for " + ", ".join(mismatches)))
    if args.plot:
        _plot(rows, args.plot)
        print(f"plot: {args.plot}")
    print(json_line({"bench": "e2e", "max_new_tokens": args.max_new_tokens, "threads": args.threads,
                     "batch1": rows, "batched": batch_rows, "mismatches": mismatches}))
    return 0


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    wls = list(dict.fromkeys(r["workload"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    w = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, m in enumerate(methods):
        vals = [next(r["tokens_per_s"] for r in rows if r["workload"] == wl and r["method"] == m) for wl in wls]
        ax.bar(np.arange(len(wls)) + i * w, vals, w, label=m)
    ax.set_xticks(np.arange(len(wls)) + 0.4 - w / 2, wls)
    ax.set_ylabel("tokens/s (batch 1)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
