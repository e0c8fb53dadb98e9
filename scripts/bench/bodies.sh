#!/usr/bin/env bash
# Measures the gateway's resident memory with many large request bodies in
# flight (scripts/bench/bodies): rounds of concurrent POST /v1/messages
# bodies on a fresh `arr up` each, RSS before, at its peak and after,
# medians of -repeat runs. Asserts nothing.
#
#   scripts/bench/bodies.sh [flags of scripts/bench/bodies, e.g. -concurrency 60,120 -repeat 3 -env ARR_GATEWAY_BODIES_MB=128]
# DATABASE_URL is the PostgreSQL server (default: local, user postgres).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/arr" ./cmd/arr && go build -o "$tmp/bodies" ./scripts/bench/bodies)
"$tmp/bodies" -arr "$tmp/arr" -database-url "${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}" "$@"
