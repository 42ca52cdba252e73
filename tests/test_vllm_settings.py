"""LOOKAHEAD_VLLM_CONFIG validation and row tracking of the proposer, without starting an engine."""
import json
from dataclasses import fields
from types import SimpleNamespace

import numpy as np
import pytest

from lookahead.vllm import _TYPES, AUTO_MIN_PROB, ENV, LookaheadProposer, VllmSettings, auto_min_prob, load_settings


def _cfg(tmp_path, obj):
    p = tmp_path / "s.json"
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return {ENV: str(p)}


def test_defaults_when_unset():
    assert load_settings({}) == VllmSettings()


def test_valid_file(tmp_path):
    s = load_settings(_cfg(tmp_path, {"learn": False, "memory_tokens": 1000, "tree": True, "min_prob": 0.1}))
    assert s.learn is False and s.memory_tokens == 1000 and s.tree and s.min_prob == 0.1
    s = load_settings(_cfg(tmp_path, {"alpha": 3, "normalize": True, "occurrences": 12}))
    assert (s.alpha, s.normalize, s.occurrences) == (3, True, 12)
    assert load_settings(_cfg(tmp_path, {"template_weight": 0})).template_weight == 0


def test_probability_knobs_reach_the_drafter():
    """alpha, normalize and occurrences set how the proposer's drafter estimates probabilities (the floors were
    measured with alpha 1, counts and 4 occurrences, the settings' defaults, not the drafter's)."""
    c = _proposer().drafter.config
    assert (c.alpha, c.normalize, c.occurrences) == (1.0, False, 4)
    c = _proposer(alpha=3, normalize=True, occurrences=12).drafter.config
    assert (c.alpha, c.normalize, c.occurrences) == (3.0, True, 12)
    assert _proposer().drafter.config.template_weight == 2.0
    assert _proposer(template_weight=0).drafter.config.template_weight == 0.0


@pytest.mark.parametrize("obj,msg", [
    ({"memory_tokenz": 1}, "unknown setting"),
    ({"learn": "yes"}, "learn must be true or false"),
    ({"memory_tokens": -5}, "memory_tokens must be an int in 0.."),
    ({"memory_tokens": True}, "memory_tokens must be an integer, got True"),
    ({"min_prob": 1.5}, r"min_prob must be in .* \(or null: by the step's number of drafting rows\)"),
    ({"min_prob": "0.5"}, "min_prob must be a number or null, got '0.5'"),
    ({"alpha": 0}, "alpha must be finite and > 0"),
    ({"alpha": "3"}, "alpha must be a number, got '3'"),
    ({"normalize": 1}, "normalize must be true or false"),
    ({"occurrences": 0}, "occurrences must be an int in 1..256"),
    ({"max_draft": 0}, "max_draft must be in 1..1024"),
    ({"max_draft": 16.0}, "max_draft must be an integer or null, got 16.0"),
    ({"occurrences": 4.5}, "occurrences must be an integer"),
    ({"template_weight": -1}, "template_weight must be finite and >= 0"),
    ({"template_weight": "2"}, "template_weight must be a number"),
    ({"corpus": "/nonexistent/x.lkidx"}, "does not exist"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
])
def test_invalid_files(tmp_path, obj, msg):
    with pytest.raises(ValueError, match=msg):
        load_settings(_cfg(tmp_path, obj))


@pytest.mark.parametrize("kw,msg", [
    ({"alpha": -1.0}, "alpha must be finite and > 0"),
    ({"occurrences": 300}, "occurrences must be an int in 1..256"),
    ({"learn": 1}, "learn must be true or false"),
    ({"max_draft": 2000}, "max_draft must be in 1..1024"),
    ({"corpus": "/nonexistent/x.lkidx"}, "does not exist"),
])
def test_settings_made_in_code_are_checked_too(kw, msg):
    """A script's VllmSettings get the checks a settings file gets (not only once the engine starts)."""
    with pytest.raises(ValueError, match=msg):
        VllmSettings(**kw)


def test_every_setting_has_its_json_types():
    """A setting added to VllmSettings without its types in _TYPES would go unchecked."""
    assert set(_TYPES) == {f.name for f in fields(VllmSettings)}


def test_missing_file():
    with pytest.raises(ValueError, match="no such file"):
        load_settings({ENV: "/nonexistent/settings.json"})


def _proposer(k=6, max_len=4096, **kw):
    cfg = SimpleNamespace(speculative_config=SimpleNamespace(num_speculative_tokens=k),
                          model_config=SimpleNamespace(max_model_len=max_len, get_vocab_size=lambda: 100))
    kw.setdefault("min_prob", 0.0)  # these tests are about row tracking: keep whole drafts
    return LookaheadProposer(cfg, settings=VllmSettings(**kw))


def test_rows_are_tracked_by_content_across_condensing():
    p = _proposer()
    a = [1, 2, 3, 4, 5, 6, 7, 1, 2, 3]
    b = [9, 8, 7, 6, 9, 8, 7]
    table = np.zeros((4, 64), np.int32)

    def put(row, toks):
        table[row, :len(toks)] = toks
        return len(toks)

    n = [put(0, a), put(1, b), 0, 0]
    d = p.propose([[3], [7]], np.array(n), table)
    assert d[0] == [4, 5, 6, 7, 1, 2][:6] and d[1][:2] == [6, 9]
    assert p.drafter.active == 2
    # vLLM condenses: b moves to row 0, a to row 2, each with new tokens
    a2, b2 = a + [4, 5], b + [6]
    n = [put(0, b2), 0, put(2, a2), 0]
    d = p.propose([[6], [], [4, 5]], np.array(n), table)
    assert p.drafter.active == 2  # recognised, not restarted
    assert d[2][:2] == [6, 7] and d[0][:2] == [9, 8]
    # a request missing for two steps is finished (and learnt)
    n = [put(0, b2 + [9]), 0, 0, 0]
    p.propose([[9], [], [], []], np.array(n), table)
    p.propose([[8], [], [], []], np.array([n[0] + 1, 0, 0, 0]), table + 0)
    assert p.drafter.active == 1 and p.drafter.memory.documents == 1


def test_max_model_len_caps_drafts_and_exceptions_give_empty_drafts():
    p = _proposer(k=8, max_len=12)
    table = np.zeros((1, 16), np.int32)
    table[0, :10] = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]
    d = p.propose([[1]], np.array([10]), table)
    assert len(d[0]) <= 1
    bad = p.propose([[1]], np.array([10]), "not a table")
    assert bad == [[]] and p.failures == 1


