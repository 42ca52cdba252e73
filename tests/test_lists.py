"""Lists (index/lists.py): a draft at a list item copied from the input goes on with the output's separator
and the input's next items."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lookahead import Drafter
from lookahead.bench.workloads import load_workload
from lookahead.index._layout import SEP, VE_W
from lookahead.index.lists import list_draft, separated
from greedy import greedy_tau, replay
from reference_index import ref_list_draft
from test_value_end import _buffer, vote_pairs

SPACED = {0: 6, 1: 7, 2: 8}  # bare token -> its spelling with a leading space, as spacing.spaced_ids maps them


def _spacing():
    sp = np.full(12, -1, np.int32)
    for t, s in SPACED.items():
        sp[t] = s
        sp[s] = -(t + 2)  # the spaced token names its bare one
    return sp


def _native(text, pe, votes, c, run, depth, need):
    b = _buffer(text, pe, votes)
    seq = np.full(depth, -7, np.int32)
    k = list_draft(b, c, run, _spacing(), need, seq, depth)
    # a list needs a separator before the copy: propose.py tries no occurrence of a match without one
    assert k == 0 or separated(b, run, need)
    return seq[:k].tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 9), min_size=2, max_size=60), vote_pairs(9), st.data())
def test_list_draft_matches_reference_on_random_text(text, vote, data):
    n = len(text)
    pe = data.draw(st.integers(0, n))
    c = data.draw(st.integers(-1, n))
    run = data.draw(st.integers(0, n))
    depth = data.draw(st.integers(1, 16))
    need = data.draw(st.integers(1, 3))
    want = ref_list_draft(text, pe, vote, c, run, depth, need, _spacing())
    assert _native(text, pe, vote, c, run, depth, need) == want


@st.composite
def _lists(draw):
    """An input list (items of tokens 0-2, each first token spelled with a space (6-8) or not, ended by the
    delimiter 5 or by a constraint (4 ... 5)) after a key (2 9 0), and an output that copied an item, wrote a
    separator (3, a value end's output token, then up to 3 of tokens 10, 11) and some of the next item."""
    items = draw(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=4), min_size=2, max_size=6))
    spaced = draw(st.booleans())
    inp = [2, 9, 0]
    starts = []
    for it in items:
        starts.append(len(inp))
        inp += [SPACED[it[0]] if spaced else it[0]] + it[1:]
        inp += draw(st.sampled_from([[5], [4, 10, 11, 5], [4, 11, 5]]))
    inp += draw(st.sampled_from([[9], [SEP], [4, 10, 9, 5, 0]]))
    sep = [3] + draw(st.lists(st.integers(10, 11), max_size=3))
    i = draw(st.integers(1, len(items) - 1))
    w = draw(st.integers(1, len(items[i])))
    text = inp + [1] + items[i - 1] + sep + items[i][:w]
    return text, len(inp), starts[i] + w - 1, w - 1


@settings(max_examples=300, deadline=None)
@given(_lists(), st.data())
def test_list_draft_matches_reference_on_lists(case, data):
    text, pe, c, run = case
    # 9 ends the record's values (the most voted pair: never a list item's end), 5 and 4 the items
    vote = [(9, 3, 3), (5, 3, 2), (4, 3, 2), (0, 3, 1)][:data.draw(st.integers(1, 4))]
    depth = data.draw(st.integers(1, 16))
    need = data.draw(st.integers(1, 2))
    got = _native(text, pe, vote, c, run, depth, need)
    assert got == ref_list_draft(text, pe, vote, c, run, depth, need, _spacing())
    assert len(got) <= depth and SEP not in got


# "Depends: libc6 (>= 2.14), libx11-6, libxext6" as tokens: items end at " (" (4) and "," (5), the constraint
# at ")," (12), the items start spelled with a space (6-8); 9 (a record's newline) is the most voted end
_MIXED = [2, 9, 0] + [6, 1, 4, 10, 11, 12] + [7, 2, 5] + [8, 0, 9]
_MIXED_VOTES = [(9, 3, 3), (4, 3, 2), (5, 3, 2)]


