"""The WordLlama oracle: reads a JSON list of texts on stdin and prints, for each, the token ids
Hugging Face `tokenizers` gives with the model's own tokenizer file, and the normalized average
of their rows computed with numpy from the package's weights (as `wordllama`'s `embed` does).
`embedded` is that computation, for wordllama_embeddings_api.py too.

Usage: wordllama_oracle.py (the `wordllama` package is found on PYTHONPATH)."""
import json
import os
import sys

import numpy as np
import wordllama
from safetensors.numpy import load_file
from tokenizers import Tokenizer

package = os.path.dirname(wordllama.__file__)
tokenizer = Tokenizer.from_file(os.path.join(package, "tokenizers", "l2_supercat_tokenizer_config.json"))
(table,) = load_file(os.path.join(package, "weights", "l2_supercat_256.safetensors")).values()
table = table.astype(np.float32)


def embedded(text):
    """The token ids of `text` and its vector: their rows' average, normalized."""
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    v = table[ids].mean(axis=0) if ids else np.zeros(table.shape[1], np.float32)
    norm = np.linalg.norm(v)
    if norm > 0:
        v = v / norm
    return ids, [float(x) for x in v]


if __name__ == "__main__":
    out = []
    for text in json.load(sys.stdin):
        ids, vector = embedded(text)
        out.append({"ids": ids, "vector": vector})
    json.dump({"package": package, "texts": out}, sys.stdout)
