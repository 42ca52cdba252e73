"""Drafter: well-formed drafts after any interleaving of begin/append/end, memory, determinism, errors."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lookahead
from lookahead import Drafter, DrafterConfig
from lookahead.index._layout import H_BRK, H_CP, H_PE, H_RUN
from lookahead.index.automaton import text_of
from lookahead.index.pointer import candidate, resume_after_swap, resume_at_break
from lookahead.index.spacing import NO_SPACING, spaced_ids
from lookahead.index.value_end import learn_end
from fake_tokenizer import SpacedVocab
from reference_index import RefIndex, ref_pointer, ref_resume_after_swap, ref_resume_at_break


def check_draft(d, budget):
    n = len(d)
    assert 0 <= n <= budget
    assert d.tokens.dtype == np.int32 and d.parents.dtype == np.int32 and d.probs.dtype == np.float32
    assert d.tokens.shape == d.parents.shape == d.probs.shape == (n,)
    for i in range(n):
        p = d.parents[i]
        assert -1 <= p < i
        assert 0 < d.probs[i] <= 1.0 + 1e-6
        if p >= 0:  # reaching a node is never likelier than reaching its parent
            assert d.probs[i] <= d.probs[p] + 1e-6
    # siblings are distinct tokens
    seen = set()
    for i in range(n):
        key = (int(d.parents[i]), int(d.tokens[i]))
        assert key not in seen
        seen.add(key)
    assert (d.tokens >= 0).all()


ops = st.lists(st.tuples(st.sampled_from(["begin", "append", "end", "propose"]),
                         st.lists(st.integers(0, 5), max_size=12), st.integers(0, 7)), max_size=40)


@given(ops, st.booleans(), st.integers(1, 24))
def test_any_interleaving_gives_wellformed_drafts(script, tree, budget):
    d = Drafter(max_draft=budget, tree=tree, config=DrafterConfig(memory_tokens=64, memory_segments=2))
    live, texts = [], {}
    for op, toks, k in script:
        if op == "begin" or not live:
            h = d.begin(toks)
            live.append(h)
            texts[h] = list(toks)
        elif op == "append":
            h = live[k % len(live)]
            d.append(h, toks)
            texts[h] += toks
        elif op == "end":
            h = live.pop(k % len(live))
            d.end(h)
        else:
            hs = live[:1 + k % len(live)]
            many = d.propose_many(hs)
            for h, dr in zip(hs, many):
                check_draft(dr, budget)
                single = d.propose(h)
                assert np.array_equal(single.tokens, dr.tokens) and np.array_equal(single.parents, dr.parents)
                assert np.allclose(single.probs, dr.probs)
            kept = [(dr.tokens.tolist(), dr.parents.tolist(), dr.probs.tolist()) for dr in many]
            d.propose_many(hs[::-1])  # a later call reuses the native output arrays: returned drafts stay as they were
            assert kept == [(dr.tokens.tolist(), dr.parents.tolist(), dr.probs.tolist()) for dr in many]
        for h in live:
            assert d.tokens(h).tolist() == texts[h]
    assert d.memory.tokens <= 64 + 64  # budget plus the open segment's slack


def _pointer_state(b):
    return int(b[H_CP]), int(b[H_CP + 1]), int(b[H_BRK]), int(b[H_RUN])


@given(st.lists(st.lists(st.integers(0, 3), max_size=10), max_size=30), st.lists(st.integers(0, 3), max_size=20))
def test_copy_pointer_follows_its_rule(chunks, reference):
    _check_pointer(chunks, reference)


def _runs(reference, data, noise, unspace=None):
    """Chunks of an output that copies the input in runs (appended in pieces of 1-4 tokens), with tokens of its
    own (ids 0..noise) between them; with unspace, some runs start with their first token's unspaced spelling."""
    chunks = []
    for _ in range(data.draw(st.integers(1, 12))):
        if data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(reference) - 1))
            j = data.draw(st.integers(i + 1, min(len(reference), i + 16)))
            piece = reference[i:j]
            if unspace and data.draw(st.booleans()):
                piece = [unspace.get(piece[0], piece[0])] + piece[1:]
            cut = data.draw(st.integers(1, 4))
            chunks += [piece[k:k + cut] for k in range(0, len(piece), cut)]
        else:
            chunks.append(data.draw(st.lists(st.integers(0, noise), min_size=1, max_size=4)))
    return chunks


