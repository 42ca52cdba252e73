"""The numba automaton against the pure-Python reference on random and awkward texts."""
import numpy as np
from hypothesis import given, strategies as st

from lookahead.index import (Arena, add_document, extend_many, find_state, match_step, new_automaton,
                             occurrences, self_cursor, text_of)
from lookahead.index.automaton import RECENT_POOL, recent_occurrences
from reference_index import SEP, RefIndex

texts = st.lists(st.integers(0, 4), max_size=120) | st.lists(st.integers(0, 1), max_size=200) | \
    st.lists(st.just(7), max_size=80) | st.lists(st.integers(0, 151935), max_size=60)


def _all_ends(b, v):
    out = np.empty(b.shape[0], np.int32)
    k = occurrences(b, v, out, out.shape[0], False)
    return sorted(out[:k].tolist())


def _build(tokens, cap=4):
    return extend_many(new_automaton(cap), np.asarray(tokens, np.int32))


@given(texts, st.data())
def test_occurrences_and_counts_match_reference(tokens, data):
    b = _build(tokens)
    ref = RefIndex(tokens)
    assert text_of(b).tolist() == tokens
    for _ in range(8):
        if tokens and data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(tokens) - 1))
            pat = tokens[i:i + data.draw(st.integers(1, 6))]
        else:
            pat = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=4))
        v = find_state(b, np.asarray(pat, np.int32))
        ends = ref.ends(pat)
        if not ends:
            assert v == -1
            continue
        assert _all_ends(b, v) == ends
        # continuations: what follows each occurrence
        out = np.empty(len(tokens) + 1, np.int32)
        k = occurrences(b, v, out, out.shape[0], True)
        got = sorted(tokens[e + 1] for e in out[:k])
        assert got == sorted(ref.continuations(pat).elements())


@given(texts, st.data())
def test_recent_occurrences_are_the_newest_of_the_pool(tokens, data):
    # the newest `occ` of the first RECENT_POOL * occ occurrences followed by a token, newest first
    if len(tokens) < 2:
        return
    b = _build(tokens)
    i = data.draw(st.integers(0, len(tokens) - 2))
    v = find_state(b, np.asarray(tokens[i:i + data.draw(st.integers(1, 2))], np.int32))
    occ = data.draw(st.integers(1, 12))
    pool = np.empty(RECENT_POOL * occ, np.int32)
    k = occurrences(b, v, pool, pool.shape[0], True)
    out = np.full(occ, -7, np.int32)
    spare = np.empty(RECENT_POOL * occ + 3, np.int32)
    n = recent_occurrences(b, v, out, occ, spare)
    assert out[:n].tolist() == sorted(pool[:k].tolist(), reverse=True)[:occ]
    assert (out[n:] == -7).all()


@given(texts)
def test_self_cursor_is_longest_earlier_suffix(tokens):
    b = _build(tokens)
    v, L = self_cursor(b)
    assert L == RefIndex(tokens).longest_repeat_suffix()


@given(texts, st.lists(st.integers(0, 5), max_size=40))
def test_match_cursor_tracks_longest_suffix(tokens, context):
    b = _build(tokens)
    ref = RefIndex(tokens)
    v, L = 0, 0
    for i, c in enumerate(context):
        v, L = match_step(b, v, L, c)
        assert L == ref.longest_match(context[:i + 1])


@given(st.lists(st.lists(st.integers(0, 3), max_size=20), max_size=6), st.lists(st.integers(0, 3), max_size=8))
def test_documents_never_match_across_separators(docs, pattern):
    arena = Arena()
    slot, _ = arena.add(new_automaton(4))
    for d in docs:
        add_document(arena.buffers, slot, np.asarray(d, np.int32))
    arena.sync(slot)
    b = arena[slot]
    flat = [t for d in docs for t in d + [SEP]]
    assert text_of(b).tolist() == flat
    ref = RefIndex(flat)
    if pattern:
        v = find_state(b, np.asarray(pattern, np.int32))
        assert (v == -1) == (ref.count(pattern) == 0)
        if v != -1:
            assert _all_ends(b, v) == ref.ends(pattern)


def test_growth_from_tiny_capacity_keeps_everything():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 3, 5000).astype(np.int32)
    a = _build(tokens, cap=1)
    b = _build(tokens, cap=10000)
    for L in (1, 3, 8):
        pat = tokens[100:100 + L]
        assert _all_ends(a, find_state(a, pat)) == _all_ends(b, find_state(b, pat))


def test_transitions_beyond_the_inline_one_grow_the_edge_array():
    # random ids from a large vocabulary need ~1 edge a token besides the states' inline first transitions, more
    # than the room an automaton starts with: the edge array and its hash grow mid-text, and every transition,
    # inline or hashed, is still found
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 50000, 4000).astype(np.int32)
    tokens[2000:2600] = tokens[100:700]  # and a long repeat, so matches run through both kinds
    b = _build(tokens, cap=4000)
    from lookahead.index._layout import H_CAP_TX, H_N_ED, ed_cap
    assert b[H_N_ED] > ed_cap(4000)
    ref = RefIndex(tokens.tolist())
    for i in range(0, 3990, 37):
        for L in (1, 2, 5):
            pat = tokens[i:i + L]
            assert _all_ends(b, find_state(b, pat)) == ref.ends(pat.tolist())
    v, L = 0, 0
    for i in range(2000, 2600):  # a cursor over the repeat follows it to full length
        v, L = match_step(b, v, L, int(tokens[i]))
    assert L >= 600
    assert b[H_CAP_TX] >= 4000
