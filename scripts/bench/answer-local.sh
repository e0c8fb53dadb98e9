#!/usr/bin/env bash
# Local-index benchmark of the answer service: indexes every page of the
# Python 3.11 manual (Debian's python3.11-doc, about 380 pages and 20,000
# passages) by URL in one `arr answer index add`, then asks the answer
# evaluation's questions uncached, with no language model. It prints the
# evaluation's summary line, whose tail has the figures: cold quick
# answer p50/p99 (after one warm-up question) and indexing pages/s (fetch,
# extraction, append and projection, end to end).
#
# With "scale" it measures the local index at scale instead
# (scripts/bench/answerscale): a synthetic corpus of 10,000 and 100,000
# pages built from the Python and Git manuals' sections (fine for scale,
# not for quality) written through the answer_docs projection's write,
# then the time to add one page, and the evaluation's questions through
# the answer service's searcher in a process of its own: p50/p99 and that
# process's peak RSS; at 10,000 pages also the former in-memory index's.
# Usage: scripts/bench/answer-local.sh [flags of scripts/eval/answer.sh]
#        scripts/bench/answer-local.sh scale [PAGES...]
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$ARR_ROOT"
ensure_pkgs python3.11-doc
if [ "${1:-}" = scale ]; then
  shift
  ensure_pkgs git-doc
  bin=$(mktemp -d)
  trap 'rm -rf "$bin"' EXIT
  go build -o "$bin/answerscale" ./scripts/bench/answerscale
  for pages in "${@:-10000 100000}"; do
    for n in $pages; do
      db="arr_bench_local_$n"
      "$bin/answerscale" load -pages "$n" -db "$db"
      "$bin/answerscale" search -db "$db" -engine stored
      if [ "$n" -le 10000 ]; then "$bin/answerscale" search -db "$db" -engine memory; fi
    done
  done
  exit 0
fi
list=$(mktemp)
trap 'rm -f "$list"' EXIT
(cd /usr/share/doc/python3.11/html &&
  find library reference tutorial howto faq -name '*.html' | sort &&
  ls ./*.html | sed 's|^\./||' | grep -v -e '^genindex' -e '^search\.html' -e '^py-modindex') >"$list"
./scripts/eval/answer.sh -batch 100000 -pages "$list" "$@"
