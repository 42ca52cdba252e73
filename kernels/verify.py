"""`verify`: lossless chain and tree verification for a ragged batch, greedy and sampled.

    res = verify(logits, draft_tokens, parents, draft_offsets, *,
                 temperature=None, top_k=None, top_p=None, uniforms=None, generator=None, impl=None)

Shapes (B requests, request b with n_b >= 0 draft nodes in topological order, N = sum n_b, R = N + B):
  draft_offsets int [B+1]: 0, n_0, n_0 + n_1, ...
  draft_tokens, parents int [N]: parents are local indices, -1 for a child of the last accepted token
  logits float [R, V]: per request, the root row (the position after the last accepted token), then one row
      per draft node in node order (the target's distribution for the token after that node)
  temperature [B] (None: all greedy; 0: greedy, argmax with ties to the lowest id), top_k [B] (0: off),
  top_p [B] in (0, 1] (1: off): the target is what ordinary sampling would use after all three.
  uniforms float [R, V] in (0, 1) or a torch.Generator supply all randomness (not both); with uniforms, every
  path gives bit-identical results.
Returns VerifyResult; see the dataclass. impl: "reference" | "vectorized" | "triton" | None (triton on CUDA
when available, else vectorized).
"""
from dataclasses import dataclass

import torch

from .reference import verify_reference
from .sampling import gumbel_from_uniforms, target_logits
from .vectorized import node_layout, verify_vectorized


@dataclass(frozen=True)
class VerifyResult:
    """num_accepted int64 [B]; accepted_nodes int64 [B, P] (local node indices along the accepted path,
    padded with -1; P = max n_b); next_token int64 [B] (the bonus or recovered token); output_tokens
    int64 [B, P + 1] (accepted tokens, then next_token, padded with -1)."""
    num_accepted: torch.Tensor
    accepted_nodes: torch.Tensor
    next_token: torch.Tensor
    output_tokens: torch.Tensor


def _triton_available():
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def _check_host(logits, draft_tokens, parents, offsets, uniforms, generator):
    """The checks that need no device values: types, devices, shapes."""
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or not logits.is_floating_point():
        raise TypeError("logits must be a 2-D floating tensor [sum(n_b + 1), vocab]")
    dev = logits.device
    for name, t in (("draft_tokens", draft_tokens), ("parents", parents), ("draft_offsets", offsets)):
        if not isinstance(t, torch.Tensor) or t.dim() != 1:
            raise TypeError(f"{name} must be a 1-D integer tensor")
        if t.is_floating_point() or t.dtype == torch.bool or t.is_complex():
            raise TypeError(f"{name} must hold integers, got {t.dtype}; convert with .long()")
        if t.device != dev:
            raise ValueError(f"{name} is on {t.device} but logits are on {dev}; move them to one device")
    if offsets.numel() < 1:
        raise ValueError("draft_offsets must start at 0 and have B + 1 entries (cumulative node counts)")
    if uniforms is not None and generator is not None:
        raise ValueError("pass uniforms or generator, not both")
    if uniforms is not None:
        if not isinstance(uniforms, torch.Tensor) or tuple(uniforms.shape) != tuple(logits.shape):
            raise ValueError(f"uniforms must be a tensor shaped like logits {tuple(logits.shape)}")
        if uniforms.device != dev:
            raise ValueError(f"uniforms are on {uniforms.device} but logits are on {dev}")
        if not uniforms.is_floating_point():
            raise ValueError("uniforms must be floats strictly inside (0, 1)")


