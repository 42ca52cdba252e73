"""Online suffix automaton over int32 token ids: extension in amortized O(1), match cursors, occurrences.

The automaton of a text T has one state per class of substrings that end at the same set of positions
(endpos). Besides the usual suffix links we keep the link-tree's child lists, because the positions where a
state's strings end are exactly the non-clone states in its link-subtree: that lets a proposal enumerate
occurrences (and read what followed each one in the text) without ever scanning the text.
"""
from numba import njit

from ._layout import (ED_W, E_NEXT, E_TO, E_TOK, H_CAP_ED, H_CAP_ST, H_CAP_TX, H_LAST, H_N_ED, H_N_ST, H_N_TX,
                      H_OFF_ED, H_OFF_HS, H_OFF_ST, H_OFF_TX, HS_W, NO_TOK, S_CLONE, S_EH, S_LEN, S_LINK, S_LTH,
                      S_LTN, S_LTP, S_T0, S_TO0, SEP, ST_W, add_edge, add_edge_at, alloc, ed_cap, edge_room, get_edge,
                      grow, probe, trans)


# recent_occurrences reads this many times the occurrences it returns. 4 -> 1 left tau within +-0.2% on every
# workload (code_edit 10.455 / 9.943 -> 10.462 / 9.936 tree / chain, multi_turn 7.999 / 7.619 -> 8.008 / 7.631,
# templated 6.207 / 5.854 -> 6.211 / 5.869, completion 1.948 / 1.648 -> 1.944 / 1.650) and reads a quarter of
# the link tree's nodes (propose_arrays over 256 requests 1.35 -> 1.15-1.2 us per request, chain)
RECENT_POOL = 1


@njit(cache=True, inline="always")
def slen(b, s):
    return b[b[H_OFF_ST] + ST_W * s + S_LEN]


@njit(cache=True, inline="always")
def slink(b, s):
    return b[b[H_OFF_ST] + ST_W * s + S_LINK]


@njit(cache=True, inline="always")
def text_at(b, i):
    return b[b[H_OFF_TX] + i]


@njit(cache=True, inline="always")
def edge_to(b, e):
    return b[b[H_OFF_ED] + ED_W * e + E_TO]


@njit(cache=True, inline="always")
def _new_state(b, length, clone):
    s = b[H_N_ST]
    b[H_N_ST] = s + 1
    o = b[H_OFF_ST] + ST_W * s
    b[o + S_LEN] = length
    b[o + S_LINK] = -1
    b[o + S_CLONE] = clone
    b[o + S_LTH] = -1
    b[o + S_LTN] = -1
    b[o + S_LTP] = -1
    b[o + S_EH] = -1
    b[o + S_T0] = NO_TOK
    b[o + S_TO0] = -1
    return s


@njit(cache=True, inline="always")
def _lt_insert(b, parent, child):
    os_ = b[H_OFF_ST]
    h = b[os_ + ST_W * parent + S_LTH]
    b[os_ + ST_W * child + S_LTN] = h
    b[os_ + ST_W * child + S_LTP] = -1
    if h != -1:
        b[os_ + ST_W * h + S_LTP] = child
    b[os_ + ST_W * parent + S_LTH] = child
    b[os_ + ST_W * child + S_LINK] = parent


@njit(cache=True, inline="always")
def _lt_remove(b, child):
    os_ = b[H_OFF_ST]
    parent = b[os_ + ST_W * child + S_LINK]
    p = b[os_ + ST_W * child + S_LTP]
    n = b[os_ + ST_W * child + S_LTN]
    if p != -1:
        b[os_ + ST_W * p + S_LTN] = n
    else:
        b[os_ + ST_W * parent + S_LTH] = n
    if n != -1:
        b[os_ + ST_W * n + S_LTP] = p


@njit(cache=True)
def extend(b, c):
    """Appends token c to the text of automaton b; returns b or its grown copy."""
    if b[H_N_TX] + 1 > b[H_CAP_TX] or b[H_N_ST] + 2 > b[H_CAP_ST]:
        b = grow(b, 2 * b[H_CAP_TX], 2 * b[H_CAP_ST] + 2, ed_cap(2 * b[H_CAP_TX]))
    b[b[H_OFF_TX] + b[H_N_TX]] = c
    b[H_N_TX] += 1
    last = b[H_LAST]
    cur = _new_state(b, slen(b, last) + 1, 0)
    p = last
    e = -1  # p's transition on c, when it is an edge (-1: p's inline first transition)
    q = -1
    while p != -1:
        o = b[H_OFF_ST] + ST_W * p
        t0 = b[o + S_T0]
        if t0 == c:
            q = b[o + S_TO0]
            break
        if t0 == NO_TOK:  # p's first transition: inline, no hash
            b[o + S_T0] = c
            b[o + S_TO0] = cur
            p = b[o + S_LINK]
            continue
        i = probe(b, p, c)  # one probe finds the transition or the slot for the new one
        oh = b[H_OFF_HS] + HS_W * i
        if b[oh] != -1:
            e = b[oh + 1]
            q = edge_to(b, e)
            break
        if b[H_N_ED] >= b[H_CAP_ED]:
            b = edge_room(b)
            continue  # the hash was rebuilt: probe again
        add_edge_at(b, p, c, cur, i)
        p = slink(b, p)
    if p == -1:
        _lt_insert(b, 0, cur)
    else:
        if slen(b, p) + 1 == slen(b, q):
            _lt_insert(b, q, cur)
        else:
            clone = _new_state(b, slen(b, p) + 1, 1)
            # p's own transition on c (found above) moves to the clone without a second probe
            if e == -1:
                b[b[H_OFF_ST] + ST_W * p + S_TO0] = clone
            else:
                b[b[H_OFF_ED] + ED_W * e + E_TO] = clone
            oq = b[H_OFF_ST] + ST_W * q
            oc = b[H_OFF_ST] + ST_W * clone
            b[oc + S_T0] = b[oq + S_T0]
            b[oc + S_TO0] = b[oq + S_TO0]
            e = b[oq + S_EH]
            while e != -1:
                oe = b[H_OFF_ED] + ED_W * e
                t = b[oe + E_TOK]
                to = b[oe + E_TO]
                nxt = b[oe + E_NEXT]
                b = add_edge(b, clone, t, to)
                e = nxt
            parent = slink(b, q)
            _lt_remove(b, q)
            _lt_insert(b, parent, clone)
            _lt_insert(b, clone, q)
            _lt_insert(b, clone, cur)
            p = slink(b, p)
            while p != -1:
                o = b[H_OFF_ST] + ST_W * p
                if b[o + S_T0] == c:
                    if b[o + S_TO0] != q:
                        break
                    b[o + S_TO0] = clone
                else:
                    e = get_edge(b, p, c)
                    if e == -1 or edge_to(b, e) != q:
                        break
                    b[b[H_OFF_ED] + ED_W * e + E_TO] = clone
                p = slink(b, p)
    b[H_LAST] = cur
    return b


