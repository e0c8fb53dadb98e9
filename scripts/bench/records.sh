#!/usr/bin/env bash
# Records service benchmark on a generated, clearly synthetic county (FIPS
# 99999): bulk load of 1,000,000 parcels through the event log (append and
# projection apply) beside GDAL's ogr2ogr (Debian's gdal-bin, ensure_gdal)
# loading the same CSV file into a PostGIS table of the same database,
# each round into a fresh database, then the bbox query (random 0.01° boxes inside the
# county, limit 100) at 1 and 64 concurrent clients, arr's records handler
# beside CrunchyData's pg_featureserv (v1.3.1, built from its Go module by
# ensure_pg_featureserv) serving the same rm_parcels.parcels table, asked
# for the same properties. Before measuring, both must answer the same
# features for 20 random boxes. -rounds rounds (default 3), the servers
# taking turns; the figures are medians. Then arr's searches beyond the
# bbox at the most clients: nearby (500 m around the boxes' centres), by
# address ("N SYNTHETIC"), limit 100, and the z14 vector tile of the
# centre, printed as
#   records near at 64 clients: p50 X ms, p99 Y ms, Z req/s, F features/response
#   records address at 64 clients: ...
#   records tile z14 at 64 clients: ...
# then the tile phase: -tile-clients (64) map clients panning and zooming
# over the county, z10 to z16, arr's tile route beside CrunchyData's
# pg_tileserv (v1.0.11, ensure_pg_tileserv) on the same table, with arr's
# tile cache hit rate, and ends with the lines
#   records bbox at 64 clients: arr p99 X ms, Y req/s; pg_featureserv p99 Z ms, W req/s
#   records tiles at 64 clients: arr p99 X ms, Y tiles/s; pg_tileserv p99 Z ms, W tiles/s
#   parcels load of N rows: arr apply X s; ogr2ogr Y s
# Usage: scripts/bench/records.sh [-parcels N] [-concurrency 1,64]
# [-rounds 3] [-duration 10s] [-box 0.01] [-pool 16] [-peer ""] (no peer)
# [-load-only] (the load rounds and their table only) [-load-steps] (logs
# the time of each step of the parcels projection's publishing)
# DATABASE_URL is the PostgreSQL server (a database, arr_bench_records or
# $ARR_BENCH_RECORDS_DB, is made on it; each load round makes it anew); PG_FEATURESERV_PORT the peer's loopback port (default 9765),
# PG_TILESERV_PORT pg_tileserv's (9766); PG_TILESERV_SRC its source when
# the module proxy refuses it (ensure_pg_tileserv).
# Results go to scripts/bench/results/ (git-ignored) and to stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_postgres_server >/dev/null
peer=$(ensure_pg_featureserv)
tileserv=$(ensure_pg_tileserv)
ensure_gdal
ogr2ogr=$(command -v ogr2ogr)
mkdir -p scripts/bench/results
url=${DATABASE_URL:-${ARR_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}
port=${PG_FEATURESERV_PORT:-9765}
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  die "127.0.0.1:$port is taken: set PG_FEATURESERV_PORT to a free port"
fi
tport=${PG_TILESERV_PORT:-9766}
if (exec 3<>"/dev/tcp/127.0.0.1/$tport") 2>/dev/null; then
  die "127.0.0.1:$tport is taken: set PG_TILESERV_PORT to a free port"
fi
# The bench's database on the same server: the URL with its path replaced.
db=${ARR_BENCH_RECORDS_DB:-arr_bench_records}
[[ $db =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "ARR_BENCH_RECORDS_DB: $db is not a name of lower-case letters, digits and _"
bench_url=$(printf '%s' "$url" | sed -E "s#^(postgres(ql)?://[^/?]*)(/[^?]*)?#\\1/$db#")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# pg_featureserv's own config: the bench database (the same user as arr's
# bench connects with), loopback only, the one table, as many pooled
# connections as arr's records handler has (-pool, default 16), no map
# view's basemap host.
pool=16
for ((i = 1; i <= $#; i++)); do
  case "${!i}" in
    -pool | --pool) j=$((i + 1)); pool=${!j} ;;
    -pool=* | --pool=*) pool=${!i#*=} ;;
  esac
done
cat >"$tmp/pg_featureserv.toml" <<TOML
[Server]
HttpHost = "127.0.0.1"
HttpPort = $port
UrlBase = "http://127.0.0.1:$port"
AssetsPath = "$peer-assets"
ReadTimeoutSec = 5
WriteTimeoutSec = 30

[Database]
DbConnection = "$bench_url"
DbPoolMaxConns = $pool
TableIncludes = [ "rm_parcels.parcels" ]
FunctionIncludes = [ ]

[Paging]
LimitDefault = 100
LimitMax = 1000

[Website]
BasemapUrl = ""
TOML
# pg_tileserv's: the same database and pool size, loopback only, a
# 64-unit buffer and at most 16,384 features a tile (arr's largest cap),
# no server cache (it has none).
cat >"$tmp/pg_tileserv.toml" <<TOML
HttpHost = "127.0.0.1"
HttpPort = $tport
UrlBase = "http://127.0.0.1:$tport"
AssetsPath = "$tileserv-assets"
DbConnection = "$bench_url"
DbPoolMaxConns = $pool
DefaultBuffer = 64
DefaultResolution = 4096
MaxFeaturesPerTile = 16384
TOML
out=scripts/bench/results/records-$(date -u +%Y%m%dT%H%M%SZ)
go build -o "$tmp/records-bench" ./scripts/bench/records
GIN_MODE=release "$tmp/records-bench" -database-url "$url" -database "$db" -ogr2ogr "$ogr2ogr" -json "$out.json" \
  -peer "$peer" -peer-config "$tmp/pg_featureserv.toml" -peer-url "http://127.0.0.1:$port" \
  -tileserv "$tileserv" -tileserv-config "$tmp/pg_tileserv.toml" -tileserv-url "http://127.0.0.1:$tport" "$@" | tee "$out.txt"
echo "results: $out.txt and .json" >&2