def _check(logits, draft_tokens, parents, offsets, temperature, top_k, top_p, uniforms, generator):
    """Validates the inputs with one host-device synchronization (on a GPU each sync costs a round trip): every
    check is computed on the device, stacked and read back at once. Returns (offsets, tokens, parents,
    temperature, top_k, top_p, longest draft, whether any request samples)."""
    _check_host(logits, draft_tokens, parents, offsets, uniforms, generator)
    dev = logits.device
    off = offsets.long()
    n = off[1:] - off[:-1]
    B, V, M = off.numel() - 1, logits.shape[1], draft_tokens.numel()
    toks, pars = draft_tokens.long(), parents.long()
    temp = torch.zeros(B, dtype=torch.float32, device=dev) if temperature is None else _per_request(
        temperature, B, dev, "temperature")
    k = None if top_k is None else _per_request(top_k, B, dev, "top_k").long()
    p = None if top_p is None else _per_request(top_p, B, dev, "top_p")
    no = torch.zeros((), dtype=torch.bool, device=dev)
    zero = torch.zeros((), dtype=torch.int64, device=dev)
    if M and B and parents.numel() == M:
        # each node's local index, found without knowing N on the host (searchsorted needs no sync)
        i = torch.arange(M, device=dev)
        req = torch.searchsorted(off[1:].contiguous(), i, right=True).clamp_(max=B - 1)
        pars_bad = ((pars < -1) | (pars >= i - off[:-1][req])).any()
    else:
        pars_bad = no
    facts = torch.stack([
        off[0], (n < 0).any() if B else no, off[-1], n.max() if B else zero,
        ((toks < 0) | (toks >= V)).any() if M else no, toks.min() if M else zero, toks.max() if M else zero,
        pars_bad, (torch.isnan(temp) | (temp < 0)).any(), (temp > 0).any(),
        (k < 0).any() if k is not None else no,
        ((p <= 0) | (p > 1) | torch.isnan(p)).any() if p is not None else no,
        ((uniforms <= 0) | (uniforms >= 1)).any() if uniforms is not None else no,
    ]).tolist()
    first, decreasing, N, n_max, toks_bad, tmin, tmax, pars_bad, temp_bad, sampled, k_bad, p_bad, u_bad = facts
    if first != 0:
        raise ValueError("draft_offsets must start at 0 and have B + 1 entries (cumulative node counts)")
    if decreasing:
        raise ValueError("draft_offsets must be non-decreasing")
    if M != N or parents.numel() != N:
        raise ValueError(f"draft_offsets end at {N} but draft_tokens has {M} and parents "
                         f"{parents.numel()} entries; they must match")
    if logits.shape[0] != N + B:
        raise ValueError(f"logits has {logits.shape[0]} rows, expected {N + B} (one root row per request plus one "
                         "row per draft node)")
    if V < 1:
        raise ValueError("logits must have at least one column (vocab >= 1)")
    if toks_bad:
        raise ValueError(f"draft token ids must lie in [0, {V}) (the logits' vocab); got {tmin}..{tmax}")
    if pars_bad:
        raise ValueError("parents must be topological: -1 (child of the root) or a local index smaller than the "
                         "node's own; list a tree parents-first")
    if temp_bad:
        raise ValueError("temperature must be >= 0 (0 means greedy)")
    if k_bad:
        raise ValueError("top_k must be >= 0 (0 disables it)")
    if p_bad:
        raise ValueError("top_p must lie in (0, 1] (1 disables it)")
    if u_bad:
        raise ValueError("uniforms must be floats strictly inside (0, 1)")
    return off, toks, pars, temp, k, p, int(n_max), bool(sampled)


def _per_request(x, B, dev, name):
    t = torch.as_tensor(x, device=dev)
    if t.dim() == 0:
        t = t.expand(B)
    if t.shape != (B,):
        raise ValueError(f"{name} must be a per-request tensor of shape [{B}], got {tuple(t.shape)}")
    if t.device != dev:
        raise ValueError(f"{name} is on {t.device} but logits are on {dev}")
    return t.to(torch.float32) if name != "top_k" else t


def verify(logits, draft_tokens, parents, draft_offsets, *, temperature=None, top_k=None, top_p=None,
           uniforms=None, generator=None, impl=None):
    if impl is None:
        cuda = isinstance(logits, torch.Tensor) and logits.device.type == "cuda"
        impl = "triton" if cuda and _triton_available() else "vectorized"
    if impl not in ("reference", "vectorized", "triton"):
        raise ValueError(f"impl must be 'reference', 'vectorized', 'triton' or None, got {impl!r}")
    args = (logits, draft_tokens, parents, draft_offsets, temperature, top_k, top_p, uniforms, generator)
    if impl == "triton":
        return _verify_triton(*args)
    off, toks, pars, temp, k, p, max_path, sampled = _check(*args)
    B = off.numel() - 1
    dev = logits.device
    row_temp, lg = _per_row(logits, off, temp, k, p)
    noise = None
    if sampled:
        # uniforms: Gumbel noise shared by every path (bit-exact comparisons). Otherwise each path draws its own
        # way, all exact in distribution: triton from a seed (Philox in the kernel), vectorized by inverse CDF,
        # the reference from freshly drawn uniforms.
        if uniforms is not None:
            noise = gumbel_from_uniforms(uniforms)
        elif impl == "reference":
            gdev = "cpu" if generator is None else generator.device
            u = torch.rand(logits.shape, generator=generator, device=gdev).clamp_(min=torch.finfo(torch.float32).tiny)
            noise = gumbel_from_uniforms(u.to(dev))
    if impl == "reference":
        paths, nexts = verify_reference(lg, toks, pars, off, temp, noise)
        nodes = torch.full((B, max_path), -1, dtype=torch.int64, device=dev)
        for b, path in enumerate(paths):
            if path:
                nodes[b, :len(path)] = torch.tensor(path, dtype=torch.int64)
        num = torch.tensor([len(x) for x in paths], dtype=torch.int64, device=dev)
        nxt = torch.tensor(nexts, dtype=torch.int64, device=dev)
    else:
        ok, num, _, nxt = verify_vectorized(lg, toks, pars, off, row_temp, noise, generator)
        nodes = _nodes_from_mask(ok, num, pars, off, max_path)
    return _result(nodes, num, nxt, toks, off)


