"""Losslessness, statistically: emitted sequences have the target's token-by-token distribution.

For a fixed draft (chain or tree) and fixed logits, every outcome (accepted path, next token) has an exact
probability: the product of the target's conditionals along the emitted tokens. We draw N = 20000 outcomes
(one batch of N identical requests, fixed seeds) and run a chi-square goodness-of-fit test over all outcomes
(bins with expected count < 5 pooled). Thresholds: the verifier passes when p > 1e-4 (36 configurations:
2 sampling modes x chain/tree x 3 temperatures x 3 filters, so a false alarm has probability < 0.4%); a deliberately biased verifier (accept a child whenever it carries
the target's argmax, the classic lossy shortcut) must be rejected with p < 1e-6.
"""
import pytest
import torch

from lookahead.kernels import verify
from lookahead.kernels.sampling import target_probs

N = 20000
V = 5
CHAIN = ([1, 2, 3], [-1, 0, 1])
TREE = ([1, 2, 0, 3, 4, 2], [-1, -1, 0, 0, 1, 3])


def _setup(shape, temp, top_k, top_p, seed=0):
    toks, pars = shape
    n = len(toks)
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n + 1, V, generator=g) * 1.5
    T = torch.full((n + 1,), temp)
    k = torch.full((n + 1,), top_k or 0, dtype=torch.long)
    p = torch.full((n + 1,), top_p or 1.0)
    probs = target_probs(logits, T, k, p)
    return torch.tensor(toks), torch.tensor(pars), logits, probs


def exact_outcomes(toks, pars, probs):
    """{(last accepted node or -1, next token): probability}."""
    out = {}

    def walk(node, pr):
        row = probs[node + 1]
        for x in range(V):
            if pr * row[x] == 0:
                continue
            child = next((j for j in range(len(toks)) if pars[j] == node and toks[j] == x), None)
            if child is None:
                out[(node, x)] = out.get((node, x), 0.0) + float(pr * row[x])
            else:
                walk(child, pr * row[x])

    walk(-1, 1.0)
    return out


def chi2_pvalue(counts, expected):
    keys = sorted(expected)
    small = [k for k in keys if expected[k] * N < 5]
    big = [k for k in keys if expected[k] * N >= 5]
    obs = [counts.get(k, 0) for k in big]
    exp = [expected[k] * N for k in big]
    if small:
        obs.append(sum(counts.get(k, 0) for k in small))
        exp.append(sum(expected[k] * N for k in small))
    extra = sum(v for k, v in counts.items() if k not in expected)
    if extra:
        return 0.0  # an outcome the target can never produce
    chi2 = sum((o - e) ** 2 / e for o, e in zip(obs, exp) if e > 0)
    df = max(len(obs) - 1, 1)
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(chi2 / 2, dtype=torch.float64)))


def run_verify(toks, pars, logits, temp, top_k, top_p, seed=1, mode="generator"):
    n = len(toks)
    off = torch.arange(N + 1) * n
    g = torch.Generator().manual_seed(seed)
    kw = {"temperature": torch.full((N,), temp)}
    if mode == "generator":
        kw["generator"] = g  # inverse-CDF draws
    else:
        kw["uniforms"] = torch.rand(N * (n + 1), V, generator=g).clamp_(1e-12, 1 - 1e-7)  # Gumbel-max draws
    if top_k:
        kw["top_k"] = torch.full((N,), top_k)
    if top_p:
        kw["top_p"] = torch.full((N,), top_p)
    res = verify(logits.repeat(N, 1), toks.repeat(N), pars.repeat(N), off, **kw)
    counts = {}
    for num, nodes, nxt in zip(res.num_accepted.tolist(), res.accepted_nodes.tolist(), res.next_token.tolist()):
        key = (nodes[num - 1] if num else -1, nxt)
        counts[key] = counts.get(key, 0) + 1
    return counts


def biased_verify(toks, pars, probs, seed=2):
    """Accepts a child outright when it carries the argmax token; otherwise samples like the real thing."""
    g = torch.Generator().manual_seed(seed)
    counts = {}
    samples = torch.multinomial(probs, N * 8, replacement=True, generator=g).view(probs.shape[0], 8, N)
    for s in range(N):
        node, depth = -1, 0
        while True:
            row = probs[node + 1]
            am = int(torch.argmax(row))
            child = next((j for j in range(len(toks)) if pars[j] == node and toks[j] == am), None)
            x = am if child is not None else int(samples[node + 1, depth, s])
            child = next((j for j in range(len(toks)) if pars[j] == node and toks[j] == x), None)
            if child is None:
                counts[(node, x)] = counts.get((node, x), 0) + 1
                break
            node, depth = child, depth + 1
    return counts


