#!/bin/sh
# Makes the secrets of deployments/compose.yaml, once: .env (a NATS
# password per role) and tokens.toml (one MCP bearer token, stored as its
# sha256). Prints the new token; it is not kept anywhere else. Existing
# files are left alone, so rerunning is safe.
set -eu
cd "$(dirname "$0")"
umask 077
secret() { head -c 24 /dev/urandom | base64 | tr -d '/+=\n'; }

# A user added in a later release gets its password appended, since
# nats-server refuses a config naming an unset variable.
[ -f .env ] || echo "# NATS passwords of deployments/compose.yaml (made by init.sh)." > .env
for user in SYS ADMIN INGEST INDEXER EXTRACTOR EDGE LAPTOP; do
	if ! grep -q "^CUE_NATS_PASSWORD_$user=" .env; then
		echo "CUE_NATS_PASSWORD_$user=$(secret)" >> .env
		echo "added CUE_NATS_PASSWORD_$user to $(pwd)/.env" >&2
	fi
done

if [ ! -f tokens.toml ]; then
	token=$(secret)
	digest=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
	cat > tokens.toml <<TOML
# MCP bearer tokens of the edges (made by init.sh; see tokens.example.toml).
[[tokens]]
name = "team"
sha256 = "$digest"
repos = ["*"]
TOML
	# The edges run as uid 65534 and must read it.
	chmod 644 tokens.toml
	echo "wrote $(pwd)/tokens.toml; the token (keep it, it is not stored):" >&2
	echo "$token"
fi
