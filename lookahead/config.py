"""`DrafterConfig`: the drafter's tuning knobs, checked where they are made (a bad one never reaches native code)."""
from dataclasses import dataclass
import math

import numpy as np

from .draft import MAX_DRAFT_LIMIT
from .index.memory import MAX_SEGMENTS
from .index.propose import MAX_BACKOFF  # the most shorter contexts a tier reads

MAX_OCCURRENCES = 256  # DrafterConfig.occurrences: the work arrays grow with it


@dataclass(frozen=True)
class DrafterConfig:
    """Tuning knobs; the defaults were chosen with `lookahead bench replay` on the public workloads."""
    occurrences: int = 12       # occurrences of the matched suffix read per tier and context length
    min_prob: float = 0.0       # stop a branch below this estimated probability of being reached
    # the larger alpha, the fewer of a tree's nodes go to thinly attested branches (1.0 -> 3.0, with counted
    # weights: +0.2 to +1.2% tau on every workload's tree); a chain drafted without min_prob does not depend on it
    alpha: float = 3.0          # unseen-continuation mass at a match of length 0 ...
    half_len: float = 4.0       # ... halved at this match length
    window: int = 256           # tokens re-matched when a cursor into a new memory segment is created
    backoff: int = None         # shorter contexts (suffix-link ancestors) also drafted from, per tier (0..4),
                                # while the longer one occurs fewer than `occurrences` times. None: 1 for a
                                # tree, 0 for a chain, which follows the heaviest path: the shorter contexts'
                                # light occurrences seldom change it (without them chain tau moves -0.5% to
                                # +0.0%, tree tau -0.1% to -1.9%), and reading them is a third of a chain's
                                # proposal
    backoff_ratio: float = 0.1  # ... and is at least this fraction of the longest match's length (0 = any):
                                # a tenth as long weighs 1% (power 2), reading it cost a fifth of a proposal
    backoff_depth: int = 8      # tokens read after each occurrence of a shorter context (a longest match's: all
                                # the budget); deeper, its low weight never decides a draft (tau 4th digit)
    power: float = 2.0          # an occurrence of a match of length L weighs (L / longest match)^power
    self_weight: float = 4.0    # extra weight of the request's own text (prompt, reference, output) over memory
    normalize: bool = True      # split each matched context's weight over its occurrences (a mixture of
                                # per-context distributions) instead of counting occurrences: a context seen
                                # often no longer outweighs a longer one seen once, and reading 12 occurrences
                                # instead of 4 costs no weight (code_edit tree / chain 10.303 / 9.833 -> 10.433
                                # / 9.928, completion 1.884 -> 1.939; multi_turn tree 7.959 -> 7.879)
    copy_weight: float = 4.0    # weight of where the request's copy of its own text resumes (index/pointer.py);
                                # 0 = off
    analogy_weight: float = 8.0  # weight of where a value analogous to an earlier one is copied from, after
                                 # the text broke off from the earlier one (index/analogy.py); 0 = off
    substitute: bool = True     # learn tokens the output writes in place of an input token (a rename, a
                                # re-indent) and draft copies of the input with them (index/substitute.py);
                                # with learn, a finished request's confirmed pairs start the next one's
    value_ends: bool = True     # learn where values copied from the input end and the template resumes, and
                                # fork drafts of a value back to the template there (index/value_end.py);
                                # with learn, a finished request's well-voted pairs start the next one's
    response_start: bool = True  # a response's first draft: the opening earlier responses began with (a code
                                 # fence), then the input from where that opening occurs in it (the code block
                                 # the prompt quoted); the request's text gets no extra weight there. The
                                 # opening is what followed the prompt's end in memory or a corpus (a chat
                                 # template's assistant turn) or, after a raw prompt, how the newest responses
                                 # in memory opened (index/opening.py)
    template_weight: float = 2.0  # weight of what followed a key in memory or a corpus after the value the
                                  # request just wrote (index/template.py); 0 = off
    predict_weight: float = 4.0  # where a draft copies a template (an earlier object of the output, or the
                                 # prompt's example) up to a value the analogy placed in a record, the next
                                 # record's value is drafted with this times the copy's weight
                                 # (index/analogy.py: predicted); 0 = off
    memory_tokens: int = 4_000_000
    memory_segments: int = 4

    def __post_init__(self):
        def check(ok, name, what):
            if not ok:
                raise ValueError(f"DrafterConfig.{name} must be {what}, got {getattr(self, name)!r}")

        def is_int(name, lo, hi):
            v = getattr(self, name)
            check(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and lo <= v <= hi, name,
                  f"an int in {lo}..{hi}")

        def is_real(name, ok, what):
            v = getattr(self, name)
            check(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and ok(float(v)), name, what)

        is_int("occurrences", 1, MAX_OCCURRENCES)
        is_real("min_prob", lambda v: 0.0 <= v < 1.0, "in [0, 1)")
        is_real("alpha", lambda v: 0.0 < v < math.inf, "finite and > 0")
        is_real("half_len", lambda v: 0.0 < v < math.inf, "finite and > 0")
        is_int("window", 1, 1 << 20)
        if self.backoff is not None:
            is_int("backoff", 0, MAX_BACKOFF)
        is_real("backoff_ratio", lambda v: 0.0 <= v <= 1.0, "in [0, 1] (0 = read any shorter context)")
        is_int("backoff_depth", 1, MAX_DRAFT_LIMIT)
        for name in ("power", "self_weight", "copy_weight", "analogy_weight", "template_weight",
                     "predict_weight"):
            is_real(name, lambda v: 0.0 <= v < math.inf, "finite and >= 0 (0 = off)")
        for name in ("substitute", "value_ends", "response_start", "normalize"):
            check(isinstance(getattr(self, name), (bool, np.bool_)), name, "True or False")
        is_int("memory_tokens", 0, 1 << 40)
        is_int("memory_segments", 1, MAX_SEGMENTS)
