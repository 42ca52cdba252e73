"""verify() on a GPU: the compiled Triton kernels against the vectorized path and the loop reference.

Runs only with CUDA and LOOKAHEAD_TEST_CUDA=1 (conftest.py then leaves TRITON_INTERPRET unset, so Triton
compiles for the device); CI has no GPU and skips this file. Run it as
    LOOKAHEAD_TEST_CUDA=1 python -m pytest -q tests/test_kernels_cuda.py
Statistical thresholds are those of test_kernels_stats.py: the sampled outcomes pass a chi-square test at
p > 1e-4.
"""
import os

import pytest
import torch

from kernel_cases import make_case
from lookahead.kernels import verify
from test_kernels import check_consistent, run_all
from test_kernels_stats import CHAIN, TREE, _setup, chi2_pvalue, exact_outcomes

pytestmark = pytest.mark.skipif(not (torch.cuda.is_available() and os.environ.get("LOOKAHEAD_TEST_CUDA")),
                                reason="needs a CUDA device and LOOKAHEAD_TEST_CUDA=1 (Triton then compiles "
                                       "for the GPU instead of running under TRITON_INTERPRET)")
FIELDS = ("num_accepted", "accepted_nodes", "next_token", "output_tokens")


def _same(a, b):
    return all(torch.equal(getattr(a, f).cpu(), getattr(b, f).cpu()) for f in FIELDS)


@pytest.mark.parametrize("V", [1, 7, 64])
@pytest.mark.parametrize("B", [1, 3, 37])
def test_three_paths_agree_on_gpu(V, B):
    """Reference (on the GPU tensors), vectorized and Triton: bit-identical with shared uniforms."""
    for seed in range(6):
        for max_nodes in (0, 5, 16):
            args, kw = make_case(seed, B, V, max_nodes, tree=seed % 2 == 0, ties=seed % 3 == 0, device="cuda")
            check_consistent(run_all(args, kw), args)


@pytest.mark.parametrize("V,B,max_nodes", [(8193, 37, 16), (151936, 3, 16), (151936, 37, 4)])
def test_large_vocab_triton_matches_vectorized(V, B, max_nodes):
    for seed in range(3):
        args, kw = make_case(seed, B, V, max_nodes, tree=seed != 1, match=0.8, device="cuda")
        check_consistent(run_all(args, kw, impls=("vectorized", "triton")), args)


@pytest.mark.parametrize("V,B", [(7, 37), (151936, 37)])
def test_greedy_gpu_matches_cpu(V, B):
    """Greedy needs no noise, so the GPU kernel must pick exactly the CPU path's tokens (ties: lowest id)."""
    for seed in range(3):
        args, kw = make_case(seed, B, V, 16, tree=True, ties=True, sampled=False)
        cpu = verify(*args, temperature=kw["temperature"], impl="vectorized")
        gpu = verify(*[a.cuda() for a in args], temperature=kw["temperature"].cuda(), impl="triton")
        assert _same(cpu, gpu)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_logits(dtype):
    for seed in range(3):
        args, kw = make_case(seed, 37, 32000, 8, tree=True, match=0.8, device="cuda")
        args[0] = args[0].to(dtype)
        run_all(args, kw, impls=("vectorized", "triton"))
        greedy = {"temperature": torch.zeros(37, device="cuda")}
        run_all(args, greedy, impls=("vectorized", "triton"))


def test_top_k_top_p_on_gpu():
    for seed in range(3):
        args, kw = make_case(seed, 37, 64, 6, tree=True, device="cuda")
        kw["top_k"] = torch.full((37,), 5, device="cuda")
        kw["top_p"] = torch.full((37,), 0.7, device="cuda")
        run_all(args, kw)


def test_philox_draws_follow_the_target():
    """200000 single-token draws from the in-kernel RNG over a 5-token distribution: chi-square p > 1e-4."""
    n = 200000
    logits = torch.tensor([[1.2, -0.3, 0.4, 0.9, -1.0]], device="cuda").repeat(n, 1)
    e = torch.empty(0, dtype=torch.long, device="cuda")
    res = verify(logits, e, e, torch.zeros(n + 1, dtype=torch.long, device="cuda"),
                 temperature=torch.full((n,), 0.8, device="cuda"), generator=torch.Generator().manual_seed(3),
                 impl="triton")
    probs = torch.softmax(logits[0].double().cpu() / 0.8, 0)
    counts = torch.bincount(res.next_token.cpu(), minlength=5).double()
    chi2 = float(((counts - n * probs) ** 2 / (n * probs)).sum())
    p = float(torch.special.gammaincc(torch.tensor(2.0, dtype=torch.float64), torch.tensor(chi2 / 2,
                                                                                          dtype=torch.float64)))
    assert p > 1e-4, p


@pytest.mark.parametrize("impl", ["vectorized", "triton"])
@pytest.mark.parametrize("shape", [CHAIN, TREE], ids=["chain", "tree"])
@pytest.mark.parametrize("temp,top_k,top_p", [(1.0, None, None), (0.3, 3, None), (1.7, None, 0.8)])
def test_emitted_sequences_follow_the_target_on_gpu(impl, shape, temp, top_k, top_p):
    """20000 identical requests in one batch, each drawing with the path's own RNG (no shared uniforms)."""
    N = 20000
    toks, pars, logits, probs = _setup(shape, temp, top_k, top_p)
    expected = exact_outcomes(toks.tolist(), pars.tolist(), probs)
    n = len(toks)
    kw = {"temperature": torch.full((N,), temp, device="cuda"), "impl": impl}
    kw["generator"] = torch.Generator(device="cuda").manual_seed(1) if impl == "vectorized" else \
        torch.Generator().manual_seed(1)
    if top_k:
        kw["top_k"] = torch.full((N,), top_k, device="cuda")
    if top_p:
        kw["top_p"] = torch.full((N,), top_p, device="cuda")
    res = verify(logits.cuda().repeat(N, 1), toks.cuda().repeat(N), pars.cuda().repeat(N),
                 (torch.arange(N + 1) * n).cuda(), **kw)
    counts = {}
    for num, nodes, nxt in zip(res.num_accepted.tolist(), res.accepted_nodes.tolist(), res.next_token.tolist()):
        key = (nodes[num - 1] if num else -1, nxt)
        counts[key] = counts.get(key, 0) + 1
    p = chi2_pvalue(counts, expected)
    assert p > 1e-4, f"{impl} on the GPU: outcomes differ from the target (chi-square p = {p:.2e})"


def test_seeded_draws_repeat_and_differ():
    args, kw = make_case(0, 37, 4096, 8, tree=True, device="cuda")
    t = kw["temperature"].clamp(min=0.5)
    a = verify(*args, temperature=t, generator=torch.Generator().manual_seed(5), impl="triton")
    b = verify(*args, temperature=t, generator=torch.Generator().manual_seed(5), impl="triton")
    c = verify(*args, temperature=t, generator=torch.Generator().manual_seed(6), impl="triton")
    assert _same(a, b)
    assert not torch.equal(a.next_token, c.next_token)


def test_bad_logits_are_reported_on_gpu():
    args, kw = make_case(0, 3, 64, 4, device="cuda")
    args[0][2, 5] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        verify(*args, **kw, impl="triton")
