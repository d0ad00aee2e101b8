#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The work a `segcached --stack native` server did, read from its DPDK
telemetry socket: TSC cycles its lcores spent in busy loop iterations
(busy_cycles), the TSC rate and the keys looked up (cmd_get).

  native-cost.py SOCKET                  one snapshot, as JSON
  native-cost.py SOCKET BEFORE.json      the difference since BEFORE, with
                                         ns of lcore work per key and the
                                         keys/s one fully busy lcore would do

Two snapshots around a measurement give the server's own cost per
request, whatever the generator beside it could drive: on a host where
both share the CPUs, requests/s end to end measure the pair, this
measures the server (tools/loadgen/scripts/memif-run.sh records it).
"""
import json
import socket
import sys


def query(sock, cmd):
    sock.send(cmd.encode())
    return next(iter(json.loads(sock.recv(1 << 20)).values()))


def snapshot(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.recv(16384)  # the greeting
    net = query(s, "/segcached/net")
    stats = query(s, "/segcached/stats")
    s.close()
    return {"busy_cycles": int(net["busy_cycles"]), "tsc_hz": int(net["tsc_hz"]),
            "busy_loops": int(net["busy_loops"]), "loops": int(net["loops"]),
            "cmd_get": int(stats["cmd_get"]),
            # older builds lack the counter: 0 there
            "bytes_written": int(net.get("bytes_written", 0)),
            "bytes_composed_in_place": int(net.get("bytes_composed_in_place", 0))}


def main():
    now = snapshot(sys.argv[1])
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            before = json.load(f)
        d = {k: now[k] - before[k] for k in now if k != "tsc_hz"}
        keys = max(d["cmd_get"], 1)
        ns = d["busy_cycles"] * 1e9 / now["tsc_hz"] / keys
        now = {"server_busy_ns_per_key": round(ns, 1),
               "server_keys_per_busy_core_s": round(1e9 / ns) if ns > 0 else 0,
               "server_keys": d["cmd_get"],
               # the share of reply bytes composed in TCP's send ring
               "server_in_place_share": round(d["bytes_composed_in_place"] /
                                              max(d["bytes_written"], 1), 3)}
    json.dump(now, sys.stdout)
    print()


if __name__ == "__main__":
    main()
