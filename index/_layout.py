"""Flat int32 buffer layout of one suffix automaton, and its allocation, growth and hashing.

Every automaton (a request's own text, a memory segment, a corpus) lives in ONE contiguous int32 array, so
a batch of them is a single numba typed List and one native call can touch them all. Layout:

    [header H_SIZE][states ST_W * cap_st][edges ED_W * cap_ed][hash HS_W * cap_hs][text cap_tx]

States carry the suffix link, the link-tree (first child / next / prev sibling, so occurrences can be enumerated
without a stack), their first transition inline (token, target) and the head of the list of their other transitions.
Most states of a text's automaton have one transition, so a transition is mostly read from the state itself, which a
match or an extension reads anyway: for texts larger than the cache, the hash and edge reads this saves were most of
the cost of indexing. The other transitions are edges (token, target, next edge), and the hash maps (state, token)
-> edge with linear probing; an empty slot has state -1. Nothing is ever deleted: an automaton only grows, and is
dropped whole (a finished request, an evicted memory segment).
"""
import numpy as np
from numba import njit

MAGIC = 0x4C4B4844  # "LKHD"
SEP = -1  # separates documents inside one text; never a real token, so matches never cross it

# header fields
H_SIZE = 160
H_MAGIC = 0
H_CAP_ST = 1
H_N_ST = 2
H_CAP_ED = 3
H_N_ED = 4
H_CAP_HS = 5
H_N_HS = 6
H_CAP_TX = 7
H_N_TX = 8
H_LAST = 9
H_OFF_ST = 10
H_OFF_ED = 11
H_OFF_HS = 12
H_OFF_TX = 13
H_GEN = 14
H_N_DOCS = 15
# cursors into other automata (memory segments, corpus): N_CUR entries of (slot, generation, state, length,
# key state, key end): the key is the state a match of length >= KEY_MIN was in when it last broke off (the
# key before a value: template.py), and key end the request's text length then
H_CUR = 16
N_CUR = 7  # a request sees at most 5 external automata (drafter.EXT_TIERS); 2 entries spare for re-syncs
CUR_W = 6
# a memory segment keeps no cursors: there H_OPEN .. H_OPEN + N_OPEN - 1 hold where its newest documents'
# responses start (1 + a text position, newest first; <= 0 = none), so a response's first draft can open the
# way they did (opening.recent_openings)
H_OPEN = H_CUR
N_OPEN = 4
# the copy pointer (pointer.py): 1 + the position in the request's own text it is copying from; 0 = none
H_CP = H_CUR + N_CUR * CUR_W  # and H_CP + 1: the run before it
# the analogy (analogy.py): 1 + a position in the request's text (0 = none) for the place an analogous copy
# continues from, the place the last draft copied from and the template left where a value started; then
# whether the place is a value (1) or the template (0)
H_AN = H_CP + 2
# where the input ends (text positions before it are prompt or reference; 0 = unknown: no substitutions, no
# value ends)
H_PE = H_AN + 4
# substitutions (substitute.py): 1 when switched off, how many pairs, then N_SUB entries (input token, the
# token the output writes in its place, times seen), newest first
H_NOSUB = H_PE + 1
H_NSUB = H_NOSUB + 1
H_SUB = H_NSUB + 1
N_SUB = 2
SUB_W = 3
# value ends (value_end.py): N_VE pairs of (1 + an input token where copied values end (0 = none), the token
# the output writes there instead, a vote count); pairs fill from the first, none is ever emptied (eight: value_end.py)
H_VE = H_SUB + SUB_W * N_SUB
N_VE = 8
VE_W = 3
# the break (pointer.py): 1 + the input position where the last long copy of the input broke off (0 = none),
# and how many tokens the current run has copied
H_BRK = H_VE + VE_W * N_VE
H_RUN = H_BRK + 1
# the last draft's fork back to the template (propose.py, read by analogy.follow): 1 + the template position
# the branch went on from after the value's predicted end (0 = none), and the value's tokens before that end;
# the branch is the analogy's own while it is in a value, else the first source's
H_SPL = H_RUN + 1
H_SPLM = H_SPL + 1
# predicted values (analogy.py): the next of N_VS entries to write, then per entry (1 + a text position where a
# value started, in the output where the analogy placed it or in the template it broke off from (0 = none),
# 1 + where the next record's value of the same key starts)
H_VS = H_SPLM + 1
N_VS = 16
assert H_VS + 2 * N_VS < H_SIZE

