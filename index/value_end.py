"""Value ends: where a value copied from the input stops, and what the template writes after it.

A template filled from records copies each value from the input, then goes on with its own text:

    input:   ...Version: 2.38.1-5\\nMaintainer: util-linux packagers <...>\\n...
    output:  "version": "2.38.1-5",\\n    "maintainer_name": "util-linux packagers",\\n    "...

While a value is copied, the input's text after it ("\\nMaintainer: ...") is what a plain copy drafts, and
the target breaks off there, at every value. But values end the same way each time: where the input has
"\\n", the output writes '",'. So when a copy of the input breaks off and the text goes back to the template
(the analogy's value ended, or the copy pointer returned to its previous run, in the output), the pair
(input token that was not copied, output token written instead) is learned; one pair is kept, with a vote
count (a majority vote: another pair replaces it only once it has lost its votes), so one odd break does
not undo a pattern seen many times.

A draft copying a value then forks where the value is predicted to end: at the first input token equal to
the pair's, it goes on with the template, from the first place after where the template was left (at the
value's start) that holds the pair's output token: in the earlier object, where its value ended. The
analogy's value place (analogy.py) forks with analogy_weight on both branches; the copy pointer's run
(pointer.py) moves its copy_weight to the template branch, once the pair has two votes.

Cost: a scan of at most a draft's depth plus WINDOW tokens, only while a value is being copied.
"""
from numba import njit

from ._layout import H_N_TX, H_OFF_TX, H_PE, H_VE, SEP

WINDOW = 128  # tokens searched after where the template was left for where its value ended
POINTER_VOTES = 2  # votes a pair needs before the copy pointer's run forks (code edits leave the input and come
                   # back for other reasons: with 1, code_edit tau 10.091 -> 10.072)


@njit(cache=True, inline="always")
def learn_end(b, p, x):
    """A value copied from the input ended: the input token at text position p was not copied, the output
    wrote token x in its place. Votes for that pair."""
    if p < 0 or p >= b[H_PE] or p >= b[H_N_TX]:
        return
    t = b[b[H_OFF_TX] + p]
    if t == SEP:
        return
    if b[H_VE] == t + 1 and b[H_VE + 1] == x:
        b[H_VE + 2] += 1
    elif b[H_VE + 2] > 1:
        b[H_VE + 2] -= 1
    else:
        b[H_VE] = t + 1
        b[H_VE + 1] = x
        b[H_VE + 2] = 1


@njit(cache=True, inline="always")
def value_end(b, a, o, depth, votes):
    """A value is copied from input end position a; the template was left at text position o when it began.
    Returns (m, r): the value ends after its next m tokens and the template goes on with the text from
    position r on; (-1, -1) when no end is predicted within `depth` tokens, the template holds no end or the
    pair has fewer than `votes` votes."""
    if b[H_VE] == 0 or b[H_VE + 2] < votes or o < 0:
        return -1, -1
    ot = b[H_OFF_TX]
    n = b[H_N_TX]
    pe = b[H_PE]
    t_in = b[H_VE] - 1
    m = -1
    for d in range(depth):
        p = a + 1 + d
        if p >= pe or p >= n:
            break
        t = b[ot + p]
        if t == SEP:
            break
        if t == t_in:
            m = d
            break
    if m < 0:
        return -1, -1
    t_out = b[H_VE + 1]
    for r in range(o, min(o + WINDOW, n - 1)):
        if b[ot + r] == t_out:
            return m, r
    return -1, -1