def _per_row(logits, off, temp, k, p):
    """(temperature per logits row float32 [R], the logits top-k / top-p leave: `logits` itself when neither is
    set). off int64 [B+1]; temp [B]; k, p [B] or None."""
    B = off.numel() - 1
    dev = logits.device
    row_req = torch.repeat_interleave(torch.arange(B, device=dev), off[1:] - off[:-1] + 1,
                                      output_size=logits.shape[0])
    row_temp = temp[row_req]
    if k is None and p is None:
        return row_temp, logits
    kk = torch.zeros(B, dtype=torch.long, device=dev) if k is None else k
    pp = torch.ones(B, dtype=torch.float32, device=dev) if p is None else p
    return row_temp, target_logits(logits, row_temp, kk[row_req], pp[row_req])


def _verify_triton(logits, draft_tokens, parents, offsets, temperature, top_k, top_p, uniforms, generator):
    """The GPU path: the kernels validate the values themselves, so a call costs two launches and one sync (each
    host-device round trip and each small torch op costs microseconds on a GPU). Only when something is wrong
    does the slower _check run, to name the problem."""
    from .triton_verify import InvalidInput, verify_triton

    args = (logits, draft_tokens, parents, offsets, temperature, top_k, top_p, uniforms, generator)
    _check_host(logits, draft_tokens, parents, offsets, uniforms, generator)
    B, M = offsets.numel() - 1, draft_tokens.numel()
    R, V = logits.shape
    if R != M + B or parents.numel() != M or V < 1 or (B == 0 and R):
        _check(*args)  # raises the specific message
        raise ValueError(f"logits has {R} rows for {B} requests and {M} draft nodes; expected {M + B}")
    dev = logits.device
    temp = torch.zeros(B, dtype=torch.float32, device=dev) if temperature is None else _per_request(
        temperature, B, dev, "temperature")
    lg = logits
    if top_k is not None or top_p is not None or uniforms is not None:
        off, _, _, temp, k, p, _, _ = _check(*args)  # values these options read before the kernels run
        if k is not None or p is not None:
            _, lg = _per_row(logits, off, temp, k, p)
    noise, seed = None, None
    if uniforms is not None:
        noise = gumbel_from_uniforms(uniforms)
    else:
        # drawn whether or not a row samples (knowing would cost a sync); Philox in the kernel uses it
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator,
                                 device="cpu" if generator is None else generator.device))
    try:
        nodes, num, nxt, out = verify_triton(lg, draft_tokens.long(), parents.long(), offsets.long(), temp, noise,
                                             seed)
    except InvalidInput as e:
        _check(*args)  # raises the specific message
        if e.row >= 0:
            raise ValueError(f"logits row {e.row} holds NaN or +inf, or only -inf; check the model's output (and "
                             "any logits processor) before verification") from None
        raise ValueError(f"invalid input to verify() (kernel flags {e.bits})") from None
    return VerifyResult(num, nodes, nxt, out)


def _nodes_from_mask(ok, num, pars, off, max_path):
    B = off.numel() - 1
    dev = ok.device
    nodes = torch.full((B, max(max_path, 1)), -1, dtype=torch.int64, device=dev)
    if ok.numel():
        req, _, _, _ = node_layout(pars, off)
        rank = torch.cumsum(ok.to(torch.int64), 0) - 1
        start = torch.cumsum(num, 0) - num  # accepted nodes before request b
        sel = torch.nonzero(ok).flatten()
        r = req[sel]
        nodes[r, rank[sel] - start[r]] = sel - off[:-1][r]
    return nodes[:, :max_path]


def _result(nodes, num, nxt, toks, off):
    B, P = nodes.shape
    dev = nodes.device
    out = torch.full((B, P + 1), -1, dtype=torch.int64, device=dev)
    if P:
        glob = torch.where(nodes >= 0, nodes + off[:-1].unsqueeze(1), torch.zeros_like(nodes))
        out[:, :P] = torch.where(nodes >= 0, toks[glob] if toks.numel() else glob, nodes)
    out[torch.arange(B, device=dev), num] = nxt
    return VerifyResult(num, nodes, nxt, out)
