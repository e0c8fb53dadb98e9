#!/usr/bin/env bash
# The floor of one durable append on this server, measured with pgbench on
# a scratch database at 1 client, in three shapes, each waiting for the WAL
# flush of its commit (synchronous_commit as the server has it):
#   steps     a transaction that takes a head row lock, inserts one row and
#             moves the head, sent statement by statement (five round trips);
#   pipeline  the same as one pipeline (one round trip: the shape of arr's
#             one-round-trip commit, which keeps the log gap-free);
#   insert    one INSERT in its own transaction, no shared row (the shape of
#             Message DB's write_message, whose positions may have gaps).
# pipeline/insert bounds what a gap-free log can reach against an
# insert-only one at 1 writer on this server. Asserts nothing.
#
#   scripts/bench/commitfloor.sh [seconds per run, default 10] [runs, default 3]
#
# The modes take turns, run after run; each line shows the median.
set -euo pipefail
secs="${1:-10}"
runs="${2:-3}"
export PGHOST="${PGHOST:-127.0.0.1}" PGUSER="${PGUSER:-postgres}"
db="commitfloor_$$"
dir="$(mktemp -d)"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
createdb "$db"
psql -q -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE head (id boolean PRIMARY KEY, position bigint NOT NULL);
INSERT INTO head VALUES (true, 0);
CREATE TABLE ev (position bigint PRIMARY KEY, event_id uuid NOT NULL UNIQUE, stream_id text NOT NULL, data json NOT NULL, recorded_at timestamptz NOT NULL);
CREATE TABLE ev2 (position bigserial PRIMARY KEY, event_id uuid NOT NULL UNIQUE, stream_id text NOT NULL, data json NOT NULL, recorded_at timestamptz NOT NULL);
SQL
echo "INSERT INTO ev2 (event_id, stream_id, data, recorded_at) VALUES (gen_random_uuid(), 'floor', '{\"n\":1}', clock_timestamp());" > "$dir/insert.sql"
cat > "$dir/steps.sql" <<'SQL'
BEGIN;
SELECT position FROM head WHERE id FOR UPDATE;
INSERT INTO ev SELECT position + 1, gen_random_uuid(), 'floor', '{"n":1}', clock_timestamp() FROM head WHERE id;
UPDATE head SET position = position + 1 WHERE id;
COMMIT;
SQL
{ echo '\startpipeline'; cat "$dir/steps.sql"; echo '\endpipeline'; } > "$dir/pipeline.sql"
declare -A tps lat
for ((r = 1; r <= runs; r++)); do
  for mode in steps pipeline insert; do
    out="$(pgbench -n -M extended -c 1 -T "$secs" -f "$dir/$mode.sql" "$db" 2>&1)"
    tps[$mode]+="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out") "
    lat[$mode]+="$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out") "
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for mode in steps pipeline insert; do
  printf 'commit floor, 1 client, %-8s %8.0f commits/s, latency average %.3f ms (median of %d runs of %ss)\n' \
    "$mode:" "$(median "${tps[$mode]}")" "$(median "${lat[$mode]}")" "$runs" "$secs"
done
awk -v p="$(median "${tps[pipeline]}")" -v i="$(median "${tps[insert]}")" \
  'BEGIN { printf "commit floor ratio, gap-free head (pipeline) / insert-only: %.2fx: the most a gap-free log can reach against an insert-only one at 1 writer here\n", p / i }'
