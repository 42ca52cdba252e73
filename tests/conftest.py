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
