#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Starts segcached the way this host allows, in the foreground:
#
#  * a NIC bound to a DPDK driver (vfio-pci, uio_pci_generic, igb_uio): the
#    native stack on it (give its address with --ip ADDR/LEN);
#  * no such NIC, as root: the native stack on a virtual port, a veth pair
#    between two network namespaces this script creates (server 198.18.0.2,
#    client 198.18.0.1; benchmarking range, RFC 2544) and removes again when
#    the server stops. The port is net_af_xdp where the kernel and the DPDK
#    build support it on this veth (a probe: segcached starts on it and
#    answers a ping), else net_af_packet; the first lines say which, and why;
#  * not root, or --posix: the posix stack (kernel sockets) on 127.0.0.1.
#
# Usage: tools/run-server.sh [--posix] [segcached options...]
# Environment: SEGCACHED (the binary; default build/app/segcached/segcached
# of the tree this script is in), SEGCACHED_NETNS (name prefix of the
# namespaces; default segcached: a second server on the virtual port needs
# another), SEGCACHED_LCORES (EAL --lcores for the native stack; default 0-1,
# or 0-N for -t N), SEGCACHED_VPORT (the virtual port: auto, the default,
# af_xdp or af_packet).
# Stop it with Ctrl-C or SIGTERM.
set -eu

# Paths from the script's own place, so it runs from any directory.
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEGCACHED:-$root/build/app/segcached/segcached}
prefix=${SEGCACHED_NETNS:-segcached}
lcores=${SEGCACHED_LCORES:-}
vport=${SEGCACHED_VPORT:-auto}
server_ip=198.18.0.2
client_ip=198.18.0.1

die() {
	echo "run-server: $*" >&2
	exit 1
}

[ -x "$bin" ] || die "$bin not found: build first (meson setup build && ninja -C build)"
case $vport in
auto | af_xdp | af_packet) ;;
*) die "SEGCACHED_VPORT=$vport: expected auto, af_xdp or af_packet" ;;
esac

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
		echo "run-server: -t $threads on the native stack: $threads worker lcore(s), EAL --lcores $lcores" >&2
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
	exec "$bin" --lcores="$lcores" $huge -- --stack native "$@"
fi

