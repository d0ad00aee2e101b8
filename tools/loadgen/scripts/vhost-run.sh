#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One closed-loop GET run of segcached --stack native on net_virtio_user
# against segcached-loadgen on net_vhost (two DPDK processes over a
# vhost-user socket, one lcore each, no hugepages): the port negotiates
# TCP/UDP checksum offload and TSO as a NIC offers them, where
# memif-run.sh's net_memif offers none. OFFLOADS picks what the server
# uses (its --offloads), so that runs with and without show which offloads
# pay for themselves; the generator uses what the port offers. VALUE_SIZE
# above the MSS (1460) makes replies that TSO cuts.
#
# usage: tools/loadgen/scripts/vhost-run.sh SERVER_BUILD tcp|udp DEPTH OUT.json [GENERATOR_BUILD]
#   From the environment: OFFLOADS (cksum,tso | cksum | none; cksum,tso),
#   KEYS (100000), VALUE_SIZE (64), CONNS (16), DURATION (3), SERVER_MEM (-m, 256).
#   Exits with the generator's status. OUT.json gets the generator's
#   report and, from the server's telemetry at the end, its offload
#   counters (server_tx_l4_cksum_offload, server_tx_l4_cksum_sw,
#   server_tcp_tx_tso, server_tcp_retransmits, ...) and its own cost per
#   key (suite/native-cost.py, as memif-run.sh).
#
# The whole matrix, offloads on and off, TCP and UDP, depth 1 and 4:
#   for o in cksum,tso cksum none; do for p in tcp udp; do for d in 1 4; do
#     OFFLOADS=$o tools/loadgen/scripts/vhost-run.sh build $p $d vhost-$o-$p-$d.json
#   done; done; done
set -u
srv_build=$1 proto=$2 depth=$3 out=$4 gen_build=${5:-$1}
sock=/run/segcached-vhost-run-$$.sock
log=$(mktemp) glog=$(mktemp)
udp="" srv_udp=""
[ "$proto" = udp ] && udp="--udp" srv_udp="--udp-writes"
conns=${CONNS:-16} value=${VALUE_SIZE:-64}
rm -f "$sock"
here=$(dirname "$0")
# The generator is the vhost-user socket's server: it must be there when
# the server's virtio_user port connects; it waits 5 s for its link.
timeout 60 "$gen_build/tools/loadgen/segcached-loadgen" -l 0,1 --main-lcore 1 --no-huge \
	--no-pci --file-prefix vrg$$ -m $((192 + conns / 8 + value * 4 / 1024)) \
	--vdev=net_vhost0,iface=$sock,queues=1,tso=1,ext-buffer=1 \
	-- --stack net --ip 198.18.0.1/24 --server 198.18.0.2:22611 --conns "$conns" \
	--depth "$depth" $udp --keys "${KEYS:-100000}" --value-size "$value" --get-ratio 1.0 \
	--warmup 1 --duration "${DURATION:-3}" --json "$out" >"$glog" 2>&1 &
gen=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
timeout 60 "$srv_build/app/segcached/segcached" -l 0,1 --main-lcore 0 --no-huge \
	--no-pci --file-prefix vrs$$ --vdev=net_virtio_user0,path=$sock,queues=1 \
	-- --stack native --ip 198.18.0.2/24 -p 22611 -U 22611 -m "${SERVER_MEM:-256}" \
	--link-timeout 0 -c $((conns + 64)) --offloads "${OFFLOADS:-cksum,tso}" $srv_udp \
	-I 2m >"$log" 2>&1 &
srv=$!
tel=/var/run/dpdk/vrs$$/dpdk_telemetry.v2 cost=$here/../suite/native-cost.py
snap=$(mktemp) measured=""
# the server's cost from the generator's first "measure" line to its end
# (memif-run.sh stops at the report line; the drain after it adds little)
while kill -0 "$gen" 2>/dev/null; do
	if [ -z "$measured" ] && grep -q "^\[.*\] measure" "$glog"; then
		"$cost" "$tel" >"$snap" 2>/dev/null && measured=yes || measured=no
	fi
	sleep 0.1
done
wait "$gen"
rc=$?
[ "$measured" = yes ] && "$cost" "$tel" "$snap" >"$out.cost" 2>/dev/null
grep -v "^\[" "$glog"
if [ -S "$tel" ] && [ -s "$out" ]; then
	python3 - "$out" "$tel" "$out.cost" <<'PY'
import json, os, socket, sys
out, tel, cost = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(tel)
s.recv(16384)
s.send(b"/segcached/net")
n = json.loads(s.recv(1 << 20).decode())["/segcached/net"]
d = json.load(open(out))
for k in ("tx_cksum_offload", "tx_tso", "tx_l4_cksum_offload", "tx_l4_cksum_sw",
          "tx_ip_cksum_sw", "tcp_tx_tso", "tcp_tx_segs", "tcp_retransmits",
          "rx_l4_cksum_unknown", "rx_l4_cksum_none", "rx_l4_cksum_good",
          "drop_tcp_bad_cksum", "drop_udp_bad_cksum", "nic_imissed"):
    d["server_" + k] = n.get(k)
if os.path.getsize(cost) if os.path.exists(cost) else 0:
    d.update(json.load(open(cost)))
json.dump(d, open(out, "w"), indent=1)
PY
fi
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
[ $rc -ne 0 ] && { echo "--- server log ---"; tail -20 "$log"; }
rm -f "$sock" "$log" "$glog" "$snap" "$out.cost"
rm -rf /var/run/dpdk/vrg$$ /var/run/dpdk/vrs$$
exit $rc
