"""The draft trie: continuations of matched contexts merged with weights, then emitted as a chain or tree.

Node 0 is the root (the last accepted token). A node's weight is the summed weight of the occurrences whose
continuation passes through it, and p(child | node) = w(child) / (w(node) + alpha). Children are kept in
first-seen order (the deterministic tie-break: longer-match tiers and newer occurrences are inserted first).
All arrays are caller-provided scratch rows (t_tok, t_par, t_child, t_sib: int32; t_w, t_prob: float64), so
a proposal allocates nothing.
"""
from numba import njit

from ._layout import H_N_TX, H_NSUB, H_OFF_TX, SEP
from .substitute import mapped


@njit(cache=True, inline="always")
def alpha_at(L, alpha0, half_len):
    return alpha0 * half_len / (half_len + L)


@njit(cache=True, inline="always")
def child_of(node, tok, t_tok, t_child, t_sib):
    """The trie child of `node` with token tok, or -1."""
    c = t_child[node]
    while c != -1 and t_tok[c] != tok:
        c = t_sib[c]
    return c


@njit(cache=True, inline="always")
def insert(b, e, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn):
    """Adds the text that followed end position e in automaton b (up to `depth` tokens) with weight w."""
    return insert_spliced3(b, e, depth, 0, depth, 0, depth, 0, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)


@njit(cache=True, inline="always")
def _spliced_token(b, ot, n_tx, sub, e, m, r, m2, r2, m3, r3, d):
    """Token d of the text insert_spliced3 adds, or SEP where that text ends."""
    p = e + 1 + d if d < m else r + d - m if d < m + m2 else r2 + d - m - m2 if d < m + m2 + m3 else \
        r3 + d - m - m2 - m3
    if p >= n_tx:
        return SEP
    tok = b[ot + p]
    return mapped(b, p, tok) if sub and tok != SEP else tok


@njit(cache=True, inline="always")
def _new_node(c, tok, parent, w, t_tok, t_par, t_child, t_sib, t_w):
    t_tok[c] = tok
    t_par[c] = parent
    t_child[c] = -1
    t_sib[c] = -1
    t_w[c] = w


@njit(cache=True, inline="always")
def _down(node, tok, w, t_tok, t_par, t_child, t_sib, t_w, nn):
    """One token below `node`: its child with token tok gains w, or node nn becomes that child. Returns (the
    child, whether it was made); (-1, False) when the trie is full."""
    c = child_of(node, tok, t_tok, t_child, t_sib)
    if c != -1:
        t_w[c] += w
        return c, False
    if nn >= t_tok.shape[0]:
        return -1, False
    _new_node(nn, tok, node, w, t_tok, t_par, t_child, t_sib, t_w)
    # appended at the tail: siblings stay in first-seen order (the deterministic tie-break)
    if t_child[node] == -1:
        t_child[node] = nn
    else:
        q = t_child[node]
        while t_sib[q] != -1:
            q = t_sib[q]
        t_sib[q] = nn
    return nn, True


@njit(cache=True, inline="always")
def insert_spliced(b, e, m, r, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn):
    """Adds the m tokens after end position e, then the text from position r on (a value, then the template
    after it: value_end.py), up to `depth` tokens in all, with weight w."""
    return insert_spliced3(b, e, m, r, depth, 0, depth, 0, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn)


