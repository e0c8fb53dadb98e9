#!/usr/bin/env bash
# Benchmarks arr's PostgreSQL event store against Message DB (npm
# @eventide/message-db) on the same server: single-event appends at 1, 8 and
# 64 writers, and AppendBulk. Reports medians and ratios; asserts nothing.
#
#   scripts/bench/eventstore.sh [flags of scripts/bench/eventstore, e.g. -runs 5 -duration 5s]
#
# DATABASE_URL is the server (default: local PostgreSQL, user postgres); a
# fresh database is created on it for every measurement and dropped after.
# Results go to scripts/bench/results/ (git-ignored) and to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
MESSAGE_DB_VERSION="${MESSAGE_DB_VERSION:-1.3.1}"

mdb="$here/node_modules/@eventide/message-db/database"
if [ ! -f "$mdb/install-functions.sh" ]; then
  echo "installing @eventide/message-db@$MESSAGE_DB_VERSION into $here/node_modules" >&2
  (cd "$here" && npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$here" "@eventide/message-db@$MESSAGE_DB_VERSION" >&2)
fi

mkdir -p "$here/results"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
bin="$(mktemp -d)/eventstore-bench"
trap 'rm -rf "$(dirname "$bin")"' EXIT
(cd "$root" && go build -o "$bin" ./scripts/bench/eventstore)

"$bin" -database-url "$DATABASE_URL" -messagedb "$mdb" -json "$here/results/eventstore-$stamp.json" "$@" \
  2>&1 | tee "$here/results/eventstore-$stamp.txt"
echo "results: $here/results/eventstore-$stamp.txt and .json" >&2