@given(st.lists(st.integers(0, 5), min_size=10, max_size=40), st.data())
def test_copy_pointer_breaks_follow_their_rule(reference, data):
    # outputs that copy the input in runs, with edits between them: long runs break and are come back to
    _check_pointer(_runs(reference, data, 7), reference)


def test_copy_pointer_breaks_on_random_edits():
    # the same kind of outputs from a seeded generator, so that breaks are sure to be met and checked
    rng = np.random.default_rng(7)
    breaks = 0
    for _ in range(40):
        reference = rng.integers(0, 6, rng.integers(10, 41)).tolist()
        chunks = []
        for _ in range(rng.integers(1, 13)):
            if rng.random() < 0.6:
                i = int(rng.integers(0, len(reference)))
                piece = reference[i:i + int(rng.integers(4, 17))]
                cut = int(rng.integers(1, 5))
                chunks += [piece[k:k + cut] for k in range(0, len(piece), cut)]
            else:
                chunks.append(rng.integers(0, 8, rng.integers(1, 5)).tolist())
        breaks += _check_pointer(chunks, reference)
    assert breaks >= 20


def _check_pointer(chunks, reference, spacing=None):
    """Checks the pointer against ref_pointer after every chunk; returns how many states held a break.
    spacing: {token: its spelling with a leading space} (index/spacing.py), the Drafter's via a tokenizer."""
    # substitutions off: they change what agrees (test_substitute.py covers them)
    tok = None if spacing is None else SpacedVocab(16, spacing)
    sp = NO_SPACING if spacing is None else spaced_ids(tok)
    d = Drafter(max_draft=4, learn=False, config=DrafterConfig(substitute=False), tokenizer=tok)
    h = d.begin([], reference=reference or None)
    b = d.arena[d._slot(h)]
    pe = int(b[H_PE])
    if spacing is not None:  # the pointer compares with spacing once a value end was seen (pointer.track)
        learn_end(b, 0, 9)
    state = _pointer_state(b)
    breaks = 0
    for toks in chunks:
        d.append(h, toks)
        b = d.arena[d._slot(h)]
        text = text_of(b).tolist()
        now = _pointer_state(b)
        if toks:
            # append_core moves the pointer over all tokens but the last, then over the last one
            k = len(toks)
            first = ref_pointer(text[:-1], state, k - 1, pe=pe, spacing=sp) if k > 1 else {state}
            assert now in set().union(*(ref_pointer(text, r, 1, pe=pe, spacing=sp) for r in first))
        else:
            assert now == state
        state = now
        assert all(0 <= p <= max(len(text) - 1, 0) for p in state[:2])
        e = candidate(b, sp)
        if e != -1:  # holds the context's last token (or its spelling with a space), is followed by text, and
            # lies ahead of a run's place
            assert text[e] in (text[-1], sp[text[-1]] if text[-1] < len(sp) else -1)
            assert e + 1 < len(text) and text[e + 1] != -1
            assert any(0 < p <= e + 1 < p + 64 for p in state[:2])
        assert resume_at_break(b, sp) == ref_resume_at_break(text, state[2], pe)  # exact: spacing.py
        for extra in range(3):
            assert resume_after_swap(b, extra) == ref_resume_after_swap(text, state[2], pe, extra)
        breaks += state[2] > 0
    return breaks


@given(st.lists(st.integers(0, 7), min_size=10, max_size=40), st.data())
def test_copy_pointer_with_spaced_tokens_follows_its_rule(reference, data):
    # tokens 4..7 are 0..3 spelled with a leading space: outputs copy the input in runs, some starting with
    # the unspaced spelling of the input's first token (a value copied into JSON)
    chunks = _runs(reference, data, 9, unspace={4: 0, 5: 1, 6: 2, 7: 3})
    _check_pointer(chunks, reference, spacing={0: 4, 1: 5, 2: 6, 3: 7})


def test_a_token_never_seen_resumes_the_copy_at_its_spelling_with_a_space():
    # a list's next item whose first token the input holds only spelled with a leading space (5 stands for 1
    # so: ' q' of ", qemu"), written by the output without it ('", "q'): nothing matches that token, yet the
    # copy goes on there, and is drafted (an empty draft before)
    spacing = {0: 4, 1: 5, 2: 6, 3: 7}
    reference = [20, 4, 10, 11, 12, 8, 5, 13, 14, 8, 6, 15]
    chunks = [[4, 10, 11, 12], [9], [1]]
    _check_pointer(chunks, reference, spacing=spacing)
    tok = SpacedVocab(16, spacing)
    d = Drafter(max_draft=4, learn=False, config=DrafterConfig(substitute=False), tokenizer=tok)
    h = d.begin([], reference=reference)
    learn_end(d.arena[d._slot(h)], 0, 9)  # a template is being filled: the pointer compares with spacing
    for toks in chunks:
        d.append(h, toks)
    b = d.arena[d._slot(h)]
    assert candidate(b, spaced_ids(tok)) == 6
    assert d.propose(h).best_path().tolist()[:2] == [13, 14]


