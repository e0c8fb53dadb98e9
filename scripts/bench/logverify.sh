#!/usr/bin/env bash
# Times `arr events verify` over a log of 1M events (the target: at most 20 s
# on 2 cores). Usage: scripts/bench/logverify.sh [-events N] [-runs N]
# DATABASE_URL is the server; a fresh database is created on it and dropped.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
bin="$(mktemp -d)/arr"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/arr
out=scripts/bench/results/logverify-$(date -u +%Y%m%dT%H%M%SZ).txt
go run ./scripts/bench/logverify -database-url "$url" -arr "$bin" "$@" | tee "$out"