# state fields
ST_W = 9
S_LEN = 0
S_LINK = 1
S_CLONE = 2
S_LTH = 3  # link-tree: first child
S_LTN = 4  # link-tree: next sibling
S_LTP = 5  # link-tree: previous sibling
S_EH = 6  # head of the list of edges (the transitions after the first)
S_T0 = 7  # the first transition's token (NO_TOK: none yet)
S_TO0 = 8  # and its target
NO_TOK = -2  # below every token (SEP is -1)

# edge fields
ED_W = 3
E_TOK = 0
E_TO = 1
E_NEXT = 2

HS_W = 2


@njit(cache=True)
def _pow2_at_least(x):
    p = 16
    while p < x:
        p *= 2
    return p


@njit(cache=True)
def _layout(b, cap_tx, cap_st, cap_ed, cap_hs):
    b[H_CAP_TX] = cap_tx
    b[H_CAP_ST] = cap_st
    b[H_CAP_ED] = cap_ed
    b[H_CAP_HS] = cap_hs
    b[H_OFF_ST] = H_SIZE
    b[H_OFF_ED] = H_SIZE + ST_W * cap_st
    b[H_OFF_HS] = b[H_OFF_ED] + ED_W * cap_ed
    b[H_OFF_TX] = b[H_OFF_HS] + HS_W * cap_hs


@njit(cache=True)
def _buffer_size(cap_tx, cap_st, cap_ed, cap_hs):
    return H_SIZE + ST_W * cap_st + ED_W * cap_ed + HS_W * cap_hs + cap_tx


@njit(cache=True, inline="always")
def ed_cap(cap_tx):
    """Edge room for a text of cap_tx tokens. Edges hold the transitions after a state's first (inline) one:
    the public workloads' text needs 0.34-0.59 a token (the more text, the fewer), random text up to 1.0 (then
    the edge array grows once, as it does when any text outgrows its room)."""
    return (3 * cap_tx) // 4 + 8


@njit(cache=True)
def alloc(cap_tx):
    """A new automaton holding the empty text, with room for about `cap_tx` tokens."""
    cap_tx = max(cap_tx, 8)
    cap_st = 2 * cap_tx + 2
    cap_ed = ed_cap(cap_tx)
    cap_hs = _pow2_at_least(2 * cap_ed)
    b = np.empty(_buffer_size(cap_tx, cap_st, cap_ed, cap_hs), np.int32)
    b[:H_SIZE] = 0
    b[H_MAGIC] = MAGIC
    _layout(b, cap_tx, cap_st, cap_ed, cap_hs)
    oh = b[H_OFF_HS]
    b[oh:oh + HS_W * cap_hs] = -1
    for k in range(N_CUR):
        b[H_CUR + CUR_W * k] = -1
    # the root: length 0, no link; flagged as a clone so it is never counted as a text position
    o = b[H_OFF_ST]
    b[o + S_LEN] = 0
    b[o + S_LINK] = -1
    b[o + S_CLONE] = 1
    b[o + S_LTH] = -1
    b[o + S_LTN] = -1
    b[o + S_LTP] = -1
    b[o + S_EH] = -1
    b[o + S_T0] = NO_TOK
    b[o + S_TO0] = -1
    b[H_N_ST] = 1
    b[H_LAST] = 0
    return b


@njit(cache=True, inline="always")
def _hash(s, t, mask):
    h = np.int64(s) * 0x9E3779B1 + np.int64(t + 2) * 0x85EBCA77
    h ^= h >> 15
    return h & mask


@njit(cache=True, inline="always")
def _hash_set(b, i, s, e):
    """Stores (state s -> edge e) in empty hash slot i."""
    oh = b[H_OFF_HS]
    b[oh + HS_W * i] = s
    b[oh + HS_W * i + 1] = e
    b[H_N_HS] += 1


@njit(cache=True, inline="always")
def _hash_put(b, s, t, e):
    oh = b[H_OFF_HS]
    mask = b[H_CAP_HS] - 1
    i = _hash(s, t, mask)
    while b[oh + HS_W * i] != -1:
        i = (i + 1) & mask
    _hash_set(b, i, s, e)


@njit(cache=True, inline="always")
def probe(b, s, t):
    """Hash slot of the transition (state s, token t): the slot holding it, or the empty slot where it would go."""
    oh = b[H_OFF_HS]
    oe = b[H_OFF_ED]
    mask = b[H_CAP_HS] - 1
    i = _hash(s, t, mask)
    while True:
        hs = b[oh + HS_W * i]
        if hs == -1:
            return i
        if hs == s and b[oe + ED_W * b[oh + HS_W * i + 1] + E_TOK] == t:
            return i
        i = (i + 1) & mask