def test_copy_resumes_after_an_inserted_line():
    # lines a..f end with the same token (9); the output copies a, b, inserts a new line x, then ends it: the
    # context's longest match is just "9", most recently followed by the output's own lines, but the copy
    # resumes with line c
    a, b, c, dd, e, f, x = [1, 2], [3, 4], [5, 6], [7, 8], [10, 11], [12, 13], [20, 21]
    nl = [9]
    prompt = [30, 31] + a + nl + b + nl + c + nl + dd + nl + e + nl + f + nl + [32]
    out = a + nl + b + nl + x + nl
    drafts = {}
    for w in (0.0, 16.0):
        dr = Drafter(max_draft=6, learn=False, config=DrafterConfig(copy_weight=w))
        h = dr.begin(prompt)
        for t in out:  # token by token, as a decoder appends
            dr.append(h, [t])
        drafts[w] = dr.propose(h).tokens.tolist()
    assert drafts[16.0][:3] == c + nl
    assert drafts[0.0][:3] != c + nl  # without the pointer the newest occurrences win


def test_copy_resumes_where_it_broke_off_after_an_insertion():
    # the output copies x and a newline, then inserts a line holding pieces of the input found elsewhere (the
    # pointer jumps to them), then ends that line: the input goes on where the copy broke off (y), not with
    # the line just written, which the newline was most recently followed by
    x, y, nl = list(range(100, 120)), list(range(30, 50)), [5]
    p1, p2 = [70, 71, 72, 73, 74], [80, 81, 82, 83, 84]
    prompt = [1] + x + nl + y + [2] + p1 + [3] + p2 + [4]
    out = x + nl + p1[:4] + [90] + p2[:4] + [91] + nl
    for tree in (False, True):
        d = Drafter(max_draft=8, tree=tree, learn=False)
        h = d.begin(prompt)
        for t in out:
            d.append(h, [t])
        dr = d.propose(h)
        assert dr.best_path().tolist()[:4] == y[:4]
        if tree:  # the line just written stays covered by a branch
            assert p1[0] in dr.tokens.tolist()


@pytest.mark.parametrize("replaced", [1, 2, 3])
def test_copy_goes_on_after_a_replaced_word(replaced):
    # the output copies x, then writes a token never seen in place of `replaced` input tokens (a fixed typo
    # the tokenizer split in pieces): nothing matches the context, yet the input goes on after the replaced
    # span, so a branch drafts it (without one the draft was empty)
    x, y = list(range(100, 120)), list(range(30, 50))
    prompt = [1] + x + [7, 8, 9][:replaced] + y + [2]
    d = Drafter(max_draft=16, tree=True, learn=False)
    h = d.begin(prompt)
    for t in x + [999]:
        d.append(h, [t])
    dr = d.propose(h)
    t, par = dr.tokens.tolist(), dr.parents.tolist()
    root = [i for i in range(len(t)) if par[i] == -1 and t[i] == y[0]]
    assert root, t
    assert [t[i] for i in range(len(t)) if par[i] == root[0]] == [y[1]]  # the branch goes on with the input
    d.append(h, y[:3])  # once the copy is back, the draft is the input again
    assert d.propose(h).best_path().tolist()[:4] == y[3:7]


@given(st.lists(st.integers(0, 3), min_size=2, max_size=60))
def test_first_chain_token_follows_an_earlier_occurrence(tokens):
    # with only the request's own text, any drafted first token continues some earlier occurrence of a
    # non-empty suffix of the context, in particular of the last token
    d = Drafter(max_draft=8, learn=False)
    h = d.begin(tokens)
    dr = d.propose(h)
    ref = RefIndex(tokens)
    if len(dr):
        assert dr.tokens[0] in ref.continuations(tokens[-1:])
    L = ref.longest_repeat_suffix()
    if L == 0:
        assert len(dr) == 0