def test_items_with_and_without_a_constraint_are_drafted_through_either_delimiter():
    # "Depends: libc6 (>= 2.14), libx11-6, libxext6": the first item ends at " (" (4) and its constraint at "),"
    # (12), the second at "," (5), which is the delimiter itself, the next item spelled with a space (8); 9 (a
    # record's newline) is the most voted end. The output copied the first item, wrote its separator (3 10) and
    # the second item's first token: the draft is that item's rest, the separator, the third item (bare), and
    # stops at the newline. Before, an item had to end at the previous one's end token, and the delimiter had to
    # be the one before the item copied (12): no list draft
    inp, vote = _MIXED, _MIXED_VOTES
    text = inp + [1] + [0, 1] + [3, 10] + [1]
    c = inp.index(7)
    want = [2, 3, 10, 2, 0]
    assert ref_list_draft(text, len(inp), vote, c, 0, 16, 2, _spacing()) == want
    assert _native(text, len(inp), vote, c, 0, 16, 2) == want


def test_an_item_whose_copy_started_after_its_first_token_is_a_list_item():
    # the output wrote the item's first token (1, the input's 7 without its space) from the template, and the
    # pointer found the input only at the next one (2): the item starts at 1 all the same, so the draft is the
    # separator and the next item; taken from the run's start, the separator seemed to be 3 10 1 and the
    # delimiter 7, and there was no list draft
    inp, vote = _MIXED, _MIXED_VOTES
    text = inp + [1] + [0, 1] + [3, 10] + [1, 2]
    c = inp.index(7) + 1
    want = [3, 10, 2, 0]
    assert ref_list_draft(text, len(inp), vote, c, 0, 16, 2, _spacing()) == want
    assert _native(text, len(inp), vote, c, 0, 16, 2) == want
    assert ref_list_draft(text, len(inp), vote, c, 0, 16, 2, _spacing(), back=0) == []


def test_an_item_after_a_long_constraint_that_holds_the_items_last_token_is_a_list_item():
    # "libgdk-pixbuf-2.0-0 (>= 2.42.10+dfsg), libgio3.0-cil": the constraint is 14 tokens long (digits are tokens),
    # and holds the previous item's last token ("0") before other tokens. The previous item ends at the nearest
    # place of its last token followed by an end token (" (", 4), and the delimiter ("),", 12) may stand up to GAP =
    # 20 tokens after the item's end. Before, the scan stopped at the first "0" (followed by "+": no list) and
    # looked for the delimiter within 12 tokens (89% of the workloads' constraints fit, 99.8% within 20)
    long = [11, 11, 1, 11, 2, 11, 1, 11, 11, 2, 11, 1, 11, 11]
    inp = [2, 9, 0] + [6, 1, 4] + long + [12] + [7, 2, 4] + long + [12] + [8, 0, 9]
    vote = _MIXED_VOTES
    text = inp + [1] + [0, 1] + [3, 10] + [1]
    c = inp.index(7)
    want = [2, 3, 10, 2, 0]
    assert ref_list_draft(text, len(inp), vote, c, 0, 16, 2, _spacing()) == want
    assert _native(text, len(inp), vote, c, 0, 16, 2) == want
    assert ref_list_draft(text, len(inp), vote, c, 0, 16, 2, _spacing(), gap=12) == []


def _session_draft(tokenizer, session, index, pos):
    """(agree, best path, output) at output position pos of request `index` of a multi_turn session, its
    requests replayed greedily in order through one Drafter made with the tokenizer, as the bench does; agree:
    how many of the best path's first tokens equal the output's from there."""
    recs = [r for r in load_workload("multi_turn", tokenizer) if r["session"].endswith(session)]
    d = Drafter(max_draft=16, tokenizer=tokenizer)
    for r in recs[:index]:
        d.end(greedy_tau(d, r["prompt_ids"], r["output_ids"])[1])
    out = list(recs[index]["output_ids"])
    h = d.begin(recs[index]["prompt_ids"])
    replay(d, h, out[:pos])
    path, want = d.propose(h).best_path().tolist(), out[pos:pos + 16]
    agree = next((i for i, (x, y) in enumerate(zip(path, want)) if x != y), min(len(path), len(want)))
    return agree, path, want


@pytest.mark.parametrize("session, index, pos", [("s11-apt-libguestfs", 5, 427),
                                                 ("s09-dpkg-debian-gnome-maintainers", 2, 405)])
def test_a_records_depends_list_is_drafted_item_after_item(tokenizer, session, index, pos):
    # a list written inline ('ping", "iputils-tracepath", "lsof", "strace') and one written an item a line
    # ('16-16",\n      "libtiff6"\n    ],'): the draft goes on through the separator with the record's next
    # item. The template's fork alone went on with the earlier object's next key: 2 and 6 tokens agreed (14
    # and 12 with lists)
    agree, path, want = _session_draft(tokenizer, session, index, pos)
    assert agree >= 12, (agree, path, want)


