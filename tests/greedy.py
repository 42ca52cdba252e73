"""Greedy replay for tests: the target accepts the longest draft path that matches the recorded output, plus one."""
from lookahead.bench.replay import accepted_length


def greedy_tau(d, prompt, out):
    """Tokens per target step of Drafter d over prompt -> out; returns (tau, handle), the request left open."""
    h = d.begin(prompt)
    pos = steps = 0
    while pos < len(out):
        dr = d.propose(h)
        adv = min(accepted_length(dr.tokens, dr.parents, out[pos:]) + 1, len(out) - pos)
        d.append(h, out[pos:pos + adv])
        pos += adv
        steps += 1
    return len(out) / steps, h