def test_chain_copies_the_longest_match():
    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3]
    d = Drafter(max_draft=16, learn=False)
    dr = d.propose(d.begin(prompt))
    assert dr.is_chain
    # copies on, and keeps going past the end of the first occurrence (periodic text)
    assert dr.tokens[:9].tolist() == [4, 5, 6, 7, 8, 9, 1, 2, 3]
    assert len(dr) == 16


def test_chain_parents_are_shared_read_only_and_match_the_native_ones():
    # single-request chain drafts take their parents from one shared array (no slice per draft): they must be
    # what the native call writes (propose_arrays) and must not be writable, or one caller could change all drafts
    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 9, 1, 2]
    d = Drafter(max_draft=8, learn=False)
    h = d.begin(prompt)
    for call in (lambda: d.propose(h), lambda: d.step(h, [3]), lambda: d.propose(h, max_draft=3),
                 lambda: d.step(h, [])):
        dr = call()
        toks, pars, probs, n = d.propose_arrays([h], max_draft=len(dr.tokens) or 1)
        assert len(dr) > 0 and dr.parents.tolist() == pars[0, :n[0]].tolist() == list(range(-1, len(dr) - 1))
        assert dr.tokens.tolist() == toks[0, :n[0]].tolist()
        with pytest.raises(ValueError):
            dr.parents[0] = 5
    assert d.propose(h).parents.tolist() == list(range(-1, 7))


def test_tree_covers_two_continuations():
    prompt = [5, 1, 2, 3, 7, 7, 7, 1, 2, 3, 8, 8, 8, 1, 2, 3]
    d = Drafter(max_draft=6, tree=True, learn=False)
    dr = d.propose(d.begin(prompt))
    roots = sorted(dr.tokens[dr.parents == -1].tolist())
    assert roots == [7, 8]
    assert not dr.is_chain


def test_cross_request_memory_drafts_the_earlier_answer():
    prompt = list(range(100, 140))
    answer = list(range(500, 540))
    d = Drafter(max_draft=16)
    h = d.begin(prompt)
    assert len(d.propose(h)) == 0  # nothing repeats yet
    d.append(h, answer)
    d.end(h)
    h2 = d.begin(prompt)
    assert d.propose(h2).tokens.tolist() == answer[:16]
    d.end(h2)
    d2 = Drafter(max_draft=16, learn=False)
    h = d2.begin(prompt)
    d2.append(h, answer)
    d2.end(h)
    assert len(d2.propose(d2.begin(prompt))) == 0


def test_reference_text_is_drafted_from():
    ref = list(range(10, 60))
    d = Drafter(max_draft=8, learn=False)
    h = d.begin([1, 2, 10, 11, 12], reference=ref)
    assert d.propose(h).tokens.tolist() == list(range(13, 21))
    assert d.tokens(h).tolist() == [1, 2, 10, 11, 12]


def test_single_calls_reread_memory_changed_directly():
    # single-request calls pass the external automata by address: a segment that grew or was dropped through
    # d.memory (not through end()) must be re-read, never used where it was
    d = Drafter(max_draft=8, config=DrafterConfig(memory_tokens=200, memory_segments=1))
    h = d.begin([7, 8, 9])
    for i in range(12):  # four documents fill the only segment; the fifth replaces it
        doc = np.arange(1000 + 50 * i, 1040 + 50 * i, dtype=np.int32)
        d.memory.add(doc)
        assert d.step(h, doc[:2]).tokens.tolist() == doc[2:10].tolist()
        d.append(h, [5])


def test_memory_stays_within_budget_and_evicts_oldest():
    d = Drafter(max_draft=8, config=DrafterConfig(memory_tokens=400, memory_segments=2))
    rng = np.random.default_rng(1)
    for i in range(200):
        h = d.begin(rng.integers(0, 1000, 30))
        d.append(h, rng.integers(0, 1000, 20))
        d.end(h)
    assert d.memory.tokens <= 400 + 60
    assert len(d.memory.tiers()[0]) <= 2
    assert d.memory_bytes() < 2_000_000


def test_same_inputs_same_drafts():
    rng = np.random.default_rng(3)
    seqs = [rng.integers(0, 6, 80) for _ in range(5)]
    outs = []
    for _ in range(2):
        d = Drafter(max_draft=12, tree=True)
        hs = [d.begin(s) for s in seqs]
        for h, s in zip(hs, seqs):
            d.append(h, s[:7])
        d.end(hs[0])
        outs.append([(x.tokens.tolist(), x.parents.tolist(), x.probs.tolist()) for x in d.propose_many(hs[1:])])
    assert outs[0] == outs[1]


