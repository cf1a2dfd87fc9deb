#!/usr/bin/env bash
# One authenticated employee attacks the HR MCP server while another keeps working; each phase
# prints the victim's figures (p99 of her calls, failures, the server's peak memory) and whether
# the server held (scripts/attack/attack.py for HTTP, scripts/attack/stdio.py for stdio).
# `scripts/attack.sh` runs the full version on a release build (about 3 minutes);
# `scripts/attack.sh --short` a smaller one on the debug build (CI). Exits non-zero when a phase
# fails.
. "$(dirname "$0")/lib/prelude.sh"
if [ "${1:-}" = "--short" ]; then
    profile=debug; flag=--short; lines=30000; slow_ms=3000
    build_examples --bin hr-mcp
else
    profile=release; flag=; lines=300000; slow_ms=5000
    cargo build -q --release -p examples --bin hr-mcp
fi
server="$root/target/$profile/hr-mcp"
work="$(mktemp -d)"
on_exit 'rm -rf "$work"'
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export HR_DB="$work/hr.sqlite" HR_APPROVALS="sqlite:$work/approvals.sqlite" HR_SLOW_HISTORY_MS=$slow_ms
export HR_OAUTH_ISSUER=https://login.example.test HR_OAUTH_HS256_SECRET=attack-secret-0123456789abcdef-0123
export HR_OAUTH_RESOURCE="http://127.0.0.1:$port/mcp" HR_STATE_KEY=attack-state-key-0123456789abcdef-0123
(ulimit -n 4096; exec "$server" --http "127.0.0.1:$port") 2>"$work/server.log" & pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
status=0
python3 scripts/attack/attack.py 127.0.0.1 "$port" "$pid" "$work/approvals.sqlite" "$server" $flag || status=1
kill "$pid"; wait "$pid" 2>/dev/null || true
echo "== 7. stdio: pipelined mixed lines"
HR_SLOW_HISTORY_MS= HR_DB="$work/hr-stdio.sqlite" python3 scripts/attack/stdio.py "$lines" "$server" || status=1
exit $status
