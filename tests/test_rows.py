"""index/rows.py against plain Python: content keys and gathered new tokens of an engine's token table."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lookahead.index.rows import gather_rows, row_keys


def _ref_key(row, n, w):
    return n, tuple(row[:min(n, w)]), tuple(row[max(0, n - w):n])


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_keys_equal_exactly_when_the_content_keys_do(data):
    rows_n = data.draw(st.integers(1, 7))
    width = data.draw(st.integers(1, 40))
    vocab = data.draw(st.sampled_from([1, 2, 7, 151936]))
    w = data.draw(st.integers(1, 6))
    table = np.array(data.draw(st.lists(st.lists(st.integers(0, vocab - 1), min_size=width, max_size=width),
                                        min_size=rows_n, max_size=rows_n)), np.int32)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, rows_n - 1), st.integers(0, width)), min_size=1,
                               max_size=12))
    rows = [r for r, _ in pairs]
    lens = [n for _, n in pairs]
    keys = row_keys(table, rows, lens, w).tolist()
    ref = [_ref_key(table[r].tolist(), n, w) for r, n in pairs]
    for a in range(len(pairs)):
        for b in range(len(pairs)):
            assert (keys[a] == keys[b]) == (ref[a] == ref[b])


def test_keys_see_the_ends_and_the_length_not_the_middle():
    t = np.zeros((4, 40), np.int32)
    t[1, 20] = 5  # differs only in the middle: same key, by design (first and last 16 tokens)
    t[2, 39] = 5  # differs at the end
    k = row_keys(t, [0, 1, 2, 0], [40, 40, 40, 39]).tolist()
    assert k[0] == k[1] and k[0] != k[2] and k[0] != k[3]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_gather_equals_slicing(data):
    table = np.array(data.draw(st.lists(st.lists(st.integers(0, 50), min_size=9, max_size=9), min_size=1,
                                        max_size=5)), np.int32)
    spans = data.draw(st.lists(st.tuples(st.integers(0, len(table) - 1), st.integers(0, 9), st.integers(0, 9)),
                               max_size=8))
    rows = [r for r, _, _ in spans]
    starts = [min(a, b) for _, a, b in spans]
    ends = [max(a, b) for _, a, b in spans]
    flat, offs = gather_rows(table, rows, starts, ends)
    assert offs.tolist()[0] == 0 and len(offs) == len(spans) + 1
    for j, (r, a, b) in enumerate(zip(rows, starts, ends)):
        assert flat[offs[j]:offs[j + 1]].tolist() == table[r, a:b].tolist()


def test_bad_input_names_the_fix():
    t = np.zeros((2, 8), np.int32)
    with pytest.raises(TypeError, match="2-D int32"):
        row_keys(t.astype(np.int64), [0], [1])
    with pytest.raises(IndexError, match="rows must be in 0..1"):
        row_keys(t, [2], [1])
    with pytest.raises(ValueError, match="table's width"):
        row_keys(t, [0], [9])
    with pytest.raises(ValueError, match="one length per row"):
        gather_rows(t, [0, 1], [0], [1, 1])
    with pytest.raises(ValueError, match="start must be <= its end"):
        gather_rows(t, [0], [3], [2])


def _random_tree(rng, n):
    return [-1 if i == 0 or rng.random() < 0.3 else int(rng.integers(-1, i)) for i in range(n)]


@pytest.mark.parametrize("B", [1, 3, 37])
def test_best_root_paths_equal_draft_best_path(B):
    """The batched native best paths against Draft.best_path (Python), on random trees with ties in depth and
    probability, empty drafts and chains."""
    from lookahead import Draft
    from lookahead.index.paths import best_root_paths

    rng = np.random.default_rng(B)
    W = 16
    tok = rng.integers(0, 9, (B, W)).astype(np.int32)
    par = np.full((B, W), 99, np.int32)  # garbage past each draft's end must not be read
    prob = rng.choice([0.25, 0.5, 0.75], (B, W)).astype(np.float32)  # few values: ties
    n = rng.integers(0, W + 1, B)
    n[0] = 0
    for r in range(B):
        par[r, :n[r]] = np.arange(-1, n[r] - 1) if r == 1 else _random_tree(rng, n[r])
    pt, pp, pl = best_root_paths(tok, par, prob, n)
    for r in range(B):
        d = Draft(tok[r, :n[r]], par[r, :n[r]], prob[r, :n[r]])
        nodes = d.best_path_nodes()
        assert pl[r] == len(nodes)
        assert pt[r, :pl[r]].tolist() == d.best_path().tolist()
        assert pp[r, :pl[r]].tolist() == prob[r, nodes].tolist()


def test_best_root_paths_refuse_a_non_tree():
    from lookahead.index.paths import best_root_paths

    with pytest.raises(ValueError, match="row 1: every parent must precede"):
        best_root_paths(np.zeros((2, 3), np.int32), np.array([[-1, 0, 1], [-1, 2, 0]], np.int32),
                        np.ones((2, 3), np.float32), [3, 3])
    with pytest.raises(ValueError, match="one \\[B, W\\] shape"):
        best_root_paths(np.zeros((2, 3), np.int32), np.zeros((2, 2), np.int32), np.ones((2, 3), np.float32),
                        [3, 3])
