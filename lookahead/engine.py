"""Speculative generation for HF causal LMs: draft (Drafter) -> one tree forward -> verify -> KV compaction.

    outs = lookahead.generate(model, ["def add(a, b):"], tokenizer=tok, max_new_tokens=64)
    outs[0].text, outs[0].token_ids, outs[0].stats

Each step every unfinished row feeds its pending token plus its draft; one forward with a tree mask gives
the target's distribution at every node; `lookahead.kernels.verify` keeps the longest lossless path and adds
the target's own next token; the KV cache keeps exactly the accepted entries. Rows advance by their own
accepted lengths. Greedy output is the target's greedy output; sampled output has the target's distribution.
"""
import inspect
import logging
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .kernels import verify
from .fastpath import FastForward
from .kvcache import cache_len, compact, select_rows
from .policy import DraftPolicy
from .tree import prefill_inputs, tree_inputs

log = logging.getLogger("lookahead")


@dataclass
class GenerationStats:
    steps: int = 0             # target forwards after the prefill
    accepted: int = 0          # draft tokens the target accepted
    drafted: int = 0           # draft nodes verified
    new_tokens: int = 0
    wall_s: float = 0.0        # this call's wall time (shared by the batch)
    drafter_failures: int = 0  # proposals that raised (that request then decoded plainly)

    @property
    def tau(self):
        """Tokens per target step (1.0 = no gain)."""
        return self.new_tokens / max(self.steps, 1)

    @property
    def tokens_per_s(self):
        return self.new_tokens / self.wall_s if self.wall_s > 0 else 0.0


@dataclass
class Generation:
    token_ids: list
    text: str = None
    finish_reason: str = "length"  # "eos" | "stop" | "length"
    stats: GenerationStats = field(default_factory=GenerationStats)


@dataclass(frozen=True)
class StreamChunk:
    index: int       # which prompt
    token_ids: list  # tokens accepted in this step
    text: str = None


def _encode(prompts, tokenizer, chat):
    if isinstance(prompts, (str, bytes)) or (prompts and isinstance(prompts[0], (int, np.integer))):
        prompts = [prompts]
    out = []
    for i, p in enumerate(prompts):
        if isinstance(p, str):
            if tokenizer is None:
                raise ValueError("prompts are strings but no tokenizer was given; pass tokenizer= or token ids")
            if chat:
                if not getattr(tokenizer, "chat_template", None):
                    raise ValueError("chat=True but the tokenizer has no chat template; pass chat=False")
                ids = tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                                    tokenize=True)
                ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
            else:
                ids = tokenizer(p).input_ids
        else:
            ids = p.tolist() if hasattr(p, "tolist") else list(p)
            if any((not isinstance(t, (int, np.integer))) or t < 0 for t in ids):
                raise ValueError(f"prompt {i}: token ids must be non-negative ints")
        if len(ids) == 0:
            raise ValueError(f"prompt {i} is empty; give at least one token (e.g. the BOS token)")
        out.append([int(t) for t in ids])
    return out


def _check_model(model):
    fwd = inspect.signature(model.forward).parameters
    if "past_key_values" not in fwd:
        raise ValueError(f"{type(model).__name__} does not take past_key_values (no KV cache support); "
                         "lookahead needs a causal LM with a KV cache")
    if getattr(model.config, "is_encoder_decoder", False):
        raise ValueError("encoder-decoder models are not supported; use a decoder-only causal LM")


class _StopMatcher:
    """HF semantics: stop at the first token that completes a stop string (the string overlaps that token)."""

    def __init__(self, stops, tokenizer):
        self.stops = [s for s in stops if s]
        self.tok = tokenizer
        self.window = 8 + max((len(s) for s in self.stops), default=0)

    def first_stop(self, generated, start):
        """Index i >= start of the first token in `generated` that completes a stop string, else None."""
        for i in range(start, len(generated)):
            lo = max(0, i + 1 - self.window)
            full = self.tok.decode(generated[lo:i + 1])
            prev = self.tok.decode(generated[lo:i])
            for s in self.stops:
                j = full.find(s, max(0, len(prev) - len(s) + 1))
                if j != -1 and j + len(s) > len(prev):
                    return i
        return None


