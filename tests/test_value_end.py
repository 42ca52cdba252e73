"""Value ends (index/value_end.py): drafts of a value copied from the input fork back to the template where
the value is predicted to end."""
import numpy as np
from hypothesis import given, settings, strategies as st

from lookahead import Drafter, DrafterConfig
from lookahead.index._layout import H_PE, H_VE, N_SUB, N_VE, VE_W
from lookahead.index.automaton import extend_many, new_automaton
from lookahead.index.substitute import CONFIRM, seed_substitutions
from lookahead.index.value_end import (AHEAD, CARRY_VOTES, POINTER_VOTES, WINDOW, carried_ends, learn_end, seed_ends,
                                       template_ahead, value_end)
from greedy import greedy_tau, replay, session_steps
from reference_index import ref_learn_end, ref_template_ahead, ref_value_end


def _buffer(text, pe, votes):
    b = extend_many(new_automaton(), np.asarray(text, np.int32))
    b[H_PE] = pe
    for k, (t, x, c) in enumerate(votes):
        o = H_VE + VE_W * k
        b[o], b[o + 1], b[o + 2] = t + 1, x, c
    return b


def _votes(b):
    return [(int(b[o] - 1), int(b[o + 1]), int(b[o + 2])) for o in range(H_VE, H_VE + VE_W * N_VE, VE_W) if b[o]]


def vote_pairs(top):
    """Up to N_VE distinct (input, output) pairs of tokens 0..top with 1-3 votes, as learn_end keeps them."""
    return st.lists(st.tuples(st.integers(0, top), st.integers(0, top), st.integers(1, 3)), max_size=N_VE,
                    unique_by=lambda v: v[:2])


votes = vote_pairs(3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 3), min_size=1, max_size=60), votes, st.data())
def test_value_end_matches_reference(text, vote, data):
    n = len(text)
    pe = data.draw(st.integers(0, n))
    a = data.draw(st.integers(-1, n - 1))
    o = data.draw(st.integers(-1, n))
    depth = data.draw(st.integers(1, 16))
    votes = data.draw(st.integers(1, 3))
    b = _buffer(text, pe, vote)
    assert value_end(b, a, o, depth, votes) == ref_value_end(text, pe, vote, a, o, depth, votes, WINDOW)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 3), min_size=1, max_size=60), votes, st.data())
def test_template_ahead_matches_reference(text, vote, data):
    pe = data.draw(st.integers(0, len(text)))
    c = data.draw(st.integers(-1, len(text)))
    votes = data.draw(st.integers(1, 3))
    b = _buffer(text, pe, vote)
    assert template_ahead(b, c, votes) == ref_template_ahead(text, pe, vote, c, votes, AHEAD)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 5), min_size=1, max_size=30), votes,
       st.lists(st.tuples(st.integers(-1, 31), st.integers(0, 5), st.booleans()), max_size=12),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 3)), max_size=N_SUB,
                unique_by=lambda v: v[0]), st.data())
def test_learn_end_matches_reference(text, vote, ends, subs, data):
    # known: the copy pointer's skip ahead over an item's rest (pointer._move), which only confirms pairs
    pe = data.draw(st.integers(0, len(text)))
    b = _buffer(text, pe, vote)
    seed_substitutions(b, np.ravel(subs))
    confirmed = [(y, x) for y, x, seen in subs if seen >= CONFIRM]
    for p, x, known in ends:
        if known:
            learn_end(b, p, x, True)
        else:
            learn_end(b, p, x)
        vote = ref_learn_end(text, pe, vote, p, x, N_VE, confirmed, known, POINTER_VOTES)
        assert _votes(b) == vote


