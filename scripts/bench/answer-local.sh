#!/usr/bin/env bash
# Local-index benchmark of the answer service: indexes every page of the
# Python 3.11 manual (Debian's python3.11-doc, about 380 pages and 20,000
# passages) by URL in one `arr answer index add`, then asks the answer
# evaluation's questions uncached, with no language model. It prints the
# evaluation's summary line, whose tail has the figures: cold quick
# answer p50/p99 (after one warm-up question) and indexing pages/s (fetch,
# extraction, append and projection, end to end).
# Usage: scripts/bench/answer-local.sh [flags of scripts/eval/answer.sh]
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$ARR_ROOT"
ensure_pkgs python3.11-doc
list=$(mktemp)
trap 'rm -f "$list"' EXIT
(cd /usr/share/doc/python3.11/html &&
  find library reference tutorial howto faq -name '*.html' | sort &&
  ls ./*.html | sed 's|^\./||' | grep -v -e '^genindex' -e '^search\.html' -e '^py-modindex') >"$list"
./scripts/eval/answer.sh -batch 100000 -pages "$list" "$@"
