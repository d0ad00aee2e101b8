#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Starts segcached the way this host allows, in the foreground:
#
#  * a NIC bound to a DPDK driver (vfio-pci, uio_pci_generic, igb_uio): the
#    native stack on it (give its address with --ip ADDR/LEN);
#  * no such NIC, as root: the native stack on a virtual port, net_af_packet
#    on a veth pair between two network namespaces this script creates
#    (server 198.18.0.2, client 198.18.0.1; benchmarking range, RFC 2544),
#    and removes again when the server stops;
#  * not root, or --posix: the posix stack (kernel sockets) on 127.0.0.1.
#
# Usage: tools/run-server.sh [--posix] [segcached options...]
# Environment: SEGCACHED (the binary; default build/app/segcached/segcached
# of the tree this script is in), SEGCACHED_NETNS (name prefix of the
# namespaces; default segcached: a second server on the virtual port needs
# another), SEGCACHED_LCORES (EAL -l for the native stack; default 0-1, or
# 0-N for -t N).
# Stop it with Ctrl-C or SIGTERM.
set -eu

# Paths from the script's own place, so it runs from any directory.
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEGCACHED:-$root/build/app/segcached/segcached}
prefix=${SEGCACHED_NETNS:-segcached}
lcores=${SEGCACHED_LCORES:-}
server_ip=198.18.0.2
client_ip=198.18.0.1

die() {
	echo "run-server: $*" >&2
	exit 1
}

[ -x "$bin" ] || die "$bin not found: build first (meson setup build && ninja -C build)"

posix=no
if [ "${1:-}" = "--posix" ]; then
	posix=yes
	shift
fi

# The port the client hint names, and -t: the native stack has no threads
# but one worker per EAL lcore after the main one, so -t N becomes lcores
# 0-N there (unless SEGCACHED_LCORES says otherwise) and is not passed on.
port=11211
threads=
prev=
for a in "$@"; do
	case $prev in
	-p | --port) port=$a ;;
	-t | --threads) threads=$a ;;
	esac
	case $a in
	-p?*) port=${a#-p} ;;
	--port=*) port=${a#--port=} ;;
	-t?*) threads=${a#-t} ;;
	--threads=*) threads=${a#--threads=} ;;
	esac
	prev=$a
done

# Hugepages when the host has them reserved and mounted, else plain memory.
huge=--no-huge
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null || echo 0)" -gt 0 ] &&
	grep -q hugetlbfs /proc/mounts; then
	huge=
fi

if [ "$posix" = yes ] || [ "$(id -u)" -ne 0 ]; then
	[ "$posix" = yes ] || echo "run-server: not root: the posix stack" >&2
	echo "run-server: the posix stack on 127.0.0.1:$port" >&2
	exec "$bin" --no-huge --no-pci -- --stack posix "$@"
fi

# Native from here: -t leaves the line, and chooses the lcores.
n=$#
while [ "$n" -gt 0 ]; do
	a=$1
	shift
	n=$((n - 1))
	case $a in
	-t | --threads)
		if [ "$n" -gt 0 ]; then
			shift
			n=$((n - 1))
		fi
		continue
		;;
	-t?* | --threads=*) continue ;;
	esac
	set -- "$@" "$a"
done
if [ -z "$lcores" ]; then
	lcores=0-1
	if [ -n "$threads" ]; then
		case $threads in
		'' | *[!0-9]*) die "-t $threads: expected a number of worker threads" ;;
		esac
		[ "$threads" -ge 1 ] || die "-t $threads: at least 1"
		cpus=$(nproc)
		if [ $((threads + 1)) -gt "$cpus" ]; then
			echo "run-server: -t $threads: the native stack runs one worker per lcore besides the main one, and this process has $cpus CPUs: $((cpus - 1)) worker(s) on lcores 0-$((cpus - 1)) (SEGCACHED_LCORES chooses them)" >&2
			threads=$((cpus - 1))
			[ "$threads" -ge 1 ] || die "the native stack needs 2 CPUs (a main lcore and a worker); use --posix"
		fi
		lcores=0-$threads
		echo "run-server: -t $threads on the native stack: $threads worker lcore(s), EAL -l $lcores" >&2
	fi
elif [ -n "$threads" ]; then
	echo "run-server: -t $threads ignored: the native stack runs one worker per lcore of SEGCACHED_LCORES=$lcores after the first" >&2