def test_auto_min_prob_rises_with_the_rows_that_draft():
    ts = [auto_min_prob(r) for r in (0, 1, 2, 4, 8, 64)]
    assert ts[0] == ts[1] == AUTO_MIN_PROB[0] and ts[-2] == ts[-1] == AUTO_MIN_PROB[1]
    assert all(a < b for a, b in zip(ts[1:5], ts[2:5]))
    assert load_settings({}).min_prob is None  # the default is by batch size


def test_drafts_stop_at_the_batch_sized_floor():
    # the drafter is asked down to the lowest floor; the proposer cuts each row where the reach probability
    # falls below the floor for this step's number of drafting rows
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 300).tolist()  # repetitive text: drafts with falling reach probabilities
    for rows in (1, 8):
        p = _proposer(k=16, min_prob=None)
        ref = _proposer(k=16, min_prob=0.0)
        table = np.zeros((rows, 512), np.int32)
        for r in range(rows):
            table[r, :len(a)] = a[r:] + a[:r]
        n = np.full(rows, len(a))
        got = p.propose([[1]] * rows, n, table)
        full = ref.propose([[1]] * rows, n, table)
        floor = auto_min_prob(rows)
        for r in range(rows):
            d = ref.drafter.propose(ref.drafter.begin(table[r, :len(a)]))
            keep = int(np.flatnonzero(np.append(d.probs, 0.0) < floor)[0])
            assert got[r] == full[r][:keep]
        assert sum(map(len, got)) < sum(map(len, full))


def test_the_proposer_reads_the_targets_spacing_through_vllm():
    # vLLM's own tokenizer of the target tells the drafter which token is another's spelling with a leading
    # space (index/spacing.py); a config without one (this file's other proposers) leaves tokens compared exactly
    pytest.importorskip("vllm")
    from vllm.config import ModelConfig

    from lookahead.index.spacing import NO_SPACING, spaced_ids
    from lookahead.models import default_model_dir
    from lookahead.vllm import _tokenizer

    tok = _tokenizer(ModelConfig(model=str(default_model_dir())))
    assert tok is not None
    bare, spaced = (tok.encode(w, add_special_tokens=False) for w in ("pool", " pool"))
    assert spaced_ids(tok)[bare[0]] == spaced[0]
    assert _tokenizer(SimpleNamespace(max_model_len=8)) is None
    assert _proposer().drafter._spacing is NO_SPACING
