#!/usr/bin/env bash
# Starts a throwaway PostgreSQL (Debian's packages; installs them when missing) in a temporary
# directory on a local port, as the `postgres` user when run as root, and prints its URL.
# Usage: url=$(bash scripts/pg-start.sh [PORT]); stop with `bash scripts/pg-start.sh --stop DIR`,
# restart (the server process stops and starts: every connection drops) with `--restart DIR`.
set -euo pipefail
if [ "${1:-}" = "--restart" ]; then
    dir="$2"
    as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
    bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")
    as "$bin/pg_ctl" -D "$dir/data" -m fast -w restart >/dev/null
    exit 0
fi
if [ "${1:-}" = "--stop" ]; then
    dir="$2"
    as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
    bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")
    as "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit 0
fi
port="${1:-55432}"
bin=$(bash "$(dirname "$0")/provision.sh" postgres)
dir=$(mktemp -d /tmp/pg.XXXXXX)
chmod 755 "$dir"
as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
as "$bin/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null
echo "postgresql://postgres@127.0.0.1:$port/postgres $dir"
