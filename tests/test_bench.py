"""The replay benchmark's pieces: greedy acceptance, the model-output workloads, the cost sweep."""
import json
import os
import re

import numpy as np
import pytest

from lookahead.bench.replay import accepted_length, batch_cost, context_sweep, make_adapters, replay
from lookahead.bench.workloads import load_workload


def test_accepted_length_follows_the_matching_root_path():
    # tree: 5 -> 6 -> 7 and 5 -> 8 -> 9; the target goes 5, 8, 9, 1
    toks = np.array([5, 6, 7, 8, 9], np.int32)
    pars = np.array([-1, 0, 1, 0, 3], np.int32)
    assert accepted_length(toks, pars, np.array([5, 8, 9, 1])) == 3
    assert accepted_length(toks, pars, np.array([5, 6, 1])) == 2
    assert accepted_length(toks, pars, np.array([4])) == 0
    assert accepted_length(toks[:0], pars[:0], np.array([4])) == 0


def test_model_output_workloads_load_without_a_tokenizer():
    recs = load_workload("model:code_edit", None)
    assert len(recs) == 25
    for r in recs:
        assert r["id"].startswith("code_edit")
        assert r["prompt_ids"].dtype == np.int32 and r["output_ids"].dtype == np.int32
        assert len(r["prompt_ids"]) > 0 and len(r["output_ids"]) > 0
    mt = load_workload("model:multi_turn", None, limit=3)
    assert len(mt) == 3
    for r in mt:  # turns of one session share it
        assert r["id"].startswith(r["session"] + "-t") and re.search(r"-t\d+$", r["session"]) is None
    with pytest.raises(FileNotFoundError, match="model:"):
        load_workload("model:poetry", None)


def test_replay_on_model_outputs_scores_lookahead_between_plain_and_oracle():
    recs = load_workload("model:templated", None, limit=4)
    made, _ = make_adapters(["lookahead-chain", "oracle"], 16)
    la, oracle = (replay(recs, a, 16) for a in made)
    assert la["tokens"] == oracle["tokens"] == sum(len(r["output_ids"]) for r in recs)
    assert 1.0 < la["tau"] <= 17.0 and oracle["tau"] >= la["tau"] * 0.5
    assert la["steps"] < la["tokens"]  # drafts were accepted


def test_cost_sweep_and_batch_cost_report_every_length():
    text = np.random.default_rng(0).integers(0, 50, 3000).astype(np.int32)
    rows = context_sweep(text, [256, 1024], ["lookahead-chain"], 8, steps=20, passes=2)
    assert [r["context"] for r in rows] == [256, 1024]
    assert all(r["us_per_step"] > 0 and r["us_per_prompt_token"] > 0 for r in rows)
    # several places, a context reaching past the text's start (it wraps around), the last place near the end
    rows = context_sweep(text, [256, 2048], ["lookahead-chain"], 8, steps=20, passes=1, short_passes=1,
                         ends=[100, 1500, 2970])
    assert [(r["context"], r["places"]) for r in rows] == [(256, 3), (2048, 3)]
    assert all(r["us_per_step"] > 0 and r["us_per_prompt_token"] > 0 for r in rows)
    recs = [{"prompt_ids": text[:1500], "output_ids": text[1500:]}]
    b = batch_cost(recs, sizes=(8,), budget=8, context=256)
    assert len(b) == 2 and all(r["us_per_request_step"] > 0 and r["us_per_request_arrays"] > 0 for r in b)
    assert all(r["us_per_request_vllm"] > 0 for r in b)
    # a workload shorter than the context (bench replay --limit 3 on completion) is repeated, not an IndexError
    short = batch_cost([{"prompt_ids": text[:200], "output_ids": text[200:250]}], sizes=(8,), budget=8, context=256)
    assert len(short) == 2 and all(r["us_per_request_step"] > 0 for r in short)


def test_machine_scale_and_long_sweep_text():
    from lookahead.bench.replay_cli import NGRAM_1K_US, _sweep_text, machine_scale
    rows = [{"drafter": "lookahead chain", "context": 1024, "us_per_step": 3.0},
            {"drafter": "vllm ngram", "context": 8192, "us_per_step": 20.0},
            {"drafter": "vllm ngram", "context": 1024, "us_per_step": 5.0}]
    assert machine_scale(rows) == pytest.approx(NGRAM_1K_US / 5.0)
    assert machine_scale(rows[:2]) is None  # no ngram at 1k: nothing to scale by
    # the costs' text: every public workload's records, one workload after another, a place in each one's middle
    from lookahead.bench.workloads import WORKLOADS
    from lookahead.models import load_tokenizer
    tok = load_tokenizer()
    text, ends = _sweep_text(tok)
    parts = [np.concatenate([np.concatenate([r["prompt_ids"], r["output_ids"]]) for r in load_workload(w, tok)])
             for w in WORKLOADS]
    assert text.dtype == np.int32 and text.tolist() == np.concatenate(parts).tolist()
    starts = np.cumsum([0] + [len(p) for p in parts])
    assert len(ends) == len(WORKLOADS) and all(starts[i] < e < starts[i + 1] for i, e in enumerate(ends))


def test_vllm_bench_settings_variants_reach_the_proposer():
    from lookahead.bench.vllm_bench import _settings_env, _variant_settings
    from lookahead.vllm import ENV, load_settings

    env = _settings_env(_variant_settings("lookahead:min_prob=0.3+max_draft=8+tree=false"))
    s = load_settings(env)
    os.unlink(env[ENV])
    assert (s.min_prob, s.max_draft, s.tree) == (0.3, 8, False)
    with pytest.raises(SystemExit, match="key=value"):
        _variant_settings("lookahead:min_prob")
    env = _settings_env(_variant_settings("lookahead:min_prb=0.3"))
    with pytest.raises(ValueError, match="unknown setting"):
        load_settings({ENV: env[ENV]})
    os.unlink(env[ENV])


