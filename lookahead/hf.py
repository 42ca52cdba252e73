"""A transformers CandidateGenerator backed by a lookahead Drafter, for `model.generate(...)` users.

    with lookahead.hf.speculate(model, drafter) as gen_kwargs:
        out = model.generate(input_ids, max_new_tokens=256, **gen_kwargs)

What transformers allows, and what it does not: its assisted generation runs at batch size 1 and verifies
chains only, so the adapter sends the draft's best root path (trees are for `lookahead.generate`); it is entered
through prompt lookup's switch (`prompt_lookup_num_tokens`), and `speculate` swaps in this generator for the
duration. Each `generate` call is one drafter request: its prompt and output feed cross-request memory.
"""
import contextlib

import torch


class LookaheadCandidateGenerator:
    """transformers' CandidateGenerator protocol: get_candidates(input_ids) and update_candidate_strategy()."""

    requires_model_outputs = False  # transformers asks before each step

    def __init__(self, drafter, num_output_tokens=16, max_length=None):
        self.drafter = drafter
        self.num_output_tokens = int(num_output_tokens)
        self.max_length = max_length
        self.handle = None
        self.seen = 0

    def get_candidates(self, input_ids, **kwargs):
        if input_ids.shape[0] != 1:
            raise ValueError("transformers' assisted generation runs at batch size 1; use lookahead.generate for "
                             "batches")
        ids = input_ids[0]
        n = ids.shape[0]
        if self.handle is None:
            self.handle = self.drafter.begin(ids.tolist())
        elif n > self.seen:
            self.drafter.append(self.handle, ids[self.seen:].tolist())
        self.seen = n
        budget = self.num_output_tokens
        if self.max_length is not None:
            budget = min(budget, self.max_length - n - 1)
        if budget < 1:
            return input_ids, None
        path = self.drafter.propose(self.handle, budget).best_path()
        if len(path) == 0:
            return input_ids, None
        cand = torch.as_tensor(path, dtype=input_ids.dtype, device=input_ids.device).unsqueeze(0)
        return torch.cat([input_ids, cand], dim=1), None

    def update_candidate_strategy(self, input_ids, scores, num_matches):
        pass  # rejected tokens never reach the drafter: the next call appends only what input_ids holds

    def finish(self):
        if self.handle is not None:
            self.drafter.end(self.handle)
            self.handle = None


@contextlib.contextmanager
def speculate(model, drafter, num_output_tokens=16):
    """Within the block, `model.generate(**gen_kwargs)` drafts with `drafter`; yields the extra kwargs."""
    original = model._get_candidate_generator
    made = []

    def _candidate_generator(generation_config, input_ids, *args, **kwargs):
        g = LookaheadCandidateGenerator(drafter, num_output_tokens, generation_config.max_length)
        made.append(g)
        return g

    model._get_candidate_generator = _candidate_generator
    try:
        yield {"prompt_lookup_num_tokens": num_output_tokens}
    finally:
        model._get_candidate_generator = original
        for g in made:
            g.finish()
