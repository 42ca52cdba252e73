"""Prints `lookahead bench replay`: tau per workload and drafter, the cost sweep, batch cost; JSON last."""
import time

import numpy as np

from .replay import batch_cost, context_sweep, make_adapters, predicted_tokens_per_s, replay
from .report import json_line, table


def main(args):
    from lookahead.index import warmup
    from lookahead.models import load_tokenizer

    from .workloads import load_workload

    warmup()
    step_cost = _step_cost(args.step_cost)
    tok = load_tokenizer()
    names = [n for n in args.drafters.split(",") if n]
    rows, skipped = [], set()
    workloads = [w for w in args.workloads.split(",") if w]
    for wl in workloads:
        recs = load_workload(wl, tok, args.limit)
        warm, _ = make_adapters(names, args.budget, tok)
        for a in warm:  # compile numba / load caches outside the timed replay
            replay(recs[:1], a, args.budget)
        adapters, sk = make_adapters(names, args.budget, tok)
        skipped.update(sk)
        for a in adapters:
            t0 = time.perf_counter()
            r = replay(recs, a, args.budget, wl)
            r.update(workload=wl, drafter=a.name, wall_s=time.perf_counter() - t0)
            if step_cost:
                r["predicted_tok_s"] = predicted_tokens_per_s(r, step_cost)
            rows.append(r)
    cols = ["workload", "drafter", "tau", "nodes_per_step", "us_per_step", "memory_mb", "steps"]
    print(table(rows, cols + (["predicted_tok_s"] if step_cost else []),
                f"replay, budget {args.budget} (greedy acceptance against recorded outputs)"))
    if skipped:
        print("skipped (not installed):", ", ".join(sorted(skipped)))
    ratios = _ratios(rows)
    if ratios:
        print()
        print(table(ratios, ["workload", "lookahead", "vs_arctic", "vs_best_anchor", "vs_oracle", "vs_oracle_all"],
                    "best lookahead against anchors (tau ratio, same run)"))
    sweep, scale = [], None
    lengths = [int(x) for x in args.sweep.split(",") if x]
    if workloads:  # the costs are measured on every public workload's text
        text_for_sweep, ends = _sweep_text(tok)
    if lengths and workloads:
        sweep_names = [n for n in names if not n.startswith("oracle")]
        sweep = context_sweep(text_for_sweep, lengths, sweep_names, args.budget, ends=ends, tokenizer=tok)
        print()
        print(table(sweep, ["drafter", "context", "us_per_step", "us_per_prompt_token"],
                    f"drafter cost against context length (append one token + propose, one request; the mean over "
                    f"{len(ends)} places, one in each public workload's text, the same places at every length)"))
        scale = machine_scale(sweep)
        if scale:
            print(f"yardstick: vLLM ngram's step at a 1k context costs {NGRAM_1K_US / scale:.2f} us here and "
                  f"{NGRAM_1K_US} us where the anchors of ../shared/bench/README.md were measured: times "
                  f"{scale:.2f}, this machine's costs compare with those")
    batch = []
    if workloads:
        batch = batch_cost([{"prompt_ids": text_for_sweep, "output_ids": text_for_sweep[:0]}], budget=args.budget,
                           tokenizer=tok)
        print()
        print(table(batch, ["drafter", "requests", "context", "us_per_request_arrays", "us_per_request_drafts",
                            "us_per_request_step", "us_per_request_vllm"],
                    "one native call over many requests: propose_arrays / propose_many, step_arrays (append 1 "
                    "token + propose), and a step of the vLLM proposer (LookaheadProposer.propose)"))
    if args.plot:
        _plot(rows, sweep, args.plot)
        print(f"plot: {args.plot}")
    print(json_line({"bench": "replay", "budget": args.budget, "results": rows, "ratios": ratios,
                     "context_sweep": sweep, "batch": batch, "machine_scale": scale}))
    return 0


