"""Building a corpus index from files with a HF tokenizer (what `lookahead index build` runs)."""
import json
from pathlib import Path


def iter_texts(paths, fields=("output",)):
    """(name, text) for each text file, or for each listed field of each record of a *.jsonl file."""
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(f"no such input file: {p}")
        if p.suffix == ".jsonl":
            with open(p) as f:
                for i, line in enumerate(f):
                    if not line.strip():
                        continue
                    rec = json.loads(line)
                    for fld in fields:
                        if fld in rec and isinstance(rec[fld], str):
                            yield f"{p}:{i + 1}:{fld}", rec[fld]
        else:
            yield str(p), p.read_text(encoding="utf-8", errors="replace")


def build_from_files(paths, tokenizer=None, fields=("output",)):
    """Tokenizes and indexes files; shows a progress bar over documents. Returns a CorpusIndex."""
    from tqdm import tqdm

    from .index import build_corpus, vocab_fingerprint
    from .models import load_tokenizer

    tok = load_tokenizer(tokenizer)
    texts = list(iter_texts(paths, fields))
    bar = tqdm(total=len(texts), desc="indexing", unit="doc")

    def docs():
        for _, text in texts:
            yield tok(text, add_special_tokens=False).input_ids
            bar.update(1)

    try:
        return build_corpus(docs(), vocab_size=len(tok), fingerprint=vocab_fingerprint(tok),
                            tokenizer_name=str(getattr(tok, "name_or_path", ""))[-64:])
    finally:
        bar.close()
