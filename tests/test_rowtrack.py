"""lookahead.rowtrack (the vLLM proposer's row bookkeeping, one native call a step) against a plain Python
tracker that keys rows by their content, and the native draft cut against numpy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lookahead.index.rows import cut_lengths, track_rows
from lookahead.rowtrack import STALE_STEPS, RowTracker

W = 4  # key width of these tests: short texts, so that rows share ends and whole keys


def _key(row, n):
    return n, tuple(row[:min(n, W)]), tuple(row[max(0, n - W):n])


class _Reference:
    """Live requests as a list of [content key, handle, last step seen], this step's rows first."""

    def __init__(self):
        self.live = []
        self.next = 1000

    def step(self, step, table, n_new, n_tok, max_len):
        rows = [i for i in range(len(n_new)) if n_new[i] > 0 and n_tok[i] < max_len]
        taken = [False] * len(self.live)
        handles, fresh, new = [], [], []
        for j, i in enumerate(rows):
            kp = _key(table[i].tolist(), n_tok[i] - n_new[i])
            m = next((q for q, e in enumerate(self.live) if not taken[q] and e[0] == kp), None)
            if m is None:
                self.next += 1
                handles.append(self.next)
                fresh.append(j)
                new.append([])
            else:
                taken[m] = True
                handles.append(self.live[m][1])
                new.append(table[i, n_tok[i] - n_new[i]:n_tok[i]].tolist())
        kept = [e for q, e in enumerate(self.live) if not taken[q] and step - e[2] < STALE_STEPS]
        stale = [e[1] for q, e in enumerate(self.live) if not taken[q] and step - e[2] >= STALE_STEPS]
        self.live = [[_key(table[i].tolist(), n_tok[i]), h, step] for i, h in zip(rows, handles)] + kept
        return rows, handles, fresh, new, stale


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_tracking_equals_the_content_keyed_reference(data):
    """Random steps over a small table: texts go on by a few tokens, move between rows, skip steps, start
    anew (often as copies of one another: the same prompt sampled several times, equal keys), reach the
    length limit, and some differ only in the middle (equal keys by design)."""
    B = data.draw(st.integers(1, 6))
    width = 14
    max_len = data.draw(st.integers(6, width + 1))
    ref, tr = _Reference(), RowTracker(W)
    ids = {}  # tracker handle -> reference handle, learnt at begin
    texts = []  # the rows' texts at the last step: a row goes on with one of them or starts another
    table = np.zeros((B, width), np.int32)
    for step in range(1, data.draw(st.integers(1, 8)) + 1):
        n_tok, n_new, now = [], [], []
        for i in range(B):
            how = data.draw(st.sampled_from(["go on", "go on", "copy", "new", "idle"] if texts else ["new"]))
            base = list(data.draw(st.sampled_from(texts))) if how != "new" else []
            if how == "copy" and len(base) > 2 * W:  # equal ends and length, another middle: an equal key
                base[W] = 7
            add = [0] if how == "copy" else \
                data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=10 if how == "new" else 3))
            text = (base + add)[:width]
            table[i] = 0
            table[i, :len(text)] = text
            n_tok.append(len(text))
            n_new.append(0 if how == "idle" else len(text) - min(len(base), len(text)))
            now.append(text)
        texts = now
        rows, handles, fresh, new, stale = ref.step(step, table, n_new, n_tok, max_len)
        began, ended = [], []

        def begin(i, n):
            began.append((i, n))
            return 5000 + len(ids) + len(began)

        got_rows, lens, got_h, (flat, offs) = tr.step(step, table, np.array(n_new), np.array(n_tok), max_len,
                                                      begin, ended.append)
        assert got_rows.tolist() == rows
        assert lens.tolist() == [n_tok[i] for i in rows]
        assert began == [(rows[j], n_tok[rows[j]]) for j in fresh]
        for j in fresh:
            ids[got_h[j]] = handles[j]
        assert [ids[h] for h in got_h] == handles
        assert [ids[h] for h in ended] == stale
        assert [flat[offs[j]:offs[j + 1]].tolist() for j in range(len(rows))] == new
        assert [ids[h] for h in tr.handles.tolist()] == [e[1] for e in ref.live]
    assert sorted(ids[h] for h in tr.clear()) == sorted(e[1] for e in ref.live) and len(tr) == 0


def test_a_failing_begin_ends_the_requests_it_started_and_keeps_the_live_ones():
    tr = RowTracker()
    table = np.arange(24, dtype=np.int32).reshape(3, 8)
    handles = iter(range(1, 100))
    tr.step(1, table, np.array([1, 1, 0]), np.array([4, 5, 0]), 64, lambda i, n: next(handles), None)
    live = tr.handles.tolist()
    ended = []

    def begin(i, n):
        if i == 2:
            raise RuntimeError("boom")
        return next(handles)

    table[0, 4] = 99  # row 0 goes on with a new token: still its request; row 1 is replaced by a new text
    table[1] = 50
    with pytest.raises(RuntimeError, match="boom"):
        tr.step(2, table, np.array([1, 1, 1]), np.array([5, 6, 7]), 64, begin, ended.append)
    assert ended == [3] and tr.handles.tolist() == live


def test_bad_rows_name_the_fix():
    t = np.zeros((2, 8), np.int32)
    e = np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="one new-token count and one token count per row"):
        track_rows(t, [1, 1, 1], [2, 2, 2], 64, e, e, e, 1)
    with pytest.raises(ValueError, match="new tokens <= its token count <= the table's width"):
        track_rows(t, [1], [9], 64, e, e, e, 1)
    with pytest.raises(ValueError, match="new tokens <= its token count"):
        track_rows(t, [3], [2], 64, e, e, e, 1)
    with pytest.raises(TypeError, match="2-D int32"):
        track_rows(t.astype(np.int64), [1], [2], 64, e, e, e, 1)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_cut_lengths_equal_numpy(data):
    B = data.draw(st.integers(1, 9))
    width = data.draw(st.integers(1, 16))
    probs = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.1, 0.3, 0.7, 0.9, 1.0]), min_size=width,
                                                 max_size=width), min_size=B, max_size=B)), np.float32)
    n = np.array(data.draw(st.lists(st.integers(0, width), min_size=B, max_size=B)))
    caps = np.array(data.draw(st.lists(st.integers(-2, 20), min_size=B, max_size=B)))
    floor = data.draw(st.sampled_from([0.0, 0.3, 0.7]))  # 0.7 equals a float32 probability: kept, as in numpy
    want = np.maximum(np.minimum(caps, n), 0)
    if floor > 0:
        low = probs < floor
        want = np.minimum(want, np.where(low.any(axis=1), low.argmax(axis=1), width))
    assert cut_lengths(probs, n, caps, floor).tolist() == want.tolist()
