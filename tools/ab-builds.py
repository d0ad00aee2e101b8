#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A/B of two builds of segcached on one host, in alternating rounds.

Noisy shared hosts drift by more than most changes move, so the two
builds are measured one after the other in every round (the order
alternates), and what is reported is the per-round ratio new/old and its
median, never an absolute number from separate runs.

  tools/ab-builds.py OLD_BUILD NEW_BUILD [--rounds 5] [--storage] [--memif]
                     [--posix] [--large-sets]

--storage: tools/storage-bench (both engines through engine.h, no network),
  one workload per --storage-args (default: seg and baseline, 1 thread,
  zipf 0.99 and uniform, 90% gets, 64-byte values); ratio of Mops/s.
--memif: tools/loadgen/scripts/memif-run.sh, segcached --stack native against
  segcached-loadgen over net_memif, TCP gets; each build's server with the
  NEW build's generator (the generator is held fixed); ratio of keys/s and
  of the server's own cost per key (server_busy_ns_per_key, lower is
  better) where the telemetry gives it.
--posix: segcached --stack posix on loopback (-m 1024 -t 1) against the NEW
  build's segcached-loadgen over kernel sockets: depth 1 (64 connections)
  and depth 4 (16), 90% gets of 64-byte values; ratio of requests/s. A run
  with errors or corrupt values fails the A/B.
--large-sets: the posix stack (-m 64 -t 1), one client: 128 MB of sets
  untimed (the heap full and evicting), then sets of each --sizes value
  at depth 1, timed, and the last value read back and checked; ratio of
  sets/s.

With no mode given: --storage and --memif. Each build directory must hold
the binaries already (ninja -C BUILD). Prints a Markdown table for
docs/performance.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "protocol-bench"))
import servers  # noqa: E402  (tools/protocol-bench: loopback servers and connections)
STORAGE_BENCH = "tools/storage-bench/segcached-storage-bench"
SERVER = "app/segcached/segcached"
LOADGEN = "tools/loadgen/segcached-loadgen"

DEFAULT_STORAGE = [
    "--engine seg --threads 1 --dist zipf:0.99 --keys 1000000 --value-size 64 --mix 90:10:0 "
    "-m 256M --ops 5000000",
    "--engine seg --threads 1 --dist uniform --keys 1000000 --value-size 64 --mix 90:10:0 "
    "-m 256M --ops 5000000",
    "--engine baseline --threads 1 --dist zipf:0.99 --keys 1000000 --value-size 64 "
    "--mix 90:10:0 -m 256M --ops 5000000",
]
# (name, environment for memif-run.sh, multiget)
DEFAULT_MEMIF = [
    ("TCP get, 64 B, 16 x 4", {"KEYS": "100000", "VALUE_SIZE": "64"}, "1"),
    ("TCP get, 4 KiB, 16 x 4", {"KEYS": "5000", "VALUE_SIZE": "4096"}, "1"),
]
# (depth, connections) of the posix rounds
POSIX_DEPTHS = [(1, 64), (4, 16)]


