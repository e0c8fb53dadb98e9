#!/usr/bin/env bash
# The floor of one durable append on this server, measured with pgbench on
# a scratch database: a transaction that takes a head row lock, inserts one
# row and moves the head, at 1 client, sent statement by statement (five
# round trips) and as one pipeline (one round trip, as arr's one-round-trip
# commit). Both wait for the WAL flush of COMMIT (synchronous_commit as
# the server has it). Asserts nothing.
#
#   scripts/bench/commitfloor.sh [seconds per run, default 10]
set -euo pipefail
secs="${1:-10}"
export PGHOST="${PGHOST:-127.0.0.1}" PGUSER="${PGUSER:-postgres}"
db="commitfloor_$$"
dir="$(mktemp -d)"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
createdb "$db"
psql -q -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE head (id boolean PRIMARY KEY, position bigint NOT NULL);
INSERT INTO head VALUES (true, 0);
CREATE TABLE ev (position bigint PRIMARY KEY, event_id uuid NOT NULL UNIQUE, stream_id text NOT NULL, data json NOT NULL, recorded_at timestamptz NOT NULL);
SQL
cat > "$dir/steps.sql" <<'SQL'
BEGIN;
SELECT position FROM head WHERE id FOR UPDATE;
INSERT INTO ev SELECT position + 1, gen_random_uuid(), 'floor', '{"n":1}', clock_timestamp() FROM head WHERE id;
UPDATE head SET position = position + 1 WHERE id;
COMMIT;
SQL
{ echo '\startpipeline'; cat "$dir/steps.sql"; echo '\endpipeline'; } > "$dir/pipeline.sql"
for mode in steps pipeline; do
  out="$(pgbench -n -M extended -c 1 -T "$secs" -f "$dir/$mode.sql" "$db" 2>&1)"
  tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")"
  lat="$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")"
  echo "commit floor, 1 client, $mode: $tps commits/s, latency average $lat ms"
done
