"""Value ends: where a value copied from the input stops, and what the template writes after it.

A template filled from records copies each value from the input, then goes on with its own text:

    input:   ...Version: 2.38.1-5\\nMaintainer: util-linux packagers <...>\\n...
    output:  "version": "2.38.1-5",\\n    "maintainer_name": "util-linux packagers",\\n    "...

While a value is copied, the input's text after it ("\\nMaintainer: ...") is what a plain copy drafts, and
the target breaks off there, at every value. But values end the same way each time: where the input has
"\\n", the output writes '",'. So when a copy of the input breaks off and the text goes back to the template
(the analogy's value ended, or the copy pointer returned to its previous run, in the output), the pair
(input token that was not copied, output token written instead) is learned, with a vote count. N_VE pairs
are kept: one NL in the records ends both strings ('",') and numbers (','), and list items end at "," or
" (" ("libc6 (>= 2.14), libgcc-s1"), so a single pair flipped at nearly every value (templated / multi_turn
tau, tree: 6.212 / 8.008 with one pair, 6.270 / 8.040 with four; code_edit and completion the same). A new
pair takes a free entry, else the least voted one, once that has lost its votes (a vote less each time a
new pair finds no room), so one odd break does not undo a pattern seen many times. With four entries the
numbers' pair ("\\n" -> ",", in objects whose strings end '",') kept losing its entry to one-off pairs and
stayed at one vote; six keep it (templated / multi_turn tau, tree / chain: 6.375 / 6.021 -> 6.421 / 6.083,
8.279 / 7.922 -> 8.294 / 7.926).

A draft copying a value then forks where the value is predicted to end: at the first input token that is a
pair's, it goes on with the template, from the first place after where the template was left (at the
value's start) that holds an output token paired with that input token: in the earlier object, where the
same key's value ended, which also says which of the ends applies. The analogy's value place (analogy.py)
forks with analogy_weight on both branches; the copy pointer's run (pointer.py) moves its copy_weight to the
template branch, once the pair has two votes.

Cost: a scan of at most a draft's depth, plus up to 2 * WINDOW tokens for each end token met in it (where the
template goes on, and the earlier value), only while a value is being copied.

A pair's input token may also occur inside other keys' values: a package name copied from the Filename line
("pool/.../libguestfs-nilfs_1.48.6-2_amd64.deb") ends at "_", so "_" -> '",' is learned, and the filename's
own draft then forked after "nilfs". So a predicted end whose input token the same key's value in the earlier
object holds (between where the template was left and where it goes on) is not this key's end: the value goes
on to the next pair's token (multi_turn / templated tau, tree / chain: 8.442 / 8.096 -> 8.458 / 8.111,
6.570 / 6.298 -> 6.581 / 6.309; code_edit chain 9.938 -> 9.939; completion and the model workloads unchanged).

Where the output wrote what a confirmed substitution (substitute.py) maps the input token to, the copy broke
off at a substitution, not at a value's end: JSON re-indented from records ('\\n ' -> '\\n   ' on every line)
broke copies at every line, and that pair held one of the N_VE entries in every templated request (~100 votes),
so the tags lists' pair (',' -> '",') kept losing its entry (in 24 of 116 requests at their end, now 65) and a
list was drafted ", b" for '", "b' (templated tau, tree / chain: 6.977 / 6.944 -> 7.036 / 6.948; multi_turn
chain 8.699 -> 8.695; code_edit, completion and the model workloads unchanged).

A finished request's well-voted pairs (carried_ends) start the next request's (seed_ends): requests that fill the
same template (a session of them) then fork at values sooner, and keep the pairs where a stray break would have
replaced them (multi_turn / templated tau, tree: 8.094 / 6.304 -> 8.192 / 6.332). A pair voted fewer than
CARRY_VOTES times is not carried: code edits leave and rejoin the input for other reasons, and carrying their pairs
cost code_edit 0.5% (from 5 votes up: nothing). Since lists are drafted where an item's value end forks too
(lists.py), a list accepted past an item's end votes for its pair only where the pair is known (learn_end's
`known`), and CARRY_VOTES is 4 (it was 6): at 6 a session's depends and number pairs fell one or two votes short and
were not carried. A request that learned no value end (no pair is new, none gained a vote) passes none on: the pairs
it began with were an earlier request's, and passed on unvoted they lived on through every later request, whatever
those were (a code edit's one-off ' s' -> ' _', 4 votes, forked copies in all 20 code_edit requests after the one
that learned it). Steps at budget 16, tree / chain: code_edit 5,687 / 5,994 -> 5,679 / 5,983 (what CARRY_VOTES 4 had
cost it), completion 4,968 / 5,884 -> 4,966 / 5,886, model:multi_turn 1,028 / 1,113 -> 1,031 / 1,116 (a model's
stray 'Status' -> '\n' had lived on across its sessions), model:completion chain 1,275 -> 1,277; multi_turn,
templated, model:code_edit and model:templated the same.

But a package record's one number ("Installed-Size: 72") ends at the same newline as its strings: the pair
"\n" -> "," got 1-3 votes per request (one number per object) and was never carried, so each request's first
numbers, with only "\n" -> '",' known, forked to the first '",' after the template's number, the end of the
next key's value ('72",\n    "maintainer_email"' for '72,\n    "maintainer_name"'). So a pair with
POINTER_VOTES votes whose input token is a carried pair's (another way the same line end ends values) is
carried too, with POINTER_VOTES votes: only a request that votes it CARRY_VOTES - POINTER_VOTES times more makes
it well voted. Carried with all its votes, a templated request's "\n" -> '"' (an object's last value) grew to
~90 votes and held an entry that the lists' pair (',' -> '",') then lacked (templated chain +357 steps); with
the six entries of before, even at POINTER_VOTES the lists' pair lost its entry (+332), so there are eight
(N_VE). multi_turn / templated steps at budget 16, tree / chain: 4,927 / 5,041 -> 4,905 / 5,017, 20,375 /
20,534 -> 20,332 / 20,486 (eight entries alone: 4,927 / 5,054, 20,295 / 20,591); code_edit, completion and
the model workloads the same.

Not done: a second fork "the value ends now" (the template from where the value's end takes it, or from the earlier
object's first pair output token where no end is predicted, at a fraction of the pointer's and the analogy's
weight), for outputs whose value stops before the input's. Steps at budget 16, tree (chain within 2), multi_turn /
templated from 4,855 / 19,916: 0.1 of the weight 4,852 / 19,928, 0.25 4,872 / 19,898; forking only where an end
is predicted, 0.1 4,854 / 19,916, 0.25 4,860 / 19,909, 0.5 4,881 / 19,954; code_edit and completion the same: the
breaks it was for mostly had no fork to add it to.
"""
import numpy as np
from numba import njit