@njit(cache=True)
def extend_many(b, tokens):
    # one growth up front for the common case; extend() still grows on its own if edges run out
    need = b[H_N_TX] + tokens.shape[0]
    if need > b[H_CAP_TX]:
        b = grow(b, 2 * need, 4 * need + 2, ed_cap(2 * need))
    for i in range(tokens.shape[0]):
        b = extend(b, tokens[i])
    return b


@njit(cache=True, inline="always")
def match_step(b, v, length, c):
    """Moves a match cursor (state v, matched length) over token c: longest suffix that occurs in b's text."""
    if c == SEP:
        return 0, 0
    while True:
        to = trans(b, v, c)
        if to != -1:
            return to, length + 1
        if v == 0:
            return 0, 0
        v = slink(b, v)
        length = slen(b, v)


@njit(cache=True, inline="always")
def self_cursor(b):
    """Longest suffix of b's own text that also occurs earlier: (state, length). (0, 0) when none."""
    last = b[H_LAST]
    if last == 0:
        return 0, 0
    v = slink(b, last)
    return v, slen(b, v)


@njit(cache=True, inline="always")
def occurrences(b, v, out, limit, need_next):
    """Writes up to `limit` end positions of the strings of state v into out; returns how many.

    With need_next, only positions followed by a real token (not the end of the text, not SEP) count. The
    link-subtree is walked without a stack (siblings, then up through links), newest children first.
    """
    n = 0
    if limit <= 0:
        return 0
    os_ = b[H_OFF_ST]
    ot = b[H_OFF_TX]
    n_tx = b[H_N_TX]
    u = v
    while True:
        if b[os_ + ST_W * u + S_CLONE] == 0:
            e = b[os_ + ST_W * u + S_LEN] - 1
            if not need_next or (e + 1 < n_tx and b[ot + e + 1] != SEP):
                out[n] = e
                n += 1
                if n == limit:
                    return n
        h = b[os_ + ST_W * u + S_LTH]
        if h != -1:
            u = h
            continue
        while u != v:
            nx = b[os_ + ST_W * u + S_LTN]
            if nx != -1:
                u = nx
                break
            u = b[os_ + ST_W * u + S_LINK]
        if u == v:
            return n


@njit(cache=True, inline="always")
def recent_occurrences(b, v, out, occ, spare):
    """The (up to) `occ` most recent occurrences among the first RECENT_POOL * occ the link tree yields, newest
    first: the latest occurrence is usually the one being copied (the current function, the last answer)."""
    pool = min(RECENT_POOL * occ, spare.shape[0])
    k = occurrences(b, v, spare, pool, True)
    n = min(k, occ)
    # the n largest, kept sorted newest first by insertion (no allocation: this runs every step). With a pool
    # larger than n, most positions fail the first comparison, since the link tree yields newest children
    # first; the selection sort this replaced cost n * k comparisons whatever the order
    m = 0
    for i in range(k):
        x = spare[i]
        if m == n:
            if x <= out[n - 1]:
                continue
            j = n - 1
        else:
            j = m
            m += 1
        while j > 0 and out[j - 1] < x:
            out[j] = out[j - 1]
            j -= 1
        out[j] = x
    return n


@njit(cache=True)
def find_state(b, pattern):
    """State whose strings include `pattern`, or -1 when the pattern does not occur (root for empty)."""
    v = 0
    for i in range(pattern.shape[0]):
        v = trans(b, v, pattern[i])
        if v == -1:
            return -1
    return v


def new_automaton(capacity=64):
    """A new empty automaton buffer (int32[:]) with room for about `capacity` tokens before growing."""
    return alloc(int(capacity))


def text_of(b):
    """The text of automaton b, a view: int32[n]."""
    return b[b[H_OFF_TX]:b[H_OFF_TX] + b[H_N_TX]]

