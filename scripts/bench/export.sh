#!/usr/bin/env bash
# Times `arr events export --format parquet` of a log of 1M events (the
# target: at most 10 s and under 200 MB of memory on 2 cores), reporting
# wall time and peak RSS (GNU time), medians of -runs runs; DuckDB (scripts/clients/
# duckdb, when installed) counts the rows of the last file.
# Usage: scripts/bench/export.sh [-events N] [-runs N] [-format parquet|ndjson]
# DATABASE_URL is the server; a fresh database is created on it and dropped.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_pkgs time # GNU time reads the export's peak memory
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
bin="$(mktemp -d)/arr"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/arr
out=scripts/bench/results/export-$(date -u +%Y%m%dT%H%M%SZ).txt
go run ./scripts/bench/export -database-url "$url" -arr "$bin" "$@" | tee "$out"
