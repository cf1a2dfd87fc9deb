#!/usr/bin/env bash
# What the tests need beyond Rust, installed on first use and reused after: the tests call this
# themselves, so `cargo test --workspace --all-features` passes on a fresh machine with nothing
# done first. Prints what the caller needs; exits non-zero, saying what is missing and how to
# get it, when it cannot install.
#
#   provision.sh python     the pinned Python packages (scripts/requirements.txt), installed
#                           with pip into target/python; prints that directory (for PYTHONPATH)
#   provision.sh python-otel the telemetry test's packages (scripts/requirements-otel.txt:
#                           FastMCP's client, which needs another `mcp`, and OpenTelemetry's
#                           SDK and protobuf types) into target/python-otel; prints that directory
#   provision.sh python-tasks the tasks test's packages (scripts/requirements-tasks.txt:
#                           FastMCP's client with fastmcp-tasks, which pins its own FastMCP)
#                           into target/python-tasks; prints that directory
#   provision.sh python-mcp2 the official Python MCP client's current release
#                           (scripts/requirements-mcp2.txt) into target/python-mcp2
#   provision.sh typescript-client the official TypeScript MCP client, v2 (npm, pinned) in
#                           target/npm-client; prints its node_modules directory
#   provision.sh chromium   Debian's Chromium (apt-get, as root); prints its path
#   provision.sh chromedriver Debian's ChromeDriver for Chromium (apt-get, as root); prints its path
#   provision.sh postgres   Debian's PostgreSQL server (apt-get, as root); prints its bin dir
#   provision.sh valgrind   Debian's valgrind (apt-get, as root), for the speed gate; prints its path
#   provision.sh freedict-eng-ind Debian's English-Indonesian FreeDict dictionary (apt-get, as
#                           root), the search tests' glossary; prints its path without extension
#   provision.sh everything the official MCP reference server `@modelcontextprotocol/server-everything`
#                           (npm, pinned) in target/npm-everything; prints the script to run with node
#
# Concurrent callers wait on one lock per thing, and on one lock for apt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
apt_install() { # package
    if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
        echo "$1 is missing: install it with \`apt-get install $1\` (as root), then run the tests again" >&2
        exit 1
    fi
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo -n"
    (
        flock 8
        (${sudo} apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq "$1") >/dev/null 2>&1 \
            || { echo "could not install $1 with apt-get: install it by hand, then run the tests again" >&2; exit 1; }
    ) 8>/tmp/tool-toolkit-apt.lock
}
case "${1:-}" in
python | python-otel | python-tasks | python-mcp2)
    dir="$target/$1"
    requirements="$root/scripts/requirements${1#python}.txt"
    want="$(sha256sum "$requirements" | cut -d' ' -f1)"
    (
        flock 9
        if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$want" ]; then
            if ! python3 -m pip --version >/dev/null 2>&1; then
                echo "python3 with pip is missing: install it with \`apt-get install python3-pip\`" >&2
                exit 1
            fi
            rm -rf "$dir"
            python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
                --root-user-action=ignore --target "$dir" --requirement "$requirements" >&2
            echo "$want" > "$dir/.installed"
        fi
    ) 9>"$target/$1.lock"
    echo "$dir"
    ;;
chromium)
    find() { command -v chromium || command -v chromium-browser || true; }
    if [ -z "$(find)" ]; then
        ( flock 9; [ -n "$(find)" ] || apt_install chromium ) 9>/tmp/tool-toolkit-chromium.lock
    fi
    find
    ;;
chromedriver)
    find() { command -v chromedriver || true; }
    if [ -z "$(find)" ]; then
        ( flock 9; [ -n "$(find)" ] || apt_install chromium-driver ) 9>/tmp/tool-toolkit-chromium.lock
    fi
    find
    ;;
postgres)
    find() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
    if [ -z "$(find)" ] || [ ! -x "$(find)/initdb" ]; then
        ( flock 9; [ -x "$(find)/initdb" ] || apt_install postgresql ) 9>/tmp/tool-toolkit-postgres.lock
    fi
    find
    ;;
valgrind)
    if ! command -v valgrind >/dev/null; then
        ( flock 9; command -v valgrind >/dev/null || apt_install valgrind ) 9>/tmp/tool-toolkit-valgrind.lock
    fi
    command -v valgrind
    ;;
freedict-eng-ind)
    dictionary=/usr/share/dictd/freedict-eng-ind
    if [ ! -f "$dictionary.index" ]; then
        ( flock 9; [ -f "$dictionary.index" ] || apt_install dict-freedict-eng-ind ) 9>/tmp/tool-toolkit-freedict.lock
    fi
    echo "$dictionary"
    ;;
everything)
    dir="$target/npm-everything"
    version="2026.8.31"
    (
        flock 9
        if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$version" ]; then
            if ! command -v npm >/dev/null; then
                echo "npm is missing: install Node.js with npm (\`apt-get install nodejs npm\`)" >&2
                exit 1
            fi
            rm -rf "$dir" && mkdir -p "$dir"
            (cd "$dir" && npm install --silent --no-audit --no-fund \
                "@modelcontextprotocol/server-everything@$version" >/dev/null) \
                || { echo "npm could not install @modelcontextprotocol/server-everything@$version" >&2; exit 1; }
            echo "$version" > "$dir/.installed"
        fi
    ) 9>"$target/npm-everything.lock"
    echo "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ;;
typescript-client)
    dir="$target/npm-client"
    version="2.4.0"
    (
        flock 9
        if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$version" ]; then
            if ! command -v npm >/dev/null; then
                echo "npm is missing: install Node.js with npm (\`apt-get install nodejs npm\`)" >&2
                exit 1
            fi
            rm -rf "$dir" && mkdir -p "$dir"
            (cd "$dir" && npm install --silent --no-audit --no-fund \
                "@modelcontextprotocol/client@$version" >/dev/null) \
                || { echo "npm could not install @modelcontextprotocol/client@$version" >&2; exit 1; }
            echo "$version" > "$dir/.installed"
        fi
    ) 9>"$target/npm-client.lock"
    echo "$dir/node_modules"
    ;;
*)
    echo "usage: provision.sh python|python-otel|python-tasks|python-mcp2|typescript-client|chromium|chromedriver|postgres|valgrind|everything" >&2
    exit 2
    ;;
esac
