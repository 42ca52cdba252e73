"""Code editing with a reference file: the answer mostly copies the file, so drafts copy it too.

    python examples/code_edit.py path/to/file.py "Rename obj to value"
"""
import sys

import lookahead
from lookahead.models import load_model

if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else lookahead.__file__
    instruction = sys.argv[2] if len(sys.argv) > 2 else "Add type hints to every function. Reply with the code only."
    source = open(path, encoding="utf-8").read()[:3000]
    model, tok = load_model()
    prompt = f"{instruction}\n\n```python\n{source}\n```"
    out = lookahead.generate(model, prompt, tokenizer=tok, chat=True, reference=source, max_new_tokens=400)[0]
    print(out.text)
    s = out.stats
    print(f"\n{s.new_tokens} tokens, {s.tokens_per_s:.1f} tokens/s, tau {s.tau:.2f}", file=sys.stderr)
