"""`lookahead bench replay`: drafters replayed over recorded outputs under greedy semantics.

Each step the drafter proposes at most `budget` nodes; the target accepts the longest root path equal to the
next recorded tokens, plus one token of its own. tau = output tokens / steps. Records are replayed in file
order so cross-request memory sees earlier requests first. Also: drafter cost against context length,
prompt indexing cost, and batched proposal cost.
"""
import gc
import time

import numpy as np

from . import anchors
from .report import progress
from .workloads import records_text


def accepted_length(tokens, parents, target):
    """Longest root path of the draft equal to a prefix of `target` (greedy acceptance)."""
    n = len(tokens)
    if n == 0 or len(target) == 0:
        return 0
    depth = np.full(n, -1, np.int64)  # depth of a node whose whole path matches, else -1
    best = 0
    for i in range(n):
        p = parents[i]
        d = 0 if p < 0 else (depth[p] + 1 if depth[p] >= 0 else -1)
        if d >= 0 and d < len(target) and tokens[i] == target[d]:
            depth[i] = d
            best = max(best, d + 1)
    return best


def replay(records, adapter, budget, label=""):
    steps = tokens = nodes = empty = 0
    secs = 0.0
    for rec in progress(records, desc=f"{label} {adapter.name}"[:40]):
        out = rec["output_ids"]
        s = adapter.begin(rec["prompt_ids"], out)
        pos = 0
        while pos < len(out):
            t0 = time.perf_counter()
            toks, parents = s.propose(budget)
            t1 = time.perf_counter()
            acc = accepted_length(toks, parents, out[pos:])
            adv = min(acc + 1, len(out) - pos)
            t2 = time.perf_counter()
            s.append(out[pos:pos + adv])
            secs += (t1 - t0) + (time.perf_counter() - t2)
            nodes += len(toks)
            empty += len(toks) == 0
            pos += adv
            steps += 1
        tokens += len(out)
        s.end()
    return {"tau": tokens / max(steps, 1), "nodes_per_step": nodes / max(steps, 1),
            "us_per_step": 1e6 * secs / max(steps, 1), "steps": steps, "tokens": tokens, "empty_steps": empty,
            "memory_mb": adapter.memory_bytes() / 2**20}


def predicted_tokens_per_s(r, step_cost):
    """Engine tokens/s a replay result predicts under a step-cost model (ms): step_cost = (a step verifying no
    draft, a step verifying a draft, each drafted token), e.g. fitted to an engine's measured runs. On
    vLLM-CPU 0.32 with SmolLM2 (c=1) (37.8, 41.4, 2.22) reproduced four measured methods within 1%."""
    empty_ms, fixed_ms, token_ms = step_cost
    nodes = r["nodes_per_step"] * r["steps"]
    ms = r["empty_steps"] * empty_ms + (r["steps"] - r["empty_steps"]) * fixed_ms + nodes * token_ms
    return 1000.0 * r["tokens"] / ms if ms > 0 else float("nan")


def make_adapters(names, budget, tokenizer=None):
    """Adapters by name; anchors that are not installed are skipped with a note. tokenizer: the workloads'
    (lookahead's drafters read which tokens are others' spellings with a leading space from it)."""
    made, skipped = [], []
    for name in names:
        try:
            if name == "lookahead-chain":
                made.append(anchors.LookaheadAdapter(False, budget, tokenizer=tokenizer))
            elif name == "lookahead-tree":
                made.append(anchors.LookaheadAdapter(True, budget, tokenizer=tokenizer))
            elif name == "ngram":
                made.append(anchors.NgramAdapter(budget))
            elif name == "suffix":
                made.append(anchors.ArcticAdapter(budget))
            elif name == "suffix-tree":
                made.append(anchors.ArcticAdapter(budget, tree=True))
            elif name == "pld":
                made.append(anchors.PromptLookupAdapter(budget))
            elif name == "oracle":
                made.append(anchors.OracleAdapter(False))
            elif name == "oracle-all":
                made.append(anchors.OracleAdapter(True))
            else:
                raise ValueError(f"unknown drafter {name!r}")
        except ImportError as exc:
            skipped.append(f"{name} ({exc.name or exc} not installed)")
    return made, skipped


ALL_DRAFTERS = ("lookahead-chain", "lookahead-tree", "ngram", "suffix", "suffix-tree", "pld", "oracle",
                "oracle-all")


