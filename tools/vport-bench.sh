#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Measures how much faster the native stack serves on net_af_xdp than on
# net_af_packet, the two virtual ports of tools/run-server.sh: the same
# veth pair between two namespaces this script creates (server 198.18.0.2,
# client 198.18.0.1) and removes, the same server (one worker lcore, so
# one queue, which is what net_af_xdp has on a veth), once on each port,
# against segcached-loadgen over kernel sockets in the client namespace.
# Prints each run's summary, the server's packet, retransmit and drop
# counters, and the requests/s ratio. Run it on a quiet host:
# the numbers are the point.
#
# Usage: tools/vport-bench.sh   (as root)
# Environment: DURATION (s, 10), CONNS (32), DEPTH (4), KEYS (10000),
# VALUE (bytes, 100), GET_RATIO (0.9), SERVER_CPUS (EAL --lcores of the
# server, 0-1: main, worker), CLIENT_CPUS (taskset list for the generator;
# default all but the server worker's CPU), PORTS ("af_packet af_xdp"),
# SEGCACHED, LOADGEN (the binaries; default those of this tree's build/),
# JSON_DIR (keep each run's --json there).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEGCACHED:-$root/build/app/segcached/segcached}
lg=${LOADGEN:-$root/build/tools/loadgen/segcached-loadgen}
duration=${DURATION:-10}
conns=${CONNS:-32}
depth=${DEPTH:-4}
keys=${KEYS:-10000}
value=${VALUE:-100}
get_ratio=${GET_RATIO:-0.9}
server_cpus=${SERVER_CPUS:-0-1}
ports=${PORTS:-af_packet af_xdp}
json_dir=${JSON_DIR:-}
tag=vpb$$
srv_ns=$tag-s
cli_ns=$tag-c
srv_if=${tag}s
cli_if=${tag}c

die() {
	echo "vport-bench: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, veth, AF_XDP)"
[ -x "$bin" ] || die "$bin not found: build first"
[ -x "$lg" ] || die "$lg not found: build first"
if [ -z "${CLIENT_CPUS:-}" ]; then
	# every CPU but the one of the server's worker (the last of its list)
	worker_cpu=${server_cpus##*[-,@]}
	CLIENT_CPUS=$(awk -v skip="$worker_cpu" -v n="$(nproc)" \
		'BEGIN { s = ""; for (i = 0; i < n; i++) if (i != skip) s = s (s == "" ? "" : ",") i; print s }')
	[ -n "$CLIENT_CPUS" ] || CLIENT_CPUS=0
fi

pid=
cleanup() {
	trap '' INT TERM
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
	fi
	ip netns del "$srv_ns" 2>/dev/null || true
	ip netns del "$cli_ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$tag"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$srv_ns"
ip netns add "$cli_ns"
# One queue each way: net_af_xdp has one on a veth (docs/operations.md).
ip link add "$srv_if" numtxqueues 1 numrxqueues 1 type veth \
	peer name "$cli_if" numtxqueues 1 numrxqueues 1
ip link set "$srv_if" netns "$srv_ns"
ip link set "$cli_if" netns "$cli_ns"
for ns in "$srv_ns" "$cli_ns"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" ip link set lo up
done
ip netns exec "$srv_ns" ip link set "$srv_if" up
ip netns exec "$cli_ns" ip addr add 198.18.0.1/24 dev "$cli_if"
ip netns exec "$cli_ns" ip link set "$cli_if" up
ip netns exec "$srv_ns" ethtool -K "$srv_if" tx off >/dev/null
ip netns exec "$cli_ns" ethtool -K "$cli_if" tx off >/dev/null

huge=--no-huge
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)" -gt 0 ] &&
	grep -q hugetlbfs /proc/mounts; then
	huge=
fi

results=
for port in $ports; do
	case $port in
	af_packet) vdev="net_af_packet0,iface=$srv_if" ;;
	af_xdp) vdev="net_af_xdp0,iface=$srv_if,start_queue=0,queue_count=1" ;;
	*) die "PORTS: $port is neither af_packet nor af_xdp" ;;
	esac
	log=$(mktemp)
	ip netns exec "$srv_ns" "$bin" --lcores="$server_cpus" $huge --no-pci --no-shconf \
		--file-prefix "$tag" --vdev="$vdev" -- --stack native --ip 198.18.0.2/24 \
		-m 256 -c 4096 >"$log" 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 600 ] && kill -0 "$pid" 2>/dev/null && ! grep -q ' ready: ' "$log"; do
		sleep 0.1
		i=$((i + 1))
	done
	if ! grep -q ' ready: ' "$log"; then
		cat "$log" >&2
		die "segcached did not start on net_$port (above)"
	fi
	grep -E 'port: port 0 \(' "$log" | sed 's/^[0-9T:.-]*Z //' >&2
	json=
	[ -n "$json_dir" ] && mkdir -p "$json_dir" && json="--json $json_dir/$port.json"
	echo "vport-bench: net_$port: segcached-loadgen, $conns connections x depth $depth, ${duration} s" >&2
	# shellcheck disable=SC2086
	out=$(ip netns exec "$cli_ns" taskset -c "$CLIENT_CPUS" timeout $((duration + 120)) \
		"$lg" --stack socket --server 198.18.0.2:11211 --conns "$conns" --depth "$depth" \
		--keys "$keys" --value-size "$value" --get-ratio "$get_ratio" \
		--duration "$duration" --quiet $json 2>&1) || {
		echo "$out" >&2
		die "segcached-loadgen failed on net_$port"
	}
	echo "$out"
	ops=$(echo "$out" | grep -o -E '^throughput +[0-9.]+ req/s' | grep -o -E '[0-9.]+' | head -n 1)
	# What the stack counted on the way: a faster port that drops or
	# retransmits more is not faster.
	/usr/bin/python3 "$root/tools/segcached-stat" --file-prefix "$tag" --json \
		--command /segcached/net | /usr/bin/python3 -c 'import json, sys
d = json.load(sys.stdin)["/segcached/net"]
keys = ["rx_packets", "tx_packets", "tcp_retransmits", "nic_imissed", "nic_rx_nombuf"]
keys += sorted(k for k, v in d.items() if k.startswith("drop_") and v)
print("server counters: " + ", ".join("%s %s" % (k, d.get(k, 0)) for k in keys))' ||
		echo "vport-bench: (no telemetry from the server)" >&2
	results="$results $port=${ops:-?}"
	kill "$pid"
	wait "$pid" || true
	pid=
	rm -f "$log"
	rm -rf "/var/run/dpdk/$tag"
done
echo "vport-bench: requests/s:$results"
set -- $results
if [ $# -eq 2 ]; then
	a=${1#*=}
	b=${2#*=}
	awk -v a="$a" -v b="$b" -v pa="${1%%=*}" -v pb="${2%%=*}" \
		'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "vport-bench: net_%s / net_%s = %.2f\n", pb, pa, b / a }'
fi
