#!/usr/bin/env bash
# Worst-case records requests beside a normal client (issue 36, finding 2):
# runs the end-to-end test TestRecordsWorstCaseLoad (cmd/arr) -runs times
# (default 5) against a fresh `arr up` with the demo data each time. Each
# run sends 20 POST /api/v1/parcels/query with a legal 1,000-position
# saw-tooth polygon over 2 degrees and 20 z10 tiles of Baltimore (the
# densest demo area) at once, while one client pages through 500 m bbox
# searches; the client's median latency is measured alone (50 requests)
# and while the worst-case requests are in flight. Prints each run, then
#   records worst case: normal p50 alone X ms, under load Y ms (medians of N runs); normal errors E; worst case ended W of T, in Z s
# Usage: scripts/bench/records-worstcase.sh [-runs 5]
# ARR_TEST_DATABASE_URL as for scripts/test.sh (set up by scripts/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    -runs) runs=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
ensure_test_postgres
mkdir -p scripts/bench/results
out=scripts/bench/results/records-worstcase.txt
: > "$out"
for i in $(seq "$runs"); do
  # A failing run (errors, requests past the deadline) is measured too.
  { go test ./cmd/arr -run '^TestRecordsWorstCaseLoad$' -count=1 -v 2>&1 || true; } | { grep 'normal bbox client:' || true; } | sed 's/^ *records_bounded_test.go:[0-9]*: //' | tee -a "$out"
done
python3 - "$out" <<'PY'
import re, statistics, sys
def ms(s):
    m = re.match(r'([\d.]+)(µs|ms|s)$', s)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == 'µs' else v * 1000 if u == 's' else v
alone, load, errs, ended, total, took = [], [], [], [], [], []
for line in open(sys.argv[1]):
    m = re.search(r'p50 (\S+) alone, p50 (\S+) under load, (\d+) errors; worst case: (\d+) of (\d+) ended .* in (\S+)$', line)
    if m:
        alone.append(ms(m.group(1))); load.append(ms(m.group(2))); errs.append(int(m.group(3)))
        ended.append(int(m.group(4))); total.append(int(m.group(5))); took.append(ms(m.group(6)) / 1000)
if not alone:
    sys.exit("no runs measured")
print(f"records worst case: normal p50 alone {statistics.median(alone):.2f} ms, under load {statistics.median(load):.2f} ms "
      f"(medians of {len(alone)} runs); normal errors {sum(errs)}; worst case ended {sum(ended)} of {sum(total)}, in {statistics.median(took):.1f} s (median)")
PY