@njit(cache=True, inline="always")
def trans(b, s, t):
    """Target of the transition (state s, token t), or -1. The first transition is read from the state itself;
    only a state with more than one needs the hash (with none, S_TO0 is -1 whatever t is)."""
    o = b[H_OFF_ST] + ST_W * s
    if b[o + S_T0] == t:
        return b[o + S_TO0]
    if b[o + S_EH] == -1:
        return -1
    h = b[H_OFF_HS] + HS_W * probe(b, s, t)
    return -1 if b[h] == -1 else b[b[H_OFF_ED] + ED_W * b[h + 1] + E_TO]


@njit(cache=True, inline="always")
def get_edge(b, s, t):
    """Edge index of the transition (state s, token t) when it is not s's first (inline) one, else -1."""
    o = b[H_OFF_HS] + HS_W * probe(b, s, t)
    return -1 if b[o] == -1 else b[o + 1]


@njit(cache=True)
def grow(b, cap_tx, cap_st, cap_ed):
    """A copy of automaton `b` with at least the given capacities."""
    return resize(b, max(cap_tx, b[H_CAP_TX]), max(cap_st, b[H_CAP_ST]), max(cap_ed, b[H_CAP_ED]))


@njit(cache=True)
def shrink_to_fit(b):
    """A copy of automaton `b` without spare capacity (for saving)."""
    return resize(b, max(b[H_N_TX], 1), max(b[H_N_ST], 1), max(b[H_N_ED], 1))


@njit(cache=True)
def resize(b, cap_tx, cap_st, cap_ed):
    """A copy of automaton `b` with the given capacities (>= its contents); the hash is rebuilt at load <= 1/2."""
    cap_hs = _pow2_at_least(2 * cap_ed)
    nb = np.empty(_buffer_size(cap_tx, cap_st, cap_ed, cap_hs), np.int32)
    nb[:H_SIZE] = b[:H_SIZE]
    _layout(nb, cap_tx, cap_st, cap_ed, cap_hs)
    n_st = b[H_N_ST]
    n_ed = b[H_N_ED]
    n_tx = b[H_N_TX]
    nb[nb[H_OFF_ST]:nb[H_OFF_ST] + ST_W * n_st] = b[b[H_OFF_ST]:b[H_OFF_ST] + ST_W * n_st]
    nb[nb[H_OFF_ED]:nb[H_OFF_ED] + ED_W * n_ed] = b[b[H_OFF_ED]:b[H_OFF_ED] + ED_W * n_ed]
    nb[nb[H_OFF_TX]:nb[H_OFF_TX] + n_tx] = b[b[H_OFF_TX]:b[H_OFF_TX] + n_tx]
    oh = nb[H_OFF_HS]
    nb[oh:oh + HS_W * cap_hs] = -1
    nb[H_N_HS] = 0
    os_ = nb[H_OFF_ST]
    oe = nb[H_OFF_ED]
    for s in range(n_st):
        e = nb[os_ + ST_W * s + S_EH]
        while e != -1:
            _hash_put(nb, s, nb[oe + ED_W * e + E_TOK], e)
            e = nb[oe + ED_W * e + E_NEXT]
    return nb


@njit(cache=True, inline="always")
def add_edge_at(b, s, t, to, i):
    """Adds the transition s --t--> to at its empty hash slot i (from probe); the caller made room for it."""
    e = b[H_N_ED]
    b[H_N_ED] = e + 1
    oe = b[H_OFF_ED] + ED_W * e
    os_ = b[H_OFF_ST] + ST_W * s
    b[oe + E_TOK] = t
    b[oe + E_TO] = to
    b[oe + E_NEXT] = b[os_ + S_EH]
    b[os_ + S_EH] = e
    _hash_set(b, i, s, e)


@njit(cache=True, inline="always")
def edge_room(b):
    """b, or its grown copy when its edge array is full (a grown copy has a rebuilt hash: probe again)."""
    if b[H_N_ED] >= b[H_CAP_ED]:
        b = grow(b, b[H_CAP_TX], b[H_CAP_ST], 2 * b[H_CAP_ED])
    return b


@njit(cache=True, inline="always")
def add_edge(b, s, t, to):
    """Adds the transition s --t--> to (which must not exist); returns b, or its grown copy."""
    o = b[H_OFF_ST] + ST_W * s
    if b[o + S_T0] == NO_TOK:
        b[o + S_T0] = t
        b[o + S_TO0] = to
        return b
    b = edge_room(b)
    add_edge_at(b, s, t, to, probe(b, s, t))
    return b
