#!/usr/bin/env bash
# Answer service benchmark: cache-hit latency (p50/p99) at 64 concurrent
# clients, and the cold path's stage breakdown (search, fetch, extract,
# rank, synthesis) against loopback stand-ins (SearXNG JSON, HTML site,
# OpenAI-format model). Runs the real arr binary on a fresh database.
# Usage: scripts/bench/answer.sh [-requests N] [-concurrency N] [-cold N]
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
out=scripts/bench/results/answer-$(date -u +%Y%m%dT%H%M%SZ)
go run ./scripts/bench/answer -database-url "$url" "$@" | tee "$out.txt"
