#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The UDP server path alone: one worker lcore replays a pcap of
memcached UDP requests through DPDK's net_pcap (issue 24).

No client and no network: the port's RX is a pcap file that net_pcap
replays forever (infinite_rx=1), its TX is dropped (or written to a pcap
with --tx-pcap). The rate is the server's own: cmd_get + cmd_set from the
telemetry's /segcached/stats over --seconds, after --warmup seconds.

Working sets: with --keys up to --pcap-preload-max the pcap itself
starts with a set of every key (the replay loops over those sets too,
they are 1/12 of the pcap by default), and the loop of --requests
requests is the working set. A larger key space fits neither in the RX
pool (which must hold an infinite_rx file whole) nor in a short loop, so
net_pcap reads a file once through instead (from --work-dir, tmpfs by
default): a set of every key, then --stream-requests random requests
over all keys repeated to last the run (a run whose file ran out is
measured up to there and flagged "short"). Reading a file costs the server a little more per request than
infinite_rx, the same for every build.

Builds are measured in alternating rounds (A B, B A, A B, ...) so that a
noisy host's drift falls on both; the per-round ratio to the first build
is printed with the medians and ranges.

  tools/udp-replay/udp_replay.py [--keys 500] [--rounds 3] BUILD [BUILD...]

BUILD is a meson build directory (or a segcached binary). Needs root
(DPDK's telemetry socket under /var/run/dpdk) and no hugepages.
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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pcap_requests  # noqa: E402

_runs = [0]


def binary_of(build):
    if os.path.isfile(build):
        return build
    return os.path.join(build, "app", "segcached", "segcached")


def udp_options(binary):
    """Writes over UDP, no reply cap: options a build from before they
    existed (which served every command over UDP, uncapped) lacks."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    return [o for o in ("--udp-writes", "--udp-reply-max", "0") if o == "0" or o in out]


def telemetry(prefix, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
        s.recv(16384)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode())[cmd]
    finally:
        s.close()


class Replay:
    """One segcached --stack native process on a net_pcap port."""

    def __init__(self, binary, rx_pcap, infinite=True, tx_pcap=None, memory_mb=1024,
                 cpus=(0, 1), logdir=None, extra=None):
        _runs[0] += 1
        self.prefix = "udpreplay%d_%d" % (os.getpid(), _runs[0])
        vdev = "net_pcap0,rx_pcap=%s" % rx_pcap
        if infinite:
            vdev += ",infinite_rx=1"
        if tx_pcap:
            vdev += ",tx_pcap=%s" % tx_pcap
        eal = ["--no-huge", "-m", "1024", "--no-pci", "--no-shconf",
               "--lcores", "0@%d,1@%d" % cpus, "--file-prefix", self.prefix,
               "--vdev=" + vdev]
        args = ["--stack", "native", "--ip", "198.18.0.2/24", "-p", "0", "-U", "11211",
                "--rx-desc", "4096", "-m", str(memory_mb), "--link-timeout", "0"]
        udp = udp_options(binary)
        args += udp if "--udp-reply-max" in udp else udp[:-1]
        self.cmd = [binary] + eal + ["--"] + args + list(extra or [])
        self.log = os.path.join(logdir or tempfile.gettempdir(), self.prefix + ".log")
        self.proc = None

    def __enter__(self):
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("segcached exited with %d; log %s:\n%s" %
                                   (self.proc.returncode, self.log, self.tail()))
            try:
                self.stats()
                return self
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("segcached did not start in 60 s; log " + self.log)

    def __exit__(self, *exc):
        self.stop()

    def tail(self):
        with open(self.log, errors="replace") as f:
            return "".join(f.readlines()[-15:])

    def stats(self):
        st = telemetry(self.prefix, "/segcached/stats")
        if not isinstance(st, dict):
            raise ValueError("no stats from /segcached/stats: %r" % (st,))
        return st

    def stop(self):
        """A graceful stop (SIGTERM), bounded."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("segcached did not stop in 60 s; log " + self.log)
        if self.proc.returncode != 0:
            raise RuntimeError("segcached exited with %d; log %s:\n%s" %
                               (self.proc.returncode, self.log, self.tail()))


def requests_of(st):
    return st["cmd_get"] + st["cmd_set"]


def wait_requests(srv, want, timeout=60.0):
    """Waits until the server answered want requests (a once-through pcap)."""
    deadline = time.monotonic() + timeout
    st = {"cmd_get": 0, "cmd_set": 0}
    while requests_of(st) < want and time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            st = srv.stats()
        except ValueError:
            continue  # a busy moment
    if requests_of(st) < want:
        raise RuntimeError("the server answered %d of %d requests in %.0f s" %
                           (requests_of(st), want, timeout))
    return st


def measure(srv, seconds, warmup, once=False):
    """Requests/s over seconds, after warmup, with the stats at both ends.
    A read-once pcap (once) that runs out ends the window early at its
    last growing sample ("short": the measured seconds are fewer): no
    growth for a whole second, longer than the stats' refresh or a
    preempted lcore."""
    time.sleep(warmup)
    a, t0 = srv.stats(), time.monotonic()
    b, t1 = a, t0
    if not once:
        time.sleep(seconds)
        b, t1 = srv.stats(), time.monotonic()
    while once and time.monotonic() - t0 < seconds:
        time.sleep(0.25)
        st, t = srv.stats(), time.monotonic()
        if requests_of(st) != requests_of(b):
            b, t1 = st, t
        elif t - t1 >= 1.0:
            break  # the input ran out
    if t1 == t0:
        raise RuntimeError("no request was answered in the measured window")
    delta = {k: b[k] - a[k] for k in ("cmd_get", "get_hits", "get_misses", "cmd_set")}
    net = telemetry(srv.prefix, "/segcached/net") or {}
    return {"requests": requests_of(b) - requests_of(a), "seconds": t1 - t0,
            "short": t1 - t0 < seconds * 0.95,
            "rate": (requests_of(b) - requests_of(a)) / (t1 - t0),
            "delta": delta, "curr_items": b["curr_items"],
            "net": {k: v for k, v in net.items() if isinstance(v, int)}}


def make_input(workdir, a):
    """The replay's input: (path, infinite). A small key space is one
    looped pcap; a large one a pcap read once: every key set, then
    --stream-requests random requests over all keys, repeated to last the
    run at up to --max-rate requests/s."""
    path = os.path.join(workdir, "requests-%d.pcap" % a.keys)
    if a.keys <= a.pcap_preload_max:
        pcap_requests.write(path, pcap_requests.requests(a.keys, a.keys, a.requests,
                                                         a.get_ratio, a.value_size, 1))
        return path, True
    counts = {"get": 0, "set": 0}
    body = pcap_requests.records(pcap_requests.requests(a.keys, 0, a.stream_requests,
                                                        a.get_ratio, a.value_size, 2),
                                 counts, a.keys)
    repeats = -(-int(a.max_rate * (a.warmup + a.seconds + 3)) // a.stream_requests)
    with open(path, "wb") as f:
        f.write(pcap_requests.FILE_HEADER)
        f.write(pcap_requests.records(pcap_requests.requests(a.keys, a.keys, 0, a.get_ratio,
                                                             a.value_size, 1), counts))
        for _ in range(repeats):
            f.write(body)
    return path, False


def one_run(binary, inp, a, workdir):
    path, infinite = inp
    with Replay(binary, path, infinite=infinite, memory_mb=a.memory, cpus=a.cpus,
                logdir=workdir) as srv:
        if not infinite:
            wait_requests(srv, a.keys, timeout=120)
        m = measure(srv, a.seconds, a.warmup, once=not infinite)
    if m["short"]:
        print("invalid run: the pcap ran out after %.1f of %.1f s (raise --max-rate)" %
              (m["seconds"], a.seconds), file=sys.stderr)
    return m


def fmt_m(x):
    return "%.2f" % (x / 1e6)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", help="meson build directories or segcached binaries")
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("--requests", type=int, default=5500,
                    help="mixed requests in the replayed loop (after the preload)")
    ap.add_argument("--get-ratio", type=float, default=0.9)
    ap.add_argument("--value-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--memory", type=int, default=None,
                    help="segcached -m, MiB (default: 64, or 256 past --pcap-preload-max "
                    "keys): small enough that the heap is full, reused and no longer "
                    "page-faulted in by the time the run is measured")
    ap.add_argument("--pcap-preload-max", type=int, default=2000,
                    help="largest key space preloaded inside the replayed pcap")
    ap.add_argument("--stream-requests", type=int, default=2000000,
                    help="random requests over a large key space, repeated")
    ap.add_argument("--max-rate", type=float, default=4e6,
                    help="large key space: the read-once pcap lasts the run up to this "
                    "many requests/s")
    ap.add_argument("--work-dir", default="/dev/shm",
                    help="where the pcap is written (gigabytes for a large key space)")
    ap.add_argument("--cpus", default="0,1", help="CPUs of the main and the worker lcore")
    ap.add_argument("--json", help="write every run here")
    a = ap.parse_args(argv)
    a.cpus = tuple(int(x) for x in a.cpus.split(","))
    if a.memory is None:
        a.memory = 64 if a.keys <= a.pcap_preload_max else 256
    if len(a.cpus) != 2 or a.rounds < 1 or a.keys < 1 or a.seconds <= 0:
        ap.error("--cpus takes two CPUs; --rounds, --keys and --seconds must be positive")
    # a SIGTERM unwinds like an exception: each server is stopped, the
    # pcap removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    binaries = [binary_of(b) for b in a.builds]
    for b in binaries:
        if not os.access(b, os.X_OK):
            ap.error("no segcached binary at %s (build it: ninja -C BUILD)" % b)
    workdir = tempfile.mkdtemp(prefix="udp-replay-", dir=a.work_dir)
    runs = []
    try:
        inp = make_input(workdir, a)
        for r in range(a.rounds):
            order = list(range(len(binaries)))
            if r % 2:
                order.reverse()
            row = {}
            for i in order:
                m = one_run(binaries[i], inp, a, workdir)
                row[i] = m
                print("round %d %s: %s M req/s (gets %d, hits %d, sets %d)" %
                      (r + 1, a.builds[i], fmt_m(m["rate"]), m["delta"]["cmd_get"],
                       m["delta"]["get_hits"], m["delta"]["cmd_set"]), flush=True)
            runs.append(row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    # a run cut short is not a result: out of the medians, its round's
    # ratios too
    print("\n| build | M req/s median | range | ratio to %s (median, range) | runs |" %
          a.builds[0])
    print("|---|---|---|---|---|")
    for i, b in enumerate(a.builds):
        rates = [row[i]["rate"] for row in runs if not row[i]["short"]]
        ratios = [row[i]["rate"] / row[0]["rate"] for row in runs
                  if not row[i]["short"] and not row[0]["short"]]
        if not rates or not ratios:
            print("| %s | no valid run | | | 0 |" % b)
            continue
        print("| %s | %s | %s–%s | %.2f (%.2f–%.2f) | %d |" %
              (b, fmt_m(statistics.median(rates)), fmt_m(min(rates)), fmt_m(max(rates)),
               statistics.median(ratios), min(ratios), max(ratios), len(rates)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(a).items()},
                       "runs": [{a.builds[i]: m for i, m in row.items()} for row in runs]},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
