"""lookahead.generate on the real SmolLM2-135M-Instruct: greedy identity, batching, stops, errors, fallback."""
import logging

import pytest
import torch

import lookahead

pytestmark = pytest.mark.slow


def _pick(recorded, per_workload):
    out = []
    for wl in ("code_edit", "completion", "templated", "multi_turn"):
        out += [r for r in recorded if r["id"].startswith(wl)][:per_workload]
    return out


def test_greedy_identical_batch1_on_public_prompts(smollm, recorded):
    model, tok = smollm
    d = lookahead.Drafter(16, tree=True)
    for r in _pick(recorded, 1):
        g = lookahead.generate(model, [r["prompt_token_ids"]], tokenizer=tok, drafter=d, max_new_tokens=96)[0]
        assert g.token_ids == r["output_token_ids"][:96], r["id"]
        assert g.stats.steps <= len(g.token_ids)


def test_greedy_identical_to_model_generate_live(smollm, recorded):
    model, tok = smollm
    ids = _pick(recorded, 1)[0]["prompt_token_ids"]
    x = torch.tensor([ids])
    ref = model.generate(x, max_new_tokens=40, do_sample=False)[0, x.shape[1]:].tolist()
    assert lookahead.generate(model, ids, tokenizer=tok, max_new_tokens=40)[0].token_ids == ref


def test_greedy_identical_batch8_different_lengths(smollm, recorded):
    model, tok = smollm
    recs = _pick(recorded, 2)
    prompts = [r["prompt_token_ids"] for r in recs]
    assert len({len(p) for p in prompts}) > 4
    gens = lookahead.generate(model, prompts, tokenizer=tok, max_new_tokens=48,
                              drafter=lookahead.Drafter(12, tree=False))
    for g, r in zip(gens, recs):
        assert g.token_ids == r["output_token_ids"][:48], r["id"]


def test_eos_ends_a_row_and_others_continue(smollm, recorded):
    model, tok = smollm
    short = next(r for r in recorded if len(r["output_token_ids"]) < 120)  # ends with EOS
    long_ = _pick(recorded, 1)[0]
    gens = lookahead.generate(model, [short["prompt_token_ids"], long_["prompt_token_ids"]], tokenizer=tok,
                              max_new_tokens=200)
    assert gens[0].token_ids == short["output_token_ids"]
    assert gens[0].finish_reason == "eos" and gens[0].token_ids[-1] == tok.eos_token_id
    assert gens[1].token_ids == long_["output_token_ids"][:200]


def test_stop_strings_match_transformers(smollm, recorded):
    model, tok = smollm
    for r in _pick(recorded, 1)[:2]:
        ids = r["prompt_token_ids"]
        x = torch.tensor([ids])
        stops = ["return", "\n\n"]
        ref = model.generate(x, max_new_tokens=80, do_sample=False, stop_strings=stops,
                             tokenizer=tok)[0, x.shape[1]:].tolist()
        g = lookahead.generate(model, ids, tokenizer=tok, max_new_tokens=80, stop=stops)[0]
        assert g.token_ids == ref
        assert g.finish_reason in ("stop", "eos", "length")


def test_stream_yields_the_same_tokens(smollm, recorded):
    model, tok = smollm
    r = _pick(recorded, 1)[1]
    chunks = list(lookahead.generate(model, r["prompt_token_ids"], tokenizer=tok, max_new_tokens=40, stream=True))
    assert [t for c in chunks for t in c.token_ids] == r["output_token_ids"][:40]
    assert all(c.index == 0 and c.token_ids for c in chunks)


def test_strings_chat_template_and_reference(smollm):
    model, tok = smollm
    code = "def area(w, h):\n    return w * h\n"
    g = lookahead.generate(model, "Rename w to width in:\n" + code, tokenizer=tok, chat=True, reference=code,
                           max_new_tokens=30)[0]
    assert isinstance(g.text, str) and len(g.token_ids) > 0


class FailingDrafter(lookahead.Drafter):
    def __init__(self, fail_after):
        super().__init__(16)
        self.calls = 0
        self.fail_after = fail_after

    def propose(self, h, max_draft=None):
        self.calls += 1
        if self.calls > self.fail_after:
            raise RuntimeError("drafter bug on purpose")
        return super().propose(h, max_draft)


