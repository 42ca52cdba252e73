"""Sampled generation has the target's distribution, with a tiny random Llama whose sequence probabilities
are computed exactly by enumeration.

Vocab 6, 3 new tokens: 216 outcomes, each with probability prod_t p(x_t | prompt, x_<t) from plain forwards
(no cache, no speculation). 3000 samples are drawn by lookahead.generate (batch of 1000, three seeds) with a
drafter that proposes from a repetitive prompt, so drafts are verified and often accepted. Chi-square over the
outcomes (bins with expected count < 5 pooled); pass when p > 1e-4 (fixed seeds: deterministic). The same
check rejects a biased sampler (greedy on the first token), asserted below so the test has power.
"""
import itertools

import pytest
import torch

import lookahead

transformers = pytest.importorskip("transformers")
V, NEW, N_PER, SEEDS = 6, 3, 1000, (11, 12, 13)
PROMPT = [1, 2, 3, 1, 2, 3, 1, 2]


@pytest.fixture(scope="module")
def tiny():
    cfg = transformers.LlamaConfig(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   eos_token_id=None, bos_token_id=None, pad_token_id=None)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # sharper distributions so drafts are accepted some of the time
        m.lm_head.weight.mul_(8.0)
    return m


def exact(model, temperature, top_k):
    from lookahead.kernels.sampling import target_probs

    probs = {}
    seqs = [tuple()]
    for t in range(NEW):
        x = torch.tensor([PROMPT + list(s) for s in seqs])
        with torch.no_grad():
            logits = model(x).logits[:, -1].float()
        R = len(seqs)
        p = target_probs(logits, torch.full((R,), temperature), torch.full((R,), top_k or 0, dtype=torch.long),
                         torch.ones(R))
        nxt = []
        for i, s in enumerate(seqs):
            base = probs.get(s, 1.0)
            for v in range(V):
                probs[s + (v,)] = base * float(p[i, v])
                nxt.append(s + (v,))
        seqs = nxt
    return {s: probs[s] for s in itertools.product(range(V), repeat=NEW)}


def pvalue(counts, expected, n):
    obs, exp, pool_o, pool_e = [], [], 0, 0.0
    for k, pr in expected.items():
        if pr * n < 5:
            pool_o += counts.get(k, 0)
            pool_e += pr * n
        else:
            obs.append(counts.get(k, 0))
            exp.append(pr * n)
    if pool_e > 0:
        obs.append(pool_o)
        exp.append(pool_e)
    chi2 = sum((o - e) ** 2 / e for o, e in zip(obs, exp))
    df = len(obs) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(chi2 / 2, dtype=torch.float64)))


@pytest.mark.parametrize("temperature,top_k", [(1.0, None), (0.7, 3)])
def test_sampled_outputs_follow_the_target(tiny, temperature, top_k):
    expected = exact(tiny, temperature, top_k)
    counts, drafted, accepted = {}, 0, 0
    for seed in SEEDS:
        gens = lookahead.generate(tiny, [PROMPT] * N_PER, max_new_tokens=NEW, temperature=temperature, top_k=top_k,
                                  seed=seed, drafter=lookahead.Drafter(4, tree=True, learn=False), adaptive=False,
                                  max_draft=4)
        for g in gens:
            key = tuple(g.token_ids)
            counts[key] = counts.get(key, 0) + 1
            drafted += g.stats.drafted
            accepted += g.stats.accepted
    n = N_PER * len(SEEDS)
    assert drafted > 0 and accepted > 0.05 * n * NEW  # speculation really happened: >5% of tokens from drafts
    assert pvalue(counts, expected, n) > 1e-4
    # the same test has power: a sampler that is greedy at the first token is rejected
    first = max(range(V), key=lambda v: sum(p for s, p in expected.items() if s[0] == v))
    biased = {}
    for k, c in counts.items():
        kk = (first,) + k[1:]
        biased[kk] = biased.get(kk, 0) + c
    assert pvalue(biased, expected, n) < 1e-6
