"""Python tiktoken's o200k_base counts of the texts on stdin (a JSON array), as a JSON array.

The ranks come from the file given as the first argument: each token's bytes in hex, one line
per rank in order, as tiktoken-rs holds them. They are written in tiktoken's own format (base64
and rank) into a fresh tiktoken cache under the name tiktoken gives OpenAI's published file;
tiktoken reads it only if it hashes to the hash it expects of that file, so no network is needed
and different ranks are refused.
"""
import base64
import hashlib
import json
import os
import shutil
import sys
import tempfile

URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

cache = tempfile.mkdtemp()
with open(sys.argv[1]) as hex_lines, open(os.path.join(cache, hashlib.sha1(URL.encode()).hexdigest()), "wb") as out:
    for rank, line in enumerate(hex_lines):
        out.write(base64.b64encode(bytes.fromhex(line.strip())) + b" %d\n" % rank)
os.environ["TIKTOKEN_CACHE_DIR"] = cache

import tiktoken  # noqa: E402 (the cache directory is read at first use)

encoding = tiktoken.get_encoding("o200k_base")
texts = json.load(sys.stdin)
print(json.dumps([len(encoding.encode_ordinary(t)) for t in texts]))
shutil.rmtree(cache)
