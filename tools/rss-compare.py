#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Memory a user sees: segcached's RSS beside memcached's after the same
replay, at each -m.

For each -m: starts the server, replays the same writes into it (keys
key:1..N with --value-size byte values, pipelined noreply sets, N chosen so
that the values alone are --fill times -m: the cache ends full and
evicting), then reads the process's /proc/PID/smaps_rollup (Rss, and Pss
split into anonymous, file and shmem pages) and its item count, and stops
it; the RSS idle column is read before the replay, a second after the
server first answered. segcached runs with the same -t as memcached's
default (4).

    tools/rss-compare.py --segcached build/app/segcached/segcached \\
        --memory 16,1024

The native stack, in the network of tests/functional/run_native.py (it
passes the harness options; memcached is not run there):

    tests/functional/run_native.py --segcached build/app/segcached/segcached \\
        $PWD/tools/rss-compare.py --memory 16,1024

Loopback (or the test network) only; every loop is bounded. Standard
library only, plus tests/functional/harness.py to start segcached.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "functional"))
import harness  # noqa: E402

BATCH = 2000          # pipelined sets per send
IDLE_SETTLE_S = 1.0   # after the first answer, before the idle RSS is read
THREADS = 4           # memcached's default -t
IO_TIMEOUT = 60.0


class Conn:
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=IO_TIMEOUT)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 16)
            if not d:
                raise EOFError("the server closed the connection")
            self.buf += d
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def stats(self):
        self.s.sendall(b"stats\r\n")
        out = {}
        for _ in range(1000):
            ln = self.line()
            if ln == b"END":
                return out
            parts = ln.split(b" ", 2)
            out[parts[1].decode()] = parts[2].decode()
        raise RuntimeError("no END after stats")

    def close(self):
        self.s.close()


def replay(host, port, n, value_size):
    """The same writes to any server: key:1..n, pipelined noreply sets, a
    `version` round trip at the end so that all ran."""
    c = Conn(host, port)
    value = (b"0123456789abcdefghijklmnopqrstuvwxyz" * (value_size // 36 + 1))[:value_size]
    for first in range(1, n + 1, BATCH):
        c.s.sendall(b"".join(b"set key:%d 0 0 %d noreply\r\n%s\r\n" % (i, value_size, value)
                             for i in range(first, min(n + 1, first + BATCH))))
    c.s.sendall(b"version\r\n")
    ln = c.line()
    if not ln.startswith(b"VERSION"):
        raise RuntimeError("replay: %r" % ln)
    st = c.stats()
    c.close()
    return st


def rollup(pid):
    """kB figures of /proc/PID/smaps_rollup."""
    out = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def wait_port(host, port, proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("exited with %d" % proc.returncode)
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("not listening after 30 s")


def measure_memcached(binary, memory, n, value_size):
    port = harness.free_port()
    cmd = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(memory),
           "-t", str(THREADS)]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    try:
        wait_port("127.0.0.1", port, proc)
        time.sleep(IDLE_SETTLE_S)
        idle = rollup(proc.pid)
        st = replay("127.0.0.1", port, n, value_size)
        return idle, rollup(proc.pid), st
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_segcached(memory, n, value_size):
    srv = harness.Server(name="rss-m%d" % memory, memory_mb=memory, threads=THREADS)
    srv.start()
    try:
        time.sleep(IDLE_SETTLE_S)
        idle = rollup(srv.proc.pid)
        st = replay(harness.HOST, srv.port, n, value_size)
        return idle, rollup(srv.proc.pid), st
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", default="16,1024", help="-m values, MiB (default 16,1024)")
    ap.add_argument("--value-size", type=int, default=1000)
    ap.add_argument("--fill", type=float, default=2.0,
                    help="values written, as a multiple of -m (default 2)")
    ap.add_argument("--no-memcached", action="store_true")
    mine, rest = ap.parse_known_args()
    harness.setup(rest)
    if mine.value_size < 1 or mine.fill <= 0:
        ap.error("--value-size and --fill must be positive")
    try:
        memories = [int(m) for m in mine.memory.split(",")]
    except ValueError:
        ap.error("--memory: a comma-separated list of MiB")
    memcached = None
    if not mine.no_memcached and not harness.is_native():
        memcached = shutil.which(harness.ARGS.memcached) or None
    stack = "native" if harness.is_native() else "posix"
    print("| server | -m MiB | RSS idle MiB | sets replayed | items after | RSS MiB | "
          "Pss anon MiB | Pss file MiB | Pss shmem MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in memories:
        n = int(m * (1 << 20) * mine.fill / mine.value_size)
        runs = [("segcached %s" % stack, lambda: measure_segcached(m, n, mine.value_size))]
        if memcached:
            runs.append(("memcached", lambda: measure_memcached(memcached, m, n,
                                                                mine.value_size)))
        for name, run in runs:
            idle, r, st = run()
            print("| %s | %d | %.1f | %d | %s | %.1f | %.1f | %.1f | %.1f |" %
                  (name, m, idle["Rss"] / 1024, n, st.get("curr_items", "?"), r["Rss"] / 1024,
                   r.get("Pss_Anon", 0) / 1024, r.get("Pss_File", 0) / 1024,
                   r.get("Pss_Shmem", 0) / 1024), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
