#!/usr/bin/env bash
# SQL projection replay benchmark: a log of 1M CompletionRecorded events,
# replayed from position 0 into the issue's spend_by_model written per
# event (arr:on) and per batch (arr:batch); median events/s of -runs.
# Usage: scripts/bench/sqlproj.sh [-events N] [-runs N] [-batch N] [-forms on,batch]
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
out=scripts/bench/results/sqlproj-$(date -u +%Y%m%dT%H%M%SZ)
go run ./scripts/bench/sqlproj -database-url "$url" -json "$out.json" "$@" | tee "$out.txt"