def test_a_substitution_is_not_learned_as_a_value_end():
    # JSON re-indented from records ('\n ' -> '\n   ' on every line): where a copy broke off at such a
    # token, the substitution was learned as a value end too, and held one of the N_VE entries with a hundred
    # votes in every templated request; once the substitution is confirmed it is not a value end
    NL1, NL3, QEND = 5, 6, 7
    text = [1, 2, NL1, 3, 4, NL1, 8, 9]
    b = _buffer(text, len(text), [])
    for seen, votes in ((1, [(NL1, NL3, 1)]), (CONFIRM, [])):
        c = b.copy()
        seed_substitutions(c, [NL1, NL3, seen])
        learn_end(c, 2, NL3)
        assert _votes(c) == votes
    c = b.copy()
    seed_substitutions(c, [NL1, NL3, CONFIRM])
    learn_end(c, 5, QEND)  # another token written there is a value end
    assert _votes(c) == [(NL1, QEND, 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=24), st.lists(st.integers(0, 4), max_size=10),
       st.lists(st.tuples(st.integers(0, 4), st.just(9), st.integers(1, 3)), min_size=1, max_size=N_VE,
                unique_by=lambda v: v[0]), st.data())
def test_value_end_against_an_earlier_value_matches_reference(inp, earlier, vote, data):
    # the layout value_end sees in a filled template: a record (the input), then the earlier object's value
    # between its key (10) and its end (9), so that the earlier value often holds a pair's input token
    text = inp + [10] + earlier + [9, 11, 10]
    o = len(inp)
    a = data.draw(st.integers(0, len(inp) - 1))
    depth = data.draw(st.integers(1, 16))
    votes = data.draw(st.integers(1, 3))
    b = _buffer(text, len(inp), vote)
    assert value_end(b, a, o, depth, votes) == ref_value_end(text, len(inp), vote, a, o, depth, votes, WINDOW)


def test_a_token_the_earlier_value_held_is_not_where_the_value_ends():
    # "_" ends a package name copied from the Filename line ("..-nilfs_1.48.."), NL ends every line; the
    # filename's value ends at NL, not at the "_" it holds, as the same key's value in the earlier object did
    U, NL, QEND, KEY = 3, 2, 9, 10
    pairs = [(U, QEND, 3), (NL, QEND, 3)]
    for earlier, m in (([5, 6, U, 8], 4), ([5, 6, 8], 2)):
        inp = [7, 1, 5, 6, U, 8, NL, 7]
        text = inp + [KEY] + earlier + [QEND, 11, KEY, 5]
        o = len(inp)
        b = _buffer(text, len(inp), pairs)
        r = o + 1 + len(earlier)
        assert value_end(b, 1, o, 16, 2) == (m, r) == ref_value_end(text, len(inp), pairs, 1, o, 16, 2, WINDOW)
        assert value_end(b, 1, o, 3, 2) == ((-1, -1) if m == 4 else (m, r))  # NL lies past a depth of 3


def test_the_template_goes_on_after_the_place_it_was_left():
    # the template is left at its last token before the value (o): when that token is itself a pair's output
    # token (an opening ' "', paired with the NL a list item may end at), the value's end still lies past it,
    # at the earlier value's end (QEND); taking o itself drafted the value, then ' "' again in place of '",'
    NL, QEND, OPENQ, KEY = 2, 9, 12, 10
    pairs = [(NL, QEND, 3), (NL, OPENQ, 3)]
    inp = [7, 1, 5, 6, NL, 7]
    text = inp + [KEY, OPENQ, 5, 8, QEND, 11, KEY, OPENQ, 5]
    o = len(inp) + 1
    b = _buffer(text, len(inp), pairs)
    want = (2, o + 3)  # the value 1 5 6 ends after 5 6; the template goes on at QEND
    assert value_end(b, 1, o, 16, 2) == want == ref_value_end(text, len(inp), pairs, 1, o, 16, 2, WINDOW)


