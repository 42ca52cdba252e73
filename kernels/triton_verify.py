"""Triton verifier: the two phases of vectorized.py as two kernels, never building one-hot drafts.

_draw_rows: one program per logits row; streams the row once in BLOCK_V chunks, keeps a running
  (max, first argmax) of l / T + g (or of l when greedy) and flags NaN / +inf / all -inf rows. The noise g is
  read from a tensor (exact-comparison mode) or generated in the kernel from a seed (Philox via tl.rand), so
  the logits are the only large read.
_descend: one program per request; its draft (<= BLOCK_N nodes) and the draws at its rows sit in registers,
  and the walk down the tree is a fixed-trip loop of vector compares.
Runs on CUDA, and on CPU under TRITON_INTERPRET=1 (how CI tests it).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _draw_rows(logits_ptr, stride_l, temp_ptr, noise_ptr, stride_n, seed, tok_ptr, flag_ptr, V,
               USE_NOISE: tl.constexpr, USE_RNG: tl.constexpr, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    T = tl.load(temp_ptr + row)
    greedy = T == 0.0
    Tdiv = tl.where(greedy, 1.0, T)
    best = -float("inf")
    best_i = 0
    bad = 0
    for start in range(0, V, BLOCK_V):
        offs = start + tl.arange(0, BLOCK_V)
        m = offs < V
        lg = tl.load(logits_ptr + row.to(tl.int64) * stride_l + offs, mask=m, other=-float("inf")).to(tl.float32)
        bad = bad | tl.max(((lg != lg) | (lg == float("inf"))).to(tl.int32), 0)
        if USE_NOISE:
            g = tl.load(noise_ptr + row.to(tl.int64) * stride_n + offs, mask=m, other=0.0)
            v = tl.where(greedy, lg, tl.math.div_rn(lg, Tdiv) + g)
        elif USE_RNG:
            u = tl.rand(seed + row, offs)
            g = -tl.log(-tl.log(u))
            v = tl.where(greedy, lg, tl.math.div_rn(lg, Tdiv) + g)
        else:
            v = lg
        v = tl.where(m & (v == v), v, -float("inf"))
        bmax = tl.max(v, 0)
        bidx = tl.argmax(v, 0, tie_break_left=True)
        upd = bmax > best
        best_i = tl.where(upd, start + bidx, best_i)
        best = tl.where(upd, bmax, best)
    bad = bad | (best == -float("inf")).to(tl.int32)
    tl.store(tok_ptr + row, best_i.to(tl.int64))
    tl.store(flag_ptr + row, bad)


@triton.jit
def _descend(draw_ptr, tok_ptr, par_ptr, off_ptr, nodes_ptr, num_ptr, next_ptr, MAXP, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    lo = tl.load(off_ptr + b)
    hi = tl.load(off_ptr + b + 1)
    n = hi - lo
    idx = tl.arange(0, BLOCK_N)
    m = idx < n
    toks = tl.load(tok_ptr + lo + idx, mask=m, other=-1)
    pars = tl.load(par_ptr + lo + idx, mask=m, other=-2)
    base = lo + b
    dr = tl.load(draw_ptr + base + 1 + idx, mask=m, other=-1)  # draw at each node's own row
    root_draw = tl.load(draw_ptr + base)
    cur = tl.full((), -1, tl.int64)
    x = root_draw
    num = tl.full((), 0, tl.int64)
    done = tl.full((), 0, tl.int32)
    for _ in range(BLOCK_N):
        match = (pars == cur) & (toks == x) & m
        j = tl.min(tl.where(match, idx, BLOCK_N), 0)
        found = (j < BLOCK_N) & (done == 0)
        tl.store(nodes_ptr + b.to(tl.int64) * MAXP + num, j.to(tl.int64), mask=found)
        num = num + found.to(tl.int64)
        cur = tl.where(found, j.to(tl.int64), cur)
        x = tl.where(found, tl.sum(tl.where(idx == j, dr, 0), 0), x)
        done = tl.where(found, done, 1)
    tl.store(num_ptr + b, num)
    tl.store(next_ptr + b, x)


def _pow2(x, lo):
    p = lo
    while p < x:
        p *= 2
    return p


def verify_triton(logits, draft_tokens, parents, offsets, row_temperature, noise, seed, max_path):
    """Returns (accepted_nodes int64 [B, max_path] padded -1, num_accepted [B], next_token [B])."""
    R, V = logits.shape
    B = offsets.numel() - 1
    dev = logits.device
    logits = logits if logits.stride(1) == 1 else logits.contiguous()
    draws = torch.empty(R, dtype=torch.int64, device=dev)
    flags = torch.empty(R, dtype=torch.int32, device=dev)
    temp = row_temperature.to(torch.float32).contiguous()
    use_noise = noise is not None
    use_rng = (not use_noise) and seed is not None
    nz = noise.contiguous() if use_noise else logits
    block_v = min(_pow2(V, 16), 1024 if dev.type == "cpu" else 4096)
    _draw_rows[(R,)](logits, logits.stride(0), temp, nz, nz.stride(0), int(seed or 0), draws, flags, V,
                     USE_NOISE=use_noise, USE_RNG=use_rng, BLOCK_V=block_v)
    if bool(flags.any()):
        bad = int(torch.nonzero(flags)[0])
        raise ValueError(f"logits row {bad} holds NaN or +inf, or only -inf; check the model's output (and any "
                         "logits processor) before verification")
    n_max = int((offsets[1:] - offsets[:-1]).max()) if B else 0
    nodes = torch.full((B, max(max_path, 1)), -1, dtype=torch.int64, device=dev)
    num = torch.empty(B, dtype=torch.int64, device=dev)
    nxt = torch.empty(B, dtype=torch.int64, device=dev)
    if B:
        _descend[(B,)](draws, draft_tokens.contiguous(), parents.contiguous(), offsets.contiguous(), nodes, num, nxt,
                       nodes.shape[1], BLOCK_N=_pow2(max(n_max, 1), 16))
    return nodes[:, :max_path], num, nxt