def generate(model, prompts, *, tokenizer=None, drafter=None, max_new_tokens=256, temperature=0.0, top_k=None,
             top_p=None, stop=None, eos_token_id=None, seed=None, stream=False, chat=False, reference=None,
             max_draft=16, adaptive=True, fast_forward=True):
    """Generates for one prompt or a batch; returns a list of Generation (or, with stream=True, an iterator of
    StreamChunk as tokens are accepted).

    prompts: a string / token-id list, or a list of them. reference: text or ids (or one per prompt) that
    drafts may copy from (e.g. the file being edited). drafter: a lookahead.Drafter (kept across calls for
    cross-request memory); None makes a fresh one. max_draft: the most nodes verified per row and step (0: plain
    decoding through this engine);
    adaptive=True shrinks drafts (down to none) when they do not pay for their verification. fast_forward=True
    (CPU only) routes the small verification batches through faster GEMMs (see lookahead.fastpath)."""
    it = _generate(model, prompts, tokenizer, drafter, max_new_tokens, temperature, top_k, top_p, stop,
                   eos_token_id, seed, chat, reference, max_draft, adaptive, fast_forward)
    if stream:
        return (x for x in it if isinstance(x, StreamChunk))
    result = None
    for x in it:
        if not isinstance(x, StreamChunk):
            result = x
    return result