def _records(rng, n_rec):
    """Records ("A: value NL B: value NL C: value NL") and the JSON-like objects made of them (values end with
    QEND where the record has NL)."""
    A, B, C, COLON, NL, OPEN, CLOSE, QA, QB, QC, QEND, SP = range(1, 13)
    prompt, out = [20, NL], []
    for _ in range(n_rec):
        vals = [rng.integers(100, 5000, int(rng.integers(3, 8))).tolist() for _ in range(3)]
        for key, v in zip((A, B, C), vals):
            prompt += [key, COLON, SP] + v + [NL]
        out += [OPEN]
        for key, v in zip((QA, QB, QC), vals):
            out += [key] + v + [QEND]
        out += [CLOSE]
    return prompt, out


def _tau(on, prompt, out, tree):
    d = Drafter(max_draft=16, tree=tree, learn=False, config=DrafterConfig(value_ends=on))
    return greedy_tau(d, prompt, out)


def test_values_fork_back_to_the_template():
    # without value ends, every value's draft runs on into the record (NL, the next key) and the target breaks
    # off there; with them the draft goes on with QEND and the next key of the template
    rng = np.random.default_rng(0)
    prompt, out = _records(rng, 12)
    for tree in (False, True):
        (on, h), (off, _) = _tau(True, prompt, out, tree), _tau(False, prompt, out, tree)
        assert on > 1.1 * off, (tree, on, off)


def test_the_vote_holds_the_records_line_end():
    rng = np.random.default_rng(1)
    prompt, out = _records(rng, 6)
    d = Drafter(max_draft=16, learn=False)
    _, h = greedy_tau(d, prompt, out)
    b = d.arena[d._slot(h)]
    top = max(_votes(b), key=lambda v: v[2])
    assert top[:2] == (5, 11) and top[2] >= 2  # NL in the record, QEND in the object


def _draft_in_second_value(config):
    """(best path, value, record's continuation) two tokens into object 2's first value (the values of object
    1 taught where values end), the output replayed greedily up to there (greedy.replay)."""
    rng = np.random.default_rng(2)
    prompt, out = _records(rng, 4)
    d = Drafter(max_draft=16, learn=False, config=config)
    h = d.begin(prompt)
    second = out.index(6, out.index(6, 1) + 1)  # object 2 (OPEN)
    replay(d, h, out[:second + 4])  # its first key (QA) and two tokens of its value
    v = out[second + 2:out.index(11, second)]
    at = [i for i in range(len(prompt) - len(v)) if prompt[i:i + len(v)] == v][0] + len(v)
    return d.propose(h).best_path().tolist(), v, prompt[at:at + 2]


def test_a_value_draft_ends_with_the_template():
    path, v, record = _draft_in_second_value(DrafterConfig())
    want = v[2:] + [11, 9]  # the rest of the value, QEND, then the next key as object 0 wrote it (QB)
    assert path[:len(want)] == want
    path, v, record = _draft_in_second_value(DrafterConfig(value_ends=False))
    assert path[:len(v) - 2 + 2] == v[2:] + record  # the record's NL and next key (B)


def _mixed_records(rng, n_rec):
    """Like _records, but B's values end with COMMA where A's and C's end with QEND (numbers and strings in
    JSON: the same NL in the record ends both)."""
    A, B, C, COLON, NL, OPEN, CLOSE, QA, QB, QC, QEND, SP, COMMA = range(1, 14)
    prompt, out, starts = [20, NL], [], []
    for _ in range(n_rec):
        vals = [rng.integers(100, 5000, int(rng.integers(3, 8))).tolist() for _ in range(3)]
        for key, v in zip((A, B, C), vals):
            prompt += [key, COLON, SP] + v + [NL]
        out += [OPEN]
        for key, v, end in zip((QA, QB, QC), vals, (QEND, COMMA, QEND)):
            starts.append((len(out) + 1, v, end))
            out += [key] + v + [end]
        out += [CLOSE]
    return prompt, out, starts


