#!/usr/bin/env bash
# Measures what a Claude Code session through arr pays for its prompt:
# real Claude Code (the pinned @anthropic-ai/claude-code of
# scripts/clients/claude-code) runs `claude -p`, then `claude -p
# --continue` for each later turn (short prompts), in a network namespace
# with loopback alone relayed to `arr up` on a fresh database, so nothing
# leaves the machine. arr's catalog (ARR_CATALOG, written by the bench)
# has one Claude model per tier at Anthropic's list prices, cached-input
# and cache-write prices included, reached through Anthropic's Messages
# API at the loopback stand-in (adapters/upstream/upstreamtest), which
# counts prompt-cache reads and writes per cache_control prefix. The bench
# reads arr's own audit entries of the calls and prints per turn the
# prompt tokens, cache reads and writes, output tokens and the cost arr
# charged, then the session's total beside what the same tokens cost at
# the plain input price, and the usage rollup's total. Asserts nothing.
#
#   scripts/bench/claude-cache.sh [-turns N]   # default 8
#
# Needs root (unshare(CLONE_NEWNET) for the namespace), Node.js and npm
# (installed from Debian's packages when missing) and the Claude Code
# package (npm ci in scripts/clients/claude-code when missing).
# DATABASE_URL is the PostgreSQL server (default: local, user postgres).
# Results go to scripts/bench/results/ (git-ignored) and to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
# shellcheck source=../lib.sh
source "$root/scripts/lib.sh"

[ "$(id -u)" -eq 0 ] || die "run as root: Claude Code runs in a network namespace of its own (unshare(CLONE_NEWNET)), loopback only"
claude="$root/scripts/clients/claude-code/node_modules/.bin/claude"
if [ ! -x "$claude" ]; then
  ( ensure_claude_code ) || true  # its die() would end this script before the hint below
  [ -x "$claude" ] || die "Claude Code is not installed: install Node.js and npm (apt-get install nodejs npm), then run npm ci in $root/scripts/clients/claude-code (the pinned @anthropic-ai/claude-code)"
fi

mkdir -p "$here/results"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/arr" ./cmd/arr && go build -o "$tmp/claude-cache-bench" ./scripts/bench/claudecache)

"$tmp/claude-cache-bench" -database-url "$DATABASE_URL" -arr "$tmp/arr" -claude "$claude" \
  -json "$here/results/claude-cache-$stamp.json" "$@" 2>&1 | tee "$here/results/claude-cache-$stamp.txt"
echo "results: $here/results/claude-cache-$stamp.txt and .json" >&2
