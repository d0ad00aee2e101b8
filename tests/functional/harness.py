# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Starts a real server for the functional tests and always stops it.

The target is segcached (the binary given with --segcached or in
$SEGCACHED_BIN) or, to prove that the tests check real memcached behaviour,
Debian's memcached: pass --target memcached or set SEGCACHED_TEST_TARGET.
Every server listens on 127.0.0.1 only, on a port found free, with a small
memory budget, and is killed when the test ends, even when it fails.

With --stack native the server runs segcached's DPDK stack instead, in the
network namespace --server-netns on the veth end --server-iface (netenv.py
creates both), and the tests, started inside the client namespace, reach
it at 198.18.0.2. `threads` becomes the number of worker lcores (and
queues of the port: net_af_packet, or net_af_xdp with --server-port
af_xdp). A server that needs more queues than --server-queues says the
port has skips its test class (unittest.SkipTest) with the reason; the
default of 2 becomes what the port has.
"""

import argparse
import atexit
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

# Bounds against hangs (not timing assertions).
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
IO_TIMEOUT = 10.0

_live = []


def _kill_all():
    for srv in list(_live):
        srv.kill()


atexit.register(_kill_all)


def parse_args(argv=None):
    """Reads the harness options and returns (args, rest for unittest)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--segcached", default=os.environ.get("SEGCACHED_BIN"))
    p.add_argument("--target", choices=["segcached", "memcached"],
                   default=os.environ.get("SEGCACHED_TEST_TARGET", "segcached"))
    p.add_argument("--memcached", default=shutil.which("memcached") or "memcached")
    p.add_argument("--stack", choices=["posix", "native"], default="posix")
    p.add_argument("--server-netns", help="native: the server's network namespace")
    p.add_argument("--server-iface", help="native: the veth end the server drives")
    p.add_argument("--server-ip", default="198.18.0.2", help="native: the server's address")
    p.add_argument("--server-port", choices=["af_packet", "af_xdp"], default="af_packet",
                   help="native: the DPDK driver on the veth end")
    p.add_argument("--server-queues", type=int, default=64,
                   help="native: the most queue pairs that port can have")
    p.add_argument("--server-vhost", choices=["io", "csum"],
                   help="native: the server on net_virtio_user behind a net_vhost bridge "
                   "to a tap in this namespace (vhostenv.py), instead of af_packet")
    p.add_argument("--server-tap", help="native, --server-vhost: the bridge's tap")
    p.add_argument("--server-extra", default="",
                   help="native: more options for every server (e.g. --offloads none)")
    args, rest = p.parse_known_args(argv if argv is not None else sys.argv[1:])
    if args.target == "segcached" and not args.segcached:
        p.error("--segcached PATH (or $SEGCACHED_BIN) is needed")
    if args.stack == "native" and (args.target != "segcached" or not args.server_vhost and (
            not args.server_netns or not args.server_iface)):
        p.error("--stack native needs --server-netns and --server-iface (see netenv.py), "
                "or --server-vhost (vhostenv.py)")
    return args, rest


ARGS = None
HOST = "127.0.0.1"  # where clients find the server
NATIVE_PORT = 11211
_instances = iter(range(1, 1 << 30))


def setup(argv=None):
    """Parses the harness options; returns the arguments left for unittest."""
    global ARGS, HOST
    ARGS, rest = parse_args(argv)
    if ARGS.stack == "native":
        HOST = ARGS.server_ip
    return [sys.argv[0]] + rest


def is_native():
    return ARGS.stack == "native"


def target():
    return ARGS.target


def is_segcached():
    return ARGS.target == "segcached"


def dpdk_pmd_dir():
    """EAL's default driver directory (RTE_EAL_PMD_PATH of the installed
    DPDK: <libdir>/dpdk/pmds-<ABI>), or None."""
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "libdpdk"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    dirs = sorted(glob.glob(os.path.join(libdir or "/usr/lib", "dpdk", "pmds-*")))
    return dirs[-1] if dirs else None


def native_driver():
    """The DPDK driver name the native servers' port reports."""
    return "net_" + ARGS.server_port