def test_step_equals_append_then_propose():
    rng = np.random.default_rng(4)
    s = rng.integers(0, 5, 100).astype(np.int32)
    a, b = Drafter(max_draft=8), Drafter(max_draft=8)
    ha, hb = a.begin(s[:50]), b.begin(s[:50])
    for i in range(50, 100, 3):
        x = a.step(ha, s[i:i + 3])
        b.append(hb, s[i:i + 3])
        y = b.propose(hb)
        assert x.tokens.tolist() == y.tokens.tolist() and x.parents.tolist() == y.parents.tolist()


def _odd_int32_arrays(a):
    """a (int32) as arrays numba types differently from a plain one: read-only, misaligned, big-endian,
    strided."""
    ro = a.copy()
    ro.setflags(write=False)
    mis = np.frombuffer(b"\0" + a.tobytes(), np.int32, offset=1)  # read-only too
    wide = np.zeros(2 * len(a), np.int32)
    wide[::2] = a
    return {"read-only": ro, "misaligned": mis, "big-endian": a.astype(">i4"), "strided": wide[::2]}


def test_odd_id_arrays_draft_alike_and_compile_nothing():
    """The single-request calls skip numba's dispatcher (index/entry.py): ids of any int32 layout must reach
    the one compiled version (a dispatcher would compile another per layout, for minutes) and give the same
    drafts as a plain array."""
    from lookahead.index.address import append_at, propose_at, step_at

    rng = np.random.default_rng(11)
    s = rng.integers(0, 6, 120).astype(np.int32)
    plain = Drafter(max_draft=8, tree=True)
    hp = plain.begin(s[:60])
    compiled = [len(f.signatures) for f in (append_at, propose_at, step_at)]
    odd = {}
    for name in _odd_int32_arrays(s[:4]):
        d = Drafter(max_draft=8, tree=True)
        odd[name] = (d, d.begin(_odd_int32_arrays(s[:60])[name]))
    for i in range(60, 120, 4):
        want = plain.step(hp, s[i:i + 2])
        plain.append(hp, s[i + 2:i + 4])
        for name, (d, h) in odd.items():
            got = d.step(h, _odd_int32_arrays(s[i:i + 2])[name])
            assert got.tokens.tolist() == want.tokens.tolist(), name
            assert got.parents.tolist() == want.parents.tolist(), name
            d.append(h, _odd_int32_arrays(s[i + 2:i + 4])[name])
    for name, (d, h) in odd.items():
        assert d.tokens(h).tolist() == plain.tokens(hp).tolist(), name
        assert d.propose(h).tokens.tolist() == plain.propose(hp).tokens.tolist(), name
    assert [len(f.signatures) for f in (append_at, propose_at, step_at)] == compiled


def test_int32_arrays_of_the_wrong_shape_are_refused_before_the_native_call():
    """The entry points check no dimensions (a 2-D array where a 1-D one was compiled for crashes the process):
    every call must refuse one first."""
    d = Drafter(max_draft=4)
    h = d.begin([1, 2, 3])
    for bad in (np.array([[4, 5]], np.int32), np.array([[4], [5]], np.int32), np.array(4, np.int32)):
        for call in (lambda: d.step(h, bad), lambda: d.append(h, bad), lambda: d.begin(bad)):
            with pytest.raises(TypeError, match="1-D"):
                call()
    assert d.tokens(h).tolist() == [1, 2, 3]


def test_drafts_keep_their_values_after_later_calls():
    """Single-request drafts share preallocated storage: a Draft must not change when later calls (more than
    one slab's worth, with budgets of different sizes) are made."""
    rng = np.random.default_rng(5)
    s = rng.integers(0, 4, 2000).astype(np.int32)
    d = Drafter(max_draft=8, tree=True)
    h = d.begin(s[:200])
    kept = []
    for i in range(200, 1400):
        budget = [None, 3, 40][i % 3]
        x = d.step(h, s[i:i + 1], max_draft=budget) if i % 2 else d.propose(h, max_draft=budget)
        check_draft(x, budget or 8)
        kept.append((x, x.tokens.tolist(), x.parents.tolist(), x.probs.tolist()))
    assert sum(len(x) for x, *_ in kept) > 1000  # real drafts, not empty ones
    for x, t, p, q in kept:
        assert x.tokens.tolist() == t and x.parents.tolist() == p and x.probs.tolist() == q