def test_an_item_whose_first_token_was_never_seen_bare_is_drafted(tokenizer):
    # '", "q': the record spells the item " qemu-system-x86" (" q" then "emu"), the output '"' then "q", which
    # the text never held; the copy resumes at " q" (pointer.track), where nothing matched and the draft was
    # empty before
    agree, path, want = _session_draft(tokenizer, "s11-apt-libguestfs", 6, 509)
    assert agree >= 8, (agree, path, want)


def test_an_item_of_a_list_ends_with_the_separator(tokenizer):
    # '"cryptsetup-bin", "curl"': the template was left at an opening ' "', which is also the output token
    # of a pair (',' -> ' "'); the item's draft then went on with ' "' (3 tokens agreed), not '", "'
    # (value_end.template_after)
    agree, path, want = _session_draft(tokenizer, "s11-apt-libguestfs", 6, 575)
    assert agree >= 5, (agree, path, want)


@pytest.mark.parametrize("pos", [639, 689])
def test_a_separator_of_two_value_end_tokens_is_one_separator(tokenizer, pos):
    # '", "' is '",' then ' "', and both are pairs' output tokens (',' -> '",' and ',' -> ' "'): the separator
    # starts at '",', so the previous item ends with the input's own last token and the record's next items
    # are drafted ('", "gdisk", "grub2-common", "iproute2'); taken from ' "' on, the previous item seemed to
    # end with '",', and the draft went on with the earlier object's list (2 tokens agreed)
    agree, path, want = _session_draft(tokenizer, "s11-apt-libguestfs", 6, pos)
    assert agree >= 14, (agree, path, want)


def test_an_item_the_pointer_is_not_on_is_drafted_as_a_list_item(tokenizer):
    # 'libcairo2' in '"cli-common", "libcairo2", "libmono-corlib4.5-cil"]' (the record: "cli-common (>= 0.5.1),
    # libcairo2 (>= 1.16.0), libmono-corlib4.5-cil (>= 5.18.0.240)"): the copy pointer was not on the record's
    # item, the longest match's occurrence was; that occurrence's copy is drafted as a list item too (the item's
    # rest, the separator, the next item: propose.py). Before, it copied the record on (' (>= 1.1': no token
    # agreed)
    agree, path, want = _session_draft(tokenizer, "s12-apt-gtk-sharp3", 1, 461)
    assert agree >= 12, (agree, path, want)


@pytest.mark.parametrize("session, index, pos", [("s12-apt-gtk-sharp3", 2, 443), ("s12-apt-gtk-sharp3", 1, 749),
                                                 ("s13-apt-nunit", 3, 593)])
def test_an_item_at_the_analogys_place_is_drafted_as_a_list_item(tokenizer, session, index, pos):
    # 'libglib2|.0-0", "libglib3.0-cil",', '|k-3-0", "libmono-corlib4.5' and a tags list's last item
    # ('role::program|", "use::checking"], "summary": "Unit'): the copy pointer drafted no list; the analogy's
    # place (the record's field after the earlier object's) was on the item, and drafted it, then the value's
    # fork back to the template: 6, 7 and 2 tokens agreed. It drafts the list now (propose.py)
    agree, path, want = _session_draft(tokenizer, session, index, pos)
    assert agree >= 12, (agree, path, want)


def test_a_list_accepted_past_its_items_end_still_votes_for_the_items_end(tokenizer):
    # the session's first request writes its records' depends lists ("libglib2.0-0 (>= 2.74.5), libglib3.0-cil"
    # as '"libglib2.0-0", "libglib3.0-cil"'): where a drafted list was accepted past an item's end, the copy
    # skipped ahead to the next item, and only a return to the template voted for the pair ' (' -> '",': 5 votes
    # at the request's end with the list drafts of propose.py (6 before them, 7 now), too few to carry it then,
    # and the next requests' lists forked back to the template (the session's requests 1-4: tau 7.90, 9.47,
    # 8.97, 9.21 with the list drafts, 8.57, 9.60, 9.87, 9.50 before them)
    recs = [r for r in load_workload("multi_turn", tokenizer) if r["session"].endswith("s12-apt-gtk-sharp3")]
    d = Drafter(max_draft=16, tokenizer=tokenizer)
    d.end(greedy_tau(d, recs[0]["prompt_ids"], recs[0]["output_ids"])[1])
    t, x = (tokenizer.encode(s, add_special_tokens=False)[-1] for s in (" (", '",'))
    carried = [] if d._ends is None else d._ends.reshape(-1, VE_W).tolist()
    votes = [v for a, b, v in carried if (a, b) == (t + 1, x)]
    assert votes and votes[0] >= 6, carried
