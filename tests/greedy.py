"""Greedy replay for tests: the target accepts the longest draft path that matches the recorded output, plus one."""
from lookahead.bench.replay import accepted_length


def replay(d, h, out):
    """Appends `out` to request h of Drafter d as a greedy target would (the accepted part of each draft, then
    one token), so that the pointer and the analogy follow as in an engine; returns the number of steps."""
    pos = steps = 0
    while pos < len(out):
        dr = d.propose(h)
        adv = min(accepted_length(dr.tokens, dr.parents, out[pos:]) + 1, len(out) - pos)
        d.append(h, out[pos:pos + adv])
        pos += adv
        steps += 1
    return steps


def greedy_tau(d, prompt, out):
    """Tokens per target step of Drafter d over prompt -> out; returns (tau, handle), the request left open."""
    h = d.begin(prompt)
    return len(out) / replay(d, h, out), h


def session_steps(tokenizer, session, forget=None):
    """Target steps of a greedy replay of one session of the public multi_turn workload (its requests in order,
    through one Drafter). forget: a Drafter attribute set to None after each request, so that what it holds
    does not reach the next request (the control of a test of carrying it)."""
    import numpy as np

    from lookahead import Drafter
    from lookahead.bench.workloads import load_workload

    recs = [r for r in load_workload("multi_turn", tokenizer) if r["session"].endswith(session)]
    assert recs, session
    d = Drafter(max_draft=16)
    steps = 0
    for r in recs:
        tau, h = greedy_tau(d, r["prompt_ids"], np.asarray(r["output_ids"], np.int32))
        steps += round(len(r["output_ids"]) / tau)
        d.end(h)
        if forget:
            setattr(d, forget, None)
    return steps