def test_drafts_read_late_keep_their_values():
    """A Draft makes its fields' views when first read: read after later calls (single and batched, past a
    slab), they hold what a twin drafter's drafts, read at once, held."""
    rng = np.random.default_rng(6)
    s = rng.integers(0, 4, 3000).astype(np.int32)
    late, now = Drafter(max_draft=8, tree=True), Drafter(max_draft=8, tree=True)
    hl = [late.begin(s[:100 + r]) for r in range(3)]
    hn = [now.begin(s[:100 + r]) for r in range(3)]
    kept = []
    for i in range(200, 1500):
        budget = [None, 3, 40][i % 3]
        if i % 4 == 0:
            xs, ys = late.propose_many(hl, max_draft=budget), now.propose_many(hn, max_draft=budget)
        else:
            xs = [late.step(hl[0], s[i:i + 1], max_draft=budget)]
            ys = [now.step(hn[0], s[i:i + 1], max_draft=budget)]
        for x, y in zip(xs, ys):
            assert len(x) == len(y)
            kept.append((x, y.tokens.tolist(), y.parents.tolist(), y.probs.tolist()))
    assert sum(len(x) for x, *_ in kept) > 1000
    for x, t, p, q in kept:
        check_draft(x, 40)
        assert x.tokens.tolist() == t and x.parents.tolist() == p and x.probs.tolist() == q


@pytest.mark.parametrize("tree", [False, True])
def test_step_arrays_equals_step_per_request(tree):
    """The batched step (one native call) gives each request what append + propose gives it, across memory
    tiers, buffer growth (long appends) and ragged token counts, in both input forms."""
    rng = np.random.default_rng(7)
    a, b = Drafter(max_draft=8, tree=tree, vocab_size=6), Drafter(max_draft=8, tree=tree, vocab_size=6)
    earlier = rng.integers(0, 6, 300).astype(np.int32)
    for d in (a, b):  # some cross-request memory first
        d.end(d.begin(earlier))
    prompts = [rng.integers(0, 6, n).astype(np.int32) for n in (5, 40, 1, 120)]
    ha, hb = [a.begin(p) for p in prompts], [b.begin(p) for p in prompts]
    for it in range(30):
        new = [rng.integers(0, 6, int(rng.integers(0, 4 if it != 10 else 700))).astype(np.int32) for _ in prompts]
        if it % 2:
            flat = np.concatenate(new)
            offs = np.concatenate([[0], np.cumsum([len(x) for x in new])]).astype(np.int64)
            toks, pars, probs, n = a.step_arrays(ha, (flat, offs))
        else:
            toks, pars, probs, n = a.step_arrays(ha, new)
        for j, h in enumerate(hb):
            y = b.step(h, new[j])
            assert toks[j, :n[j]].tolist() == y.tokens.tolist() and pars[j, :n[j]].tolist() == y.parents.tolist()
            assert np.allclose(probs[j, :n[j]], y.probs)
    for h1, h2 in zip(ha, hb):
        assert a.tokens(h1).tolist() == b.tokens(h2).tolist()
    before = [a.tokens(h).tolist() for h in ha]
    with pytest.raises(ValueError, match="vocab"):
        a.step_arrays(ha, [[1], [2], [9], [3]])
    with pytest.raises(ValueError, match="one token list per handle"):
        a.step_arrays(ha, [[1]])
    with pytest.raises(ValueError, match="offsets"):
        a.step_arrays(ha, (np.array([1, 2], np.int32), np.array([0, 1, 2, 3, 1], np.int64)))
    assert [a.tokens(h).tolist() for h in ha] == before  # nothing appended by the refused calls


def test_step_arrays_mirrors_just_the_grown_rows():
    """A batched step where one row's buffer grows and the others' do not: the Python mirror of every slot is
    the buffer the native call left in the typed List (step_batch lists the grown rows; only they are synced)."""
    d = Drafter(max_draft=8, vocab_size=50)
    rng = np.random.default_rng(3)
    hs = [d.begin(rng.integers(0, 50, n)) for n in (30, 300, 5)]
    slots = [d._slot(h) for h in hs]
    before = [d.arena[s] for s in slots]
    d.step_arrays(hs, [[1], rng.integers(0, 50, 2000), []])
    for s, old in zip(slots, before):
        mirror, native = d.arena.py[s], d.arena.buffers[s]  # a typed List hands out a new array object each time
        assert mirror.ctypes.data == native.ctypes.data and mirror.shape == native.shape
    assert [d.arena[s] is old for s, old in zip(slots, before)] == [True, False, True]
    assert d.tokens(hs[1]).shape[0] == 2300


