#!/usr/bin/env bash
# Answer evaluation on arr's own documentation: the questions a newcomer
# asks (scripts/eval/arr/questions.json, answerable and unanswerable ones,
# written and checked with -check against docs/*.md before any answer was
# seen; every id divisible by 3 held out) over the index the answer
# service seeds itself with on a fresh database (ARR_ANSWER_SEED=on: the
# OpenAPI documents, docs/*.md as built into the binary, the data-sources
# page). Nothing is indexed by URL (-seeded); a citation of /docs/{doc_id}
# is a citation of its document. Extractive answers (no language model).
# Prints one summary line; per-question results go to
# scripts/eval/results/arr/.
# Usage: scripts/eval/answer-arr.sh [-split tune|heldout|all] [-v] [-check]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec scripts/eval/answer.sh -docs docs -pages scripts/eval/arr/pages.txt -seeded \
  -questions scripts/eval/arr/questions.json -holdout-every 3 -out scripts/eval/results/arr "$@"
