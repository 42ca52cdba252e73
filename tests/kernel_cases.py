"""Random and awkward verification cases shared by the kernel tests."""
import torch


def make_case(seed, B, V, max_nodes, *, tree=True, match=0.6, ties=False, sampled=True, device="cpu"):
    """A ragged batch whose drafts often follow the target (so paths get accepted), as keyword args of verify."""
    g = torch.Generator().manual_seed(seed)
    n = torch.randint(0, max_nodes + 1, (B,), generator=g)
    off = torch.zeros(B + 1, dtype=torch.int64)
    off[1:] = torch.cumsum(n, 0)
    N, R = int(off[-1]), int(off[-1]) + B
    logits = torch.randn(R, V, generator=g) * 3
    if ties:
        logits = torch.round(logits)  # many equal values, also at the maximum
    toks = torch.empty(N, dtype=torch.int64)
    pars = torch.empty(N, dtype=torch.int64)
    for b in range(B):
        lo = int(off[b])
        for i in range(int(n[b])):
            p = int(torch.randint(-1, i, (1,), generator=g)) if tree else i - 1
            pars[lo + i] = p
            prow = lo + b + 1 + p
            if float(torch.rand(1, generator=g)) < match:
                toks[lo + i] = int(torch.argmax(logits[prow]))
            else:
                toks[lo + i] = int(torch.randint(0, V, (1,), generator=g))
    temp = torch.where(torch.rand(B, generator=g) < 0.3, torch.zeros(B), torch.rand(B, generator=g) * 1.6 + 0.1)
    if not sampled:
        temp = torch.zeros(B)
    u = torch.rand(R, V, generator=g).clamp_(1e-7, 1 - 1e-7)
    kw = dict(temperature=temp, uniforms=u)
    return [x.to(device) for x in (logits, toks, pars, off)], {k: v.to(device) for k, v in kw.items()}