@njit(cache=True, inline="always")
def insert_spliced3(b, e, m, r, m2, r2, m3, r3, w, depth, t_tok, t_par, t_child, t_sib, t_w, nn):
    """Adds the m tokens after end position e, m2 tokens from position r, m3 from position r2, then the text
    from position r3 on, up to `depth` tokens in all, with weight w: a value, the template after it, the next
    record's value where the template's next one starts, the template after that (analogy.predicted; with
    m = 0 a copy of the template from r)."""
    ot = b[H_OFF_TX]
    n_tx = b[H_N_TX]
    sub = b[H_NSUB] > 0  # input tokens the output writes differently (substitute.py)
    cap = t_tok.shape[0]
    node = 0
    t_w[0] += w
    d = 0
    while d < depth:  # down the nodes made before
        tok = _spliced_token(b, ot, n_tx, sub, e, m, r, m2, r2, m3, r3, d)
        if tok == SEP:
            return nn
        d += 1
        node, made = _down(node, tok, w, t_tok, t_par, t_child, t_sib, t_w, nn)
        if node == -1:
            return nn
        if made:
            nn += 1
            break
    # below a node just made every node is new, an only child: no search, no sibling list (most of an
    # occurrence's nodes, once it diverged from the ones read before it)
    while d < depth and nn < cap:
        tok = _spliced_token(b, ot, n_tx, sub, e, m, r, m2, r2, m3, r3, d)
        if tok == SEP:
            break
        d += 1
        _new_node(nn, tok, node, w, t_tok, t_par, t_child, t_sib, t_w)
        t_child[node] = nn
        node = nn
        nn += 1
    return nn


@njit(cache=True, inline="always")
def insert_seq(seq, k, w, t_tok, t_par, t_child, t_sib, t_w, nn):
    """Adds the k tokens seq[:k] below the root with weight w."""
    node = 0
    t_w[0] += w
    for d in range(k):
        node, made = _down(node, seq[d], w, t_tok, t_par, t_child, t_sib, t_w, nn)
        if node == -1:
            break
        if made:
            nn += 1
    return nn


@njit(cache=True, inline="always")
def best_child(node, t_child, t_sib, t_w):
    best = -1
    c = t_child[node]
    while c != -1:
        if best == -1 or t_w[c] > t_w[best]:
            best = c
        c = t_sib[c]
    return best


@njit(cache=True, inline="always")
def select(nn, alpha, budget, tree, min_prob, base_prob, attach, t_tok, t_par, t_child, t_sib, t_w,
            t_prob, t_out, out_tok, out_par, out_prob, n_out, cand):
    """Emits up to `budget` trie nodes under output node `attach`; returns (n_out, spine leaf trie node)."""
    t_prob[0] = base_prob
    t_out[0] = attach
    used = 0
    spine = 0
    if not tree:
        node = 0
        while used < budget:
            c = best_child(node, t_child, t_sib, t_w)
            if c == -1:
                break
            p = t_prob[node] * t_w[c] / (t_w[node] + alpha)
            if p < min_prob:
                break
            t_prob[c] = p
            out_tok[n_out] = t_tok[c]
            out_par[n_out] = t_out[node]
            out_prob[n_out] = p
            t_out[c] = n_out
            n_out += 1
            used += 1
            node = c
        return n_out, node
    # best-first over the frontier; ties go to the node created first (longer match tier, newer occurrence)
    nc = 0
    c = t_child[0]
    while c != -1:
        t_prob[c] = base_prob * t_w[c] / (t_w[0] + alpha)
        cand[nc] = c
        nc += 1
        c = t_sib[c]
    while used < budget and nc > 0:
        bi = 0
        for i in range(1, nc):
            a = cand[i]
            bb = cand[bi]
            if t_prob[a] > t_prob[bb] or (t_prob[a] == t_prob[bb] and a < bb):
                bi = i
        c = cand[bi]
        if t_prob[c] < min_prob:
            break
        nc -= 1
        cand[bi] = cand[nc]
        out_tok[n_out] = t_tok[c]
        out_par[n_out] = t_out[t_par[c]]
        out_prob[n_out] = t_prob[c]
        t_out[c] = n_out
        n_out += 1
        used += 1
        if t_par[c] == spine and best_child(spine, t_child, t_sib, t_w) == c:
            spine = c
        g = t_child[c]
        while g != -1:
            if nc < cand.shape[0]:
                t_prob[g] = t_prob[c] * t_w[g] / (t_w[c] + alpha)
                cand[nc] = g
                nc += 1
            g = t_sib[g]
    return n_out, spine