def native_vdev(queues=1):
    """The --vdev of the native servers' port with queues queue pairs."""
    if ARGS.server_port == "af_xdp":
        return "net_af_xdp0,iface=%s,start_queue=0,queue_count=%d" % (ARGS.server_iface,
                                                                      queues)
    vdev = "net_af_packet0,iface=%s" % ARGS.server_iface
    return vdev + (",qpairs=%d" % queues if queues > 1 else "")


def free_port(udp_too=False):
    """A port that is free on 127.0.0.1 for TCP (and UDP when asked)."""
    for _ in range(100):
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
        ok = True
        if udp_too:
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                u.bind(("127.0.0.1", port))
            except OSError:
                ok = False
            u.close()
        t.close()
        if ok:
            return port
    raise RuntimeError("no free port found")


def telemetry(srv, cmd):
    """One DPDK telemetry command to a server (its telemetry_path());
    returns its value."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(IO_TIMEOUT)
    try:
        s.connect(srv.telemetry_path())
        json.loads(s.recv(16384).decode())  # the greeting
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
    finally:
        s.close()
    return reply[cmd.split(",")[0]]


def wait_for(what, cond, timeout=120.0):
    """Polls cond() until it returns something true (returned), for at
    most timeout seconds; then fails naming what it waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError("gave up waiting for %s after %.0f s" % (what, timeout))


