"""`oracle` in `lookahead bench vllm`: a vLLM proposer that drafts the no-speculation engine's own outputs.

Every token it drafts is accepted (greedy outputs are the same with and without speculation), so its
tokens/s is the ceiling of any drafter at that num_speculative_tokens on that engine and machine: it shows
what verifying drafts costs there, and how much of the way from no speculation to that ceiling a drafter
covers. The outputs come from a JSON file named by $LOOKAHEAD_ORACLE_OUTPUTS, a list of [prompt ids, output
ids] pairs; `lookahead bench vllm` writes it from its no-speculation run.
"""
import json
import os

ENV = "LOOKAHEAD_ORACLE_OUTPUTS"
_W = 8  # tokens at each end of a prompt that, with its length, key it


class OracleProposer:
    """vLLM custom proposer (same interface as lookahead.vllm.LookaheadProposer)."""

    def __init__(self, vllm_config, *args, **kwargs):
        self.k = int(vllm_config.speculative_config.num_speculative_tokens)
        path = os.environ.get(ENV)
        if not path:
            raise ValueError(f"{ENV} is not set: point it at a JSON file of [prompt ids, output ids] pairs "
                             "(`lookahead bench vllm` writes one from its no-speculation run)")
        try:
            with open(path) as f:
                pairs = json.load(f)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{ENV}={path!r} is not a readable JSON file ({exc})") from None
        self.known = {}
        for prompt, output in pairs:
            self.known.setdefault(self._key(prompt, len(prompt)), []).append([int(t) for t in output])
        self.lengths = sorted({k[0] for k in self.known})

    @staticmethod
    def _key(row, n):
        return n, tuple(row[:min(n, _W)]), tuple(row[max(0, n - _W):n])

    def load_model(self, *args, **kwargs):
        pass

    def _draft(self, row):
        n = len(row)
        for m in self.lengths:  # the prompt is row[:m] for some known prompt length m
            if m > n:
                break
            for output in self.known.get(self._key(row, m), ()):
                done = row[m:]
                if output[:len(done)] == done:
                    return output[len(done):len(done) + self.k]
        return []

    def propose(self, sampled_token_ids, num_tokens_no_spec, token_ids_cpu, slot_mappings=None):
        out = []
        for i, sampled in enumerate(sampled_token_ids):
            n = int(num_tokens_no_spec[i])
            out.append(self._draft(token_ids_cpu[i, :n].tolist()) if len(sampled) else [])
        return out
