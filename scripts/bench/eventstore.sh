#!/usr/bin/env bash
# Benchmarks arr's PostgreSQL event store against Message DB (npm
# @eventide/message-db) on the same server: single-event appends at 1, 8 and
# 64 writers, and AppendBulk. Reports medians and ratios; asserts nothing.
#
#   scripts/bench/eventstore.sh [flags of scripts/bench/eventstore, e.g. -runs 5 -duration 5s]
#
# DATABASE_URL is the server (default: local PostgreSQL, user postgres); a
# fresh database is created on it for every measurement and dropped after.
# The run ends with the floor of one durable commit on the same server
# (scripts/bench/commitfloor.sh, pgbench): a gap-free head commit against
# an insert-only one, which bounds the 1-writer ratio.
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

{
  "$bin" -database-url "$DATABASE_URL" -messagedb "$mdb" -json "$here/results/eventstore-$stamp.json" "$@" 2>&1
  # The floor of one durable commit on this server, in the same run: what
  # a 1-writer figure can reach (COMMITFLOOR_SECONDS=0 skips it).
  if [ "${COMMITFLOOR_SECONDS:-5}" != 0 ]; then
    echo
    PGHOST="$(sed -n 's#^postgres://[^@]*@\([^:/]*\).*#\1#p' <<<"$DATABASE_URL")" \
      bash "$here/commitfloor.sh" "${COMMITFLOOR_SECONDS:-5}" 3
  fi
} | tee "$here/results/eventstore-$stamp.txt"
echo "results: $here/results/eventstore-$stamp.txt and .json" >&2
