#!/usr/bin/env bash
# Records service benchmark on a generated, clearly synthetic county (FIPS
# 99999): bulk load of 1,000,000 parcels through the event log (append and
# projection apply), bbox query p50/p99 and req/s at 64 concurrent clients,
# EXPLAIN of the bbox query. Usage: scripts/bench/records.sh [-parcels N]
# [-concurrency N] [-duration 20s] [-box 0.01]
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
out=scripts/bench/results/records-$(date -u +%Y%m%dT%H%M%SZ)
GIN_MODE=release go run ./scripts/bench/records -database-url "$url" -json "$out.json" "$@" | tee "$out.txt"
