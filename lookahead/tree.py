"""Tree attention for one verification forward over a ragged batch of drafts.

Row b feeds m tokens: its pending token (the root: last accepted, not yet in the KV cache), then its n_b
draft nodes, then padding. Token i may attend to the row's valid cache prefix [0, length_b) and to its own
ancestors in the draft (itself included; the root is everyone's ancestor). Positions follow depth, so every
path sees exactly the positions it would have in ordinary decoding. Padding attends to itself only (a fully
masked query would give NaN).
"""
import torch


def depths(parents):
    """Depth of each node (0 for children of the root); parents topological. int64 [n]."""
    d = [0] * len(parents)
    for i, p in enumerate(parents):
        d[i] = 0 if p < 0 else d[p] + 1
    return d


def tree_inputs(pending, drafts, lengths, cache_len, dtype, device):
    """Builds one forward's inputs.

    pending: list of int (one per row); drafts: list of (tokens list, parents list); lengths: valid cache
    length per row; cache_len: the cache's time size T. Returns (input_ids [B, m], position_ids [B, m],
    additive attention mask [B, 1, m, T + m] in `dtype`, m)."""
    B = len(pending)
    m = 1 + max((len(t) for t, _ in drafts), default=0)
    ids = torch.zeros((B, m), dtype=torch.long)
    pos = torch.zeros((B, m), dtype=torch.long)
    allow = torch.zeros((B, m, cache_len + m), dtype=torch.bool)
    for b in range(B):
        toks, pars = drafts[b]
        n = len(toks)
        L = int(lengths[b])
        ids[b, 0] = pending[b]
        ids[b, 1:1 + n] = torch.as_tensor(toks, dtype=torch.long)
        dep = depths(pars)
        pos[b, 0] = L
        pos[b, 1:1 + n] = L + 1 + torch.as_tensor(dep, dtype=torch.long)
        pos[b, 1 + n:] = L  # padding: any position, it attends only to itself
        allow[b, :1 + n, :L] = True
        new = allow[b, :, cache_len:]
        new[0, 0] = True
        for i, p in enumerate(pars):
            row = new[1 + i]
            row[:] = new[0 if p < 0 else 1 + p]  # ancestors of the parent ...
            row[1 + i] = True  # ... and itself
        for i in range(1 + n, m):
            new[i, i] = True
    mask = torch.zeros((B, 1, m, cache_len + m), dtype=dtype)
    mask.masked_fill_(~allow.unsqueeze(1), torch.finfo(dtype).min)
    return ids.to(device), pos.to(device), mask.to(device), m


def prefill_inputs(prompts, dtype, device):
    """Right-padded prompts (lists of ids, may be empty) with a causal mask over each row's valid part.
    Returns (input_ids [B, P], position_ids [B, P], mask [B, 1, P, P], P)."""
    B = len(prompts)
    P = max(len(p) for p in prompts)
    ids = torch.zeros((B, P), dtype=torch.long)
    causal = torch.tril(torch.ones((P, P), dtype=torch.bool))
    allow = causal.repeat(B, 1, 1)
    for b, p in enumerate(prompts):
        n = len(p)
        ids[b, :n] = torch.as_tensor(p, dtype=torch.long)
        allow[b, n:, :] = False
        allow[b, :, n:] = False
        idx = torch.arange(n, P)
        allow[b, idx, idx] = True
    pos = torch.arange(P).repeat(B, 1)
    mask = torch.zeros((B, 1, P, P), dtype=dtype)
    mask.masked_fill_(~allow.unsqueeze(1), torch.finfo(dtype).min)
    return ids.to(device), pos.to(device), mask.to(device), P