# No NIC: a virtual port. The server's veth end has no kernel address and
# lives in a namespace of its own, so the host never routes its traffic.
srv_ns=$prefix-server
cli_ns=$prefix-client
srv_if=$(printf '%.15s' "${prefix}0")
cli_if=$(printf '%.15s' "${prefix}1")
pid=
holder=
created=
cleanup() {
	trap '' INT TERM # a second signal must not cut the clean-up short
	[ -z "$holder" ] || kill "$holder" 2>/dev/null || true
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
# Worker lcores in an EAL --lcores list (all but the main one): numbers,
# ranges and N@CPU forms; 0 when the list is beyond this count.
count_workers() {
	ids=$(echo "$1" | sed 's/@([^)]*)//g; s/@[0-9-]*//g')
	case $ids in *[!0-9,-]*) echo 0; return ;; esac
	nl=0
	for r in $(echo "$ids" | tr ',' ' '); do
		case $r in
		*-*) nl=$((nl + ${r#*-} - ${r%-*} + 1)) ;;
		*) nl=$((nl + 1)) ;;
		esac
	done
	echo $((nl - 1))
}
# Whether net_af_xdp serves on the veth here: segcached starts on it (the
# driver loads, each AF_XDP socket binds its queue, the XDP program
# attaches) and answers a ping from the client namespace; then it stops.
# Prints why not and fails otherwise. Bounded: 60 s to start. It listens
# on TCP port 1 only, so that no client of the real server is answered by
# the probe (and then left without a server while the probe stops).
probe_af_xdp() {
	pmds=$(pkg-config --variable=libdir libdpdk 2>/dev/null || echo /usr/lib)
	if ! ls "$pmds"/dpdk/pmds-*/librte_net_af_xdp.so* "$pmds"/librte_net_af_xdp.so* \
		>/dev/null 2>&1; then
		echo "this DPDK has no net_af_xdp driver (librte-net-af-xdp23)"
		return 1
	fi
	plog=$(mktemp)
	ip netns exec "$srv_ns" "$bin" --lcores="$lcores" --no-huge --no-pci --no-shconf \
		--file-prefix "$prefix-probe" --vdev="$xdp_vdev" -- --stack native \
		--ip "$server_ip/24" -p 1 -U 0 -m 8 -c 16 >"$plog" 2>&1 &
	ppid=$!
	i=0
	while [ $i -lt 600 ] && kill -0 "$ppid" 2>/dev/null && ! grep -q ' ready: ' "$plog"; do
		sleep 0.1
		i=$((i + 1))
	done
	ok=no
	if grep -q ' ready: ' "$plog"; then
		if ip netns exec "$cli_ns" ping -c 1 -W 5 "$server_ip" >/dev/null 2>&1; then
			ok=yes
		else
			echo "segcached started on net_af_xdp but did not answer a ping"
		fi
	else
		# The driver's own lines say why (e.g. no combined channels
		# for queue_count, no AF_XDP socket in the kernel).
		grep -i -E 'xdp|^[^ ]* [a-z_]+\(\): |no DPDK port' "$plog" | grep -v -E 'bpffs|dispatcher|unrecognized' |
			sed 's/^[0-9T:.-]*Z //' | head -n 2 |
			tr '\n' ';' | sed 's/;$//; s/;/; /g'
	fi
	kill "$ppid" 2>/dev/null || true
	wait "$ppid" 2>/dev/null || true
	rm -f "$plog"
	rm -rf "/var/run/dpdk/$prefix-probe"
	[ $ok = yes ]
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
workers=$(count_workers "$lcores")
[ "$workers" -ge 1 ] || die "SEGCACHED_LCORES=$lcores: expected a main lcore and at least one worker, as numbers, ranges or N@CPU (e.g. 0-2, 0@0,1@1,2@0)"
trap cleanup EXIT
trap 'exit 0' INT TERM

ip netns add "$srv_ns"
created=yes
ip netns add "$cli_ns"
# A process in the server namespace from now on, so that a second run
# with this prefix sees it in use also between the probe and the server.
ip netns exec "$srv_ns" sleep 600 &
holder=$!
# One queue pair per worker lcore on both ends: a veth hands a frame to the
# RX queue numbered like the TX queue the sender used, and net_af_xdp
# listens only on the queues it has (one, on a veth: docs/operations.md).
# af_packet fans flows out by hash over its qpairs itself.
ip link add "$srv_if" numtxqueues "$workers" numrxqueues "$workers" type veth \
	peer name "$cli_if" numtxqueues "$workers" numrxqueues "$workers"
ip link set "$srv_if" netns "$srv_ns"
ip link set "$cli_if" netns "$cli_ns"
for ns in "$srv_ns" "$cli_ns"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" ip link set lo up
done
ip netns exec "$srv_ns" ip link set "$srv_if" up
ip netns exec "$cli_ns" ip addr add "$client_ip/24" dev "$cli_if"
ip netns exec "$cli_ns" ip link set "$cli_if" up
# Linux leaves the TCP/UDP checksums of veth packets unfilled unless told;
# af_packet and af_xdp both see them so (lib/net drops them).
ip netns exec "$srv_ns" ethtool -K "$srv_if" tx off >/dev/null
ip netns exec "$cli_ns" ethtool -K "$cli_if" tx off >/dev/null

# The port: net_af_xdp where it works here, else net_af_packet.
xdp_vdev="net_af_xdp0,iface=$srv_if,start_queue=0,queue_count=$workers"
pkt_vdev="net_af_packet0,iface=$srv_if,qpairs=$workers"
case $vport in
af_packet)
	vdev=$pkt_vdev
	echo "run-server: net_af_packet, as SEGCACHED_VPORT=af_packet asks" >&2
	;;
af_xdp)
	vdev=$xdp_vdev
	echo "run-server: net_af_xdp, as SEGCACHED_VPORT=af_xdp asks (no probe)" >&2
	;;
auto)
	if why=$(probe_af_xdp); then
		vdev=$xdp_vdev
		echo "run-server: net_af_xdp with $workers queue(s): the probe started segcached on it and it answered a ping" >&2
	else
		vdev=$pkt_vdev
		echo "run-server: net_af_xdp is not usable here ($why); falling back to net_af_packet with $workers queue(s)" >&2
	fi
	;;
esac

cat >&2 <<EOF
run-server: no DPDK NIC bound; the native stack on a virtual port
  (${vdev%%0,*} on veth $srv_if in namespace $srv_ns, address $server_ip).
  Clients run in namespace $cli_ns, e.g.:
    ip netns exec $cli_ns /usr/bin/python3 -c "from pymemcache.client.base import Client
    c = Client(('$server_ip', $port)); c.set('hello', 'world'); print(c.get('hello'))"
  /metrics (--metrics-port PORT) and --admin-port listen on kernel sockets
  inside $srv_ns (the server's 127.0.0.1), not on the host's: e.g.
    ip netns exec $srv_ns /usr/bin/python3 -c "import urllib.request as u
    print(u.urlopen('http://127.0.0.1:PORT/metrics').read().decode())"
  Ctrl-C stops the server and removes both namespaces.
EOF
ip netns exec "$srv_ns" "$bin" --lcores="$lcores" $huge --no-pci \
	--vdev="$vdev" -- --stack native --ip "$server_ip/24" "$@" &
pid=$!
# The holder goes once the server is in the namespace itself.
i=0
while [ $i -lt 100 ] && ! ip netns pids "$srv_ns" 2>/dev/null | grep -qx "$pid"; do
	sleep 0.05
	i=$((i + 1))
done
kill "$holder" 2>/dev/null || true
holder=
wait "$pid"