# vLLM ngram's µs per step at a 1k context where the public anchors were measured (../shared/bench/README.md)
NGRAM_1K_US = 2.5


def machine_scale(sweep):
    """NGRAM_1K_US over this run's ngram step at 1k: the factor that puts this machine's µs on the anchors'
    machine (a machine's speed differs 2-4x between days and hosts; absolute µs goals need it). None when the
    sweep has no ngram at 1k."""
    for r in sweep:
        if r["drafter"] == "vllm ngram" and r["context"] == 1024 and r["us_per_step"] > 0:
            return NGRAM_1K_US / r["us_per_step"]
    return None


def _sweep_text(tok):
    """The cost measurements' text: every public workload's records (prompt, then output), one workload after
    another, and one place in the middle of each workload's part: real text that does not repeat, as a long
    context does not (a repeated text is indexed much faster: its repeats add few states, and the automaton stays
    small enough for the cache), and each kind of content, as a step's cost depends on it (context_sweep and
    batch_cost repeat a text too short for them). Returns (int32 text, places)."""
    from .workloads import WORKLOADS, load_workload, records_text

    parts, ends, n = [], [], 0
    for wl in WORKLOADS:
        part = records_text(load_workload(wl, tok))
        ends.append(n + len(part) // 2)
        parts.append(part)
        n += len(part)
    return np.concatenate(parts).astype(np.int32), ends


def _step_cost(text):
    if not text:
        return None
    try:
        c = tuple(float(x) for x in text.split(","))
    except ValueError:
        c = ()
    if len(c) != 3 or min(c) < 0:
        raise SystemExit(f"--step-cost {text!r}: give three non-negative numbers EMPTY,FIXED,PER_TOKEN in ms, e.g. "
                         "37.8,41.4,2.22")
    return c


def _ratios(rows):
    out = []
    by = {}
    for r in rows:
        by.setdefault(r["workload"], {})[r["drafter"]] = r["tau"]
    for wl, d in by.items():
        la = max((v for k, v in d.items() if k.startswith("lookahead")), default=None)
        if la is None:
            continue
        anchors = [v for k, v in d.items() if not k.startswith(("lookahead", "oracle"))]
        row = {"workload": wl, "lookahead": la}
        if "arctic suffix" in d:
            row["vs_arctic"] = la / d["arctic suffix"]
        if anchors:
            row["vs_best_anchor"] = la / max(anchors)
        if "oracle (request)" in d:
            row["vs_oracle"] = la / d["oracle (request)"]
        if "oracle (all)" in d:
            row["vs_oracle_all"] = la / d["oracle (all)"]
        out.append(row)
    return out


def _plot(rows, sweep, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2 if sweep else 1, figsize=(13 if sweep else 7, 4.5))
    axes = np.atleast_1d(axes)
    wls = sorted({r["workload"] for r in rows})
    drafters = list(dict.fromkeys(r["drafter"] for r in rows))
    w = 0.8 / max(len(drafters), 1)
    for i, d in enumerate(drafters):
        vals = [next((r["tau"] for r in rows if r["workload"] == wl and r["drafter"] == d), 0) for wl in wls]
        axes[0].bar(np.arange(len(wls)) + i * w, vals, w, label=d)
    axes[0].set_xticks(np.arange(len(wls)) + 0.4 - w / 2, wls)
    axes[0].set_ylabel("tokens per target step (tau)")
    axes[0].legend(fontsize=7)
    if sweep:
        for d in dict.fromkeys(r["drafter"] for r in sweep):
            pts = [(r["context"], r["us_per_step"]) for r in sweep if r["drafter"] == d]
            axes[1].plot(*zip(*pts), marker="o", label=d)
        axes[1].set_xscale("log")
        axes[1].set_yscale("log")
        axes[1].set_xlabel("context tokens")
        axes[1].set_ylabel("µs per request-step")
        axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