@pytest.mark.parametrize("mode", ["generator", "uniforms"])
@pytest.mark.parametrize("shape", [CHAIN, TREE], ids=["chain", "tree"])
@pytest.mark.parametrize("temp", [0.3, 1.0, 1.7])
@pytest.mark.parametrize("top_k,top_p", [(None, None), (3, None), (None, 0.8)])
def test_emitted_sequences_follow_the_target(shape, temp, top_k, top_p, mode):
    toks, pars, logits, probs = _setup(shape, temp, top_k, top_p)
    expected = exact_outcomes(toks.tolist(), pars.tolist(), probs)
    assert abs(sum(expected.values()) - 1) < 1e-9
    p = chi2_pvalue(run_verify(toks, pars, logits, temp, top_k, top_p, mode=mode), expected)
    assert p > 1e-4, f"verify's outcomes differ from the target (chi-square p = {p:.2e})"


@pytest.mark.parametrize("shape", [CHAIN, TREE], ids=["chain", "tree"])
def test_biased_verifier_is_detected(shape):
    toks, pars, logits, probs = _setup(shape, 1.0, None, None)
    expected = exact_outcomes(toks.tolist(), pars.tolist(), probs)
    p = chi2_pvalue(biased_verify(toks.tolist(), pars.tolist(), probs), expected)
    assert p < 1e-6, f"the chi-square test failed to flag a biased verifier (p = {p:.2e})"


def test_greedy_is_deterministic_argmax_path():
    toks, pars, logits, _ = _setup(TREE, 1.0, None, None)
    counts = run_verify(toks, pars, logits, 0.0, None, None)
    assert len(counts) == 1


def test_top_k_top_p_match_transformers_warpers():
    pytest.importorskip("transformers")
    from transformers.generation.logits_process import (TemperatureLogitsWarper, TopKLogitsWarper,
                                                        TopPLogitsWarper)
    from lookahead.kernels.sampling import topk_topp_mask

    g = torch.Generator().manual_seed(0)
    for trial in range(200):
        V_ = int(torch.randint(2, 40, (1,), generator=g))
        x = torch.randn(1, V_, generator=g) * 2
        t = float(torch.rand(1, generator=g)) * 1.5 + 0.2
        k = int(torch.randint(0, V_ + 2, (1,), generator=g))
        p = float(torch.rand(1, generator=g)) * 0.98 + 0.01
        hf = TemperatureLogitsWarper(t)(None, x.clone())
        if k > 0:
            hf = TopKLogitsWarper(k)(None, hf)
        hf = TopPLogitsWarper(p)(None, hf)
        ours = topk_topp_mask(x, torch.tensor([t]), torch.tensor([k]), torch.tensor([p]))
        assert torch.equal(torch.isfinite(hf), ours), (trial, V_, k, p)


def test_triton_philox_draws_follow_the_target():
    """Triton's in-kernel RNG (generator mode; under the CPU interpreter here, so N is small: 500 draws of
    a 5-token distribution, same p > 1e-4 threshold)."""
    pytest.importorskip("triton")
    n_draws = 500
    logits = torch.tensor([[1.2, -0.3, 0.4, 0.9, -1.0]]).repeat(n_draws, 1)
    e = torch.empty(0, dtype=torch.long)
    res = verify(logits, e, e, torch.zeros(n_draws + 1, dtype=torch.long), temperature=torch.full((n_draws,), 0.8),
                 generator=torch.Generator().manual_seed(3), impl="triton")
    probs = torch.softmax(logits[0].double() / 0.8, 0)
    counts = torch.bincount(res.next_token, minlength=5).double()
    chi2 = float(((counts - n_draws * probs) ** 2 / (n_draws * probs)).sum())
    p = float(torch.special.gammaincc(torch.tensor(2.0, dtype=torch.float64), torch.tensor(chi2 / 2, dtype=torch.float64)))
    assert p > 1e-4, p
