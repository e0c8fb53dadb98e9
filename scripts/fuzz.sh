#!/usr/bin/env bash
# Runs every request-parser and proof-verifier fuzz target of arr for a
# while and prints, per target, the executions, the corpus size and whether
# it failed. Not part of the test suite (scripts/test.sh runs each target's
# seed corpus once).
#
#   ./scripts/fuzz.sh [-t 10m] [-p 1] [TARGET ...]
#
# -t is the time per target, -p the fuzzing workers per target. Targets
# run one after the other. The corpus each run built (in Go's cache) is
# copied into the package's testdata/fuzz/TARGET, so later runs and the
# suite start from it; a failing input is written there by go test itself.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ARR_ROOT"

fuzztime=10m workers=1
while getopts "t:p:" o; do
  case $o in
    t) fuzztime=$OPTARG ;;
    p) workers=$OPTARG ;;
    *) die "usage: $0 [-t 10m] [-p 1] [TARGET ...]" ;;
  esac
done
shift $((OPTIND - 1))

# package and target of every request parser
all=(
  "./readapi/answerapi FuzzParseBody"
  "./readapi/answerapi FuzzParseQuery"
  "./readapi/gateway FuzzChatRequest"
  "./readapi/gateway FuzzFeedback"
  "./readapi/gateway FuzzMessagesRequest"
  "./readapi/gateway FuzzEmbeddingRequest"
  "./readapi/recordsapi FuzzParams"
  "./domain/records FuzzParseBBoxAndLayers"
  "./adapters/listfile FuzzParse"
  "./adapters/layerfile FuzzReader"
  "./readapi/accountweb FuzzSignInForm"
  "./eventstore FuzzStorableJSON"
  "./projections/sqlproj FuzzDefinition"
  "./domain/text FuzzClean"
  "./eventstore/transparency/verifier FuzzVerifyInclusion"
  "./eventstore/transparency/verifier FuzzVerifyConsistency"
  "./eventstore/transparency/verifier FuzzParseHead"
  "./eventstore/transparency/verifier FuzzOpenCheckpoint"
  "./eventstore/transparency/verifier FuzzParseVerifierKey"
)
cache=$(go env GOCACHE)
module=$(go list -m)
results=()
status=0
for entry in "${all[@]}"; do
  read -r pkg target <<<"$entry"
  if [ $# -gt 0 ] && [[ ! " $* " =~ " $target " ]]; then continue; fi
  log "fuzzing $target in $pkg for $fuzztime"
  out=$(mktemp)
  start=$(date +%s)
  if go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel "$workers" >"$out" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    status=1
    tail -30 "$out" >&2
  fi
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'execs: [0-9]*' "$out" | tail -1 | awk '{print $2}')
  src="$cache/fuzz/$module/${pkg#./}/$target"
  dst="$pkg/testdata/fuzz/$target"
  if [ -d "$src" ]; then
    mkdir -p "$dst"
    cp -n "$src"/* "$dst"/ 2>/dev/null || true
  fi
  corpus=$(ls "$dst" 2>/dev/null | wc -l)
  results+=("$(printf '%-24s %-8s %6ss %12s execs %6s corpus' "$target" "$verdict" "$secs" "${execs:-0}" "$corpus")")
  rm -f "$out"
done
printf '%s\n' "${results[@]}"
exit $status
