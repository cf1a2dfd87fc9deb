# The shared start of every script: sourced as `. "$(dirname "$0")/lib/prelude.sh"`.
# Strict mode, the checkout's root as the working directory, and the helpers the scripts share.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"

# Every background job of the script is stopped when it exits, however it exits, and then what
# the script asked with `on_exit 'command'`, in order.
cleanups=()
on_exit() { cleanups+=("$1"); }
run_cleanups() {
    kill $(jobs -p) 2>/dev/null || true
    local c
    for c in "${cleanups[@]}"; do eval "$c" || true; done
}
trap run_cleanups EXIT

# Waits until something listens on 127.0.0.1:PORT (at most SECONDS, default 10).
wait_port() { # port [seconds]
    local tries=$(( ${2:-10} * 10 ))
    for _ in $(seq "$tries"); do
        (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}

# Builds the examples' binaries the script runs (debug), unless TOOLKIT_PREBUILT is set: CI runs
# the scripts on the binaries its test command built (with the workspace's features), rather
# than building them again with others.
build_examples() { # --bin NAME...
    [ -n "${TOOLKIT_PREBUILT:-}" ] || cargo build -q -p examples "$@"
}

# A TCP port nothing listens on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Where downloads and builds that outlive a checkout are kept (not under target/: a fresh
# clone reuses them).
cache_dir() {
    local dir="${TOOLKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tool-toolkit}"
    mkdir -p "$dir"
    echo "$dir"
}
