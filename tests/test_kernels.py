"""verify(): reference, vectorized and Triton paths agree exactly given the same uniforms; input errors."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

from kernel_cases import make_case
from lookahead.kernels import verify

triton = pytest.importorskip("triton")
IMPLS = ("reference", "vectorized", "triton")


def run_all(args, kw, impls=IMPLS):
    res = {i: verify(*args, impl=i, **kw) for i in impls}
    ref = res[impls[0]]
    for i in impls[1:]:
        r = res[i]
        for f in ("num_accepted", "accepted_nodes", "next_token", "output_tokens"):
            assert torch.equal(getattr(ref, f).cpu(), getattr(r, f).cpu()), (i, f, getattr(ref, f), getattr(r, f))
    return ref


def check_consistent(res, args):
    logits, toks, pars, off = args
    B = off.numel() - 1
    for b in range(B):
        k = int(res.num_accepted[b])
        path = res.accepted_nodes[b, :k].tolist()
        prev = -1
        for j in path:  # a root path: each node's parent is the previous one
            assert int(pars[int(off[b]) + j]) == prev
            prev = j
        assert (res.accepted_nodes[b, k:] == -1).all()
        assert res.output_tokens[b, k] == res.next_token[b]
        assert 0 <= int(res.next_token[b]) < logits.shape[1]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 3, 37]), st.sampled_from([1, 7, 64]), st.integers(0, 9),
       st.booleans(), st.booleans())
def test_paths_agree_small_vocab(seed, B, V, max_nodes, tree, ties):
    args, kw = make_case(seed, B, V, max_nodes, tree=tree, ties=ties)
    check_consistent(run_all(args, kw), args)


@pytest.mark.parametrize("V,B,max_nodes", [(8193, 3, 6), (151936, 1, 3)])
def test_paths_agree_large_vocab(V, B, max_nodes):
    for seed in range(2):
        args, kw = make_case(seed, B, V, max_nodes, tree=True, match=0.8)
        check_consistent(run_all(args, kw), args)


@pytest.mark.parametrize("top_k,top_p", [(1, None), (None, 1e-6), (None, 1.0), (None, 0.999), (3, 0.5), (0, 0.9)])
def test_top_k_top_p_agree(top_k, top_p):
    for seed in range(3):
        args, kw = make_case(seed, 37, 7, 5, tree=True)
        B = args[3].numel() - 1
        if top_k is not None:
            kw["top_k"] = torch.full((B,), top_k)
        if top_p is not None:
            kw["top_p"] = torch.full((B,), top_p)
        res = run_all(args, kw)
        check_consistent(res, args)
        if top_k == 1 or (top_p is not None and top_p < 1e-3):
            greedy = run_all(args, {"temperature": torch.zeros(B)}, ("vectorized",))
            # keeping only the most likely token makes sampling greedy (no ties in these logits)
            assert torch.equal(res.output_tokens, greedy.output_tokens)


def test_empty_drafts_and_empty_batch_entries():
    logits = torch.randn(3, 5)
    off = torch.zeros(4, dtype=torch.int64)
    e = torch.empty(0, dtype=torch.int64)
    res = run_all((logits, e, e, off), {"temperature": torch.zeros(3)})
    assert res.num_accepted.tolist() == [0, 0, 0]
    assert res.next_token.tolist() == torch.argmax(logits, 1).tolist()
    assert res.output_tokens.shape == (3, 1)


def test_full_acceptance_deep_chain_and_first_node_rejection():
    V, n = 11, 40
    logits = torch.randn(n + 1, V)
    am = torch.argmax(logits, 1)
    toks = am[:n].clone()  # node i is what the target picks at row i: all accepted
    pars = torch.arange(-1, n - 1)
    off = torch.tensor([0, n])
    res = run_all((logits, toks, pars, off), {})
    assert int(res.num_accepted[0]) == n and int(res.next_token[0]) == int(am[n])
    assert res.output_tokens[0].tolist() == am.tolist()
    toks[0] = (am[0] + 1) % V
    res = run_all((logits, toks, pars, off), {})
    assert int(res.num_accepted[0]) == 0 and int(res.next_token[0]) == int(am[0])


def test_wide_tree_and_repeated_sibling_tokens():
    V = 9
    logits = torch.randn(1 + 8, V)
    am = int(torch.argmax(logits[0]))
    toks = torch.tensor([(am + 1) % V, am, am, (am + 2) % V, 0, 1, 2, 3])
    pars = torch.tensor([-1, -1, -1, -1, 0, 1, 2, 3])
    off = torch.tensor([0, 8])
    res = run_all((logits, toks, pars, off), {})
    assert res.accepted_nodes[0, 0] == 1  # the first sibling carrying the drawn token, never its twin


def test_greedy_ties_go_to_lowest_id():
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.0]])
    e = torch.empty(0, dtype=torch.int64)
    res = run_all((logits, e, e, torch.tensor([0, 0])), {})
    assert int(res.next_token[0]) == 1


def test_vocab_one():
    logits = torch.zeros(4, 1)
    res = run_all((logits, torch.tensor([0, 0, 0]), torch.tensor([-1, 0, 1]), torch.tensor([0, 3])),
                  {"temperature": torch.tensor([1.0]), "uniforms": torch.full((4, 1), 0.5)})
    assert int(res.num_accepted[0]) == 3


def test_generator_reproducible_and_default_impl():
    args, kw = make_case(5, 8, 7, 5)
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    a = verify(*args, temperature=kw["temperature"], generator=g1)
    b = verify(*args, temperature=kw["temperature"], generator=g2)
    assert torch.equal(a.output_tokens, b.output_tokens)


def _base():
    logits = torch.randn(5, 6)
    return logits, torch.tensor([1, 2, 3]), torch.tensor([-1, 0, 1]), torch.tensor([0, 3, 3])


@pytest.mark.parametrize("mutate,err,msg", [
    (lambda a, k: a[0].__setitem__((1, 2), float("nan")), ValueError, "NaN"),
    (lambda a, k: a[0].__setitem__((0, 0), float("inf")), ValueError, "inf"),
    (lambda a, k: a[0].__setitem__(0, float("-inf")), ValueError, "-inf"),
    (lambda a, k: a.__setitem__(0, a[0][:4]), ValueError, "rows"),
    (lambda a, k: a.__setitem__(2, torch.tensor([-1, 1, 1])), ValueError, "topological"),
    (lambda a, k: a.__setitem__(2, torch.tensor([0, 0, 1])), ValueError, "topological"),
    (lambda a, k: a.__setitem__(1, torch.tensor([1, 6, 3])), ValueError, r"\[0, 6\)"),
    (lambda a, k: a.__setitem__(1, torch.tensor([1, -2, 3])), ValueError, r"\[0, 6\)"),
    (lambda a, k: k.__setitem__("temperature", torch.tensor([-0.5, 1.0])), ValueError, "temperature"),
    (lambda a, k: k.__setitem__("top_p", torch.tensor([0.0, 1.0])), ValueError, "top_p"),
    (lambda a, k: k.__setitem__("top_p", torch.tensor([1.5, 1.0])), ValueError, "top_p"),
    (lambda a, k: k.__setitem__("top_k", torch.tensor([-1, 1])), ValueError, "top_k"),
    (lambda a, k: k.__setitem__("temperature", torch.tensor([1.0, 1.0, 1.0])), ValueError, "shape"),
    (lambda a, k: a.__setitem__(1, torch.tensor([1.0, 2.0, 3.0])), TypeError, "integers"),
    (lambda a, k: a.__setitem__(0, torch.randint(0, 3, (5, 6))), TypeError, "floating"),
    (lambda a, k: a.__setitem__(3, torch.tensor([1, 3, 3])), ValueError, "start at 0"),
    (lambda a, k: a.__setitem__(3, torch.tensor([0, 3, 2])), ValueError, "offsets"),
    (lambda a, k: k.update(uniforms=torch.full((5, 6), 0.5), generator=torch.Generator()), ValueError, "not both"),
    (lambda a, k: k.update(uniforms=torch.zeros(5, 6)), ValueError, "inside"),
    (lambda a, k: k.update(uniforms=torch.full((4, 6), 0.5)), ValueError, "shaped"),
])
def test_bad_input(mutate, err, msg):
    for impl in IMPLS:
        args = list(_base())
        kw = {"temperature": torch.tensor([1.0, 0.0])}
        mutate(args, kw)
        with pytest.raises(err, match=msg):
            verify(*args, impl=impl, **kw)


def test_meta_device_mismatch():
    logits, toks, pars, off = _base()
    with pytest.raises(ValueError, match="device"):
        verify(logits, toks.to("meta"), pars, off)