def test_values_that_end_two_ways_keep_both_pairs():
    # one NL in the records, two ends in the objects (strings and numbers in JSON): a single learned pair
    # flipped between them at every value; both are kept now, and the template says which one applies
    rng = np.random.default_rng(3)
    prompt, out, starts = _mixed_records(rng, 2)
    NL, QEND, COMMA = 5, 11, 13
    text = prompt + out
    pe = len(prompt)
    b = _buffer(text, pe, [])
    nl = prompt.index(NL, 2)  # the NL after the first record's A value
    for _ in range(3):
        learn_end(b, nl, QEND)
        learn_end(b, nl, COMMA)
    assert _votes(b) == [(NL, QEND, 3), (NL, COMMA, 3)]
    # the second object's values, copied from the second record two tokens in: each ends where the first
    # object's value for the same key ended, with that value's end
    for (at1, _, end), (_, v2, _) in zip(starts[:3], starts[3:6]):
        a = next(i for i in range(pe) if prompt[i:i + len(v2)] == v2) + 1
        m, r = value_end(b, a, pe + at1, 16, 2)
        assert m == len(v2) - 2 and text[r] == end and r > pe + at1, (m, r, end)


def test_only_well_voted_pairs_are_carried():
    b = _buffer([1, 2, 3], 3, [(5, 11, CARRY_VOTES - 1), (6, 12, CARRY_VOTES), (7, 13, CARRY_VOTES + 4)])
    c = _buffer([4], 1, [])
    seed_ends(c, carried_ends(b))
    assert _votes(c) == [(6, 12, CARRY_VOTES), (7, 13, CARRY_VOTES + 4)]
    assert carried_ends(_buffer([1], 1, [(5, 11, CARRY_VOTES - 1)])) is None


def _seeded(learn, first_records):
    """The value-end pairs a second request begins with, after a first one filled `first_records` objects
    from records (memory off: only value ends carry over)."""
    rng = np.random.default_rng(4)
    d = Drafter(max_draft=16, learn=learn, config=DrafterConfig(memory_tokens=0))
    prompt, out = _records(rng, first_records)
    _, h = greedy_tau(d, prompt, out)
    d.end(h)
    prompt, _ = _records(rng, 2)
    return _votes(d.arena[d._slot(d.begin(prompt))])


def test_a_finished_requests_well_voted_value_ends_start_the_next_one():
    # 12 objects end 36 values where the records have NL: that pair starts the next request, votes and all
    seeded = _seeded(True, 12)
    assert (5, 11) in [v[:2] for v in seeded] and min(v[2] for v in seeded) >= CARRY_VOTES, seeded
    assert _seeded(False, 12) == []  # learn=False: nothing carries over
    assert _seeded(True, 1) == []  # one object (3 values): no pair has the votes


def test_pairs_a_request_began_with_are_carried_only_if_it_learned_a_value_end():
    b = _buffer([1, 2, 3], 3, [(5, 11, CARRY_VOTES + 2), (6, 12, CARRY_VOTES)])
    began = carried_ends(b)
    assert carried_ends(b, seeded=began) is None  # nothing voted since: nothing is passed on
    for votes in ([(5, 11, CARRY_VOTES + 3), (6, 12, CARRY_VOTES)],  # one more vote
                  [(5, 11, CARRY_VOTES + 2), (6, 12, CARRY_VOTES), (7, 13, 1)]):  # a new pair
        assert carried_ends(_buffer([1], 1, votes), seeded=began) is not None
    c = _buffer([4], 1, [])
    seed_ends(c, carried_ends(_buffer([1], 1, [(5, 11, CARRY_VOTES + 2), (6, 12, CARRY_VOTES), (7, 13, 1)]),
                              seeded=began))
    assert _votes(c) == [(5, 11, CARRY_VOTES + 2), (6, 12, CARRY_VOTES)]  # the well-voted ones, as before


