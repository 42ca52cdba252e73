"""Triton verifier: the two phases of vectorized.py as two kernels, never building one-hot drafts.

_draw_rows: one program per logits row; streams the row once, four BLOCK_V chunks a step, keeps a per-lane
  running (max, first argmax) of l / T + g (or of l when greedy), reduced across lanes once at the end, and
  flags NaN / +inf / all -inf rows. The noise g is read from a tensor (exact-comparison mode) or generated in
  the kernel from a seed (Philox via tl.rand4x: four uniforms per call), so the logits are the only large read.
_descend: one program per request; its draft (<= BLOCK_N nodes) and the draws at its rows sit in registers,
  and the walk down the tree is a fixed-trip loop of vector compares.
Runs on CUDA, and on CPU under TRITON_INTERPRET=1 (how CI tests it).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _fold(best, best_i, bad, lrow, nrow, offs, V, u, greedy, Tdiv, USE_NOISE: tl.constexpr, USE_RNG: tl.constexpr):
    """One chunk into the per-lane running (max, first index): no reduction across lanes until the row ends."""
    m = offs < V
    lg = tl.load(lrow + offs, mask=m, other=-float("inf")).to(tl.float32)
    bad = bad | ((lg != lg) | (lg == float("inf"))).to(tl.int32)
    if USE_NOISE:
        g = tl.load(nrow + offs, mask=m, other=0.0)
        v = tl.where(greedy, lg, tl.math.div_rn(lg, Tdiv) + g)
    elif USE_RNG:
        g = -tl.log(-tl.log(u))
        v = tl.where(greedy, lg, tl.math.div_rn(lg, Tdiv) + g)
    else:
        v = lg
    v = tl.where(m & (v == v), v, -float("inf"))
    upd = v > best  # strict: a lane keeps its earliest (lowest-id) maximum
    return tl.where(upd, v, best), tl.where(upd, offs, best_i), bad


@triton.jit
def _stream(logits_ptr, noise_ptr, row, stride_l, stride_n, seed, V, greedy, Tdiv, USE_NOISE: tl.constexpr,
            USE_RNG: tl.constexpr, BLOCK_V: tl.constexpr):
    """Streams one row; returns the per-lane (max, first index, bad-value flag)."""
    lane = tl.arange(0, BLOCK_V)
    best = tl.full([BLOCK_V], -float("inf"), tl.float32)
    best_i = tl.zeros([BLOCK_V], tl.int32)
    bad = tl.zeros([BLOCK_V], tl.int32)
    lrow = logits_ptr + row.to(tl.int64) * stride_l
    nrow = noise_ptr + row.to(tl.int64) * stride_n
    # four chunks per step: one Philox call gives four uniforms (Philox, not the logits read, bounds the
    # sampled kernel otherwise); counters start // 4 + lane are distinct across steps and lanes
    for start in range(0, V, 4 * BLOCK_V):
        if USE_RNG:
            u0, u1, u2, u3 = tl.rand4x(seed + row, start // 4 + lane)
        else:
            u0, u1, u2, u3 = best, best, best, best  # unused
        best, best_i, bad = _fold(best, best_i, bad, lrow, nrow, start + lane, V, u0, greedy, Tdiv, USE_NOISE,
                                  USE_RNG)
        best, best_i, bad = _fold(best, best_i, bad, lrow, nrow, start + BLOCK_V + lane, V, u1, greedy, Tdiv,
                                  USE_NOISE, USE_RNG)
        best, best_i, bad = _fold(best, best_i, bad, lrow, nrow, start + 2 * BLOCK_V + lane, V, u2, greedy, Tdiv,
                                  USE_NOISE, USE_RNG)
        best, best_i, bad = _fold(best, best_i, bad, lrow, nrow, start + 3 * BLOCK_V + lane, V, u3, greedy, Tdiv,
                                  USE_NOISE, USE_RNG)
    return best, best_i, bad


@triton.jit(do_not_specialize=["seed"])  # a fresh seed per call must not compile a new variant
def _draw_rows(logits_ptr, stride_l, off_ptr, B, NB_ITER, temp_ptr, tok_ptr, par_ptr, M, noise_ptr, stride_n,
               seed, draw_ptr, summary_ptr, R, V, USE_NOISE: tl.constexpr, USE_RNG: tl.constexpr,
               BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    # the request owning this row: the last b with off[b] + b <= row (binary search; offsets stay on the device)
    lo = tl.full((), 0, tl.int64)
    hi = tl.full((), B - 1, tl.int64)
    for _ in range(NB_ITER):
        active = lo < hi
        mid = (lo + hi + 1) // 2
        ok = tl.load(off_ptr + mid) + mid <= row
        lo, hi = tl.where(active & ok, mid, lo), tl.where(active & (ok == 0), mid - 1, hi)
    b = lo
    o_lo = tl.load(off_ptr + b)
    o_hi = tl.load(off_ptr + b + 1)
    j = row - o_lo - b - 1  # local node index, -1 on the request's root row
    T = tl.load(temp_ptr + b)
    # validation, so that the host reads one small summary instead of syncing once per check:
    # bits 2 offsets[0] != 0, 4 decreasing offsets, 8 offsets[-1] != number of nodes, 16 token id out of range,
    # 32 parent not topological, 64 bad temperature (bit 1, bad logits, is set below)
    g = o_lo + j
    has_node = (j >= 0) & (g < o_hi) & (g >= 0) & (g < M)
    tk = tl.load(tok_ptr + g, mask=has_node, other=0)
    pr = tl.load(par_ptr + g, mask=has_node, other=-1)
    err = tl.where(has_node & ((tk < 0) | (tk >= V)), 16, 0) | tl.where(has_node & ((pr < -1) | (pr >= j)), 32, 0)
    root = j == -1
    err = err | tl.where(root & ((T != T) | (T < 0.0)), 64, 0) | tl.where(root & (o_hi < o_lo), 4, 0)
    err = err | tl.where(root & (b == 0) & (o_lo != 0), 2, 0) | tl.where(root & (b == B - 1) & (o_hi != M), 8, 0)
    tl.atomic_max(summary_ptr + 2, (o_hi - o_lo).to(tl.int32), mask=root)  # longest draft
    tl.atomic_max(summary_ptr + 3, (T > 0.0).to(tl.int32), mask=root)  # any sampled request

    greedy = T == 0.0
    Tdiv = tl.where(greedy | (T != T) | (T < 0.0), 1.0, T)
    if greedy:  # no noise to draw or read: a greedy row would otherwise pay for Philox
        best, best_i, bad = _stream(logits_ptr, noise_ptr, row, stride_l, stride_n, seed, V, greedy, Tdiv,
                                    False, False, BLOCK_V)
    else:
        best, best_i, bad = _stream(logits_ptr, noise_ptr, row, stride_l, stride_n, seed, V, greedy, Tdiv,
                                    USE_NOISE, USE_RNG, BLOCK_V)
    mx = tl.max(best, 0)
    first = tl.min(tl.where(best == mx, best_i, V), 0)  # lowest id among the lanes holding the maximum
    bad_row = (tl.max(bad, 0) != 0) | (mx == -float("inf"))
    err = err | tl.where(bad_row, 1, 0)
    tl.atomic_or(summary_ptr, err, mask=err != 0)
    tl.atomic_max(summary_ptr + 1, (R - row).to(tl.int32), mask=bad_row)  # R - (first bad row)
    tl.store(draw_ptr + row, tl.where(mx == -float("inf"), 0, first).to(tl.int64))


@triton.jit
def _descend(draw_ptr, tok_ptr, par_ptr, off_ptr, nodes_ptr, num_ptr, next_ptr, out_ptr, MAXP, OUTW,
             BLOCK_N: tl.constexpr):
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
        tl.store(out_ptr + b.to(tl.int64) * OUTW + num, x.to(tl.int64), mask=found)  # the node's token
        num = num + found.to(tl.int64)
        cur = tl.where(found, j.to(tl.int64), cur)
        x = tl.where(found, tl.sum(tl.where(idx == j, dr, 0), 0), x)
        done = tl.where(found, done, 1)
    tl.store(num_ptr + b, num)
    tl.store(next_ptr + b, x)
    tl.store(out_ptr + b.to(tl.int64) * OUTW + num, x.to(tl.int64))


def _pow2(x, lo):
    p = lo
    while p < x:
        p *= 2
    return p


# (BLOCK_V, num_warps) of _draw_rows, chosen with `lookahead bench kernels --tune` on an H200: with few rows
# (under FEW_ROWS per multiprocessor) each program streams alone, and a wider block with more warps reads faster;
# with many rows programs share the multiprocessors and the narrower block wins (see the issue notes' figures)
DRAW_CONFIG = {"cpu": (256, 4), "cuda": (512, 4), "cuda_few_rows": (1024, 8)}
FEW_ROWS = 2
FORCE_CONFIG = None  # set by --tune


def _draw_config(dev, R):
    if FORCE_CONFIG is not None:
        return FORCE_CONFIG
    if dev.type != "cuda":
        return DRAW_CONFIG["cpu"]
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    return DRAW_CONFIG["cuda_few_rows"] if R < FEW_ROWS * sms else DRAW_CONFIG["cuda"]


class InvalidInput(ValueError):
    """The kernels found bad values; `bits` as in _draw_rows, `row` the first row with bad logits (or -1).
    verify() turns it into the specific message."""

    def __init__(self, bits, row):
        super().__init__(f"invalid verify() input (flags {bits})")
        self.bits, self.row = bits, row


def verify_triton(logits, draft_tokens, parents, offsets, temperature, noise, seed):
    """Validates and verifies with two kernel launches and one host sync (a small summary read back).

    logits [R, V]; draft_tokens, parents int64 [N]; offsets int64 [B+1]; temperature float32 [B] (per request);
    noise float32 [R, V] Gumbel noise or None; seed: int for in-kernel Philox (used when noise is None).
    _draw_rows' (BLOCK_V, num_warps) come from _draw_config. Returns (accepted_nodes int64 [B, P] padded -1,
    num_accepted [B], next_token [B], output_tokens [B, P + 1]), P the longest draft; raises InvalidInput."""
    R, V = logits.shape
    B = offsets.numel() - 1
    M = draft_tokens.numel()
    dev = logits.device
    logits = logits if logits.stride(1) == 1 else logits.contiguous()
    toks, pars, off = draft_tokens.contiguous(), parents.contiguous(), offsets.contiguous()
    draws = torch.empty(R, dtype=torch.int64, device=dev)
    summary = torch.zeros(4, dtype=torch.int32, device=dev)
    use_noise = noise is not None
    nz = noise.contiguous() if use_noise else logits
    block_v, warps = _draw_config(dev, R)
    block_v = min(_pow2(-(-V // 4), 16), block_v)  # a step covers 4 * block_v ids
    if R:
        _draw_rows[(R,)](logits, logits.stride(0), off, B, max(B, 1).bit_length(), temperature.contiguous(), toks,
                         pars, M, nz, nz.stride(0), int(seed or 0), draws, summary, R, V, USE_NOISE=use_noise,
                         USE_RNG=(not use_noise) and seed is not None, BLOCK_V=block_v, num_warps=warps)
    bits, bad_row, max_path, _ = summary.tolist()  # the one sync
    if bits:
        raise InvalidInput(bits, R - bad_row if bad_row else -1)
    nodes = torch.full((B, max(max_path, 1)), -1, dtype=torch.int64, device=dev)
    out = torch.full((B, max_path + 1), -1, dtype=torch.int64, device=dev)
    num = torch.empty(B, dtype=torch.int64, device=dev)
    nxt = torch.empty(B, dtype=torch.int64, device=dev)
    if B:
        _descend[(B,)](draws, toks, pars, off, nodes, num, nxt, out, nodes.shape[1],
                       out.shape[1], BLOCK_N=_pow2(max(max_path, 1), 16))
    return nodes[:, :max_path], num, nxt, out
