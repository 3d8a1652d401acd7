#!/bin/sh
# Smoke test of deployments/compose.yaml: waits until an edge has
# materialised the ingested repo, then asks it over MCP Streamable HTTP
# with a bearer token: initialize, notifications/initialized, then
# tools/call read_context with the Mcp-Session-Id the edge handed out.
# Usage: deployments/smoke/smoke.sh TOKEN [EDGE_URL] [QUERY]
set -eu
TOKEN=${1:?usage: smoke.sh TOKEN [EDGE_URL] [QUERY] (the token init.sh printed)}
EDGE=${2:-http://127.0.0.1:8081}
QUERY=${3:-JetStream stream topology}
H=$(mktemp)
trap 'rm -f "$H" "$H.out"' EXIT

echo "== waiting for $EDGE/readyz (cue_docs applied > 0)"
i=0
until curl -fsS "$EDGE/readyz" 2>/dev/null | grep -q '"feed":"cue_docs","applied":[1-9]'; do
	i=$((i + 1))
	[ "$i" -le 180 ] || { echo "edge not ready after 180 s:"; curl -sS "$EDGE/readyz"; exit 1; }
	sleep 1
done
curl -fsS "$EDGE/readyz"; echo

mcp() { # mcp JSON [SESSION]
	curl -fsS "$EDGE/mcp" -D "$H" \
		-H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		${2:+-H "Mcp-Session-Id: $2"} \
		-d "$1"
}

echo "== without a token (expect 401)"
curl -sS -o /dev/null -w '%{http_code}\n' "$EDGE/mcp" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'

echo "== initialize"
mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
echo
SESSION=$(tr -d '\r' < "$H" | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')
[ -n "$SESSION" ] || { echo "no Mcp-Session-Id in the answer:"; cat "$H"; exit 1; }
echo "Mcp-Session-Id: $SESSION"
mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$SESSION" >/dev/null

echo "== tools/call read_context \"$QUERY\""
# The edge may still be applying the first scan: ask until a hit comes.
i=0
while :; do
	mcp "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_context\",\"arguments\":{\"query\":\"$QUERY\",\"limit\":3}}}" "$SESSION" > "$H.out"
	grep -q '"isError":true' "$H.out" && { cat "$H.out"; echo "FAIL: read_context returned an error"; rm -f "$H.out"; exit 1; }
	grep -q '\\"path\\"' "$H.out" && break
	i=$((i + 1))
	[ "$i" -le 60 ] || { cat "$H.out"; echo "FAIL: read_context found nothing in 60 s"; rm -f "$H.out"; exit 1; }
	sleep 1
done
cat "$H.out"; echo
rm -f "$H.out"
echo "== smoke test passed"
