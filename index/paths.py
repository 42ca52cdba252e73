"""Best root paths of a batch of tree drafts: what a chain verifier (vLLM's) can take from a tree.

A draft's best path ends at its deepest node, the most probable one among the deepest (then the first), and
runs from the root down to it: a longer path never has fewer expected accepted tokens here. Draft.best_path
computes the same for one draft in Python; this does a whole batch in one native call.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def _best_paths(tokens, parents, probs, n, out_tok, out_prob, out_len, depth):
    for r in range(n.shape[0]):
        leaf = -1
        for i in range(n[r]):
            p = parents[r, i]
            if p >= i:
                return r  # not a tree in topological order: nothing after it is written
            depth[i] = 0 if p < 0 else depth[p] + 1
            if leaf == -1 or depth[i] > depth[leaf] or (depth[i] == depth[leaf] and probs[r, i] > probs[r, leaf]):
                leaf = i
        k = 0 if leaf == -1 else depth[leaf] + 1
        out_len[r] = k
        while leaf >= 0:
            k -= 1
            out_tok[r, k] = tokens[r, leaf]
            out_prob[r, k] = probs[r, leaf]
            leaf = parents[r, leaf]
    return -1


def best_root_paths(tokens, parents, probs, n):
    """tokens, parents: int32 [B, W]; probs: float32 [B, W]; n: int [B] (row r's draft is its first n[r]
    nodes, parents[r, i] < i). Returns (tokens int32 [B, W], probs float32 [B, W], lengths int64 [B]): row r's
    best root path in its first lengths[r] entries, root first."""
    tokens = np.ascontiguousarray(tokens, np.int32)
    parents = np.ascontiguousarray(parents, np.int32)
    probs = np.ascontiguousarray(probs, np.float32)
    n = np.ascontiguousarray(n, np.int64)
    B, W = tokens.shape
    if parents.shape != (B, W) or probs.shape != (B, W) or n.shape != (B,):
        raise ValueError(f"tokens, parents and probs must share one [B, W] shape and n be [B]; got "
                         f"{tokens.shape}, {parents.shape}, {probs.shape}, {n.shape}")
    if B and (n.min() < 0 or n.max() > W):
        raise ValueError(f"draft sizes n must be in 0..{W}")
    out_tok = np.zeros((B, W), np.int32)
    out_prob = np.zeros((B, W), np.float32)
    out_len = np.zeros(B, np.int64)
    bad = _best_paths(tokens, parents, probs, n, out_tok, out_prob, out_len, np.empty(max(W, 1), np.int64))
    if bad >= 0:
        raise ValueError(f"row {bad}: every parent must precede its node (parents[i] < i)")
    return out_tok, out_prob, out_len