class Server:
    """One server process. Options use memcached's meaning on both targets."""

    def __init__(self, memory_mb=64, threads=None, udp=False, max_conns=None,
                 item_max=None, extra=None, eal=None, name="server", seg_extra=None):
        self.memory_mb = memory_mb
        # None: the default, 2, which a native port with fewer queues
        # lowers to what it has; a number asked for is kept (or skipped).
        self.threads_asked = threads
        self.threads = 2 if threads is None else threads
        self.udp = udp
        self.max_conns = max_conns
        self.item_max = item_max
        self.extra = list(extra or [])
        self.seg_extra = list(seg_extra or [])  # segcached's own options only
        self.eal = list(eal or [])
        self.name = name
        self.port = None
        self.udp_port = 0
        self.proc = None
        self.logdir = tempfile.mkdtemp(prefix="segcached-test-")
        self.logpath = os.path.join(self.logdir, name + ".log")
        self.file_prefix = None

    def native_command(self, a):
        """segcached on the DPDK stack: one worker lcore per thread (lcores
        may share CPUs), a port with as many queue pairs."""
        workers = self.threads or 1
        if workers > ARGS.server_queues and self.threads_asked is None:
            workers = ARGS.server_queues
        if workers > ARGS.server_queues:
            raise unittest.SkipTest(
                "%d worker lcores need %d queues; %s on this veth has %d (DPDK 22.11's "
                "net_af_xdp counts combined channels, which a veth has none of)" % (
                    workers, workers, ARGS.server_port, ARGS.server_queues))
        ncpu = os.cpu_count() or 1
        lcores = ",".join("%d@%d" % (i, i % ncpu) for i in range(workers + 1))
        self.file_prefix = "sct%d_%d" % (os.getpid(), next(_instances))
        vdev = native_vdev(workers)
        a = ["--stack", "native", "--ip", "%s/24" % ARGS.server_ip] + \
            ARGS.server_extra.split() + a
        if ARGS.server_vhost:
            # vhost_server.py adds the net_virtio_user vdev, with as many
            # queues as workers, and starts the bridge in front of it
            eal = ["--lcores=" + lcores, "--no-huge", "--no-pci", "--no-shconf",
                   "--file-prefix", self.file_prefix] + self.eal
            tag = "%s_%d" % (ARGS.server_tap, next(_instances))
            here = os.path.dirname(os.path.abspath(__file__))
            return [sys.executable, os.path.join(here, "vhost_server.py"), "--tag", tag,
                    "--tap", ARGS.server_tap, "--queues", str(workers),
                    "--bridge", ARGS.server_vhost, "--", ARGS.segcached] + eal + ["--"] + a
        eal = ["--lcores=" + lcores, "--no-huge", "--no-pci", "--no-shconf",
               "--file-prefix", self.file_prefix, "--vdev=" + vdev] + self.eal
        return ["ip", "netns", "exec", ARGS.server_netns, ARGS.segcached] + eal + ["--"] + a

    def telemetry_path(self):
        """The DPDK telemetry socket of a native server."""
        return "/var/run/dpdk/%s/dpdk_telemetry.v2" % self.file_prefix

    def command(self):
        a = ["-l", "127.0.0.1", "-p", str(self.port), "-U", str(self.udp_port)]
        if self.memory_mb is not None:
            a += ["-m", str(self.memory_mb)]
        if self.threads is not None:
            a += ["-t", str(self.threads)]
        if self.max_conns is not None:
            a += ["-c", str(self.max_conns)]
        if self.item_max is not None:
            a += ["-I", str(self.item_max)]
        a += self.extra
        if ARGS.target != "memcached":
            a += self.seg_extra
        if ARGS.stack == "native":
            # The native stack answers on --ip; -l and -t do not apply.
            a = a[2:]
            i = a.index("-t") if "-t" in a else -1
            if i >= 0:
                del a[i:i + 2]
            return self.native_command(a)
        if ARGS.target == "memcached":
            cmd = [ARGS.memcached] + a
            if os.geteuid() == 0:
                cmd += ["-u", "nobody"]
            return cmd
        return [ARGS.segcached, "--no-huge"] + self.eal + ["--", "--stack", "posix"] + a

    def start(self):
        last_error = None
        # A port found free can be taken before the server binds it; the
        # server then exits (71, like memcached) and we try another.
        for _ in range(5):
            self.port = NATIVE_PORT if is_native() else free_port(udp_too=self.udp)
            self.udp_port = self.port if self.udp else 0
            cmd = self.command()  # may skip the test (SkipTest) before a log is open
            log = open(self.logpath, "ab")
            self.proc = subprocess.Popen(cmd, stdout=log,
                                         stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
            log.close()
            _live.append(self)
            try:
                self._wait_ready()
                return self
            except RuntimeError as e:
                last_error = e
                self.kill()
        raise RuntimeError("%s did not start: %s\n%s" % (self.name, last_error, self.log()))

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        probe_timeout = 1
        if is_native():
            # Probes sent before the lcores run would wait in the port's
            # queue, be answered late and leave resets behind: wait for the
            # ready line first, then probe with a generous timeout.
            while " ready: " not in self.log():
                if self.proc.poll() is not None:
                    raise RuntimeError("exited with %d" % self.proc.returncode)
                if time.monotonic() > deadline:
                    raise RuntimeError("no ready line after %.0f s" % START_TIMEOUT)
                time.sleep(0.05)
            probe_timeout = IO_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with %d" % self.proc.returncode)
            try:
                s = socket.create_connection((HOST, self.port), timeout=probe_timeout)
                s.settimeout(IO_TIMEOUT)
                s.sendall(b"version\r\n")
                line = b""
                while not line.endswith(b"\r\n"):
                    d = s.recv(1024)
                    if not d:
                        break
                    line += d
                s.close()
                if line.startswith(b"VERSION "):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("not answering after %.0f s" % START_TIMEOUT)

    def log(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT):
        """Waits for the process to exit; returns its exit status."""
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.kill()
        if self in _live:
            _live.remove(self)
        self._remove_runtime_dir()
        return rc

    def stop(self):
        """SIGTERM and wait; returns the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            if self in _live:
                _live.remove(self)
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        return self.wait()

    def stop_clean(self, what):
        """SIGTERM; fails (with the log) unless the server exits 0. A
        server stopped so closes its connections with FIN exchanges; a
        killed one would leave client sockets that go on retransmitting
        into the next test's server."""
        try:
            rc = self.stop()
        finally:
            self.kill()
        if rc != 0:
            raise AssertionError("%s: exit status %s after SIGTERM\n%s" % (what, rc, self.log()))

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        if self in _live:
            _live.remove(self)
        self._remove_runtime_dir()

    def _remove_runtime_dir(self):
        # A native server's DPDK runtime files (telemetry socket).
        if self.file_prefix and (self.proc is None or self.proc.poll() is not None):
            shutil.rmtree("/var/run/dpdk/" + self.file_prefix, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.kill()
        shutil.rmtree(self.logdir, ignore_errors=True)
        return False

    # Clients.
    def connect(self, timeout=IO_TIMEOUT):
        s = socket.create_connection((HOST, self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return Conn(s)

    def pymemcache(self, **kw):
        from pymemcache.client.base import Client
        kw.setdefault("connect_timeout", IO_TIMEOUT)
        kw.setdefault("timeout", IO_TIMEOUT)
        return Client((HOST, self.port), **kw)


class Conn:
    """A raw text-protocol connection with exact reads."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        d = self.sock.recv(1 << 20)
        if not d:
            raise EOFError("connection closed by the server")
        self.buf += d

    def line(self):
        """One response line, with its \\r\\n."""
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def until(self, terminator):
        """Everything up to and including the terminator line."""
        while terminator not in self.buf:
            self._fill()
        i = self.buf.index(terminator) + len(terminator)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def cmd(self, data):
        """Sends a request and returns its one response line."""
        self.send(data)
        return self.line()

    def get(self, *keys, cmd=b"get"):
        """Sends a retrieval and returns {key: (flags, value, cas or None)}."""
        self.send(cmd + b" " + b" ".join(keys) + b"\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END\r\n":
                return out
            parts = ln.split()
            if parts[0] != b"VALUE":
                raise AssertionError("unexpected line %r" % ln)
            n = int(parts[3])
            data = self.exact(n + 2)
            assert data.endswith(b"\r\n"), data[-10:]
            cas = int(parts[4]) if len(parts) > 4 else None
            out[parts[1]] = (int(parts[2]), data[:-2], cas)

    def stats(self, arg=b""):
        self.send(b"stats" + (b" " + arg if arg else b"") + b"\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END\r\n":
                return out
            parts = ln.decode().split(" ", 2)
            if parts[0] != "STAT" or len(parts) != 3:
                raise AssertionError("unexpected stats line %r" % ln)
            out[parts[1]] = parts[2].rstrip("\r\n")

    def closed(self, timeout=IO_TIMEOUT):
        """True when the server closes the connection within the bound
        (any bytes it sends first are kept in .buf)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    return True
                self.buf += d
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def udp_request(port, payload, request_id=1, timeout=IO_TIMEOUT, expect=True):
    """Sends one memcached UDP request; returns the reassembled response."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        hdr = request_id.to_bytes(2, "big") + (0).to_bytes(2, "big") + \
            (1).to_bytes(2, "big") + b"\0\0"
        s.sendto(hdr + payload, (HOST, port))
        if not expect:
            try:
                d = s.recv(65536)
                return d
            except socket.timeout:
                return None
        parts = {}
        total = None
        while total is None or len(parts) < total:
            d = s.recv(65536)
            rid = int.from_bytes(d[0:2], "big")
            seq = int.from_bytes(d[2:4], "big")
            tot = int.from_bytes(d[4:6], "big")
            if rid != request_id:
                continue
            if d[6:8] != b"\0\0":
                raise AssertionError("reserved bytes not zero: %r" % d[:8])
            if total is not None and tot != total:
                raise AssertionError("datagram count changed %d -> %d" % (total, tot))
            total = tot
            parts[seq] = d[8:]
        if sorted(parts) != list(range(total)):
            raise AssertionError("sequence numbers %r" % sorted(parts))
        return b"".join(parts[i] for i in range(total)), total
    finally:
        s.close()


def udp_collect(port, payload, request_id=1, quiet=1.0, timeout=IO_TIMEOUT):
    """Sends one datagram and joins the payloads of every response message
    with the request's id, in arrival order, until none came for `quiet`
    seconds (a bound for collecting, not a timing check)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        hdr = request_id.to_bytes(2, "big") + b"\0\0\0\1\0\0"
        s.sendto(hdr + payload, (HOST, port))
        s.settimeout(timeout)
        out = b""
        while True:
            try:
                d = s.recv(65536)
            except socket.timeout:
                return out
            if int.from_bytes(d[0:2], "big") == request_id:
                out += d[8:]
            s.settimeout(quiet)
    finally:
        s.close()
