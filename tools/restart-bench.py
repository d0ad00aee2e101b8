#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Warm restart benchmark: segcached --heap-file vs memcached -e.

For each server: start it with its heap in a file under /dev/shm and the
same -m, fill it with the same objects (keys 1..N, fixed-size values,
pipelined noreply sets), stop it gracefully (segcached: SIGTERM; memcached
-e: SIGUSR1), start it again over the same file and time

* stop: from the signal to the process's exit (the save);
* serve: from starting the process to the first hit on a stored key (the
  whole start: EAL or not, mapping, recovery, listening);
* rebuild: segcached's own figure for the recovery (`restart_seconds` in
  `stats`), and objects/s = recovered objects / rebuild (memcached has no
  separate figure: its objects/s is over the whole start).

segcached restarts once per --threads value (each restart saves again, so
the same data is restarted at 1, 2, ... threads). Each start comes --down
seconds after the stop. Then a sample of keys is read back to check the
restart kept them. Loopback only; every loop is
bounded. Standard library only.

    tools/restart-bench.py --segcached build/app/segcached/segcached \\
        --memory 1024 --objects 6000000 --value-size 64 --threads 1,2
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

BATCH = 10_000
TIMEOUT = 300.0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def value(i, size):
    head = b"%d:" % i
    return (head * (size // len(head) + 1))[:size]


class Conn:
    def __init__(self, port, timeout=TIMEOUT):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError("closed")
            self.buf += d
        i = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError("closed")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def cmd(self, data):
        self.s.sendall(data)
        return self.line()

    def stats(self):
        self.s.sendall(b"stats\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END\r\n":
                return out
            p = ln.decode().split(" ", 2)
            out[p[1]] = p[2].strip()

    def get_many(self, keys):
        self.s.sendall(b"get " + b" ".join(keys) + b"\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END\r\n":
                return out
            p = ln.split()
            out[p[1]] = self.exact(int(p[3]) + 2)[:-2]

    def close(self):
        self.s.close()


class Server:
    def __init__(self, kind, args, port):
        self.kind, self.args, self.port = kind, args, port
        self.proc = None

    def start(self):
        """Starts it; returns seconds until the first hit on key 1."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        while time.monotonic() - t0 < TIMEOUT:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %d" % (self.kind, self.proc.returncode))
            try:
                c = Conn(self.port, timeout=5)
                c.s.sendall(b"get 1\r\n")
                ln = c.line()
                c.close()
                if ln.startswith(b"VALUE") or ln == b"END\r\n":
                    return time.monotonic() - t0, ln.startswith(b"VALUE")
            except OSError:
                time.sleep(0.002)
        raise RuntimeError("%s did not answer" % self.kind)

    def stop(self, sig):
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=TIMEOUT)
        if rc != 0:
            raise RuntimeError("%s exited with %d" % (self.kind, rc))
        return time.monotonic() - t0

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def fill(port, n, size):
    c = Conn(port)
    for first in range(1, n + 1, BATCH):
        last = min(n, first + BATCH - 1)
        c.s.sendall(b"".join(b"set %d 0 0 %d noreply\r\n%s\r\n" % (i, size, value(i, size))
                             for i in range(first, last + 1)))
    assert c.cmd(b"version\r\n").startswith(b"VERSION"), "fill failed"
    st = c.stats()
    c.close()
    return int(st["curr_items"]), int(st.get("evictions", 0))


def check_sample(port, n, size):
    c = Conn(port)
    keys = [b"%d" % i for i in range(1, n + 1, max(1, n // 2000))]
    got = {}
    for i in range(0, len(keys), 100):
        got.update(c.get_many(keys[i:i + 100]))
    st = c.stats()
    c.close()
    bad = sum(1 for k in got if got[k] != value(int(k), size))
    return len(got), len(keys), bad, st


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--segcached", default="build/app/segcached/segcached")
    ap.add_argument("--memcached", default="memcached")
    ap.add_argument("--memory", type=int, default=1024, help="-m in MiB for both")
    ap.add_argument("--objects", type=int, default=6_000_000)
    ap.add_argument("--value-size", type=int, default=64)
    ap.add_argument("--threads", default="1,2", help="segcached --restart-threads values")
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--down", type=float, default=3.0,
                    help="seconds between stop and start (memcached 1.6.18 -e refuses a "
                    "restart within about 2 s of its stop and starts cold)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="restarts per configuration (the table shows the median and range)")
    ap.add_argument("--no-memcached", action="store_true", help="segcached only")
    ap.add_argument("--verify-too", action="store_true",
                    help="also restart segcached with --restart-verify")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    a.load0 = os.getloadavg()[0]
    seg_file = os.path.join(a.dir, "restart-bench-%d.segcached" % os.getpid())
    mc_file = os.path.join(a.dir, "restart-bench-%d.memcached" % os.getpid())
    try:
        # segcached
        port = free_port()
        base = [a.segcached, "--no-huge", "--", "--stack", "posix", "-l", "127.0.0.1",
                "-p", str(port), "-m", str(a.memory), "-t", "2", "--heap-file", seg_file]
        srv = Server("segcached", base + ["--restart-threads", "1"], port)
        cold, _ = srv.start()
        rows.append(cold_row("segcached", cold))
        items, ev = fill(port, a.objects, a.value_size)
        print("segcached: %d objects stored of %d (%d evictions)" % (items, a.objects, ev),
              file=sys.stderr)
        stop = srv.stop(signal.SIGTERM)
        configs = [(int(x), False) for x in a.threads.split(",")]
        if a.verify_too:
            configs += [(t, True) for t, _ in configs]
        for t, verify in configs * a.rounds:
            time.sleep(a.down)
            srv = Server("segcached", base + ["--restart-threads", str(t)] +
                         (["--restart-verify"] if verify else []), port)
            serve, hit = srv.start()
            got, asked, bad, st = check_sample(port, a.objects, a.value_size)
            rebuild = float(st["restart_seconds"])
            rows.append({"server": "segcached" + (" --restart-verify" if verify else ""),
                         "threads": t, "objects": int(st["restart_items"]),
                         "state": st["restart_state"], "stop_s": stop, "serve_s": serve,
                         "rebuild_s": rebuild,
                         "objects_per_s": int(st["restart_items"]) / rebuild if rebuild else 0,
                         "sample_hits": "%d/%d" % (got, asked), "sample_bad": bad,
                         "first_get_hit": hit})
            stop = srv.stop(signal.SIGTERM)
        if a.no_memcached:
            return report(a, rows)
        # memcached -e: the same objects, the same -m
        port = free_port()
        args = [a.memcached, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(a.memory),
                "-t", "2", "-e", mc_file]
        if os.geteuid() == 0:
            args += ["-u", "nobody"]
            open(mc_file, "a").close()
            os.chown(mc_file, 65534, 65534)
        srv = Server("memcached", args, port)
        cold, _ = srv.start()
        rows.append(cold_row("memcached -e", cold))
        items, ev = fill(port, a.objects, a.value_size)
        print("memcached: %d objects stored of %d (%d evictions)" % (items, a.objects, ev),
              file=sys.stderr)
        stop = srv.stop(signal.SIGUSR1)
        for _ in range(a.rounds):
            time.sleep(a.down)
            srv = Server("memcached", args, port)
            serve, hit = srv.start()
            got, asked, bad, st = check_sample(port, a.objects, a.value_size)
            rows.append({"server": "memcached -e", "threads": 1,
                         "objects": int(st["curr_items"]),
                         "state": "warm" if int(st["curr_items"]) else "cold", "stop_s": stop,
                         "serve_s": serve, "rebuild_s": None, "objects_per_s": None,
                         "sample_hits": "%d/%d" % (got, asked), "sample_bad": bad,
                         "first_get_hit": hit})
            stop = srv.stop(signal.SIGUSR1)
    finally:
        for f in (seg_file, mc_file, mc_file + ".meta"):
            if os.path.exists(f):
                os.unlink(f)
    return report(a, rows)


def cold_row(server, serve):
    """The first start, on a new file: what a start costs without data."""
    return {"server": server + " (new file)", "threads": 0, "objects": 0, "state": "cold",
            "stop_s": None, "serve_s": serve, "rebuild_s": None, "objects_per_s": None,
            "sample_hits": "", "sample_bad": 0, "first_get_hit": False}


def spread(vals, fmt):
    """median (min-max) of the values, or the one value."""
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return ""
    med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] +
                                                      vals[len(vals) // 2]) / 2
    if len(vals) == 1:
        return fmt % med
    return (fmt + " (" + fmt + "–" + fmt + ")") % (med, vals[0], vals[-1])


def report(a, rows):
    print("load average (1 min) at the start and the end: %.1f, %.1f; %d CPUs" %
          (a.load0, os.getloadavg()[0], os.cpu_count()), file=sys.stderr)
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    groups = {}
    for r in rows:
        groups.setdefault((r["server"], r["threads"]), []).append(r)
    print("| server | restart threads | objects recovered | stop (save) s | rebuild s | "
          "rebuild objects/s | time to serve s | objects / time to serve | sample read back |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (server, threads), rs in groups.items():
        objs = rs[0]["objects"]
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            server, threads or "", "{:,}".format(objs) if objs else "",
            spread([r["stop_s"] for r in rs], "%.3f"),
            spread([r["rebuild_s"] for r in rs], "%.3f"),
            spread([r["objects_per_s"] / 1e6 if r["objects_per_s"] else None for r in rs],
                   "%.1f M"),
            spread([r["serve_s"] for r in rs], "%.3f"),
            spread([r["objects"] / r["serve_s"] / 1e6 if r["objects"] else None for r in rs],
                   "%.1f M"),
            ", ".join(sorted({r["sample_hits"] + (" %d wrong" % r["sample_bad"]
                                                  if r["sample_bad"] else "")
                              for r in rs if r["sample_hits"]}))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
