#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Large sets through the posix stack, two builds in alternating rounds
(issue 35: values read straight into their item must be no slower).

Each round starts each build's server (-m 64 -t 1, loopback), and one
client sends 128 MB of sets untimed (the heap touched and evicting:
steady state), then --sets sets of each --sizes value, timed (each set
sent whole, its STORED awaited: depth 1), then reads the last value back and checks it. Prints
per size the per-round new/old ratio of sets/s and their median.

  tools/protocol-bench/large-sets.py OLD/app/segcached/segcached \\
      NEW/app/segcached/segcached --rounds 5
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(binary, port):
    p = subprocess.Popen([binary, "--stack", "posix", "-p", str(port), "-U", "0", "-l",
                          "127.0.0.1", "-m", "64", "-t", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return p, socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            time.sleep(0.02)
    p.kill()
    raise RuntimeError("%s did not start" % binary)


def read_line(s, buf):
    while b"\r\n" not in buf[0]:
        d = s.recv(1 << 20)
        if not d:
            raise RuntimeError("closed")
        buf[0] += d
    line, buf[0] = buf[0].split(b"\r\n", 1)
    return line


def run(binary, size, sets):
    port = free_port()
    proc, s = start(binary, port)
    try:
        value = os.urandom(size // 2 + 1).hex().encode()[:size]
        buf = [b""]
        for i in range(max(1, (128 << 20) // size)):
            s.sendall(b"set w%d 0 0 %d\r\n" % (i % 200, size) + value + b"\r\n")
            if read_line(s, buf) != b"STORED":
                raise RuntimeError("not stored")
        t0 = time.perf_counter()
        for i in range(sets):
            s.sendall(b"set k%d 0 0 %d\r\n" % (i % 200, size) + value + b"\r\n")
            if read_line(s, buf) != b"STORED":
                raise RuntimeError("not stored")
        dt = time.perf_counter() - t0
        s.sendall(b"get k%d\r\n" % ((sets - 1) % 200))  # the last: never evicted yet
        head = read_line(s, buf)
        n = int(head.split()[-1])
        while len(buf[0]) < n + 7:
            buf[0] += s.recv(1 << 20)
        if buf[0][:n] != value:
            raise RuntimeError("wrong value read back")
        return sets / dt
    finally:
        s.close()
        proc.terminate()
        proc.wait(10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="100000,300000,1000000")
    ap.add_argument("--sets", type=int, default=2000)
    a = ap.parse_args()
    print("| value bytes | rounds | old sets/s (median) | new sets/s (median) | new / old: median (per round) |")
    print("|---:|---:|---:|---:|---|")
    for size in [int(x) for x in a.sizes.split(",")]:
        sets = max(50, a.sets * 100000 // size)
        old, new, ratios = [], [], []
        for r in range(a.rounds):
            order = (a.old, a.new) if r % 2 == 0 else (a.new, a.old)
            got = {b: run(b, size, sets) for b in order}
            old.append(got[a.old])
            new.append(got[a.new])
            ratios.append(got[a.new] / got[a.old])
            print("size %d round %d: old %.0f new %.0f sets/s" % (size, r, got[a.old],
                                                                 got[a.new]), file=sys.stderr)
        print("| %d | %d | %.0f | %.0f | **%.3f** (%s) |" % (
            size, a.rounds, statistics.median(old), statistics.median(new),
            statistics.median(ratios), ", ".join("%.2f" % x for x in ratios)))


if __name__ == "__main__":
    main()
