"""Response start (index/opening.py): a response's first draft is the opening earlier responses
began with, then the input from where that opening token occurs in it."""
import numpy as np
import pytest

from lookahead import Drafter, DrafterConfig
from lookahead.bench.replay import accepted_length
from lookahead.index import text_of
from lookahead.index._layout import N_OPEN

FENCE, LANG, NL = 9, 5, 7  # "```", "python", a newline: the prompt quotes a code block, the answer opens one


def _requests(n, seed=0):
    """Prompts that quote a code block and end with its closing fence; each answer re-opens the fence and
    copies the block (the code changes from request to request)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        code = rng.integers(100, 400, 40).tolist()
        # "... as a ```python block.\n\n```python\n<code>\n```"; the answer: "```python\n<code'>\n```"
        prompt = [1, 2, 3, 4, FENCE, LANG, 6, 8, FENCE, LANG, NL] + code + [NL, FENCE]
        answer = [FENCE, LANG, NL] + code + [NL, FENCE]
        out.append((prompt, answer))
    return out


def _first_steps(on, tree):
    d = Drafter(max_draft=16, tree=tree, config=DrafterConfig(response_start=on))
    firsts = []
    for prompt, answer in _requests(6):
        h = d.begin(prompt)
        dr = d.propose(h)
        firsts.append(accepted_length(dr.tokens, dr.parents, np.asarray(answer, np.int32)))
        d.append(h, answer)
        d.end(h)
    return firsts


@pytest.mark.parametrize("tree", [False, True])
def test_first_draft_opens_the_fence_then_copies_the_quoted_block(tree):
    on, off = _first_steps(True, tree), _first_steps(False, tree)
    # from the second request on, memory knows answers open with the fence: the draft is the fence, then the
    # block the prompt quoted (the chain: 16 tokens, the whole budget; the tree also keeps a branch for the
    # previous answer's code, so about half: 7 to 9); without it, the prompt's own continuation after its last
    # fence (no fence: 0 tokens) or the fence and the previous answer's code (3 tokens) is drafted
    assert min(on[1:]) >= (7 if tree else 16), on
    assert max(off[1:]) <= 3, off


def test_only_a_responses_first_draft_changes():
    """Once any output is appended, both settings draft the same (the first proposal is skipped here)."""
    rng = np.random.default_rng(3)
    ds = [Drafter(max_draft=12, tree=True, config=DrafterConfig(response_start=on)) for on in (True, False)]
    for prompt, answer in _requests(5, seed=1):
        hs = [d.begin(prompt) for d in ds]
        pos = 0
        while pos < len(answer):
            k = int(rng.integers(1, 4))
            for d, h in zip(ds, hs):
                d.append(h, answer[pos:pos + k])
            pos += k
            a, b = (d.propose(h) for d, h in zip(ds, hs))
            assert a.tokens.tolist() == b.tokens.tolist() and a.parents.tolist() == b.parents.tolist()
        for d, h in zip(ds, hs):
            d.end(h)


def _raw_requests(n, seed=0):
    """Raw prompts (no chat template) that end in their own data, unlike any other; every answer opens with
    the same few tokens (a JSON array's first key), then writes that prompt's data."""
    rng = np.random.default_rng(seed)
    opening = [40, 41, 42, 43, 44, 45]
    out = []
    for _ in range(n):
        data = rng.integers(1000, 40000, 30).tolist()
        out.append(([1, 2, 3] + data, opening + data[:10] + [46]))
    return out


@pytest.mark.parametrize("tree", [False, True])
def test_first_draft_opens_as_recent_answers_did_after_a_raw_prompt(tree):
    # the prompt's end matches nothing useful in memory, so the openings memory recorded (where recent
    # responses start) are drafted; with response_start off the first draft is what the prompt's data matched
    firsts = {}
    for on in (True, False):
        d = Drafter(max_draft=16, tree=tree, config=DrafterConfig(response_start=on))
        firsts[on] = []
        for prompt, answer in _raw_requests(6):
            h = d.begin(prompt)
            dr = d.propose(h)
            firsts[on].append(accepted_length(dr.tokens, dr.parents, np.asarray(answer, np.int32)))
            d.append(h, answer)
            d.end(h)
    assert firsts[True][0] == 0 and min(firsts[True][1:]) >= 6, firsts
    assert max(firsts[False]) == 0, firsts


def test_memory_records_where_responses_start():
    d = Drafter(max_draft=8, config=DrafterConfig(memory_tokens=400, memory_segments=2))  # 200 per segment
    starts = []
    for prompt, answer in _raw_requests(7, seed=2):
        h = d.begin(prompt)
        d.append(h, answer)
        d.end(h)
        seg = d.arena[d.memory.tiers()[0][0]]
        text = text_of(seg)
        starts = d.memory.openings()
        assert 1 <= len(starts) <= N_OPEN
        # newest first: each is a response's first token, right after its prompt's last one
        assert text[starts[0]:starts[0] + len(answer)].tolist() == answer
        assert text[starts[0] - 1] == prompt[-1]
        assert all(a > b for a, b in zip(starts, starts[1:]))
    # a document longer than a segment keeps its end, and where its response starts within it
    long_prompt = list(range(2000, 2400))
    h = d.begin(long_prompt)
    d.append(h, [40, 41, 42])
    d.end(h)
    text = text_of(d.arena[d.memory.tiers()[0][0]])
    s = d.memory.openings()[0]
    assert text[s:s + 3].tolist() == [40, 41, 42]
    # a response longer than a segment loses its start: nothing is recorded (the new segment's record is empty)
    h = d.begin([3000, 3001])
    d.append(h, list(range(5000, 5250)))
    d.end(h)
    assert d.memory.openings() == []


def _first_roots(answers_open_with):
    """The roots of a tree's first draft for each request of _requests, where answer i opens with
    answers_open_with[i] instead of the fence (None: the fence)."""
    d = Drafter(max_draft=16, tree=True)
    roots = []
    for (prompt, answer), other in zip(_requests(len(answers_open_with)), answers_open_with):
        if other is not None:
            answer = [other] + answer[1:]
        h = d.begin(prompt)
        dr = d.propose(h)
        roots.append(sorted(int(t) for t, p in zip(dr.tokens, dr.parents) if p == -1))
        d.append(h, answer)
        d.end(h)
    return roots


def test_a_first_draft_keeps_only_the_opening_every_recorded_answer_had():
    # the prompt's own text goes on after its fence with "python" (its quoted block's opening): a tree's first
    # draft keeps that branch beside the fence while memory has recorded one answer, none once two answers
    # both opened with the fence
    assert _first_roots([None] * 5)[1:] == [sorted([FENCE, LANG])] + [[FENCE]] * 3
    # an answer that opened otherwise (among the newest N_OPEN recorded) keeps the other roots drafted
    roots = _first_roots([None, 77, None, None, None])
    assert all(r != [FENCE] for r in roots[2:2 + N_OPEN - 1]), roots
