"""The draft trie (index/trie.py) against a plain Python trie: same nodes, order, links and weights."""
import numpy as np
from hypothesis import given, strategies as st
from numba import njit

from lookahead.index import extend_many, new_automaton
from lookahead.index.trie import insert_spliced
from reference_index import SEP


@njit
def _trie(b, es, ms, rs, ws, depth, cap):
    t_tok = np.full(cap, -9, np.int32)
    t_par = np.full(cap, -9, np.int32)
    t_child = np.full(cap, -9, np.int32)
    t_sib = np.full(cap, -9, np.int32)
    t_w = np.zeros(cap)
    t_tok[0] = -1
    t_par[0] = -1
    t_child[0] = -1
    t_sib[0] = -1
    nn = 1
    for i in range(es.shape[0]):
        nn = insert_spliced(b, es[i], ms[i], rs[i], ws[i], depth, t_tok, t_par, t_child, t_sib, t_w, nn)
    return nn, t_tok, t_par, t_child, t_sib, t_w


def _reference(text, inserts, depth, cap):
    """Node lists of the trie: each insert walks from the root, making a missing child (appended after its
    siblings) while there is room, and adds its weight to every node it passes."""
    tok, par, kids, w = [-1], [-1], [[]], [0.0]
    for e, m, r, wt in inserts:
        node = 0
        w[0] += wt
        for d in range(depth):
            p = e + 1 + d if d < m else r + d - m
            if p >= len(text) or text[p] == SEP:
                break
            c = next((k for k in kids[node] if tok[k] == text[p]), None)
            if c is None:
                if len(tok) >= cap:
                    break
                c = len(tok)
                tok.append(text[p])
                par.append(node)
                kids.append([])
                w.append(0.0)
                kids[node].append(c)
            w[c] += wt
            node = c
    child = [k[0] if k else -1 for k in kids]
    sib = [-1] * len(tok)
    for k in kids:
        for a, nxt in zip(k, k[1:]):
            sib[a] = nxt
    return tok, par, child, sib, w


# a few documents (SEP between them) over small and larger alphabets: shared prefixes, and long fresh branches
tokens = st.lists(st.sampled_from([0, 1, 2, 3] * 3 + [SEP]), max_size=60) | \
    st.lists(st.integers(0, 1), max_size=80) | st.lists(st.integers(0, 40), min_size=10, max_size=60)


@given(tokens, st.data())
def test_trie_matches_reference(text, data):
    n = len(text)
    k = data.draw(st.integers(0, 12))
    inserts = [(data.draw(st.integers(-1, max(n - 1, -1))), data.draw(st.integers(0, 9)),
                data.draw(st.integers(0, n)), data.draw(st.sampled_from([0.25, 1.0, 1.5, 4.0]))) for _ in range(k)]
    depth = data.draw(st.integers(0, 9))
    cap = data.draw(st.integers(1, 12) | st.just(400))  # small: the node space runs out mid-insert
    b = extend_many(new_automaton(4), np.asarray(text, np.int32))
    cols = list(zip(*inserts)) if inserts else [(), (), (), ()]
    nn, t_tok, t_par, t_child, t_sib, t_w = _trie(b, np.asarray(cols[0], np.int64), np.asarray(cols[1], np.int64),
                                                  np.asarray(cols[2], np.int64), np.asarray(cols[3], np.float64),
                                                  depth, cap)
    tok, par, child, sib, w = _reference(text, inserts, depth, cap)
    assert nn == len(tok)
    assert t_tok[:nn].tolist() == tok
    assert t_par[:nn].tolist() == par
    assert t_child[:nn].tolist() == child
    assert t_sib[:nn].tolist() == sib
    assert t_w[:nn].tolist() == w  # the same additions in the same order: equal, not just close