def context_sweep(text, lengths, names, budget, steps=200, passes=3, short_passes=12, ends=None, tokenizer=None):
    """µs per request-step (append one token + propose) at each context length, and µs per prompt token to
    start a request, for each drafter; `text` is real token ids (repeated if too short).

    ends: the places where the timed requests' contexts end (default: one, at max(lengths)); at each, a request
    starts from the L tokens before it (wrapping around to the text's end where L reaches past its start) and
    steps through the text after it. Every length uses the same places, so the rows differ only in how much text
    came before: a cost that grows with the context shows, not the content's (a proposal costs more where the
    context was seen often before: it reads more occurrences). A row is the mean over the places of each place's
    best of `passes` runs (`short_passes` up to 8k tokens, where one run is a fraction of a millisecond and a
    single pause of a machine shared with other work would decide it), each run on a fresh drafter (so none
    learns from another)."""
    ends = [max(lengths)] if ends is None else [int(e) for e in ends]
    need = max(ends) + steps + 1
    text = np.asarray(text, np.int32)
    if len(text) < need:
        text = np.tile(text, -(-need // len(text)))
    rows = []
    for name in names:
        for L in lengths:
            if name.startswith("oracle") or (name == "pld" and L > 32768):
                continue
            n = min(steps, 40) if name == "pld" else steps
            contexts = [np.take(text, np.arange(e - L, e), mode="wrap") for e in ends]
            t_begin = [float("inf")] * len(ends)
            t_step = [float("inf")] * len(ends)
            name_of = None
            for _ in range(short_passes if L <= 8192 else passes):
                for k, (e, ctx) in enumerate(zip(ends, contexts)):
                    made, _ = make_adapters([name], budget, tokenizer)
                    if not made:
                        break
                    a = made[0]
                    name_of = a.name
                    # earlier buffers are released here, and the collector stays off during the timing; the
                    # warm-up comes after the collection, which walks every object and leaves the caches cold (a
                    # 1k-token prompt then took 3x as long to index, for every drafter)
                    gc.collect()
                    gc.disable()
                    try:
                        w = a.begin(text[:64], text[64:80])
                        w.append(text[64:65])
                        w.propose(budget)
                        w.end()
                        t0 = time.perf_counter()
                        s = a.begin(ctx, text[e:e + steps])
                        t_begin[k] = min(t_begin[k], (time.perf_counter() - t0) / L)
                        t0 = time.perf_counter()
                        for i in range(n):
                            s.append(text[e + i:e + i + 1])
                            s.propose(budget)
                        t_step[k] = min(t_step[k], (time.perf_counter() - t0) / n)
                    finally:
                        gc.enable()
                    s.end()
                    del s, w, a, made
                if name_of is None:
                    break
            if name_of is None:
                continue
            rows.append({"drafter": name_of, "context": L, "places": len(ends),
                         "us_per_step": 1e6 * float(np.mean(t_step)),
                         "us_per_prompt_token": 1e6 * float(np.mean(t_begin))})
    return rows


def _best(fn, blocks, per):
    """µs per call: the best of `blocks` timings of `per` calls."""
    best = float("inf")
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        best = min(best, (time.perf_counter() - t0) / per)
    return best * 1e6


def _vllm_step_cost(pool, starts, context, budget, tree, blocks, per):
    """µs per request of LookaheadProposer.propose, every row one token further each call (no vLLM needed:
    the proposer reads only a few fields of the engine's config)."""
    from types import SimpleNamespace

    from lookahead.vllm import LookaheadProposer, VllmSettings

    n = len(starts)
    steps = blocks * per + 2
    width = context + steps + 1
    vocab = int(pool.max()) + 1
    cfg = SimpleNamespace(speculative_config=SimpleNamespace(num_speculative_tokens=budget),
                          model_config=SimpleNamespace(max_model_len=width + 1, get_vocab_size=lambda: vocab))
    p = LookaheadProposer(cfg, VllmSettings(learn=False, tree=tree))
    table = np.stack([pool[s:s + width] for s in starts]).astype(np.int32)
    at = [context]

    def one():
        sampled = table[:, at[0] - 1:at[0]].tolist()
        p.propose(sampled, np.full(n, at[0], np.int64), table)
        at[0] += 1

    one()  # every request starts here (begin), outside the timing
    t = _best(one, blocks, per) / n
    if p.failures:
        raise RuntimeError("the vLLM proposer failed while being timed; see the log")
    return t


def batch_cost(records, sizes=(256,), budget=16, context=1024, tokenizer=None):
    """µs per request of one propose_many over many requests, of one step_arrays (append one token to every
    request, then propose for all: a serving loop's step) in one native call, and of one step of the vLLM
    proposer (lookahead.vllm.LookaheadProposer.propose over a token table, as vLLM calls it: recognising the
    rows' requests, gathering their new tokens, step_arrays, cutting the drafts into lists)."""
    import lookahead

    pool = records_text(records)
    need = context + 64 + 97 * max(sizes)  # a short text is repeated, as in context_sweep
    pool = np.tile(pool, -(-need // max(len(pool), 1)))
    out = []
    for n in sizes:
        for tree in (False, True):
            d = lookahead.Drafter(max_draft=budget, tree=tree, learn=False, tokenizer=tokenizer)
            # spread over the whole text (every workload's, in the CLI): a step's cost depends on the content
            starts = [i * (len(pool) - context - 64) // n for i in range(n)]
            hs = [d.begin(pool[s:s + context]) for s in starts]
            d.propose_arrays(hs)
            blocks, per = 5, 4  # best of 5 blocks of 4 calls: stable on a machine shared with other work
            reps = blocks * per
            offs = np.arange(n + 1, dtype=np.int64)
            nxt = [np.ascontiguousarray(pool[[s + context + r for s in starts]], np.int32) for r in range(reps + 1)]
            d.step_arrays(hs, (nxt[0], offs))
            it = iter(nxt[1:])
            step = _best(lambda: d.step_arrays(hs, (next(it), offs)), blocks, per) / n
            arr = _best(lambda: d.propose_arrays(hs), blocks, per) / n
            objs = _best(lambda: d.propose_many(hs), blocks, per) / n
            out.append({"drafter": "lookahead tree" if tree else "lookahead chain", "requests": n,
                        "context": context, "us_per_request_arrays": arr, "us_per_request_drafts": objs,
                        "us_per_request_step": step,
                        "us_per_request_vllm": _vllm_step_cost(pool, starts, context, budget, tree, blocks, per)})
    return out
