"""Runs one vLLM engine in this process and prints one JSON line: `python -m lookahead.bench.vllm_run JOB`.

JOB (JSON): {"spec": null | speculative_config, "rounds": [[prompt ids, ...], ...], "max_tokens": 64,
"max_num_seqs": 8, "sequential": false, "model": null}. Each round is one `LLM.generate` call (or, with
sequential, one call per prompt: concurrency 1). Reports per round: outputs, seconds, and the spec-decode
counters (drafts, draft tokens, accepted tokens). vLLM is run in a child process by its callers because an
engine's worker processes can keep an interpreter from exiting; this script shuts the engine down and exits
hard.
"""
import json
import os
import sys
import time


def _counters(llm):
    want = {"vllm:spec_decode_num_drafts": "drafts", "vllm:spec_decode_num_draft_tokens": "draft_tokens",
            "vllm:spec_decode_num_accepted_tokens": "accepted_tokens"}
    out = {v: 0 for v in want.values()}
    for m in llm.get_metrics():
        if m.name in want:
            out[want[m.name]] += int(getattr(m, "value", 0))
    return out


def run(job):
    from vllm import LLM, SamplingParams

    from lookahead.models import resolve_model_path

    path = str(resolve_model_path(job.get("model")))
    t0 = time.perf_counter()
    llm = LLM(model=path, dtype="float32", max_model_len=job.get("max_model_len", 4096),
              max_num_seqs=job.get("max_num_seqs", 8), speculative_config=job.get("spec"), enforce_eager=True,
              seed=0, disable_log_stats=False)
    startup = time.perf_counter() - t0
    sp = SamplingParams(max_tokens=job.get("max_tokens", 64), temperature=0.0)
    llm.generate([{"prompt_token_ids": [1, 2, 3]}], SamplingParams(max_tokens=4), use_tqdm=False)  # warm-up
    rounds = []
    for prompts in job["rounds"]:
        before = _counters(llm)
        t0 = time.perf_counter()
        if job.get("sequential"):
            outs = [llm.generate([{"prompt_token_ids": p}], sp, use_tqdm=False)[0] for p in prompts]
        else:
            outs = llm.generate([{"prompt_token_ids": p} for p in prompts], sp, use_tqdm=False)
        dt = time.perf_counter() - t0
        after = _counters(llm)
        rounds.append({"outputs": [list(o.outputs[0].token_ids) for o in outs], "seconds": dt,
                       **{k: after[k] - before[k] for k in after}})
    try:
        llm.llm_engine.engine_core.shutdown()
    except Exception:  # noqa: BLE001 - exiting anyway
        pass
    return {"startup_s": startup, "rounds": rounds}


def run_in_child(job, timeout=900, env=None):
    """Runs `job` in a fresh interpreter; returns (result dict or None, stdout+stderr text)."""
    import subprocess

    e = dict(os.environ)
    e.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    e.update(env or {})
    # the job goes through stdin: long prompts (templated: 8 x 3k tokens) exceed the argument size limit
    p = subprocess.run([sys.executable, "-m", "lookahead.bench.vllm_run"], input=json.dumps(job),
                       capture_output=True, text=True, timeout=timeout, env=e)
    text = p.stdout + p.stderr
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{\"lookahead_vllm_run\""):
            return json.loads(line)["result"], text
    return None, text


if __name__ == "__main__":
    code = 0
    try:
        res = run(json.loads(sys.stdin.read()))
        print(json.dumps({"lookahead_vllm_run": 1, "result": res}), flush=True)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        import traceback

        traceback.print_exc()
        print(f"vllm_run failed: {exc}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
