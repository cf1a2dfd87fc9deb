#!/usr/bin/env bash
# A local demo of N=2 replicas: PostgreSQL (scripts/pg-start.sh, Debian's packages) for held
# approvals, two HR servers sharing it, the HR data file and the requestState key, and a
# 2026-07-28 client (curl) whose leave request is asked for on replica A and approved on
# replica B. Prints each step; exits non-zero if one differs from what it says.
# `scripts/replicas.sh --serve` leaves both replicas running (Ctrl-C stops them).
. "$(dirname "$0")/lib/prelude.sh"
build_examples --bin hr-mcp
read -r pg_url pg_dir < <(bash scripts/pg-start.sh 18959)
work="$(mktemp -d)"
on_exit 'bash scripts/pg-start.sh --stop "$pg_dir"'
on_exit 'rm -rf "$work"'
secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export HR_DB="$work/hr.sqlite" HR_APPROVALS="$pg_url" \
    HR_STATE_KEY="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
    HR_OAUTH_ISSUER=https://login.example.test HR_OAUTH_HS256_SECRET="$secret" \
    HR_OAUTH_RESOURCE=https://hr.example.test/mcp
for port in 18957 18958; do
    target/debug/hr-mcp --http "127.0.0.1:$port" &
done
for port in 18957 18958; do
    for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
done
echo "replica A: http://127.0.0.1:18957/mcp, replica B: http://127.0.0.1:18958/mcp, approvals in $pg_url"
if [ "${1:-}" = "--serve" ]; then wait; exit 0; fi

token=$(python3 - "$secret" <<'PY'
import base64, hashlib, hmac, json, sys, time
b64 = lambda v: base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()
now = int(time.time())
unsigned = b64({"alg": "HS256", "typ": "JWT"}) + "." + b64({
    "iss": "https://login.example.test", "aud": "https://hr.example.test/mcp", "sub": "K-001",
    "scope": "hr hr.cuti.baca hr.cuti.ajukan", "iat": now, "exp": now + 600})
sig = hmac.new(sys.argv[1].encode(), unsigned.encode(), hashlib.sha256).digest()
print(unsigned + "." + base64.urlsafe_b64encode(sig).rstrip(b"=").decode())
PY
)
call() { # port body
    curl -s -X POST "http://127.0.0.1:$1/mcp" -H "authorization: Bearer $token" \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: ajukan-cuti' \
        -d "$2" | python3 -c '
import json, sys
body = sys.stdin.read()  # plain JSON, or an event stream whose last data line is the answer
events = [l[5:].strip() for l in body.splitlines() if l.startswith("data:") and l[5:].strip()]
print(events[-1] if events else body.strip())'
}
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
args='"name":"ajukan-cuti","arguments":{"mulai":"2027-06-01","hari":1}'
first=$(call 18957 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{$meta,$args}}")
state=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1])["result"]; assert r["resultType"]=="input_required", r; print(r["requestState"])' "$first")
echo "A asked: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["result"]["inputRequests"]["approval"]["params"]["message"])' "$first")"
answer='"inputResponses":{"approval":{"action":"accept","content":{"approve":true}}}'
second=$(call 18958 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{$meta,$args,$answer,\"requestState\":\"$state\"}}")
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["result"]; assert r["isError"] is False, r; print("B ran it:", r["structuredContent"])' "$second"
again=$(call 18957 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{$meta,$args,$answer,\"requestState\":\"$state\"}}")
python3 -c 'import json,sys; r=json.loads(sys.argv[1])["result"]; assert r["isError"] is True, r; print("A, same approval again:", r["content"][0]["text"])' "$again"
