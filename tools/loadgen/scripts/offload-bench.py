#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Which offloads pay for themselves (issue 38): segcached --stack native on
net_virtio_user against segcached-loadgen on net_vhost (vhost-run.sh), its
offloads on and off (--offloads cksum,tso | cksum | none), beside the same
runs over net_memif (memif-run.sh, no offloads), TCP gets at depth 1 and
4, 64-byte values and 4 KiB values (replies TSO cuts), in alternating
rounds: every setup once per round, the order reversed every other round.

Reported per setup: the median of keys/s end to end and of the server's
own cost per key (server_busy_ns_per_key, from its busy-cycle counter:
what the server spends, where the generator shares the CPUs), the
ratios against memif and against offloads none of the same row, and the
retransmits and drops seen. A run with errors or corrupt values fails.

  tools/loadgen/scripts/offload-bench.py [--build build] [--rounds 3] [--duration 3]

Two DPDK processes, one lcore each, no hugepages; run it on a quiet host.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PORTS = [("memif", None), ("vhost", "none"), ("vhost", "cksum"), ("vhost", "cksum,tso")]


def run(build, port, offloads, depth, value, duration):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        env = dict(os.environ, VALUE_SIZE=str(value), DURATION=str(duration), DEPTH=str(depth),
                   KEYS="100000" if value <= 64 else "5000")
        if port == "memif":
            cmd = [os.path.join(HERE, "memif-run.sh"), build, "tcp", "1", out]
        else:
            env["OFFLOADS"] = offloads
            cmd = [os.path.join(HERE, "vhost-run.sh"), build, "tcp", str(depth), out]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError("%s %s depth %d: exit %d\n%s" % (port, offloads, depth,
                                                                r.returncode, r.stdout[-2000:]))
        d = json.load(open(out))
    if d.get("errors") or d.get("corrupt"):
        raise RuntimeError("%s %s depth %d with errors: %s" % (port, offloads, depth, d))
    return d


def keys_per_s(d):
    """A run's keys/s (the generator reports keys_per_s, older ones throughput)."""
    return d.get("keys_per_s", d.get("throughput", 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3)
    a = ap.parse_args()
    rows = [(d, v) for v in (64, 4096) for d in (1, 4)]
    got = {}
    for r in range(a.rounds):
        order = [(row, p) for row in rows for p in PORTS]
        if r % 2:
            order.reverse()
        for (depth, value), (port, off) in order:
            d = run(a.build, port, off, depth, value, a.duration)
            got.setdefault((depth, value, port, off), []).append(d)
            print("round %d depth %d value %d %s %s: %.0f keys/s, %s ns/key, tso %s, "
                  "retransmits %s" % (r, depth, value, port, off or "-", keys_per_s(d),
                                      d.get("server_busy_ns_per_key"),
                                      d.get("server_tcp_tx_tso"),
                                      d.get("server_tcp_retransmits")), file=sys.stderr)

    def med(runs, key):
        xs = [x.get(key) for x in runs if x.get(key) is not None]
        return statistics.median(xs) if xs else None

    def med_kps(runs):
        return statistics.median(keys_per_s(x) for x in runs)

    print("| depth | value | port | offloads | keys/s | x memif | x none | server ns/key "
          "| x memif | TSO segments | retransmits |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for depth, value in rows:
        base = got[(depth, value, "memif", None)]
        none = got[(depth, value, "vhost", "none")]
        for port, off in PORTS:
            runs = got[(depth, value, port, off)]
            kps, bkps, nkps = med_kps(runs), med_kps(base), med_kps(none)
            cost = med(runs, "server_busy_ns_per_key")
            bcost = med(base, "server_busy_ns_per_key")
            print("| %d | %d | %s | %s | %.0f | %.2f | %s | %s | %s | %s | %s |" % (
                depth, value, port, off or "-", kps, kps / bkps,
                "%.2f" % (kps / nkps) if port == "vhost" else "-",
                "%.0f" % cost if cost else "-",
                "%.2f" % (cost / bcost) if cost and bcost else "-",
                "%.0f" % med(runs, "server_tcp_tx_tso") if port == "vhost" else "-",
                "%.0f" % med(runs, "server_tcp_retransmits") if port == "vhost" else "-"))


if __name__ == "__main__":
    main()
