"""Python tiktoken's o200k_base counts of the texts on stdin (a JSON array), as a JSON array.

The ranks come from the file given as the first argument (the one compiled into tiktoken-rs),
put in a fresh tiktoken cache under the name tiktoken gives OpenAI's published file; tiktoken
reads it only if it hashes to the hash it expects of that file, so no network is needed and a
different file is refused.
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile

URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

cache = tempfile.mkdtemp()
shutil.copy(sys.argv[1], os.path.join(cache, hashlib.sha1(URL.encode()).hexdigest()))
os.environ["TIKTOKEN_CACHE_DIR"] = cache

import tiktoken  # noqa: E402 (the cache directory is read at first use)

encoding = tiktoken.get_encoding("o200k_base")
texts = json.load(sys.stdin)
print(json.dumps([len(encoding.encode_ordinary(t)) for t in texts]))
shutil.rmtree(cache)
