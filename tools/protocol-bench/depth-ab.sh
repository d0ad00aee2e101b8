#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The posix stack, two builds, depth 1 (64 conns) and depth 4 (16 conns), 3 alternating
# rounds, 90% gets of 64-byte values on loopback (issue 35: no loss).
#   tools/protocol-bench/depth-ab.sh OLD/app/segcached/segcached build/app/segcached/segcached
OLD=${1:?old segcached binary}; NEW=${2:?new segcached binary}
LG=${3:-build/tools/loadgen/segcached-loadgen}
for r in 0 1 2; do
  if [ $((r%2)) = 0 ]; then order="OLD NEW"; else order="NEW OLD"; fi
  for b in $order; do
    bin=${!b}; port=$((23000+r*2+RANDOM%100))
    $bin --stack posix -p $port -U 0 -l 127.0.0.1 -m 1024 -t 1 >/dev/null 2>&1 & pid=$!; sleep 0.5
    for d in "1 64" "4 16"; do set -- $d
      timeout 30 $LG --server 127.0.0.1:$port --conns $2 --depth $1 --keys 100000 --value-size 64 --get-ratio 0.9 --duration 2 --warmup 0.5 --threads 1 --quiet --json /tmp/lg.json >/dev/null 2>&1
      /usr/bin/python3 -c "import json;d=json.load(open('/tmp/lg.json'));print('round $r $b depth $1', round(d.get('throughput',0)), 'errors',d.get('errors'),'corrupt',d.get('corrupt'))"
    done
    kill $pid; wait $pid 2>/dev/null
  done
done