from ._layout import H_N_TX, H_OFF_TX, H_PE, H_VE, N_VE, SEP, VE_W
from .substitute import mapped

CARRY_VOTES = 4  # votes a pair needs to be carried into the next request (lists.py: 6 -> 4)
AHEAD = 32  # tokens an example object's value may run before its template goes on (template_ahead)
WINDOW = 128  # tokens searched after where the template was left for where its value ended
POINTER_VOTES = 2  # votes a pair needs before the copy pointer's run forks (code edits leave the input and come
                   # back for other reasons: with 1, code_edit tau 10.091 -> 10.072)


@njit(cache=True, inline="always")
def learn_end(b, p, x, known=False):
    """A value copied from the input ended: the input token at text position p was not copied, the output
    wrote token x in its place. Votes for that pair; a new pair takes a free entry, else the least voted one
    once it has lost its votes (one vote less each time a new pair finds no room). Nothing is learned where x
    is what the output writes for that token anyway (the token itself, or a confirmed substitution's).

    With `known`, only a pair the copy pointer already forks at (POINTER_VOTES votes) gains a vote, and nothing
    else changes: where the text skipped the rest of an input item to its next one, weaker evidence of a
    value's end than a return to the template (founding pairs there cost code_edit 1% of its steps, and an
    alternative's ' (' -> ' |' broke lists)."""
    if p < 0 or p >= b[H_PE] or p >= b[H_N_TX]:
        return
    t = b[b[H_OFF_TX] + p]
    if t == SEP or mapped(b, p, t) == x:
        return
    low = 0
    for k in range(N_VE):
        o = H_VE + VE_W * k
        if b[o] == t + 1 and b[o + 1] == x:
            if not known or b[o + 2] >= POINTER_VOTES:
                b[o + 2] += 1
            return
        if b[o] == 0:  # entries are used first to last: no pair past here
            if not known:
                b[o] = t + 1
                b[o + 1] = x
                b[o + 2] = 1
            return
        if b[o + 2] < b[H_VE + VE_W * low + 2]:
            low = k
    if known:
        return
    o = H_VE + VE_W * low
    if b[o + 2] > 1:
        b[o + 2] -= 1
    else:
        b[o] = t + 1
        b[o + 1] = x
        b[o + 2] = 1


@njit(cache=True, inline="always")
def _is_end(b, t, votes):
    """Whether t is the input token of a pair with `votes` votes (where a value ends in the input: a newline)."""
    for k in range(N_VE):
        o = H_VE + VE_W * k
        if b[o] == t + 1 and b[o + 2] >= votes:
            return True
    return False


@njit(cache=True, inline="always")
def _writes(b, x, votes):
    """Whether x is the output token of a pair with `votes` votes (how the output ends a value: '",')."""
    for k in range(N_VE):
        o = H_VE + VE_W * k
        if b[o + 1] == x and b[o + 2] >= votes:
            return True
    return False


@njit(cache=True, inline="always")
def _ends_with(b, t, x, votes):
    for k in range(N_VE):
        o = H_VE + VE_W * k
        if b[o] == t + 1 and b[o + 1] == x and b[o + 2] >= votes:
            return True
    return False


