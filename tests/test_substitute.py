"""Substitutions (index/substitute.py): a token the output writes in place of an input token, every time."""
import numpy as np
import pytest

from lookahead import Drafter, DrafterConfig
from lookahead.bench.replay import accepted_length
from lookahead.index._layout import H_NSUB, H_PE, H_SUB, N_SUB, SUB_W
from lookahead.index.substitute import CONFIRM, mapped

NL, Y, X = 1, 50, 60


def _code(rng, n_lines):
    """Lines of 4-8 random tokens, each holding identifier Y once."""
    toks = []
    for _ in range(n_lines):
        line = rng.integers(100, 3000, int(rng.integers(4, 9))).tolist()
        line.insert(int(rng.integers(0, len(line) + 1)), Y)
        toks += line + [NL]
    return toks


def _replay(prompt, out, substitute, tree=False):
    """Greedy replay: (tokens per step, drafter, handle)."""
    d = Drafter(max_draft=16, tree=tree, learn=False, config=DrafterConfig(substitute=substitute))
    h = d.begin(prompt)
    pos = steps = 0
    while pos < len(out):
        dr = d.propose(h)
        adv = min(accepted_length(dr.tokens, dr.parents, out[pos:]) + 1, len(out) - pos)
        d.append(h, out[pos:pos + adv])
        pos += adv
        steps += 1
    return len(out) / steps, d, h


def _pairs(d, h):
    b = d.arena[d._requests[h][0]]
    return [tuple(int(v) for v in b[H_SUB + SUB_W * i:H_SUB + SUB_W * (i + 1)]) for i in range(b[H_NSUB])]


@pytest.mark.parametrize("tree", [False, True])
def test_a_rename_is_drafted_after_it_was_seen(tree):
    # the output is the input with Y renamed to X: without substitutions every line's copy breaks at X
    rng = np.random.default_rng(0)
    code = _code(rng, 30)
    renamed = [X if t == Y else t for t in code]
    on, d, h = _replay([7, 8, NL] + code, renamed, True, tree)
    off, _, _ = _replay([7, 8, NL] + code, renamed, False, tree)
    assert (Y, X) == _pairs(d, h)[0][:2] and _pairs(d, h)[0][2] >= CONFIRM
    assert on > 1.3 * off, (on, off)


def test_only_the_input_is_rewritten():
    rng = np.random.default_rng(1)
    code = _code(rng, 8)
    prompt = [7, 8, NL] + code
    _, d, h = _replay(prompt, [X if t == Y else t for t in code], True)
    b = d.arena[d._requests[h][0]]
    assert b[H_PE] == len(prompt)
    assert mapped(b, len(prompt) - 1, Y) == X  # the input
    assert mapped(b, len(prompt), Y) == Y  # the output's own text is already as the target writes it
    assert mapped(b, 0, Y + 1) == Y + 1


def test_a_one_off_edit_is_forgotten():
    # Y becomes X in the first 4 lines only; once the output copies Y unchanged the pair is no longer applied
    rng = np.random.default_rng(2)
    code = _code(rng, 16)
    cut = [i for i, t in enumerate(code) if t == NL][3] + 1
    out = [X if t == Y else t for t in code[:cut]] + code[cut:]
    on, d, h = _replay([7, 8, NL] + code, out, True)
    off, _, _ = _replay([7, 8, NL] + code, out, False)
    assert all(c < CONFIRM for y, x, c in _pairs(d, h) if (y, x) == (Y, X))
    assert on >= 0.9 * off, (on, off)  # measured: equal (8.87 tokens per step); the pair is gone


def test_off_without_an_input_end():
    # substitute=False leaves the input end unset: nothing is rewritten, whatever was learned
    rng = np.random.default_rng(0)
    code = _code(rng, 10)
    _, d, h = _replay([7, 8, NL] + code, [X if t == Y else t for t in code], False)
    b = d.arena[d._requests[h][0]]
    assert b[H_PE] == 0 and mapped(b, 0, Y) == Y


def test_the_table_keeps_confirmed_pairs():
    # more renames than entries: the least seen pairs make room, the confirmed ones stay
    rng = np.random.default_rng(3)
    code = _code(rng, 12)
    extra = [Y + 1 + k for k in range(N_SUB + 1)]
    lines = []
    for k, t in enumerate(extra):  # one line per extra identifier, renamed once (never confirmed)
        lines += rng.integers(100, 3000, 4).tolist() + [t] + rng.integers(100, 3000, 4).tolist() + [NL]
    prompt = [7, 8, NL] + code + lines
    out = [X if t == Y else t for t in code] + [t + 1000 if t in extra else t for t in lines]
    _, d, h = _replay(prompt, out, True)
    assert (Y, X) in [p[:2] for p in _pairs(d, h)]
    assert len(_pairs(d, h)) <= N_SUB