def test_torch_and_list_inputs():
    torch = pytest.importorskip("torch")
    d = Drafter(max_draft=4, learn=False)
    h = d.begin(torch.tensor([1, 2, 3, 1, 2]))
    d.append(h, [3])
    d.append(h, np.array([1], np.int64))
    assert d.tokens(h).tolist() == [1, 2, 3, 1, 2, 3, 1]


@pytest.mark.parametrize("bad,err,msg", [
    ([1.5, 2.0], TypeError, "integers"),
    ("hello", TypeError, "tokenize"),
    ([1, -1], ValueError, "negative"),
    ([[1, 2]], TypeError, "1-D"),
    ([2**40], ValueError, "int32"),
])
def test_bad_token_ids(bad, err, msg):
    d = Drafter()
    with pytest.raises(err, match=msg):
        d.begin(bad)
    h = d.begin([1, 2])
    with pytest.raises(err, match=msg):
        d.append(h, bad)
    assert d.tokens(h).tolist() == [1, 2]  # nothing was appended


def test_ids_past_vocab():
    d = Drafter(vocab_size=100)
    with pytest.raises(ValueError, match="vocabulary of 100"):
        d.begin([5, 100])
    h = d.begin([5, 6])
    with pytest.raises(ValueError, match="vocabulary"):
        d.append(h, np.array([99, 100], np.int32))
    with pytest.raises(ValueError, match="vocabulary"):
        d.step(h, np.array([150], np.int32))
    assert d.tokens(h).tolist() == [5, 6]


def test_unknown_and_ended_handles():
    d = Drafter()
    h = d.begin([1, 2, 3])
    d.end(h)
    for call in (lambda: d.append(h, [1]), lambda: d.propose(h), lambda: d.end(h), lambda: d.propose_many([h]),
                 lambda: d.append(12345, [1]), lambda: d.propose("x"), lambda: d.propose_arrays([d.begin([1, 2]), h]),
                 lambda: d.propose_many([[1]]), lambda: d.step_arrays([h], [[1]])):
        with pytest.raises(KeyError, match="begin"):
            call()


@pytest.mark.parametrize("budget", [0, -3, 10**6, 2.5, True])
def test_bad_budgets(budget):
    with pytest.raises((ValueError, TypeError), match="max_draft"):
        Drafter(max_draft=budget)
    d = Drafter()
    h = d.begin([1, 2, 1])
    with pytest.raises((ValueError, TypeError), match="max_draft"):
        d.propose(h, max_draft=budget)


def test_copy_returns_to_the_template_after_a_copied_value():
    # a filled-in template: the output copies the example's key (T k1 Q), then a value from the record far
    # above (V1), then must go on with the template (E T k2 Q), not with what followed E most recently (99)
    T, Q, E = [1, 4, 5], [2], [3]
    v1, v2 = [40, 41, 42, 43, 44], [50, 51, 52, 53]
    record = [60] + v1 + [61] + v2
    filler = list(range(100, 200))  # farther than the pointer looks ahead
    example = T + [10] + Q + [20] + E + T + [11] + Q + [21] + E + [99]
    prompt = record + filler + example
    out = T + [10] + Q + v1 + E
    drafts = {}
    for w in (0.0, 16.0):
        d = Drafter(max_draft=6, learn=False, config=DrafterConfig(copy_weight=w))
        h = d.begin(prompt)
        for t in out:
            d.append(h, [t])
        drafts[w] = d.propose(h).tokens.tolist()
    assert drafts[16.0][:5] == T + [11] + Q
    assert drafts[0.0][0] == 99


@pytest.mark.parametrize("kw, name", [({"occurrences": 0}, "occurrences"), ({"min_prob": 1.0}, "min_prob"),
                                      ({"copy_weight": -1.0}, "copy_weight"),
                                      ({"copy_weight": float("nan")}, "copy_weight"),
                                      ({"analogy_weight": -1.0}, "analogy_weight"),
                                      ({"template_weight": -1.0}, "template_weight"),
                                      ({"template_weight": float("inf")}, "template_weight"),
                                      ({"predict_weight": -1.0}, "predict_weight"),
                                      ({"substitute": "yes"}, "substitute"),
                                      ({"value_ends": 1}, "value_ends"), ({"response_start": 0}, "response_start"),
                                      ({"normalize": None}, "normalize"),
                                      ({"backoff_ratio": -0.1}, "backoff_ratio"),
                                      ({"backoff_ratio": 1.5}, "backoff_ratio"),
                                      ({"backoff_ratio": float("nan")}, "backoff_ratio"),
                                      ({"backoff_depth": 0}, "backoff_depth"),
                                      ({"backoff_depth": 2.5}, "backoff_depth"),
                                      ({"alpha": 0.0}, "alpha"), ({"alpha": float("inf")}, "alpha"),
                                      ({"half_len": -1.0}, "half_len"), ({"window": 0}, "window"),
                                      ({"backoff": 5}, "backoff"), ({"backoff": -1}, "backoff"),
                                      ({"backoff": 1.0}, "backoff"),
                                      ({"power": float("nan")}, "power"), ({"self_weight": -2.0}, "self_weight"),
                                      ({"occurrences": True}, "occurrences"), ({"min_prob": "0.5"}, "min_prob"),
                                      ({"memory_tokens": -1}, "memory_tokens"),
                                      ({"memory_segments": 5}, "memory_segments")])
