"""Substitutions: tokens the output consistently writes in place of an input token.

Outputs that transform their input repeat the same small change at every place they copy: a renamed
identifier (`obj` -> `value`), JSON re-indented from two spaces to four (the token "\\n " becomes "\\n   "
on every line), quotes changed from ' to ". A copy of the input then breaks at each of those places, once
per occurrence. The copy pointer (pointer.py) sees where a copy resumes or jumps to; when, going back from
there, the input and the text agree, then differ in exactly one token, then agree again, the pair (input
token, output token) is learned. From then on, text read from the input (positions before the end of the
prompt) shows the output's token instead: in the drafts (propose._insert) and when the pointer compares the
copy with the text (pointer.backmatch), so the copy goes on through it.

Only the input is rewritten: the output already has the target's style (its own "\\n   " must not become
"\\n     "). A pair is forgotten as soon as the output copies the input token unchanged (a one-off edit, not
a consistent one), where the pointer copies and where the analogy's place does (analogy.follow). N_SUB
pairs at most, newest first (when full, the least seen goes); stored in the request automaton's header. A
finished request's confirmed pairs (carried_substitutions) start the next request's (seed_substitutions):
requests of one kind (records re-indented into JSON, a session of them) repeat the same change (multi_turn
tau, tree / chain: 8.192 / 7.806 -> 8.222 / 7.864; templated +0.1%; code_edit chain -0.02%: a rename carried
into an edit that has none is dropped at its first unchanged copy).
"""
import numpy as np
from numba import njit

from ._layout import H_NOSUB, H_NSUB, H_N_TX, H_OFF_TX, H_PE, H_SUB, N_SUB, SEP, SUB_W

CONFIRM = 2  # a pair is applied once seen this often (a single sighting is often a resume at a look-alike
             # line: "section" where the input has "package")
RIGHT = 3  # agreement after a differing token that shows a substitution (after "section" where the input has
           # "package", a JSON line agrees over '": "' only: 2 tokens)
SPAN = 8  # how far back from where a copy resumes a substitution is looked for


@njit(cache=True, inline="always")
def mapped(b, p, tok):
    """The token the output writes for text token `tok` at position p (tok itself unless p is in the input
    and a pair seen CONFIRM times maps it)."""
    if p < b[H_PE]:
        for i in range(b[H_NSUB]):
            o = H_SUB + SUB_W * i
            if b[o] == tok and b[o + 2] >= CONFIRM:
                return b[o + 1]
    return tok


@njit(cache=True, inline="always")
def _find(b, y):
    """The entry whose input token is y, or -1."""
    for i in range(b[H_NSUB]):
        if b[H_SUB + SUB_W * i] == y:
            return i
    return -1


@njit(cache=True, inline="always")
def _drop(b, i):
    k = b[H_NSUB]
    for j in range(i, k - 1):
        for f in range(SUB_W):
            b[H_SUB + SUB_W * j + f] = b[H_SUB + SUB_W * (j + 1) + f]
    b[H_NSUB] = k - 1


@njit(cache=True, inline="always")
def _add(b, y, x):
    seen = 0
    i = _find(b, y)
    if i >= 0:
        if b[H_SUB + SUB_W * i + 1] == x:
            seen = b[H_SUB + SUB_W * i + 2]
        _drop(b, i)
    if b[H_NSUB] == N_SUB:  # full: the least seen pair falls off (the oldest of those), not a confirmed one
        worst = 0
        for i in range(N_SUB):
            if b[H_SUB + SUB_W * i + 2] <= b[H_SUB + SUB_W * worst + 2]:
                worst = i
        _drop(b, worst)
    k = b[H_NSUB]
    for j in range(k, 0, -1):
        for f in range(SUB_W):
            b[H_SUB + SUB_W * j + f] = b[H_SUB + SUB_W * (j - 1) + f]
    b[H_SUB] = y
    b[H_SUB + 1] = x
    b[H_SUB + 2] = seen + 1
    b[H_NSUB] = k + 1


@njit(cache=True)
def learn(b, e, added):
    """The pointer copies input position e (the text's last token stands there) after `added` new tokens
    (SPAN after a resume or a jump). Going back from e and from the text's end: when they agree over RIGHT
    tokens or more, for the first time with these tokens, then differ in exactly one, then agree again, the
    pair (the input's token there, what the output wrote) is seen once more."""
    pe = b[H_PE]
    if e >= pe or b[H_NOSUB]:
        return
    ot = b[H_OFF_TX]
    last = ot + b[H_N_TX] - 1
    m = 0
    while m < SPAN and m <= e and last - m >= ot + pe and mapped(b, e - m, b[ot + e - m]) == b[last - m]:
        m += 1
    if m < RIGHT or m - added >= RIGHT or m >= SPAN or m + 1 > e or last - m - 1 < ot + pe:
        return
    if mapped(b, e - m - 1, b[ot + e - m - 1]) != b[last - m - 1]:
        return  # more than one token differs: an edit, not a substitution
    y = b[ot + e - m]
    x = b[last - m]
    if y != SEP and x != SEP and y != x:
        _add(b, y, x)


@njit(cache=True)
def forget(b, e, added):
    """The copy went on through input positions e - added + 1 .. e: a pair whose input token the output just
    copied unchanged was a one-off edit."""
    if b[H_NSUB] == 0:
        return
    ot = b[H_OFF_TX]
    last = ot + b[H_N_TX] - 1
    for j in range(min(added, SPAN)):
        p = e - j
        if p < 0 or p >= b[H_PE]:
            continue
        t = b[ot + p]
        i = _find(b, t) if b[last - j] == t else -1
        if i >= 0:
            b[H_SUB + SUB_W * i + 2] -= 1
            if b[H_SUB + SUB_W * i + 2] == 0:
                _drop(b, i)


def carried_substitutions(b):
    """The pairs of automaton b seen at least CONFIRM times, newest first, in the header's layout (int32
    [k * SUB_W]), or None when there is none."""
    k = int(b[H_NSUB])
    pairs = np.array(b[H_SUB:H_SUB + k * SUB_W], np.int32).reshape(k, SUB_W)
    keep = pairs[pairs[:, 2] >= CONFIRM]
    return keep.ravel() if len(keep) else None


def seed_substitutions(b, pairs):
    """Starts automaton b's pairs with `pairs` (from carried_substitutions), counts included."""
    b[H_SUB:H_SUB + len(pairs)] = pairs
    b[H_NSUB] = len(pairs) // SUB_W