fi

# A PCI device bound to a DPDK driver: the native stack drives it.
bound=
for drv in vfio-pci uio_pci_generic igb_uio; do
	for dev in /sys/bus/pci/drivers/$drv/0000:*; do
		[ -e "$dev" ] && bound="$bound $(basename "$dev")"
	done
done
if [ -n "$bound" ]; then
	case " $* " in
	*" --ip "*) ;;
	*) die "NIC(s)$bound bound to DPDK: give the server's address, e.g. --ip 198.18.0.2/24" ;;
	esac
	echo "run-server: the native stack on$bound" >&2
	exec "$bin" -l "$lcores" $huge -- --stack native "$@"
fi

# No NIC: a virtual port. The server's veth end has no kernel address and
# lives in a namespace of its own, so the host never routes its traffic.
srv_ns=$prefix-server
cli_ns=$prefix-client
srv_if=$(printf '%.15s' "${prefix}0")
cli_if=$(printf '%.15s' "${prefix}1")
pid=
created=
cleanup() {
	trap '' INT TERM # a second signal must not cut the clean-up short
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
	fi
	# Only this run's namespaces: deleting a namespace deletes its veth end,
	# and with it the pair.
	if [ -n "$created" ]; then
		ip netns del "$srv_ns" 2>/dev/null || true
		ip netns del "$cli_ns" 2>/dev/null || true
	fi
}
ns_exists() {
	[ -e "/run/netns/$1" ]
}
# A server namespace with a process in it belongs to a running server:
# deleting it would leave that server polling a port that is gone, and
# the server reads its link state only at start, so it would not say so.
# Empty ones are what a killed run left.
if ns_exists "$srv_ns" && [ -n "$(ip netns pids "$srv_ns" 2>/dev/null)" ]; then
	die "namespace $srv_ns is in use (pids $(ip netns pids "$srv_ns" | tr '\n' ' ' | sed 's/ $//')): another run-server.sh has prefix $prefix; stop it, or give this one another prefix, e.g. SEGCACHED_NETNS=${prefix}2 $0 ..."
fi
for ns in "$srv_ns" "$cli_ns"; do
	if ns_exists "$ns"; then
		echo "run-server: removing namespace $ns, left by a run that was killed" >&2
		ip netns del "$ns"
	fi
done
trap cleanup EXIT
trap 'exit 0' INT TERM

ip netns add "$srv_ns"
created=yes
ip netns add "$cli_ns"
ip link add "$srv_if" type veth peer name "$cli_if"
ip link set "$srv_if" netns "$srv_ns"
ip link set "$cli_if" netns "$cli_ns"
for ns in "$srv_ns" "$cli_ns"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" ip link set lo up
done
ip netns exec "$srv_ns" ip link set "$srv_if" up
ip netns exec "$cli_ns" ip addr add "$client_ip/24" dev "$cli_if"
ip netns exec "$cli_ns" ip link set "$cli_if" up
# Linux leaves the TCP/UDP checksums of veth packets unfilled unless told.
ip netns exec "$srv_ns" ethtool -K "$srv_if" tx off >/dev/null
ip netns exec "$cli_ns" ethtool -K "$cli_if" tx off >/dev/null

cat >&2 <<EOF
run-server: no DPDK NIC bound; the native stack on a virtual port
  (net_af_packet on veth $srv_if in namespace $srv_ns, address $server_ip).
  Clients run in namespace $cli_ns, e.g.:
    ip netns exec $cli_ns /usr/bin/python3 -c "from pymemcache.client.base import Client
    c = Client(('$server_ip', $port)); c.set('hello', 'world'); print(c.get('hello'))"
  /metrics (--metrics-port PORT) and --admin-port listen on kernel sockets
  inside $srv_ns (the server's 127.0.0.1), not on the host's: e.g.
    ip netns exec $srv_ns /usr/bin/python3 -c "import urllib.request as u
    print(u.urlopen('http://127.0.0.1:PORT/metrics').read().decode())"
  Ctrl-C stops the server and removes both namespaces.
EOF
ip netns exec "$srv_ns" "$bin" -l "$lcores" $huge --no-pci \
	--vdev="net_af_packet0,iface=$srv_if" -- --stack native --ip "$server_ip/24" "$@" &
pid=$!
wait "$pid"