def test_step_cost_prediction():
    from lookahead.bench.replay import predicted_tokens_per_s
    from lookahead.bench.replay_cli import _step_cost

    # 10 steps, 4 of them without a draft, 12 drafted tokens, 30 tokens: 4*30 + 6*40 + 12*2 = 384 ms
    r = {"tokens": 30, "steps": 10, "empty_steps": 4, "nodes_per_step": 1.2}
    assert predicted_tokens_per_s(r, (30.0, 40.0, 2.0)) == pytest.approx(30 / 0.384)
    assert _step_cost("37.8,41.4,2.22") == (37.8, 41.4, 2.22) and _step_cost(None) is None
    for bad in ("1,2", "a,b,c", "1,-2,3"):
        with pytest.raises(SystemExit, match="EMPTY,FIXED,PER_TOKEN"):
            _step_cost(bad)
    recs = load_workload("model:completion", None, limit=3)
    res = replay(recs, make_adapters(["lookahead-chain"], 16)[0][0], 16)
    assert 0 <= res["empty_steps"] <= res["steps"]


def _oracle(monkeypatch, tmp_path, pairs, k=4):
    from types import SimpleNamespace

    from lookahead.bench.oracle_proposer import ENV as ORACLE_ENV, OracleProposer

    path = tmp_path / "oracle.json"
    path.write_text(json.dumps(pairs))
    monkeypatch.setenv(ORACLE_ENV, str(path))
    return OracleProposer(SimpleNamespace(speculative_config=SimpleNamespace(num_speculative_tokens=k)))


def test_oracle_proposer_drafts_the_recorded_continuation(monkeypatch, tmp_path):
    prompts = [[1, 2, 3], list(range(10, 30)), [1, 2, 3, 4]]  # [1, 2, 3] is also a prefix of another prompt
    outputs = [[7, 8, 9, 10, 11, 12], [5, 5, 6], [40, 41]]
    o = _oracle(monkeypatch, tmp_path, [[p, q] for p, q in zip(prompts, outputs)])
    rows = [prompts[0] + outputs[0][:2], prompts[1] + [5], prompts[2], prompts[0] + [9], [99, 98]]
    table = np.zeros((len(rows), 32), np.int32)
    for i, r in enumerate(rows):
        table[i, :len(r)] = r
    drafts = o.propose([[1]] * len(rows), np.array([len(r) for r in rows]), table)
    # the continuation, capped at k; a row that left the recorded output or an unknown prompt gets nothing
    assert drafts == [[9, 10, 11, 12], [5, 6], [40, 41], [], []]
    assert o.propose([[]], np.array([3]), table[:1]) == [[]]  # a partial prefill: nothing to draft


def test_oracle_proposer_needs_its_outputs_file(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from lookahead.bench.oracle_proposer import ENV as ORACLE_ENV, OracleProposer

    cfg = SimpleNamespace(speculative_config=SimpleNamespace(num_speculative_tokens=4))
    monkeypatch.delenv(ORACLE_ENV, raising=False)
    with pytest.raises(ValueError, match=ORACLE_ENV):
        OracleProposer(cfg)
    monkeypatch.setenv(ORACLE_ENV, str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="not a readable JSON"):
        OracleProposer(cfg)


def test_vllm_bench_runs_the_oracle_after_no_speculation():
    from lookahead.bench.vllm_bench import order_jobs

    first = [("none", 1), ("lookahead", 1), ("suffix", 1), ("oracle", 1),
             ("none", 8), ("lookahead", 8), ("suffix", 8), ("oracle", 8)]
    assert order_jobs(["oracle", "lookahead", "none", "suffix"], [1, 8]) == [(m, c, 0) for m, c in first]
    # later passes alternate the order (the oracle reuses the first pass's no-speculation outputs)
    jobs = order_jobs(["oracle", "lookahead", "none", "suffix"], [1, 8], passes=3)
    assert jobs == [(m, c, 0) for m, c in first] + [(m, c, 1) for m, c in first[::-1]] + \
        [(m, c, 2) for m, c in first]


def test_vllm_bench_ratios_are_taken_within_a_pass():
    from lookahead.bench.vllm_bench import summarize

    def run(method, pas, tps, acc=None):
        return {"workload": "w", "concurrency": 8, "method": method, "pass": pas, "tokens": 100,
                "tokens_per_s": tps, "draft_tokens": 10, "accepted": 5, "acceptance": acc,
                "same_as_first_pass": True}

    # the machine is twice as fast in pass 1: within each pass lookahead is 1.2x ngram, 1.5x none
    runs = [run("none", 0, 10.0), run("ngram", 0, 12.5), run("lookahead", 0, 15.0, 0.5),
            run("none", 1, 20.0), run("ngram", 1, 25.0), run("lookahead", 1, 30.0, 0.7),
            run("none", 2, 10.0), run("ngram", 2, 12.5), run("lookahead", 2, 15.0, 0.6)]
    outs = {(m, 8, "w"): [[1, 2]] for m in ("none", "ngram", "lookahead")}
    rows = {r["method"]: r for r in summarize(runs, outs)}
    la = rows["lookahead"]
    assert la["passes"] == 3 and la["tokens_per_s"] == 15.0 and la["spread"] == 0.5
    assert la["vs_ngram"] == pytest.approx(1.2) and la["vs_none"] == pytest.approx(1.5)
    assert la["acceptance"] == 0.6 and la["same_output"]
    assert "vs_ngram" not in rows["none"]
    outs[("ngram", 8, "w")] = [[1, 3]]
    assert not {r["method"]: r for r in summarize(runs, outs)}["ngram"]["same_output"]
