#!/usr/bin/env bash
# Answer evaluation on a second corpus nobody here wrote: Git's manual
# (Debian's git-doc HTML pages, installed when missing), the pages of
# scripts/eval/git/pages.txt and the questions of
# scripts/eval/git/questions.json, written and checked against the pages
# (-check) before any answer was seen; every even id (half) is held out.
# Extractive answers (no language model). Prints one summary line with
# the tune and held-out splits; per-question results go to
# scripts/eval/results/git/.
# Usage: scripts/eval/answer-git.sh [-split tune|heldout|all] [-v] [-check]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_pkgs git-doc
exec scripts/eval/answer.sh -docs /usr/share/doc/git/html -pages scripts/eval/git/pages.txt \
  -questions scripts/eval/git/questions.json -holdout-every 2 -out scripts/eval/results/git "$@"
