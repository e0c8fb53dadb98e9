#!/usr/bin/env bash
# Projection rebuild benchmark: 1M events, each read model rebuilt from
# position 0, median events/s. Usage: scripts/bench/rebuild.sh [-events N] [-runs N]
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
out=scripts/bench/results/rebuild-$(date -u +%Y%m%dT%H%M%SZ)
go run ./scripts/bench/rebuild -database-url "$url" -json "$out.json" "$@" | tee "$out.txt"
