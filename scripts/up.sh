#!/usr/bin/env bash
# Builds arr and runs the whole system in one process (`arr up`). With no
# DATABASE_URL, arr starts a private PostgreSQL under .arr/ from this
# machine's PostgreSQL binaries; this script installs PostgreSQL and PostGIS
# with apt when they are missing and does nothing extra when they are there.
# Extra arguments go to `arr up`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ARR_ROOT"

command -v go >/dev/null || die "Go is required (https://go.dev/doc/install)"
if [ -z "${DATABASE_URL:-}" ]; then
  ensure_postgres_server >/dev/null
fi
version=$(git describe --always --dirty 2>/dev/null || echo dev)
log "building bin/arr ($version)"
go build -ldflags "-X main.version=$version" -o bin/arr ./cmd/arr
exec ./bin/arr up "$@"