@njit(cache=True, inline="always")
def end_ahead(b, a, depth, votes):
    """(m, t): the value copied from input end position a ends after its next m tokens, at input token t, the
    first of those that is the input token of a pair with `votes` votes; (-1, -1) when none is within `depth`
    tokens (the input stops at its end and at SEP)."""
    if b[H_VE] == 0:
        return -1, -1
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    pe = b[H_PE]
    for d in range(depth):
        p = a + 1 + d
        if p >= pe or p >= n:
            break
        t = b[ot + p]
        if t == SEP:
            break
        if _is_end(b, t, votes):
            return d, t
    return -1, -1


@njit(cache=True, inline="always")
def template_after(b, o, t_in, votes):
    """Where the template left at text position o goes on after a value ending at input token t_in: the first
    place after o (within WINDOW) that holds an output token of a pair for t_in with `votes` votes (how the same
    key's value ended in the earlier object); -1 when there is none.

    o is the template's last token before the value, so the value's end lies past it. The search began at o
    itself, and where o held a pair's output token, that was taken for the value's end: in a 60-item list
    ('"cryptsetup-bin", "curl"', with the pair ',' -> ' "' learned from the items' opening quotes) o held ' "',
    and a draft of an item went on with ' "' instead of '", "' (multi_turn chain 8.332 -> 8.387, 29 steps fewer
    in that list; tree 8.659 -> 8.663; templated chain 6.539 -> 6.541, tree 6.8014 -> 6.8010; code_edit,
    completion and the model workloads unchanged)."""
    if o < 0:
        return -1
    ot = b[H_OFF_TX]
    for r in range(o + 1, min(o + WINDOW, b[H_N_TX] - 1)):
        if _ends_with(b, t_in, b[ot + r], votes):
            return r
    return -1


@njit(cache=True, inline="always")
def _holds(b, o, r, t):
    """Whether text positions o + 1 .. r - 1 (the earlier object's value) hold token t."""
    ot = b[H_OFF_TX]
    for q in range(o + 1, r):
        if b[ot + q] == t:
            return True
    return False


@njit(cache=True, inline="always")
def value_end(b, a, o, depth, votes):
    """A value is copied from input end position a; the template was left at text position o when it began.
    Returns (m, r): the value ends after its next m tokens (end_ahead: the first pair's input token that the
    same key's earlier value, between o and r, does not hold) and the template goes on with the text from
    position r on (template_after); (-1, -1) when either is not found."""
    if o < 0:
        return -1, -1
    s = a
    while True:
        m, t = end_ahead(b, s, depth - (s - a), votes)
        if m < 0:
            return -1, -1
        r = template_after(b, o, t, votes)
        if r < 0:
            return -1, -1
        if not _holds(b, o, r, t):
            return s - a + m, r
        s += m + 1


@njit(cache=True, inline="always")
def template_ahead(b, c, votes):
    """Whether the input after position c meets an output token of a pair with `votes` votes within AHEAD
    tokens, before any pair's input token: the text there is a template (an example object in the prompt
    writes '",' after its values), not a record (whose values end at a newline)."""
    ot = b[H_OFF_TX]
    for p in range(c + 1, min(c + 1 + AHEAD, b[H_PE])):
        t = b[ot + p]
        if t == SEP:
            return False
        if _writes(b, t, votes):
            return True
        if _is_end(b, t, votes):
            return False
    return False


def carried_ends(b, min_votes=CARRY_VOTES, seeded=None):
    """The value-end pairs of automaton b voted at least min_votes times, and those voted POINTER_VOTES times
    whose input token is one of theirs (with POINTER_VOTES votes: the module docstring), in the header's layout
    (int32 [N_VE * VE_W], first entries first, zeros after them), or None when there is none, or when b learned
    no value end since it began with the pairs `seeded` (what seed_ends gave it; None: none): no pair is new
    and none gained a vote."""
    pairs = np.array(b[H_VE:H_VE + N_VE * VE_W], np.int32).reshape(N_VE, VE_W)
    if seeded is not None:
        began = {(t, x): v for t, x, v in np.reshape(seeded, (N_VE, VE_W)).tolist() if t}
        if not any(t and v > began.get((t, x), 0) for t, x, v in pairs.tolist()):
            return None
    used = pairs[:, 0] > 0
    well = used & (pairs[:, 2] >= min_votes)
    also = used & ~well & (pairs[:, 2] >= POINTER_VOTES) & np.isin(pairs[:, 0], pairs[well, 0])
    keep = pairs[well | also]
    keep[also[well | also], 2] = POINTER_VOTES
    if len(keep) == 0:
        return None
    out = np.zeros((N_VE, VE_W), np.int32)
    out[:len(keep)] = keep
    return out.ravel()


def seed_ends(b, pairs):
    """Starts automaton b's value-end pairs with `pairs` (from carried_ends), votes included."""
    b[H_VE:H_VE + N_VE * VE_W] = pairs
