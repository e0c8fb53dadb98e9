#!/usr/bin/env bash
# Benchmarks the routing gateway's overhead against calling a loopback
# OpenAI-compatible upstream directly, at 1 and 64 concurrent clients, and
# Portkey's open-source gateway (npm @portkey-ai/gateway, pinned below)
# pointed at the same upstream (x-portkey-provider: openai,
# x-portkey-custom-host). arr runs as `arr up` on a fresh database with every
# completion durably appended to the audit chain; the run ends with
# `arr audit verify`. Reports p50/p99, req/s, overhead and each gateway's
# CPU time per request (its process's user+system time); asserts nothing.
# Every level is measured -repeat times (default 3), arr and Portkey taking
# turns, and the table shows the median of each figure. Numbers on a shared
# 2-core machine are noisy: compare within one run.
#
#   scripts/bench/gateway.sh [flags of scripts/bench/gateway, e.g. -n 20000 -concurrency 1,16,64 -repeat 5]
#   scripts/bench/gateway.sh -phases -concurrency 1 -repeat 3   # where a completion's time goes
#
# With -phases arr runs with tracing on, exporting to a loopback OTLP
# receiver in the bench, and the run ends with each completion's phases
# (median µs, from its spans): before the use case (auth, key, plan
# quota, body), routing, the rest of the use case (limits, cache), the
# upstream attempt, the durable audit append, writing the reply. Tracing
# costs arr a little, so those runs' figures are not its best.
#
# The run ends with the floor of one durable commit on the same server
# (scripts/bench/commitfloor.sh, pgbench), which every arr completion
# waits for and Portkey's do not.
# DATABASE_URL is the PostgreSQL server (default: local, user postgres).
# Results go to scripts/bench/results/ (git-ignored) and to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
PORTKEY_VERSION="${PORTKEY_VERSION:-1.15.2}"

pk="$here/node_modules/@portkey-ai/gateway/build/start-server.js"
if [ ! -f "$pk" ] || ! grep -q "\"version\": \"$PORTKEY_VERSION\"" "$here/node_modules/@portkey-ai/gateway/package.json"; then
  echo "installing @portkey-ai/gateway@$PORTKEY_VERSION into $here/node_modules" >&2
  (cd "$here" && npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$here" "@portkey-ai/gateway@$PORTKEY_VERSION" >&2)
fi

mkdir -p "$here/results"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/arr" ./cmd/arr && go build -o "$tmp/gateway-bench" ./scripts/bench/gateway)

{
  "$tmp/gateway-bench" -database-url "$DATABASE_URL" -arr "$tmp/arr" -portkey "$pk" \
    -json "$here/results/gateway-$stamp.json" "$@" 2>&1
  # The floor of the durable commit every completion waits for, on the same
  # server in the same run (COMMITFLOOR_SECONDS=0 skips it).
  if [ "${COMMITFLOOR_SECONDS:-5}" != 0 ]; then
    echo
    PGHOST="$(sed -n 's#^postgres://[^@]*@\([^:/]*\).*#\1#p' <<<"$DATABASE_URL")" \
      bash "$here/commitfloor.sh" "${COMMITFLOOR_SECONDS:-5}" 3
  fi
} | tee "$here/results/gateway-$stamp.txt"
echo "results: $here/results/gateway-$stamp.txt and .json" >&2
