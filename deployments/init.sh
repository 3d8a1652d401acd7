#!/bin/sh
# Makes the secrets of deployments/compose.yaml, once: .env (a NATS
# password per role) and tokens.toml (one MCP bearer token, stored as its
# sha256). Prints the new token; it is not kept anywhere else. Existing
# files are left alone, so rerunning is safe.
set -eu
cd "$(dirname "$0")"
umask 077
secret() { head -c 24 /dev/urandom | base64 | tr -d '/+=\n'; }

if [ ! -f .env ]; then
	{
		echo "# NATS passwords of deployments/compose.yaml (made by init.sh)."
		for role in SYS INGEST INDEXER EXTRACTOR EDGE LAPTOP; do
			echo "CUE_NATS_PASSWORD_$role=$(secret)"
		done
	} > .env
	echo "wrote $(pwd)/.env" >&2
fi

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
