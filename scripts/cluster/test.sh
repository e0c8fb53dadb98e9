#!/usr/bin/env bash
# The cluster test: arr across hosts, on engines that do the distributed
# work (PostgreSQL streaming replication and advisory-lock leases, a NATS
# JetStream cluster), with failures injected and their recovery measured.
# Not part of .ci/run: it needs root for `ip netns`.
#
# Each host is a network namespace with an address of its own on a bridge
# (in a namespace of its own, arrc-sw): the addresses are loopback ones,
# 127.77.0.0/24, routed between the namespaces (route_localnet), so no
# packet is meant for or can reach any other network. Hosts:
#   db 127.77.0.10     PostgreSQL primary (initdb here, run as postgres)
#   db2 127.77.0.11    its streaming replica (pg_basebackup -R)
#   nats1-3 .21-.23    a three-node NATS JetStream cluster
#   gw1-3 .31-.33      arr serve gateway
#   proj1-2 .41-.42    arr serve projections (ARR_BUS=nats on the cluster)
#   rec1 .51           arr serve records, reading the replica
#   load .90           the OpenAI-compatible upstream stand-in and the
#                      driver (scripts/cluster/driver), which runs:
#     - the gateway's req/s at 64 clients with 1, 2 and 3 gateway hosts;
#     - kill -9 a gateway host under load (the others keep answering,
#       every answered completion is in the audit chain, audit verify ok);
#     - a free key's quota and a key's budget exact across the hosts;
#     - cut the projection host holding the leases off the network (ip
#       link set down): the other takes them over; after it returns the
#       read models equal a rebuild;
#     - kill -9 the NATS node leading the fan-out's stream: a durable
#       consumer gets every event once, in order after dedup;
#     - stop the replica: the records host reads the primary, not stale.
# It prints each scenario's time to recover and ends with
# "N passed, M failed" (exit 1 when one failed).
#
#   sudo scripts/cluster/test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
[ "$(id -u)" = 0 ] || { echo "scripts/cluster/test.sh needs root (ip netns); run it with sudo" >&2; exit 2; }

ensure_pkgs iproute2
pgbin=$(ensure_postgres_server) # the PostgreSQL and PostGIS binaries
ensure_nats_server
id postgres >/dev/null 2>&1 || { echo "no postgres user to run PostgreSQL as" >&2; exit 2; }

work=$(mktemp -d /tmp/arr-cluster.XXXXXX)
chmod 755 "$work"
net=127.77.0
declare -A addr=([db]=10 [db2]=11 [nats1]=21 [nats2]=22 [nats3]=23 [gw1]=31 [gw2]=32 [gw3]=33 [proj1]=41 [proj2]=42 [rec1]=51 [load]=90)
hosts=(db db2 nats1 nats2 nats3 gw1 gw2 gw3 proj1 proj2 rec1 load)
pids=()

cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -25 "$f" >&2; }; done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  for d in primary replica; do
    [ -f "$work/$d/postmaster.pid" ] && runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/$d" -m immediate stop >/dev/null 2>&1
  done
  for h in "${hosts[@]}"; do ip netns del "arrc-$h" 2>/dev/null; done
  ip netns del arrc-sw 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

log "building arr and the driver"
go build -o "$work/arr" ./cmd/arr
go build -o "$work/driver" ./scripts/cluster/driver

log "hosts: network namespaces on a bridge, addresses in $net.0/24"
ip netns add arrc-sw
ip -n arrc-sw link add br0 type bridge
ip -n arrc-sw link set br0 up
for h in "${hosts[@]}"; do
  ns=arrc-$h
  ip netns add "$ns"
  ip link add "c-$h" type veth peer name "b-$h"
  ip link set "c-$h" netns "$ns"
  ip link set "b-$h" netns arrc-sw
  ip -n arrc-sw link set "b-$h" master br0 up
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.route_localnet=1
  ip netns exec "$ns" sysctl -qw "net.ipv4.conf.c-$h.route_localnet=1"
  ip -n "$ns" addr add "$net.${addr[$h]}/24" dev "c-$h"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "c-$h" up
done
on() { local h=$1; shift; ip netns exec "arrc-$h" "$@"; }
ip_of() { echo "$net.${addr[$1]}"; }

