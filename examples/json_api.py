"""A templated JSON API: records in, fixed-key JSON out. After the first answer, later ones draft most of their
tokens (keys, punctuation, layout) from cross-request memory; a corpus index of past answers can seed that.

    python examples/json_api.py
"""
import json
import sys

import lookahead
from lookahead.models import load_model

RECORDS = [
    "Package: curl\nVersion: 7.88.1-10\nArchitecture: amd64\nMaintainer: Alessandro Ghedini <ghedo@debian.org>",
    "Package: wget\nVersion: 1.21.3-1\nArchitecture: amd64\nMaintainer: Noël Köthe <noel@debian.org>",
    "Package: jq\nVersion: 1.6-2.1\nArchitecture: amd64\nMaintainer: ChangZhuo Chen <czchen@debian.org>",
]
INSTRUCTION = ("Convert this Debian package record into a JSON object with exactly the keys package, version, "
               "architecture, maintainer_name, maintainer_email. Reply with the JSON only.\n\n")

if __name__ == "__main__":
    model, tok = load_model()
    drafter = lookahead.Drafter(max_draft=16, tree=True, vocab_size=model.config.vocab_size, tokenizer=tok)
    for rec in RECORDS:
        out = lookahead.generate(model, INSTRUCTION + rec, tokenizer=tok, chat=True, drafter=drafter,
                                 max_new_tokens=120)[0]
        text = out.text.strip().strip("`").removeprefix("json").strip()
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = text
        print(json.dumps(obj) if not isinstance(obj, str) else obj)
        print(f"  tau {out.stats.tau:.2f}, {out.stats.tokens_per_s:.1f} tokens/s", file=sys.stderr)
