"""Template resumption (index/template.py): after a value, what followed the key in earlier responses."""
import numpy as np
from hypothesis import given, settings, strategies as st

from lookahead import Drafter, DrafterConfig
from lookahead.index._layout import CUR_W, H_CUR, H_VE, N_CUR
from lookahead.index.template import KEY_MIN, VMAX

OPEN, KA, KA2, COLON, COMMA, KB, KB2, CLOSE = range(1, 9)
KEY = [OPEN] + list(range(20, 20 + KEY_MIN)) + [KA, KA2, COLON]  # a key longer than KEY_MIN


def _prompt(rng, commas):
    """Filler; with commas, each one followed by a random token (so ',' alone predicts nothing)."""
    out = []
    for _ in range(40):
        out += rng.integers(100, 5000, 2).tolist()
        if commas:
            out += [COMMA, int(rng.integers(100, 5000))]
    return out


def _object(rng):
    return (KEY + rng.integers(5000, 9000, int(rng.integers(2, 5))).tolist()
            + [COMMA, KB, KB2, COLON] + rng.integers(5000, 9000, 3).tolist() + [CLOSE])


def _drafter(weight, rng):
    """A drafter whose memory holds three earlier requests (prompts full of commas, object responses)."""
    d = Drafter(max_draft=8, learn=True, config=DrafterConfig(template_weight=weight))
    for _ in range(3):
        h = d.begin(_prompt(rng, True))
        d.append(h, _object(rng))
        d.end(h)
    return d


def _drafts_after_a_new_value(elsewhere=None):
    """(template_weight 2, template_weight 0) drafts after the key, a new value and ','; elsewhere: tokens of
    one more earlier request (after a prompt full of commas)."""
    drafts = {}
    for w in (2.0, 0.0):
        rng = np.random.default_rng(3)
        d = _drafter(w, rng)
        if elsewhere is not None:
            d.end(d.begin(_prompt(rng, True) + elsewhere))
        h = d.begin(_prompt(rng, False))
        d.append(h, KEY + [9001, 9002, 9003, COMMA])
        drafts[w] = d.propose(h)
    return drafts[2.0], drafts[0.0]


def test_draft_resumes_the_template_after_a_new_value():
    # the new value (never seen) ends with ',', which in memory mostly precedes random tokens; the key before
    # the value says what follows its value's end: KB KB2 COLON
    on, off = _drafts_after_a_new_value()
    assert on.tokens[:3].tolist() == [KB, KB2, COLON], on.tokens
    assert on.probs[0] > 0.3
    # without it, ',' is followed by the newest of a dozen different continuations, KB among them
    assert off.tokens[0] != KB or off.probs[0] < 0.2, (off.tokens, off.probs)


def test_no_resumption_while_the_value_still_matches_or_long_after():
    rng = np.random.default_rng(4)
    d = _drafter(2.0, rng)
    h = d.begin(_prompt(rng, False))
    # a value longer than VMAX: by its end the key is too far back
    d.append(h, KEY + list(range(9100, 9101 + VMAX)) + [COMMA])
    dr = d.propose(h)
    assert dr.tokens[:1].tolist() != [KB] or dr.probs[0] < 0.2


def test_the_template_resumes_after_a_value_whose_end_memory_holds_in_another_place():
    # memory holds the key's last token, the value and its ',' in another place, followed by other text: the
    # match into memory reaches back over the value to that token, not over the key (the key as matched ends
    # with the value's first tokens where an earlier value began as this one does: '"installed_size_kib": 4'
    # of an earlier 4xx, then '44,'), so it is not the key's own text going on, and what followed the key's
    # value still tells what is next
    on, off = _drafts_after_a_new_value([COLON, 9001, 9002, 9003, COMMA, 9500, 9501, 9502])
    assert on.tokens[:3].tolist() == [KB, KB2, COLON], on.tokens
    assert off.tokens[:3].tolist() == [9500, 9501, 9502], off.tokens  # the other place alone


def test_the_key_stays_when_a_match_of_the_value_breaks_off_after_its_end():
    # the value and its ',' also stand in an earlier list, where other items follow: the match into memory runs
    # over them and breaks off at the next key's KB. That match is the value's own text in another place, not
    # a key, so the key before the value still says what follows KB (KB2 COLON), which ', KB' alone does not
    # (in memory it is mostly followed by random tokens)
    value = [9101, 9102, 9103, 9104, 9105, 9106]
    drafts = {}
    for w in (2.0, 0.0):
        rng = np.random.default_rng(6)
        d = Drafter(max_draft=8, learn=True, config=DrafterConfig(template_weight=w))
        d.end(d.begin(_prompt(rng, True) + KEY + [9401, 9402, COMMA, KB, KB2, COLON, 9403, CLOSE]))
        d.end(d.begin(_prompt(rng, True) + [9300] + value + [COMMA, 9500, 9501, 9502]))
        d.end(d.begin(sum(([COMMA, KB] + rng.integers(100, 5000, 3).tolist() for _ in range(12)), [])))
        h = d.begin(_prompt(rng, False))
        b = d.arena[d._slot(h)]
        b[H_VE:H_VE + 3] = [9900 + 1, COMMA, 5]  # the output ends values with ',' (5 votes)
        d.append(h, KEY + value + [COMMA, KB])
        drafts[w] = d.propose(h)
    assert drafts[2.0].tokens[:2].tolist() == [KB2, COLON], drafts[2.0].tokens
    assert drafts[0.0].tokens[:1].tolist() != [KB2], drafts[0.0].tokens


def _cursor(d, h):
    b = d.arena.py[d._slot(h)]
    for k in range(N_CUR):
        o = H_CUR + CUR_W * k
        if b[o] != -1:
            return b[o + 3], b[o + 5]
    raise AssertionError("no cursor into memory")


def _ref_key_end(mem, own):
    """Brute force: L_i = longest suffix of own[:i + 1] occurring in mem; the key ends before the last token
    i whose match did not extend one of length >= KEY_MIN (L_i <= L_{i-1}); 0 when none."""
    m = [tuple(x) for x in [mem]][0]

    def occurs(piece):
        n = len(piece)
        return any(tuple(m[j:j + n]) == piece for j in range(len(m) - n + 1))

    Ls, kn = [], 0
    for i in range(len(own)):
        L = 0
        for n in range(i + 1, 0, -1):
            if occurs(tuple(own[i + 1 - n:i + 1])):
                L = n
                break
        if i and Ls[-1] >= KEY_MIN and L <= Ls[-1]:
            kn = i
        Ls.append(L)
    return Ls[-1], kn


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=60), st.lists(st.integers(0, 3), min_size=1, max_size=60),
       st.lists(st.integers(1, 5), min_size=1, max_size=12))
def test_cursor_key_matches_brute_force(mem, own, cuts):
    # memory holds one earlier request (its text, then a separator); the cursor is made at the first proposal
    # (synced over the whole text, shorter than the window) and then moved by appends in pieces
    d = Drafter(max_draft=4, learn=True, config=DrafterConfig(memory_segments=1))
    h0 = d.begin(mem)
    d.end(h0)
    h = d.begin(own[:1])
    d.propose(h)
    pos, i = 1, 0
    while pos < len(own):
        step = cuts[i % len(cuts)]
        d.append(h, own[pos:pos + step])
        pos += step
        i += 1
    d.propose(h)
    assert _cursor(d, h) == _ref_key_end(mem, own)
