"""A code-completion backend: one model, one shared Drafter (cross-request memory), a tiny HTTP API.

    python examples/code_completion_backend.py --port 8765 &
    curl -s localhost:8765/complete -d '{"prefix": "def fib(n):\\n", "max_new_tokens": 64}'

Completions of similar code (the same file being typed, the same boilerplate) draft from earlier answers.
Serves on 127.0.0.1 only; one request at a time (the Drafter is not thread-safe).
"""
import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import lookahead
from lookahead.models import load_model


def make_handler(model, tok, drafter, lock):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            if self.path != "/complete":
                self.send_error(404, "POST /complete")
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                prefix = req["prefix"]
            except (ValueError, KeyError):
                self.send_error(400, 'send JSON {"prefix": "...", "max_new_tokens": 64}')
                return
            with lock:
                g = lookahead.generate(model, prefix, tokenizer=tok, drafter=drafter, chat=False,
                                       max_new_tokens=int(req.get("max_new_tokens", 64)), stop=req.get("stop"))[0]
            body = json.dumps({"completion": g.text, "tokens": len(g.token_ids), "tau": round(g.stats.tau, 2),
                               "tokens_per_s": round(g.stats.tokens_per_s, 1)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    model, tok = load_model(args.model)
    drafter = lookahead.Drafter(max_draft=16, tree=True, vocab_size=model.config.vocab_size, tokenizer=tok)
    server = HTTPServer(("127.0.0.1", args.port), make_handler(model, tok, drafter, threading.Lock()))
    print(f"serving on http://127.0.0.1:{args.port}/complete")
    server.serve_forever()
