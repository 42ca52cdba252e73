"""A response's first draft: how earlier responses opened.

Before a response has any output, the context is the prompt's end, and what follows it in the request's own
text is the prompt's data, not an answer. How earlier responses began is a better guess:

    opening_token: the token that followed the prompt's end in memory or a corpus (with a chat template, the
                   assistant turn; in a memory segment only where a recorded response starts counts);
    recent_openings: after a raw prompt, whose end matches nothing useful, the openings of the newest
                   responses recorded in memory (_layout.H_OPEN) join the first draft;
    start_splice:  an opening token (a code fence) is often where the response starts copying the input (the
                   code block the prompt quoted): the input's text after it joins the draft under that token;
    agreed_opening, only_root: when the newest responses recorded in memory all opened with that token, the
                   first draft drafts no other (a tree spent about a third of its first draft on the prompt's
                   own continuation, which an answer does not open with).
"""
from numba import njit

from ._layout import H_N_TX, H_OFF_TX, H_OPEN, H_PE, N_OPEN
from .automaton import match_step, recent_occurrences
from .borrow import borrow
from .trie import child_of, insert

OPEN_W = 2.0  # recent responses' openings against the rest of a first draft, when no match told how they open


@njit(cache=True, inline="always")
def awaiting_first(b):
    """Whether request b has its prompt (the input's end is known) and no output yet."""
    return b[H_PE] > 0 and b[H_N_TX] == b[H_PE]


@njit(cache=True, inline="always")
def newest_opening(mb):
    """The first token of the newest response recorded in memory segment mb (_layout.H_OPEN), or -1."""
    s = mb[H_OPEN] - 1
    return mb[mb[H_OFF_TX] + s] if 0 <= s < mb[H_N_TX] else -1


@njit(cache=True, inline="always")
def opening_token(B, b, slot, tb, tv, tl, nt, occbuf, spare):
    """At a response's first draft (no output yet): the token that followed the most recent occurrence of the
    longest match in another tier (memory, corpus), i.e. how earlier responses opened; -1 when no other tier
    matched or the request already has output. In a memory segment that recorded where its newest responses
    start (_layout.H_OPEN), only a match that ends where one of them starts counts: the end of a raw prompt
    (its own data) matches anything, while a chat template's "assistant" turn ends right there. b is B[slot]."""
    if not awaiting_first(b):
        return -1
    x = -1
    best = 0
    for i in range(nt):
        if tb[i] == slot or tl[i] <= best:
            continue
        eb = borrow(B[tb[i]])
        if recent_occurrences(eb, tv[i], occbuf, 1, spare) > 0:  # followed by a real token
            e = occbuf[0] + 1
            ok = eb[H_OPEN] <= 0  # nothing recorded (a corpus): any match
            for j in range(N_OPEN):
                ok = ok or eb[H_OPEN + j] - 1 == e
            if ok:
                x = eb[eb[H_OFF_TX] + e]
                best = tl[i]
    return x


@njit(cache=True, inline="always")
def recent_openings(mb, depth, t_tok, t_par, t_child, t_sib, t_w, nn):
    """At a response's first draft when no tier's match told how responses open (opening_token: a raw prompt that
    ends in its own data, not in a chat template): the openings of the newest responses in memory segment mb
    (_layout.H_OPEN) join the trie, together OPEN_W times the weight of everything else."""
    k = 0
    for i in range(N_OPEN):
        s = mb[H_OPEN + i] - 1
        k += s >= 0 and s < mb[H_N_TX]
    if k == 0:
        return nn
    w = OPEN_W * max(t_w[0], 1.0) / k
    for i in range(N_OPEN):
        s = mb[H_OPEN + i] - 1
        if s >= 0 and s < mb[H_N_TX]:
            nn = insert(mb, s - 1, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
    return nn


@njit(cache=True, inline="always")
def start_splice(b, x, occ, self_w, depth, t_tok, t_par, t_child, t_sib, t_w, occbuf, spare, nn):
    """A response that opens with x (a code fence, a bracket) often begins there to copy the input: ```python
    then the code block the prompt quoted. So the input's text from its most recent occurrences of x on joins
    the trie under x, with self_w times x's weight (the request's own text over memory, as elsewhere)."""
    c = child_of(0, x, t_tok, t_child, t_sib)
    v, L = match_step(b, 0, 0, x)  # the state of x alone: all its occurrences
    if c == -1 or L == 0:
        return nn
    k = recent_occurrences(b, v, occbuf, occ, spare)
    w = self_w * t_w[c] / max(k, 1)
    for j in range(k):
        if occbuf[j] >= 1:
            nn = insert(b, occbuf[j] - 1, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)
    return nn


@njit(cache=True, inline="always")
def agreed_opening(mb, x):
    """Whether the response starts recorded in memory segment mb (_layout.H_OPEN), at least two, all opened
    with token x."""
    k = 0
    for i in range(N_OPEN):
        s = mb[H_OPEN + i] - 1
        if 0 <= s < mb[H_N_TX]:
            if mb[mb[H_OFF_TX] + s] != x:
                return False
            k += 1
    return k >= 2


@njit(cache=True, inline="always")
def only_root(x, t_tok, t_child, t_sib, t_w):
    """Unlinks the root's children other than the one with token x (when there is one), taking their weight
    off the root's, so x's subtree is drafted as before and nothing else is."""
    keep = child_of(0, x, t_tok, t_child, t_sib)
    if keep == -1:
        return
    c = t_child[0]
    while c != -1:
        if c != keep:
            t_w[0] -= t_w[c]
        c = t_sib[c]
    t_child[0] = keep
    t_sib[keep] = -1
