#!/usr/bin/env bash
# Answer evaluation: asks the answer service the questions of
# scripts/eval/questions.json over HTTP, on a fresh database whose local
# index holds the Python 3.11 documentation pages of scripts/eval/pages.txt
# (Debian's python3.11-doc, installed when missing, served on loopback by
# the eval), with no language model (extractive answers), and scores every
# answer: fact, cited, grounded, readable, lead, abstained (answer_found
# false; unanswerable questions should), wrong_subject (another subject's
# fact) and the wrong_subject? review notes, latency. Prints one summary
# line; per-question results go to scripts/eval/results/ (held-out ones
# only there, never on the terminal).
# Usage: scripts/eval/answer.sh [-split tune|heldout|all] [-questions FILE]
#        [-out DIR] [-v] [-check] [-docs DIR -pages FILE] [-seeded]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_pkgs python3.11-doc
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
bin=$(mktemp -d "${TMPDIR:-/tmp}/arr-eval-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/eval" ./scripts/eval/answer
case " $* " in
*" -check "* | *" --check "*) "$bin/eval" "$@"; exit ;;
esac
go build -o "$bin/arr" ./cmd/arr
"$bin/eval" -arr "$bin/arr" -database-url "$url" "$@"
