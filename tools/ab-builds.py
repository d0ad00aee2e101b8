#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A/B of two builds of segcached on one host, in alternating rounds.

Noisy shared hosts drift by more than most changes move, so the two
builds are measured one after the other in every round (the order
alternates), and what is reported is the per-round ratio new/old and its
median, never an absolute number from separate runs.

  tools/ab-builds.py OLD_BUILD NEW_BUILD [--rounds 5] [--storage] [--memif]

--storage: tools/storage-bench (both engines through engine.h, no network),
  one workload per --storage-args (default: seg and baseline, 1 thread,
  zipf 0.99 and uniform, 90% gets, 64-byte values); ratio of Mops/s.
--memif: tools/loadgen/scripts/memif-run.sh, segcached --stack native against
  segcached-loadgen over net_memif, TCP gets; each build's server with the
  NEW build's generator (the generator is held fixed); ratio of keys/s and
  of the server's own cost per key (server_busy_ns_per_key, lower is
  better) where the telemetry gives it.

Each build directory must hold the binaries already (ninja -C BUILD).
Prints a Markdown table for docs/performance.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORAGE_BENCH = "tools/storage-bench/segcached-storage-bench"

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


def storage_round(build, args):
    cmd = [os.path.join(build, STORAGE_BENCH)] + args.split() + ["--repeat", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    runs = json.loads(out)["runs"]
    return statistics.median(r["mops"] for r in runs)


def memif_round(build, gen_build, env, multiget):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        e = dict(os.environ, **env)
        subprocess.run([os.path.join(ROOT, "tools/loadgen/scripts/memif-run.sh"), build, "tcp",
                        multiget, out, gen_build], env=e, capture_output=True, text=True,
                       timeout=120, check=True)
        d = json.load(open(out))
    if d.get("errors") or d.get("corrupt"):
        raise RuntimeError("memif run with errors: %s" % d)
    return d["keys_per_s"] if "keys_per_s" in d else d["throughput"], \
        d.get("server_busy_ns_per_key")


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
    a = ap.parse_args()
    if not a.storage and not a.memif:
        a.storage = a.memif = True
    rows = []
    if a.storage:
        for args in a.storage_args or DEFAULT_STORAGE:
            pairs = []
            for r in range(a.rounds):
                order = (a.old, a.new) if r % 2 == 0 else (a.new, a.old)
                got = {b: storage_round(b, args) for b in order}
                pairs.append((got[a.old], got[a.new]))
                print("storage %s round %d: old %.3f new %.3f Mops/s" %
                      (args, r, got[a.old], got[a.new]), file=sys.stderr)
            rows.append(ratio_row("storage-bench " + args, pairs))
    if a.memif:
        for name, env, multiget in DEFAULT_MEMIF:
            tput, cost = [], []
            for r in range(a.rounds):
                order = (a.old, a.new) if r % 2 == 0 else (a.new, a.old)
                got = {b: memif_round(b, a.new, env, multiget) for b in order}
                tput.append((got[a.old][0], got[a.new][0]))
                cost.append((got[a.old][1], got[a.new][1]))
                print("memif %s round %d: old %s new %s" % (name, r, got[a.old], got[a.new]),
                      file=sys.stderr)
            rows.append(ratio_row(name + ", keys/s", tput))
            rows.append(ratio_row(name + ", server cost per key (old/new)", cost,
                                  lower_is_better=True))
    print("| workload | rounds | new / old: median (per round) |")
    print("|---|---|---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
