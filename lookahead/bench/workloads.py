"""The public workloads shipped in lookahead/data (copied from the project's benchmark set; open licences),
tokenized once with the default model's tokenizer and cached as .npz next to the model."""
import hashlib
import json
from importlib import resources
from pathlib import Path

import numpy as np

WORKLOADS = ("code_edit", "completion", "templated", "multi_turn")


def data_path(name):
    return Path(str(resources.files("lookahead.data").joinpath(name)))


def read_jsonl(path):
    recs = []
    with open(path) as f:
        for i, line in enumerate(f):
            if line.strip():
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{i + 1}: not JSON ({exc})") from None
    return recs


def _model_outputs(name, limit):
    """`model:<workload>`: the default model's own greedy outputs for that workload's chat-templated prompts
    (model_outputs.jsonl, already tokenized), i.e. what a drafter sees when serving that model."""
    wl = name.split(":", 1)[1]
    if wl not in WORKLOADS:
        raise FileNotFoundError(f"no workload {name!r}: use model:<one of {', '.join(WORKLOADS)}>")
    recs = [r for r in read_jsonl(data_path("model_outputs.jsonl")) if r["id"].split("-")[0] == wl]
    out = []
    for r in recs[:limit] if limit else recs:
        out.append({"id": r["id"], "session": r["id"].rsplit("-t", 1)[0], "prompt": None, "output": r.get("output_text"),
                    "prompt_ids": np.asarray(r["prompt_token_ids"], np.int32),
                    "output_ids": np.asarray(r["output_token_ids"], np.int32)})
    return out


def load_workload(name_or_path, tokenizer, limit=None):
    """Records of a workload as dicts with int32 arrays `prompt_ids`, `output_ids` and a `session` key.

    `name_or_path`: a shipped workload name, `model:<name>` (the default model's own outputs for that
    workload's prompts, which is what a drafter sees in serving), or a JSONL file with `prompt`, `output`
    (and optional `session`)."""
    if str(name_or_path).startswith("model:"):
        return _model_outputs(str(name_or_path), limit)
    path = data_path(f"{name_or_path}.jsonl") if name_or_path in WORKLOADS else Path(name_or_path)
    if not path.exists():
        raise FileNotFoundError(f"no workload {name_or_path!r}: use one of {', '.join(WORKLOADS)} or a JSONL path")
    raw = path.read_bytes()
    from lookahead.models import cache_dir

    key = hashlib.sha256(raw + tokenizer.name_or_path.encode() + str(len(tokenizer)).encode()).hexdigest()[:16]
    cache = cache_dir() / "bench" / f"{path.stem}-{key}.npz"
    recs = read_jsonl(path)
    for i, r in enumerate(recs):
        if "prompt" not in r or "output" not in r:
            raise ValueError(f"{path}: record {i + 1} lacks 'prompt' or 'output'")
    if cache.exists():
        z = np.load(cache)
        flat, offs = z["flat"], z["offs"]
    else:
        seqs = []
        for r in recs:
            seqs.append(tokenizer(r["prompt"], add_special_tokens=False).input_ids)
            seqs.append(tokenizer(r["output"], add_special_tokens=False).input_ids)
        offs = np.cumsum([0] + [len(s) for s in seqs])
        flat = np.concatenate([np.asarray(s, np.int32) for s in seqs]) if seqs else np.empty(0, np.int32)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, flat=flat, offs=offs)
    out = []
    for i, r in enumerate(recs[:limit] if limit else recs):
        out.append({"id": r.get("id", i), "session": r.get("session", r.get("id", i)),
                    "prompt": r["prompt"], "output": r["output"],
                    "prompt_ids": flat[offs[2 * i]:offs[2 * i + 1]], "output_ids": flat[offs[2 * i + 1]:offs[2 * i + 2]]})
    return out


def records_text(records):
    """Every record's prompt then output, one record after another: int32 [sum of their lengths]."""
    parts = [x for r in records for x in (r["prompt_ids"], r["output_ids"])]
    return np.concatenate(parts).astype(np.int32, copy=False) if parts else np.empty(0, np.int32)
