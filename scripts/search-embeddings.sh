#!/usr/bin/env bash
# The held-out tool-search evaluation (tests/tests/product/search.rs: 117 requests in English and
# Indonesian over the 500-tool catalog) ranked by an embedding model behind an OpenAI-compatible
# embeddings API, asked as a host asks it (`tool-runtime-rig`'s `Embeddings`, an
# `EmbeddingCache`): recall@1 and @5 per language, by meaning and words, without and with the
# FreeDict glossary, beside the lexical default in the same run. Opt-in, not part of CI.
#
#   EMBEDDINGS_URL=https://api.openai.com/v1 EMBEDDINGS_MODEL=text-embedding-3-small \
#   EMBEDDINGS_KEY="$OPENAI_API_KEY" bash scripts/search-embeddings.sh
#
# With no EMBEDDINGS_URL it serves, on a local port, the WordLlama model the `wordllama` Python
# package ships (tests/oracle/wordllama_embeddings_api.py): the network path, offline, whose
# figures can be set beside the in-process WordLlama's.
. "$(dirname "$0")/lib/prelude.sh"
if [ -z "${EMBEDDINGS_URL:-}" ]; then
    python_dir="$(bash scripts/provision.sh python)"
    port="$(free_port)"
    PYTHONPATH="$python_dir" python3 tests/oracle/wordllama_embeddings_api.py "$port" &
    api=$!
    trap 'kill $api 2>/dev/null' EXIT
    wait_port "$port" 60
    export EMBEDDINGS_URL="http://127.0.0.1:$port/v1" EMBEDDINGS_MODEL=wordllama-l2-supercat-256
fi
cargo test -q -p tests --all-features --test product held_out_requests_ranked_by_an_embeddings_api \
    -- --ignored --nocapture