def storage_round(build, args):
    cmd = [os.path.join(build, STORAGE_BENCH)] + args.split() + ["--repeat", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    runs = json.loads(out)["runs"]
    return statistics.median(r["mops"] for r in runs)


def checked(d, what):
    if d.get("errors") or d.get("corrupt"):
        raise RuntimeError("%s with errors: %s" % (what, d))
    return d


def memif_round(build, gen_build, env, multiget):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        e = dict(os.environ, **env)
        subprocess.run([os.path.join(ROOT, "tools/loadgen/scripts/memif-run.sh"), build, "tcp",
                        multiget, out, gen_build], env=e, capture_output=True, text=True,
                       timeout=120, check=True)
        d = checked(json.load(open(out)), "memif run")
    return d["keys_per_s"] if "keys_per_s" in d else d["throughput"], \
        d.get("server_busy_ns_per_key")


def posix_server(build, memory):
    """One build's segcached on the posix stack, -t 1, without the EAL (as
    a memcached command line starts it), on a free loopback port."""
    return servers.Server('segcached', memory, 1, segcached=os.path.join(build, SERVER),
                          eal=False).start()


def posix_round(build, gen_build, depth, conns):
    srv = posix_server(build, 1024)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            subprocess.run([os.path.join(gen_build, LOADGEN), "--server",
                            "127.0.0.1:%d" % srv.port, "--conns", str(conns), "--depth",
                            str(depth), "--keys", "100000", "--value-size", "64",
                            "--get-ratio", "0.9", "--duration", "2", "--warmup", "0.5",
                            "--threads", "1", "--quiet", "--json", out],
                           capture_output=True, text=True, timeout=60, check=True)
            return checked(json.load(open(out)), "posix run")["throughput"]
    finally:
        srv.stop()


def large_sets_round(build, size, sets):
    srv = posix_server(build, 64)
    c = srv.connect()

    def store(key):
        c.send(b"set %s 0 0 %d\r\n" % (key, size) + value + b"\r\n")
        if c.line() != b"STORED":
            raise RuntimeError("not stored")
    try:
        value = os.urandom(size // 2 + 1).hex().encode()[:size]
        for i in range(max(1, (128 << 20) // size)):
            store(b"w%d" % (i % 200))
        t0 = time.perf_counter()
        for i in range(sets):
            store(b"k%d" % (i % 200))
        dt = time.perf_counter() - t0
        c.send(b"get k%d\r\n" % ((sets - 1) % 200))  # the last: never evicted yet
        if c.line() != b"VALUE k%d 0 %d" % ((sets - 1) % 200, size) or c.exact(size) != value:
            raise RuntimeError("wrong value read back")
        c.skip(2)
        if c.line() != b"END":
            raise RuntimeError("no END after the value")
        return sets / dt
    finally:
        c.close()
        srv.stop()


def alternate(a, name, measure):
    """measure(build) in a.rounds rounds, the order alternating; (old, new) pairs."""
    pairs = []
    for r in range(a.rounds):
        if r % 2 == 0:
            old = measure(a.old)
            new = measure(a.new)
        else:
            new = measure(a.new)
            old = measure(a.old)
        pairs.append((old, new))
        print("%s round %d: old %s new %s" % (name, r, old, new), file=sys.stderr)
    return pairs


def ratio_row(name, pairs, lower_is_better=False):
    ratios = [(n / o if not lower_is_better else o / n) for o, n in pairs if o and n]
    if not ratios:
        return "| %s | - | - |" % name
    return "| %s | %d | **%.3f** (%s) |" % (name, len(ratios), statistics.median(ratios),
                                           ", ".join("%.2f" % r for r in ratios))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--storage", action="store_true")
    ap.add_argument("--storage-args", action="append")
    ap.add_argument("--memif", action="store_true")
    ap.add_argument("--posix", action="store_true")
    ap.add_argument("--large-sets", action="store_true")
    ap.add_argument("--sizes", default="100000,300000,1000000",
                    help="--large-sets value sizes (bytes)")
    ap.add_argument("--sets", type=int, default=2000,
                    help="--large-sets: timed sets per round at 100 KB (fewer at larger sizes)")
    a = ap.parse_args()
    if not (a.storage or a.memif or a.posix or a.large_sets):
        a.storage = a.memif = True
    rows = []
    if a.storage:
        for args in a.storage_args or DEFAULT_STORAGE:
            rows.append(ratio_row("storage-bench " + args, alternate(
                a, "storage " + args, lambda b: storage_round(b, args))))
    if a.memif:
        for name, env, multiget in DEFAULT_MEMIF:
            pairs = alternate(a, "memif " + name, lambda b: memif_round(b, a.new, env, multiget))
            rows.append(ratio_row(name + ", keys/s", [(o[0], n[0]) for o, n in pairs]))
            rows.append(ratio_row(name + ", server cost per key (old/new)",
                                  [(o[1], n[1]) for o, n in pairs], lower_is_better=True))
    if a.posix:
        for depth, conns in POSIX_DEPTHS:
            name = "posix loopback, 90%% gets, 64 B, depth %d x %d conns, requests/s" % (depth,
                                                                                       conns)
            rows.append(ratio_row(name, alternate(
                a, name, lambda b: posix_round(b, a.new, depth, conns))))
    if a.large_sets:
        for size in [int(x) for x in a.sizes.split(",")]:
            sets = max(50, a.sets * 100000 // size)
            name = "posix large sets, %d bytes, depth 1, sets/s" % size
            rows.append(ratio_row(name, alternate(
                a, name, lambda b: large_sets_round(b, size, sets))))
    print("| workload | rounds | new / old: median (per round) |")
    print("|---|---|---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
