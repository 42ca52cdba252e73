"""`lookahead generate PROMPT [--model PATH] [--file code.py] [--compare]`: the README's main job."""
import argparse
import sys
import time


def main(argv):
    ap = argparse.ArgumentParser(prog="lookahead generate",
                                 description="generate with model-free speculative decoding on a real model")
    ap.add_argument("prompt", nargs="?", help="the request (read from stdin when omitted)")
    ap.add_argument("--model", default=None, help="local HF model folder (default: SmolLM2-135M-Instruct, offline)")
    ap.add_argument("--file", default=None, help="a file the answer may copy from (code editing): it is appended to "
                    "the prompt and given to the drafter as reference text")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--top-k", type=int, default=None)
    ap.add_argument("--top-p", type=float, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--stop", action="append", default=None, help="stop string (repeatable)")
    ap.add_argument("--max-draft", type=int, default=16)
    ap.add_argument("--tree", action="store_true", help="draft token trees instead of chains")
    ap.add_argument("--corpus", default=None, help="a corpus index (.lkidx) to draft from")
    ap.add_argument("--no-chat", action="store_true", help="do not apply the chat template")
    ap.add_argument("--compare", action="store_true", help="also run plain decoding and report the speedup")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args(argv)

    prompt = args.prompt if args.prompt is not None else sys.stdin.read()
    if not prompt.strip():
        ap.error("the prompt is empty; pass it as an argument or on stdin")
    import torch

    import lookahead
    from lookahead.index import warmup
    from lookahead.models import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    reference = None
    if args.file:
        with open(args.file, encoding="utf-8", errors="replace") as f:
            reference = f.read()
        prompt = f"{prompt}\n\n```\n{reference}\n```"
    t0 = time.perf_counter()
    model, tok = load_model(args.model)
    load_s = time.perf_counter() - t0
    drafter = lookahead.Drafter(max_draft=args.max_draft, tree=args.tree, corpus=args.corpus,
                                vocab_size=model.config.vocab_size, tokenizer=tok)
    common = dict(tokenizer=tok, max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_k=args.top_k,
                  top_p=args.top_p, stop=args.stop, seed=args.seed, chat=not args.no_chat)
    # numba's hot paths compiled (or loaded from its cache) before any timing: the tiny run below does not
    # reach all of them (memory learning at a request's end compiled inside the timed run on a cold cache,
    # 4.6 -> 10.7 s for the README's example)
    warmup()
    # one tiny warm-up run so neither timing pays for first-call costs (numba cache load, allocator)
    lookahead.generate(model, ["hi"], max_new_tokens=2, drafter=lookahead.Drafter(learn=False), **{
        k: v for k, v in common.items() if k != "max_new_tokens"})
    out = lookahead.generate(model, [prompt], drafter=drafter, reference=reference, max_draft=args.max_draft,
                             **common)[0]
    if not args.quiet:
        print(out.text)
    st = out.stats
    line = (f"[lookahead] {st.new_tokens} tokens in {st.wall_s:.2f} s: {st.tokens_per_s:.1f} tokens/s, "
            f"tau {st.tau:.2f} ({st.steps} steps, {st.accepted} draft tokens accepted of {st.drafted}), "
            f"finish: {out.finish_reason}, model load {load_s:.1f} s")
    if args.compare:
        plain = _plain(model, tok, prompt, args)
        same = "identical output" if plain["ids"] == out.token_ids else "outputs differ (sampling)" \
            if args.temperature > 0 else "OUTPUTS DIFFER"
        line += (f"\n[plain]     {len(plain['ids'])} tokens in {plain['s']:.2f} s: {plain['tps']:.1f} tokens/s; "
                 f"speedup {st.tokens_per_s / plain['tps']:.2f}x, {same}")
    print(line)
    return 0


def _plain(model, tok, prompt, args):
    """HF generate without speculation, same settings."""
    import torch

    ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                  tokenize=True) if not args.no_chat else tok(prompt).input_ids
    ids = ids["input_ids"] if hasattr(ids, "keys") else ids
    x = torch.tensor([list(ids)])
    kw = dict(max_new_tokens=args.max_new_tokens, do_sample=args.temperature > 0,
              pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
    if args.temperature > 0:
        kw.update(temperature=args.temperature, top_k=args.top_k or 0, top_p=args.top_p or 1.0)
    if args.stop:
        kw.update(stop_strings=args.stop, tokenizer=tok)
    t0 = time.perf_counter()
    with torch.inference_mode():
        y = model.generate(x, **kw)[0, x.shape[1]:].tolist()
    s = time.perf_counter() - t0
    return {"ids": y, "s": s, "tps": len(y) / s}
