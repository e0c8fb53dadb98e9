#!/usr/bin/env bash
# Runs every test of arr. On a fresh Debian machine with Go it first installs
# or starts what the tests need (PostgreSQL with PostGIS, nats-server,
# gotestsum) and does nothing extra when they are there. Extra arguments go
# to `go test` (for example -run TestKeyLifecycle).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ARR_ROOT"

command -v go >/dev/null || die "Go is required (https://go.dev/doc/install)"
ensure_test_postgres
ensure_nats_server
ensure_gotestsum
ensure_stripe_mock
ensure_chromium
ensure_gdal
ensure_redis
ensure_node_openai
ensure_node_anthropic
ensure_claude_code
ensure_node_ai_sdk
ensure_node_ai_sdk_perplexity
ensure_node_duckdb
ensure_node_vector_tile
ensure_node_standardwebhooks

log "PostgreSQL for tests: ${ARR_TEST_DATABASE_URL%%\?*}"
if [ -z "${KURRENTDB_URL:-}" ]; then
  log "KURRENTDB_URL is unset: the KurrentDB contract run will be skipped (the PostgreSQL run is not)"
fi
# go.mod and go.sum say exactly what the code imports: a missing or
# stale requirement, or one marked // indirect that the code imports,
# fails the run before any test.
if ! tidy=$(go mod tidy -diff 2>&1); then
  printf '%s\n' "$tidy" >&2
  die "go.mod/go.sum are not tidy: run go mod tidy and commit the result"
fi
go vet ./...
exec gotestsum --format pkgname-and-test-fails -- -count=1 -timeout 45m "$@" ./...