def test_bad_config(kw, name):
    """A bad knob is refused where the config is made, naming the knob and its range."""
    with pytest.raises(ValueError, match=f"DrafterConfig.{name} must be"):
        DrafterConfig(**kw)
    with pytest.raises(ValueError, match=f"DrafterConfig.{name}"):
        dataclasses.replace(DrafterConfig(), **kw)


def test_config_edges_accepted():
    """The ends of each range are valid and draft (numpy scalars too: settings read from arrays)."""
    for kw in ({"min_prob": 0.0}, {"backoff": 0}, {"backoff": 4}, {"backoff_ratio": 1.0}, {"power": 0.0},
               {"memory_tokens": 0}, {"occurrences": np.int64(256)}, {"alpha": np.float32(0.5)},
               {"normalize": np.bool_(False)}, {"backoff_depth": 1024}):
        d = Drafter(max_draft=8, config=DrafterConfig(**kw))
        h = d.begin([1, 2, 3, 4, 1, 2, 3])
        assert len(d.propose(h)) <= 8
        d.end(h)


def test_budget_override_and_large_budget():
    rng = np.random.default_rng(5)
    s = np.tile(rng.integers(0, 50, 40), 30)
    d = Drafter(max_draft=8, tree=True)
    h = d.begin(s)
    assert len(d.propose(h, max_draft=3)) <= 3
    big = d.propose(h, max_draft=1024)
    check_draft(big, 1024)
    assert len(big) > 100


def test_warmup_compiles():
    from lookahead.index import warmup

    assert warmup() >= 5


def test_draft_best_path():
    d = lookahead.Draft(np.array([7, 8, 9, 4], np.int32), np.array([-1, -1, 1, 2], np.int32),
                        np.array([0.6, 0.4, 0.3, 0.2], np.float32))
    assert d.best_path().tolist() == [8, 9, 4]


@pytest.mark.parametrize("tree", [False, True])
def test_backoff_ratio_skips_much_shorter_contexts(tree):
    # the long context (1, 2, 3, 4, 6, ..., 11) occurs once before (then 20); its suffix-link parent, the context
    # 11 alone, occurs four times (then 20, 50, 50, 50): a context a tenth as long is read at ratio 0, not at 0.5
    long = [1, 2, 3, 4, 6, 7, 8, 9, 10, 11]
    prompt = [5] + long + [20, 11, 50, 21, 11, 50, 22, 11, 50, 23] + long

    def draft(**kw):
        kw.setdefault("backoff", 1)
        d = Drafter(max_draft=8, tree=tree, learn=False, config=DrafterConfig(copy_weight=0.0, **kw))
        x = d.propose(d.begin(prompt))
        return x.tokens.tolist(), x.parents.tolist(), x.probs.tolist()

    no_backoff = draft(backoff=0)
    # by default a tree reads one shorter context and a chain none
    assert draft(backoff=None, backoff_ratio=0.0) == (draft(backoff_ratio=0.0) if tree else no_backoff)
    assert draft(backoff_ratio=0.5) == no_backoff
    assert draft(backoff_ratio=0.0) != no_backoff  # the shorter context's occurrences weigh in
    assert draft(backoff_ratio=0.0)[0][0] == no_backoff[0][0] == 20
    # the shorter context's occurrences are read backoff_depth tokens deep (the longest match's: the budget)
    shallow, deep = draft(backoff_ratio=0.0, backoff_depth=1), draft(backoff_ratio=0.0, backoff_depth=8)
    assert shallow != deep and shallow[0][0] == 20
    assert draft(backoff_ratio=0.0, backoff_depth=64) == deep  # no deeper than the budget of 8