def _generate(model, prompts, tokenizer, drafter, max_new_tokens, temperature, top_k, top_p, stop, eos_token_id,
              seed, chat, reference, max_draft, adaptive, fast_forward):
    from .draft import _check_budget
    from .drafter import Drafter

    t_start = time.perf_counter()
    _check_model(model)
    no_drafts = isinstance(max_draft, (int, np.integer)) and not isinstance(max_draft, bool) and max_draft == 0
    max_draft = 0 if no_drafts else _check_budget(max_draft, "max_draft")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
    if temperature is None or temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature!r}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must lie in (0, 1], got {top_p}")
    if top_k is not None and top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    if stops and tokenizer is None:
        raise ValueError("stop strings need a tokenizer (to decode tokens); pass tokenizer=")
    ids = _encode(prompts, tokenizer, chat)
    B = len(ids)
    refs = reference if isinstance(reference, (list, tuple)) and reference and not isinstance(
        reference[0], (int, np.integer)) else [reference] * B
    if len(refs) != B:
        raise ValueError(f"reference: give one per prompt ({B}), or a single one for all")
    max_pos = getattr(model.config, "max_position_embeddings", None)
    for i, p in enumerate(ids):
        if max_pos and len(p) >= max_pos:
            raise ValueError(f"prompt {i} has {len(p)} tokens; the model's context is {max_pos}. Shorten it")
    if eos_token_id is None:
        eos_token_id = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        if eos_token_id is None and tokenizer is not None:
            eos_token_id = tokenizer.eos_token_id
    eos = set([eos_token_id] if isinstance(eos_token_id, int) else (eos_token_id or []))
    stopper = _StopMatcher(stops, tokenizer) if stops else None
    if drafter is None:
        drafter = Drafter(max_draft=max(1, max_draft), vocab_size=getattr(model.config, "vocab_size", None),
                          tokenizer=tokenizer)
    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    gen = torch.Generator(device="cpu")
    if seed is not None:
        gen.manual_seed(int(seed))
    else:
        gen.seed()
    policy = DraftPolicy(max_draft) if adaptive else None
    fast = FastForward(model, enabled=fast_forward)

    handles = []
    for p, r in zip(ids, refs):
        if isinstance(r, str):
            r = tokenizer(r, add_special_tokens=False).input_ids if tokenizer is not None else None
        handles.append(drafter.begin(p, reference=r))
    out = [[] for _ in range(B)]
    finish = ["length"] * B
    stats = [GenerationStats() for _ in range(B)]
    drafting = [max_draft > 0] * B
    limit = [min(max_new_tokens, max_pos - len(p)) if max_pos else max_new_tokens for p in ids]

    from transformers import DynamicCache

    cache = DynamicCache()
    try:
        with torch.inference_mode():
            pre = [p[:-1] for p in ids]
            lengths = [len(p) for p in pre]
            if max(lengths) > 0:
                x, pos, mask, _ = prefill_inputs(pre, dtype, device)
                with fast:
                    model(input_ids=x, position_ids=pos, attention_mask=mask, past_key_values=cache,
                          use_cache=True, logits_to_keep=1)
            pending = [p[-1] for p in ids]
            rows = list(range(B))  # batch row -> prompt index
            while rows:
                # drafts
                drafts = []
                for i in rows:
                    toks, pars, probs = [], [], []
                    if drafting[i]:
                        try:
                            d = drafter.propose(handles[i], max_draft)
                            toks, pars, probs = d.tokens, d.parents, d.probs
                        except Exception:  # noqa: BLE001 - a drafter bug must never cost output
                            log.warning("drafter failed for request %d; it continues without speculation", i,
                                        exc_info=True)
                            drafting[i] = False
                            stats[i].drafter_failures += 1
                    drafts.append((toks, pars, probs))
                k = policy.choose([d[2] for d in drafts], rows) if policy else max_draft
                drafts = [(list(t[:k]), list(p[:k]), pr[:k]) for t, p, pr in drafts]
                T = cache_len(cache)
                x, pos, mask, m = tree_inputs([pending[i] for i in rows], [(t, p) for t, p, _ in drafts],
                                              lengths, T, dtype, device)
                t0 = time.perf_counter()
                with fast:
                    logits = model(input_ids=x, position_ids=pos, attention_mask=mask, past_key_values=cache,
                                   use_cache=True).logits
                # verify layout: per row, the root row then one row per node
                sel = torch.cat([torch.arange(1 + len(t)) + j * m for j, (t, _, _) in enumerate(drafts)])
                flat = logits.reshape(-1, logits.shape[-1])[sel.to(logits.device)].float()
                n = torch.tensor([len(t) for t, _, _ in drafts])
                off = torch.zeros(len(rows) + 1, dtype=torch.long)
                off[1:] = torch.cumsum(n, 0)
                dt_tok = torch.tensor([t for d in drafts for t in d[0]], dtype=torch.long)
                dt_par = torch.tensor([p for d in drafts for p in d[1]], dtype=torch.long)
                kw = {}
                if temperature > 0:
                    kw = dict(temperature=torch.full((len(rows),), float(temperature)), generator=gen)
                    if top_k:
                        kw["top_k"] = torch.full((len(rows),), int(top_k))
                    if top_p is not None and top_p < 1:
                        kw["top_p"] = torch.full((len(rows),), float(top_p))
                res = verify(flat.cpu(), dt_tok, dt_par, off, **kw)
                if policy:
                    policy.observe_step(len(rows) * m, time.perf_counter() - t0)
                keep, new_tokens = [], []
                for j, i in enumerate(rows):
                    a = int(res.num_accepted[j])
                    path = res.accepted_nodes[j, :a].tolist()
                    keep.append([0] + [1 + q for q in path])
                    toks = [drafts[j][0][q] for q in path] + [int(res.next_token[j])]
                    st = stats[i]
                    st.steps += 1
                    st.drafted += len(drafts[j][0])
                    st.accepted += a
                    if policy and len(drafts[j][0]):
                        policy.observe_accept(i, float(np.sum(drafts[j][2])), a)
                    new_tokens.append(toks)
                lengths = compact(cache, T, keep, lengths)
                still = []
                for j, i in enumerate(rows):
                    toks = new_tokens[j]
                    start = len(out[i])
                    room = limit[i] - start
                    cut, reason = len(toks), None
                    for q, t in enumerate(toks):
                        if t in eos:
                            cut, reason = q + 1, "eos"
                            break
                    if cut > room:
                        cut, reason = room, "length"
                    out[i].extend(toks[:cut])
                    if stopper is not None:
                        s = stopper.first_stop(out[i], start)
                        if s is not None:
                            del out[i][s + 1:]
                            reason = "stop"
                    if reason is None and len(out[i]) >= limit[i]:
                        reason = "length"
                    emitted = out[i][start:]
                    stats[i].new_tokens = len(out[i])
                    if emitted:
                        yield StreamChunk(i, emitted, tokenizer.decode(emitted) if tokenizer is not None else None)
                        try:  # the drafter sees what entered the sequence (its memory learns the whole output)
                            drafter.append(handles[i], emitted)
                        except Exception:  # noqa: BLE001
                            log.warning("drafter.append failed for request %d; no more speculation for it", i,
                                        exc_info=True)
                            drafting[i] = False
                            stats[i].drafter_failures += 1
                    if reason is not None:
                        finish[i] = reason
                        continue
                    still.append(j)
                    pending[i] = toks[-1]
                if len(still) < len(rows):
                    if still:
                        select_rows(cache, torch.tensor(still, dtype=torch.long))
                    lengths = [lengths[j] for j in still]
                    rows = [rows[j] for j in still]
    finally:
        for i, h in enumerate(handles):
            try:
                drafter.end(h)
            except Exception:  # noqa: BLE001
                log.warning("drafter.end failed for request %d", i, exc_info=True)
            if policy:
                policy.forget(i)
    wall = time.perf_counter() - t_start
    gens = []
    for i in range(B):
        stats[i].wall_s = wall
        text = tokenizer.decode(out[i], skip_special_tokens=True) if tokenizer is not None else None
        gens.append(Generation(out[i], text, finish[i], stats[i]))
    yield gens