def test_drafter_failure_falls_back_to_plain_decoding(smollm, recorded, caplog):
    model, tok = smollm
    r = _pick(recorded, 1)[0]
    with caplog.at_level(logging.WARNING, logger="lookahead"):
        g = lookahead.generate(model, r["prompt_token_ids"], tokenizer=tok, drafter=FailingDrafter(3),
                               max_new_tokens=64)[0]
    assert g.token_ids == r["output_token_ids"][:64]
    assert g.stats.drafter_failures == 1
    assert "drafter failed" in caplog.text


def test_bad_inputs(smollm):
    model, tok = smollm
    with pytest.raises(ValueError, match="empty"):
        lookahead.generate(model, [[]], tokenizer=tok)
    with pytest.raises(ValueError, match="empty"):
        lookahead.generate(model, [""], tokenizer=tok, chat=False)
    with pytest.raises(ValueError, match="context"):
        lookahead.generate(model, [[1] * (model.config.max_position_embeddings + 1)])
    with pytest.raises(ValueError, match="tokenizer"):
        lookahead.generate(model, ["hello"])
    with pytest.raises(ValueError, match="stop strings need a tokenizer"):
        lookahead.generate(model, [[1, 2]], stop=["x"])
    with pytest.raises(ValueError, match="temperature"):
        lookahead.generate(model, [[1, 2]], temperature=-1.0)
    with pytest.raises(ValueError, match="top_p"):
        lookahead.generate(model, [[1, 2]], temperature=1.0, top_p=0.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        lookahead.generate(model, [[1, 2]], max_new_tokens=0)
    with pytest.raises(ValueError, match="max_draft"):
        lookahead.generate(model, [[1, 2]], max_draft=-1)
    with pytest.raises(ValueError, match="reference"):
        lookahead.generate(model, [[1, 2], [3, 4]], reference=["a", "b", "c"], tokenizer=tok)

    class NoCache(torch.nn.Module):
        config = model.config

        def forward(self, input_ids):
            return input_ids

    with pytest.raises(ValueError, match="KV cache"):
        lookahead.generate(NoCache(), [[1, 2]])


def test_hf_candidate_generator_adapter(smollm, recorded):
    from lookahead.hf import speculate

    model, tok = smollm
    r = _pick(recorded, 1)[0]
    x = torch.tensor([r["prompt_token_ids"]])
    d = lookahead.Drafter(16)
    with speculate(model, d) as kw:
        y = model.generate(x, max_new_tokens=64, do_sample=False, **kw)[0, x.shape[1]:].tolist()
    assert y == r["output_token_ids"][:64]
    assert d.active == 0 and d.memory.documents == 1  # the request ended and was learnt


def test_fast_forward_and_no_drafts_keep_greedy_output(smollm, recorded):
    """The CPU forward path (lookahead.fastpath) changes only rounding: greedy output stays the model's, with
    and without drafts, and the model is restored afterwards."""
    from lookahead.fastpath import FastForward

    model, tok = smollm
    before = model.config._attn_implementation
    for r in _pick(recorded, 1)[2:]:
        for kw in ({"max_draft": 0}, {"fast_forward": False}, {}):
            g = lookahead.generate(model, [r["prompt_token_ids"]], tokenizer=tok, max_new_tokens=64, **kw)[0]
            assert g.token_ids == r["output_token_ids"][:64], (r["id"], kw)
            if kw.get("max_draft") == 0:
                assert g.stats.drafted == 0 and g.stats.steps == len(g.token_ids)
    assert model.config._attn_implementation == before
    assert not any("forward" in m.__dict__ for m in model.modules())
    wrapped = model.lm_head
    wrapped.forward = lambda h: torch.nn.functional.linear(h, wrapped.weight)  # e.g. an offload hook
    try:
        with FastForward(model):
            assert wrapped.__dict__["forward"].__name__ == "<lambda>"
        assert wrapped.__dict__["forward"].__name__ == "<lambda>"
    finally:
        del wrapped.forward
    x = torch.tensor([_pick(recorded, 1)[0]["prompt_token_ids"][:300]])
    with torch.inference_mode():
        ref = model(input_ids=x).logits
        for rows in (1, 2, 5, 16, 17):
            with FastForward(model) as ff:
                assert ff.enabled and ff.attn
                got = model(input_ids=x[:, :rows]).logits
            assert torch.allclose(got, ref[:, :rows], atol=1e-3, rtol=0), rows
