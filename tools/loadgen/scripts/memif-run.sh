#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One closed-loop GET run of segcached --stack native against
# segcached-loadgen over net_memif (two DPDK processes, one lcore each,
# no hugepages), for A/B comparisons of two builds in one session: run it
# alternately with each build's server and the same generator.
#
# usage: tools/loadgen/scripts/memif-run.sh SERVER_BUILD tcp|udp MULTIGET OUT.json [GENERATOR_BUILD]
#   SERVER_BUILD, GENERATOR_BUILD: meson build directories (the generator's
#   defaults to the server's). From the environment: KEYS (100000),
#   DURATION (3), CONNS (16) and DEPTH (4), SERVER_MEM (-m, 256), RATE (requests/s, open loop;
#   unset: closed loop), VALUE_SIZE (64). Exits with the generator's status.
#
# When the server has the busy_cycles counter, OUT.json also gets the
# server's own cost, from its telemetry between the generator's first
# "measure" progress line and its report (suite/native-cost.py):
# server_busy_ns_per_key and server_keys_per_busy_core_s. On a host where
# the generator shares the CPUs, keys/s end to end measure the pair; these
# measure the server.
set -u
srv_build=$1 proto=$2 multiget=$3 out=$4 gen_build=${5:-$1}
sock=/run/segcached-memif-run-$$.sock
log=$(mktemp)
udp="" rate="" srv_udp=""
# the preload sets over UDP too: the server must take writes there
[ "$proto" = udp ] && udp="--udp" srv_udp="--udp-writes"
[ -n "${RATE:-}" ] && rate="--rate $RATE"
conns=${CONNS:-16}
rm -f "$sock"
timeout 60 "$srv_build/app/segcached/segcached" -l 0,1 --main-lcore 0 --no-huge \
	--no-pci --file-prefix mrs$$ --vdev=net_memif0,role=server,socket=$sock,mac=02:00:00:00:00:02 \
	-- --stack native --ip 198.18.0.2/24 -p 22611 -U 22611 -m "${SERVER_MEM:-256}" --link-timeout 0 \
	-c $((conns + 64)) $srv_udp >"$log" 2>&1 &
srv=$!
for _ in $(seq 100); do grep -q " ready" "$log" && break; sleep 0.1; done
timeout 40 "$gen_build/tools/loadgen/segcached-loadgen" -l 0,1 --main-lcore 1 --no-huge \
	--no-pci --file-prefix mrg$$ -m $((192 + conns / 8)) --vdev=net_memif0,socket=$sock,mac=02:00:00:00:00:01 \
	-- --stack net --ip 198.18.0.1/24 --server 198.18.0.2:22611 --conns "$conns" \
	--depth "${DEPTH:-4}" $udp $rate \
	--keys "${KEYS:-100000}" --value-size "${VALUE_SIZE:-64}" --get-ratio 1.0 --multiget "$multiget" \
	--warmup 1 --duration "${DURATION:-3}" --json "$out" 2>&1 | {
	tel=/var/run/dpdk/mrs$$/dpdk_telemetry.v2 cost=$(dirname "$0")/../suite/native-cost.py
	snap=""
	while IFS= read -r line; do
		case "$line" in
		"["*"] measure"*)
			[ -z "$snap" ] && snap=$(mktemp) && { "$cost" "$tel" >"$snap" 2>/dev/null ||
				rm -f "$snap"; } ;;
		"["*) ;;
		throughput*)
			[ -n "$snap" ] && [ -f "$snap" ] && "$cost" "$tel" "$snap" >"$out.cost" 2>/dev/null
			rm -f "$snap"; snap=none
			printf '%s\n' "$line" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}
rc=${PIPESTATUS[0]}
if [ -s "$out.cost" ] && [ -s "$out" ]; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update(json.load(open(sys.argv[2])))
json.dump(d, open(sys.argv[1], "w"), indent=1)' "$out" "$out.cost"
fi
rm -f "$out.cost"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
rm -f "$sock" "$log"
exit $rc