log "PostgreSQL primary on $(ip_of db), streaming replica on $(ip_of db2)"
chown postgres "$work"
runuser -u postgres -- "$pgbin/initdb" -D "$work/primary" -U postgres -A trust -E UTF8 --no-sync >/dev/null
cat >> "$work/primary/postgresql.conf" <<EOF
listen_addresses = '$(ip_of db)'
unix_socket_directories = '$work'
wal_level = replica
max_wal_senders = 5
hot_standby = on
max_connections = 300
EOF
echo "host all all $net.0/24 trust" >> "$work/primary/pg_hba.conf"
echo "host replication all $net.0/24 trust" >> "$work/primary/pg_hba.conf"
on db runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/primary" -l "$work/primary.log" -w start >/dev/null
on db2 runuser -u postgres -- "$pgbin/pg_basebackup" -h "$(ip_of db)" -U postgres -D "$work/replica" -R -X stream -c fast
mkdir -p "$work/replica-socket" && chown postgres "$work/replica-socket"
on db2 runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/replica" -l "$work/replica.log" -o "-c listen_addresses=$(ip_of db2) -k $work/replica-socket" -w start >/dev/null

log "NATS JetStream cluster on $(ip_of nats1), $(ip_of nats2), $(ip_of nats3)"
routes="nats://$(ip_of nats1):6222,nats://$(ip_of nats2):6222,nats://$(ip_of nats3):6222"
natsurl="nats://$(ip_of nats1):4222,nats://$(ip_of nats2):4222,nats://$(ip_of nats3):4222"
natsjson=""
for i in 1 2 3; do
  h=nats$i
  mkdir -p "$work/$h"
  ip netns exec "arrc-$h" nats-server -js -n "n$i" -a "$(ip_of $h)" -p 4222 -sd "$work/$h" --cluster_name arrc --cluster "nats://$(ip_of $h):6222" --routes "$routes" \
    >"$work/$h.log" 2>&1 &
  pids+=($!)
  natsjson+="{\"name\":\"n$i\",\"ns\":\"arrc-$h\",\"url\":\"nats://$(ip_of $h):4222\",\"pid\":$!},"
done

log "the upstream stand-in on $(ip_of load):9000"
ip netns exec arrc-load "$work/driver" upstream "$(ip_of load):9000" >"$work/upstream.log" 2>&1 &
pids+=($!)

db="postgres://postgres@$(ip_of db):5432/postgres?sslmode=disable"
common=(DATABASE_URL="$db" ARR_DATA_DIR="$work/data" ARR_LOG_LEVEL=warn ARR_DEMO_DATA=false
  ARR_UPSTREAM_BASE_URL="http://$(ip_of load):9000/v1" ARR_BUS=none)
mkdir -p "$work/data"
log "migrating, and making the installation's keys"
on load env "${common[@]}" "$work/arr" migrate >/dev/null
on load env "${common[@]}" "$work/arr" accounts create --email setup@example.com --plan free --json >/dev/null

start() { # start HOST LOGNAME ENV... -- ARGS...
  local h=$1 name=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  # Not through a shell function: $! must be the process itself.
  ip netns exec "arrc-$h" env "${common[@]}" "${envs[@]}" "$work/arr" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  last=$!
}
projjson=""
for i in 1 2; do
  start "proj$i" "proj$i" ARR_BUS=nats NATS_URL="$natsurl" -- serve projections
  projjson+="{\"name\":\"proj$i\",\"ns\":\"arrc-proj$i\",\"link\":\"c-proj$i\",\"pid\":$last},"
  sleep 2 # the first sets the read models up
done
gwjson=""
for i in 1 2 3; do
  start "gw$i" "gw$i" ARR_GATEWAY_ADDR="$(ip_of gw$i):8080" -- serve gateway
  gwjson+="{\"name\":\"gw$i\",\"ns\":\"arrc-gw$i\",\"url\":\"http://$(ip_of gw$i):8080\",\"pid\":$last},"
done
start rec1 rec1 ARR_RECORDS_ADDR="$(ip_of rec1):8080" ARR_READ_DATABASE_URL="postgres://postgres@$(ip_of db2):5432/postgres?sslmode=disable" -- serve records
recjson="{\"name\":\"rec1\",\"ns\":\"arrc-rec1\",\"url\":\"http://$(ip_of rec1):8080\",\"pid\":$last}"

envjson=$(printf '"%s",' "${common[@]}")
cat > "$work/topology.json" <<EOF
{"arr": "$work/arr", "env": [${envjson%,}], "db": "$db", "nats_url": "$natsurl",
 "gateways": [${gwjson%,}], "projections": [${projjson%,}], "nats": [${natsjson%,}], "records": $recjson,
 "replica_stop": ["ip", "netns", "exec", "arrc-db2", "runuser", "-u", "postgres", "--", "$pgbin/pg_ctl", "-D", "$work/replica", "-m", "immediate", "stop"]}
EOF

log "running the scenarios"
set +e
on load "$work/driver" run "$work/topology.json"
rc=$?
set -e
exit "$rc"
