"""Vectorized PyTorch verifier (the CPU default; also correct on any device).

Two phases, the same as the Triton kernels: (1) one draw per logits row, all rows at once; (2) the descent,
as tensor ops over all nodes: node i is *taken* when its token equals the draw at its parent's row (only the
first sibling with a given token can be), and *accepted* when it and all its ancestors are taken. Accepted
nodes of a request form one root path, in increasing index order.
"""
import torch


def draw_rows(logits, row_temperature, noise, generator=None):
    """One token per row: argmax(l) where T == 0; else argmax(l / T + noise) when noise is given (exact mode),
    or an inverse-CDF draw from softmax(l / T) with `generator` (cheaper: no per-token noise). Returns (tokens int64 [R],
    row maxima of the logits float32 [R], which expose NaN / +inf / all -inf rows)."""
    x = logits.to(torch.float32)
    vals, idx = torch.max(x, dim=1)  # first maximal index on CPU and CUDA: the greedy draw
    greedy = row_temperature == 0
    if bool(greedy.all()) or not bool(torch.isfinite(vals).all()):
        return idx, vals
    s = torch.nonzero(~greedy).flatten()
    t = row_temperature[s].to(torch.float32).unsqueeze(1)
    if noise is not None:
        idx[s] = torch.argmax(x[s] / t + noise[s], dim=1)
    else:
        # inverse CDF: one uniform per row; a zero-probability token has an empty interval, never drawn
        cdf = torch.cumsum(torch.softmax(x[s] / t, dim=1), dim=1)
        gdev = "cpu" if generator is None else generator.device
        u = torch.rand((cdf.shape[0], 1), generator=generator, device=gdev).to(cdf.device) * cdf[:, -1:]
        idx[s] = torch.searchsorted(cdf, u, right=True).flatten().clamp_(max=x.shape[1] - 1).to(idx.device)
    return idx, vals


def node_layout(parents, offsets):
    """Per node: request index, global parent index (-1 for root children), row of the parent, own row."""
    B = offsets.numel() - 1
    n = offsets[1:] - offsets[:-1]
    req = torch.repeat_interleave(torch.arange(B, device=offsets.device), n)
    base = offsets[:-1][req]
    gpar = torch.where(parents >= 0, parents + base, torch.full_like(parents, -1))
    prow = torch.where(parents >= 0, gpar + req + 1, base + req)
    row = torch.arange(parents.numel(), device=parents.device) + req + 1
    return req, gpar, prow, row


def descend(draws, draft_tokens, parents, offsets, V):
    """Phase 2. Returns (accepted bool [N], num_accepted [B], last accepted global node or -1 [B],
    next_token [B])."""
    B = offsets.numel() - 1
    N = draft_tokens.numel()
    dev = draft_tokens.device
    req, gpar, prow, row = node_layout(parents, offsets)
    taken = draft_tokens == draws[prow]
    if N:
        # among siblings with one token only the first can be taken
        key = prow * V + draft_tokens  # the parent row is unique per (request, parent)
        order = torch.argsort(key, stable=True)
        sk = key[order]
        first_sorted = torch.ones(N, dtype=torch.bool, device=dev)
        first_sorted[1:] = sk[1:] != sk[:-1]
        first = torch.empty_like(first_sorted)
        first[order] = first_sorted
        taken &= first
    ok = taken.clone()
    is_root_child = gpar < 0
    safe_par = gpar.clamp(min=0)
    while True:  # converges in (tree depth) rounds
        nxt = taken & (is_root_child | ok[safe_par])
        if torch.equal(nxt, ok):
            break
        ok = nxt
    num = torch.zeros(B, dtype=torch.int64, device=dev).scatter_add_(0, req, ok.to(torch.int64))
    idx = torch.where(ok, torch.arange(N, device=dev), torch.full((N,), -1, device=dev, dtype=torch.int64))
    last = torch.full((B,), -1, dtype=torch.int64, device=dev).scatter_reduce_(0, req, idx, "amax")
    root_rows = offsets[:-1] + torch.arange(B, device=dev)
    last_row = torch.where(last >= 0, last + torch.arange(B, device=dev) + 1, root_rows)
    return ok, num, last, draws[last_row]


def verify_vectorized(logits, draft_tokens, parents, offsets, row_temperature, noise, generator=None):
    draws, vals = draw_rows(logits, row_temperature, noise, generator)
    if not bool(torch.isfinite(vals).all()):
        bad = int(torch.nonzero(~torch.isfinite(vals))[0])
        raise ValueError(f"logits row {bad} holds NaN or +inf, or only -inf; check the model's output (and any "
                         "logits processor) before verification")
    return descend(draws, draft_tokens, parents, offsets, logits.shape[1])
