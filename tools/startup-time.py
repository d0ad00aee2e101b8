#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Start to first reply: segcached beside memcached, alternating.

Each round starts segcached, then memcached (the order swaps every round,
so that neither always runs on a warmer cache), each with the same -m, -t
and a free loopback port, and times from just before the process is
created to the first `VERSION` reply on a fresh connection (connects retried
at once, every attempt bounded); then stops it with SIGTERM and waits for
its exit. What counts is the whole start: exec, the EAL or not, the heap,
the listening socket. It prints every round and, per server, the minimum,
median and maximum in milliseconds, and with --json the raw figures.

Run on a quiet host (nothing else busy) for numbers worth quoting:

    tools/startup-time.py --segcached build/app/segcached/segcached \\
        --rounds 30 -m 1024 -t 4

Extra segcached words go after --segcached-args (a string, split on
blanks), e.g. --segcached-args '--stack posix'. Loopback only; every loop
is bounded. Standard library only.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_reply(port, proc, deadline):
    """Connects until `version` is answered; False when the process exits
    or the deadline passes first."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
                s.sendall(b"version\r\n")
                data = b""
                while not data.endswith(b"\r\n") and len(data) < 4096:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"VERSION "):
                    return True
        except OSError:
            pass
    return False


def one_start(name, argv, port, log):
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    ok = first_reply(port, proc, t0 + READY_TIMEOUT)
    t1 = time.monotonic()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if not ok:
        raise RuntimeError("%s did not answer within %.0f s (exit %s): %s"
                           % (name, READY_TIMEOUT, proc.returncode, " ".join(argv)))
    return (t1 - t0) * 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segcached", required=True)
    ap.add_argument("--memcached", default=shutil.which("memcached"))
    ap.add_argument("--segcached-args", default="", help="extra words for segcached")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("-m", "--memory", default="64", help="-m for both (megabytes)")
    ap.add_argument("-t", "--threads", default="4", help="-t for both")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    a = ap.parse_args()
    if a.memcached is None:
        sys.exit("startup-time: memcached not found (tools/install-deps.sh installs it)")
    if a.rounds < 1 or a.rounds > 10000:
        sys.exit("startup-time: --rounds 1..10000")
    common = ["-l", "127.0.0.1", "-m", a.memory, "-t", a.threads, "-U", "0"]
    servers = {
        "segcached": lambda port: [a.segcached] + common + ["-p", str(port)] +
        a.segcached_args.split(),
        "memcached": lambda port: [a.memcached] + common + ["-p", str(port)] +
        (["-u", "nobody"] if os.geteuid() == 0 else []),
    }
    times = {name: [] for name in servers}
    with open(os.devnull, "wb") as log:
        for r in range(a.rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(list(servers)))
            line = []
            for name in order:
                port = free_port()
                ms = one_start(name, servers[name](port), port, log)
                times[name].append(ms)
                line.append("%s %.1f ms" % (name, ms))
            print("round %d: %s" % (r + 1, ", ".join(line)), flush=True)
    for name, t in times.items():
        print("%s: start to first reply, %d starts: min %.1f ms, median %.1f ms, max %.1f ms"
              % (name, len(t), min(t), statistics.median(t), max(t)))
    if a.json:
        print(json.dumps(times))


if __name__ == "__main__":
    main()
