"""The target distribution and the randomness every verification path shares.

Sampling is Gumbel-max: a token is argmax_i(l_i / T + g_i) over the tokens that top-k / top-p keep, with
g_i = -log(-log(u_i)). The result has exactly the distribution softmax(l / T) restricted and renormalized to
the kept set, and it needs only elementwise float32 ops and an argmax (first index on ties), so the loop
reference, the vectorized path and the Triton kernel agree bit for bit given the same noise.
Greedy (T == 0) is argmax_i(l_i), ties to the lowest id.
"""
import torch


def gumbel_from_uniforms(uniforms):
    """float32 Gumbel(0, 1) noise from uniforms in (0, 1); same shape."""
    u = uniforms.to(torch.float32)
    return -torch.log(-torch.log(u))


def topk_topp_mask(logits, temperature, top_k, top_p):
    """Bool mask [R, V] of the tokens ordinary sampling keeps, per row.

    logits: float [R, V]; temperature, top_k, top_p: per-row tensors [R] (top_k <= 0 or >= V: off;
    top_p >= 1: off). top-k keeps the k largest logits (and any tied with the k-th); top-p then keeps the
    smallest prefix of tokens, by decreasing probability under softmax(l / T) restricted to the top-k set,
    whose mass reaches top_p (the most probable token is always kept). Ties in the sort go to the lower id.
    """
    R, V = logits.shape
    keep = torch.ones((R, V), dtype=torch.bool, device=logits.device)
    use_k = (top_k > 0) & (top_k < V)
    use_p = top_p < 1.0
    rows = torch.nonzero(use_k | use_p).flatten()
    if rows.numel() == 0:
        return keep
    t = temperature[rows].to(torch.float32).clamp_min(1e-20).unsqueeze(1)
    x = logits[rows].to(torch.float32) / t
    # stable descending sort: equal values keep increasing ids
    vals, idx = torch.sort(x, dim=1, descending=True, stable=True)
    k = top_k[rows].clamp(min=1, max=V)
    kk = torch.where(use_k[rows], k, torch.full_like(k, V))
    kth = vals.gather(1, (kk - 1).unsqueeze(1))
    sorted_keep = vals >= kth  # ties with the k-th value stay
    masked = vals.masked_fill(~sorted_keep, float("-inf"))
    probs = torch.softmax(masked, dim=1)
    before = torch.cumsum(probs, dim=1) - probs  # mass strictly before each position
    p = top_p[rows].to(torch.float32).unsqueeze(1)
    sorted_keep &= ~(use_p[rows].unsqueeze(1) & (before >= p))
    sorted_keep[:, 0] = True
    sub = torch.zeros_like(sorted_keep)
    sub.scatter_(1, idx, sorted_keep)
    keep[rows] = sub
    return keep


def target_logits(logits, temperature, top_k, top_p):
    """Logits with the tokens that top-k / top-p drop set to -inf (not divided by T); rows unchanged when
    neither applies. The same tensor feeds every verification path."""
    if top_k is None and top_p is None:
        return logits
    keep = topk_topp_mask(logits, temperature, top_k, top_p)
    if bool(keep.all()):
        return logits
    return logits.masked_fill(~keep, float("-inf"))


def target_probs(logits, temperature, top_k, top_p):
    """The exact target distribution per row, float64 [R, V] (tests and statistics)."""
    lg = target_logits(logits, temperature, top_k, top_p).to(torch.float64)
    t = temperature.to(torch.float64).unsqueeze(1)
    greedy = t[:, 0] == 0
    probs = torch.softmax(lg / t.clamp_min(1e-300), dim=1)
    if bool(greedy.any()):
        am = torch.argmax(logits[greedy].to(torch.float64), dim=1)
        probs[greedy] = torch.nn.functional.one_hot(am, logits.shape[1]).to(torch.float64)
    return probs
