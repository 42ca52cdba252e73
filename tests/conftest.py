import os
import sys

# Triton kernels run on the CPU interpreter unless a GPU run asks otherwise (set before triton is imported)
if not os.environ.get("LOOKAHEAD_TEST_CUDA"):
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))
settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def tokenizer():
    pytest.importorskip("transformers")
    from lookahead.models import load_tokenizer

    return load_tokenizer()


@pytest.fixture(scope="session")
def smollm():
    """(model, tokenizer): the real default model, float32 on CPU."""
    pytest.importorskip("transformers")
    import torch

    from lookahead.models import load_model

    torch.set_num_threads(2)
    return load_model()


@pytest.fixture(scope="session")
def recorded():
    """model_outputs.jsonl records: chat-templated prompt ids and the model's own greedy output."""
    from lookahead.bench.workloads import data_path, read_jsonl

    return read_jsonl(data_path("model_outputs.jsonl"))