def test_a_request_that_learns_no_value_end_passes_none_on():
    # a code edit after templated requests: passed on unvoted, the pairs it began with lived on through every
    # later request (a code edit's one-off ' s' -> ' _' at 4 votes, in all 20 code_edit requests after it)
    rng = np.random.default_rng(4)
    d = Drafter(max_draft=16, config=DrafterConfig(memory_tokens=0))
    _, h = greedy_tau(d, *_records(rng, 12))
    d.end(h)
    text = rng.integers(100, 5000, 300).tolist()
    _, h = greedy_tau(d, text, text[50:250])  # a plain copy of its input: no value ends
    assert (5, 11) in [v[:2] for v in _votes(d.arena[d._slot(h)])]  # it began with the records' pair
    d.end(h)
    assert _votes(d.arena[d._slot(d.begin(text))]) == []


def test_carried_value_ends_save_steps_in_a_session_of_templated_requests(tokenizer):
    """A session of the public multi_turn workload (8 package records to JSON, one after another)."""
    carried, forgotten = (session_steps(tokenizer, "apt-libguestfs", f) for f in (None, "_ends"))
    # measured: 972 steps against 990
    assert carried < 0.99 * forgotten, (carried, forgotten)


def _example_then_records(vals, ends):
    """(prompt, output, keys): a prompt holding an example (a record of vals[:3], then its object) before the
    request's own record (vals[3:]), and the request's object; an object's three values end with `ends`, its
    keys are 4 tokens each."""
    A, B, C, COLON, NL, OPEN, CLOSE, SP = 1, 2, 3, 4, 5, 6, 7, 12
    keys = [[30 + 4 * k + j for j in range(4)] for k in range(3)]

    def record(vals):
        return [t for key, v in zip((A, B, C), vals) for t in [key, COLON, SP] + v + [NL]]

    def obj(vals):
        return [OPEN] + [t for key, v, e in zip(keys, vals, ends) for t in key + v + [e]] + [CLOSE]

    # text between the example and the records keeps the records out of reach of the template's run (as the
    # rest of a real prompt does: pointer.WINDOW)
    prompt = [20, NL] + record(vals[:3]) + obj(vals[:3]) + [NL] + list(range(6000, 6100)) + [NL] + record(vals[3:])
    return prompt, obj(vals[3:]), keys


def _first_object_draft(seeded, into=4, shared=False, at_once=False):
    """(best path, value, next key, record's continuation) `into` tokens into the second value of a request's
    first object, when its prompt holds an example (a record, then its object: the template) before the
    request's own records, so that the first object copies its template from the input. seeded: a first
    request (memory off) taught the value ends the second one starts with. shared: the example's value starts
    with the same token as the request's. at_once: the output so far is appended in one call, not replayed
    greedily (greedy.replay)."""
    rng = np.random.default_rng(5)
    d = Drafter(max_draft=16, learn=seeded, config=DrafterConfig(memory_tokens=0))
    if seeded:
        _, h = greedy_tau(d, *_records(rng, 12))
        d.end(h)
    vals = [rng.integers(100, 5000, 6).tolist() for _ in range(6)]  # the example's, then the request's
    if shared:
        vals[1][0] = vals[4][0]
    prompt, out, keys = _example_then_records(vals, (11, 11, 11))
    h = d.begin(prompt)
    so_far = out[:out.index(keys[1][-1]) + 1 + into]
    if at_once:
        d.append(h, so_far)
    else:
        replay(d, h, so_far)
    return d.propose(h).best_path().tolist(), vals[4], keys[2], [5, 3]  # the record's NL, then its key C


def test_a_first_objects_value_ends_with_the_template_of_an_example_in_the_prompt():
    # the template run the value left is in the input (the example object), not in the output: once value
    # ends are known, the draft still goes back to it where the value ends
    path, v, key, record = _first_object_draft(True)
    assert path[:7] == v[4:] + [11] + key, (path, v)  # the rest of the value, QEND, the next key
    # a request that has seen no value end keeps copying the record (two runs in the input are also what a
    # code edit makes, where forks at would-be value ends lose tokens)
    path, v, key, record = _first_object_draft(False)
    assert path[:4] == v[4:] + record, (path, v)


