"""A proposer that fails on purpose every other step (imported by vLLM's worker from tests/ via PYTHONPATH)."""
from lookahead.vllm import LookaheadProposer


class FaultyProposer(LookaheadProposer):
    def _propose(self, *args, **kwargs):
        if self.step % 2 == 1:
            self.step += 1
            raise RuntimeError("proposer failure on purpose")
        return super()._propose(*args, **kwargs)
