"""An OpenAI-compatible embeddings API (`POST /v1/embeddings`) serving the WordLlama model the
`wordllama` package ships, computed by wordllama_oracle.py's `embedded` (Hugging Face
`tokenizers`, numpy over the package's weights): the model behind a network call, offline, for
scripts/search-embeddings.sh.

Usage: wordllama_embeddings_api.py PORT (the `wordllama` package is found on PYTHONPATH)."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wordllama_oracle import embedded  # noqa: E402


def embed(text):
    return embedded(text)[1]


class Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(texts)]
        answer = json.dumps({"object": "list", "data": data, "model": body.get("model", "wordllama"),
                             "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Api).serve_forever()