def test_a_value_that_starts_as_the_examples_ends_with_the_examples_template():
    # the pointer's run copies the example object's key, then the value's first token, which the example's
    # value shares ('"installed_size_kib": 9' of 98, where the record has 92); the value goes on from the
    # record, and its draft goes back to the example's template where it ends (the output appended at once
    # leaves no earlier run: template_run has none)
    path, v, key, record = _first_object_draft(True, into=2, shared=True, at_once=True)
    assert path[:9] == v[2:] + [11] + key, (path, v)  # the rest of the value, QEND, the next key
    # the record's own continuation (NL, the next record key) while no value end is known
    path, v, key, record = _first_object_draft(False, into=2, shared=True, at_once=True)
    assert path[:6] == v[2:] + record, (path, v)


def test_a_pair_that_ends_values_at_a_carried_pairs_line_end_is_carried_too():
    # (5, 13) ends values at 5 as the well-voted (5, 11) does (a number's ',' beside the strings' '",'): carried,
    # with POINTER_VOTES votes; (6, 14) ends them at another token, (5, 15) has one vote: neither is
    b = _buffer([1, 2, 3], 3, [(5, 11, CARRY_VOTES + 4), (6, 14, CARRY_VOTES - 1), (5, 13, POINTER_VOTES + 1),
                               (5, 15, 1)])
    c = _buffer([4], 1, [])
    seed_ends(c, carried_ends(b))
    assert _votes(c) == [(5, 11, CARRY_VOTES + 4), (5, 13, POINTER_VOTES)]
    assert carried_ends(_buffer([1], 1, [(5, 13, CARRY_VOTES - 1)])) is None  # no well-voted pair at 5


def _number_in_first_object(strings, numbers):
    """(best path, value, next key, the pairs the request began with) two tokens into the B value (a number:
    it ends with COMMA where strings end with QEND) of a request's first object, whose template is an example
    object in the prompt; a first request (memory off) filled `strings` objects of _records (every value a
    string), then `numbers` of _mixed_records (B a number)."""
    rng = np.random.default_rng(6)
    d = Drafter(max_draft=16, learn=True, config=DrafterConfig(memory_tokens=0))
    p1, o1 = _records(rng, strings)
    p2, o2, _ = _mixed_records(rng, numbers)
    _, h = greedy_tau(d, p1 + p2[2:], o1 + o2)  # p2 opens with the same [20, NL] as p1
    d.end(h)
    vals = [rng.integers(100, 5000, 6).tolist() for _ in range(6)]  # the example's, then the request's
    prompt, out, keys = _example_then_records(vals, (11, 13, 11))  # QEND, COMMA, QEND
    h = d.begin(prompt)
    began = _votes(d.arena[d._slot(h)])
    replay(d, h, out[:out.index(keys[1][-1]) + 3])
    return d.propose(h).best_path().tolist(), vals[4], keys[2], began


def test_a_requests_first_number_ends_as_numbers_ended_in_the_last_request():
    # the last request voted (NL, QEND) well and (NL, COMMA) a few times (one number per object): both start
    # this one, so its first number's draft goes back to the example's template at COMMA; with (NL, QEND) alone
    # it went back at the example's first QEND after the number, skipping key C
    # (measured: the last request ended with (NL, QEND) at 25 votes, (NL, COMMA) at 3, below CARRY_VOTES: it
    # is carried for ending values at the same NL, with POINTER_VOTES votes)
    path, v, key, began = _number_in_first_object(4, 4)
    assert began[0][:2] == (5, 11) and began[0][2] >= CARRY_VOTES, began
    assert began[1:] == [(5, 13, POINTER_VOTES)], began
    assert path[:9] == v[2:] + [13] + key, (path, v)
