# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A private network for testing the native (DPDK) stack against Linux.

    server netns  [ veth S ] ===== [ veth C  198.18.0.1/24 ]  client netns
                   (DPDK net_af_packet
                    or net_af_xdp,
                    stack address 198.18.0.2)

Two network namespaces created for the test, named after its pid, and a
veth pair between them. The server's end has no kernel address: segcached
drives it through net_af_packet and answers as 198.18.0.2 with its own
stack; IPv6 and forwarding are off in both namespaces, so nothing leaves
them. Checksum offload is off on both ends: otherwise Linux hands af_packet
TCP/UDP packets whose checksums are not filled in yet: lib/net drops them.
net_af_xdp needs the same (tried: with the client's TX checksum on, every
segment counts as drop_tcp_bad_cksum): XDP sees the frame as the peer
built it, and a veth never fills a checksum it was told to offload.

For net_af_xdp (port="af_xdp") the pair has one queue each way. DPDK
22.11's net_af_xdp takes its queue count from the interface's combined
channels (ethtool -l), which a veth does not have (it has separate RX and
TX ones): it refuses queue_count > 1 there. A veth hands a frame to the
RX queue numbered like the TX queue the sender used, and a new veth has
one per CPU: with two, the frames of 16 connections all arrived on RX
queue 1, where no AF_XDP socket of a one-queue port listens (they went
unanswered), so both ends get one queue. max_queues() says what
the port offers; af_xdp_unsupported() whether it works here at all.

Everything is removed again on exit, also when a test fails or is killed
by a signal.
"""

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SERVER_IP = "198.18.0.2"
CLIENT_IP = "198.18.0.1"
PREFIX = 24

SKIP = 77  # meson's exit status for a skipped test
AF_XDP = 44  # socket family number (linux/socket.h); Python has no name for it
PORTS = ("af_packet", "af_xdp")


def need_root_or_skip(what):
    """Exits with meson's 'skipped' status when the test cannot run here."""
    if os.geteuid() != 0:
        print("SKIP %s: needs root (network namespaces, veth, af_packet); CI runs as root" % what)
        sys.exit(SKIP)
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            print("SKIP %s: '%s' not found (iproute2, ethtool)" % (what, tool))
            sys.exit(SKIP)


def _run(*cmd, check=True):
    p = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=30)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                  p.stdout.decode(errors="replace")))
    return p.stdout.decode(errors="replace")


class NetEnv:
    """The two namespaces and the veth pair; use as a context manager."""

    def __init__(self, tag=None, port="af_packet"):
        assert port in PORTS, port
        self.port = port
        tag = tag or str(os.getpid())
        self.server_ns = "scsrv%s" % tag
        self.client_ns = "sccli%s" % tag
        # Interface names are limited to 15 characters.
        self.server_if = ("scs%s" % tag)[:15]
        self.client_if = ("scc%s" % tag)[:15]
        self.up = False

    def ns(self, ns, *cmd, check=True):
        return _run("ip", "netns", "exec", ns, *cmd, check=check)

    def client(self, *cmd, check=True):
        return self.ns(self.client_ns, *cmd, check=check)

    def create(self):
        atexit.register(self.destroy)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        self.destroy()  # leftovers of a killed run with the same pid
        self.up = True
        _run("ip", "netns", "add", self.server_ns)
        _run("ip", "netns", "add", self.client_ns)
        queues = ["numtxqueues", "1", "numrxqueues", "1"] if self.port == "af_xdp" else []
        _run("ip", "link", "add", self.server_if, *queues, "type", "veth", "peer", "name",
             self.client_if, *queues)
        _run("ip", "link", "set", self.server_if, "netns", self.server_ns)
        _run("ip", "link", "set", self.client_if, "netns", self.client_ns)
        for ns, ifname in ((self.server_ns, self.server_if), (self.client_ns, self.client_if)):
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            self.ns(ns, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=0")
            self.ns(ns, "ip", "link", "set", "lo", "up")
            self.ns(ns, "ethtool", "-K", ifname, "tx", "off")
        self.client("ip", "addr", "add", "%s/%d" % (CLIENT_IP, PREFIX), "dev", self.client_if)
        self.ns(self.server_ns, "ip", "link", "set", self.server_if, "up")
        self.client("ip", "link", "set", self.client_if, "up")
        return self

    def _on_signal(self, sig, frame):
        self.destroy()
        sys.exit(128 + sig)

    def destroy(self):
        # Deleting a namespace deletes its veth end, and with it the pair.
        for ns in (self.server_ns, self.client_ns):
            _run("ip", "netns", "del", ns, check=False)
        self.up = False

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.destroy()
        return False

    def harness_args(self):
        """What harness.py needs to start native servers in this network."""
        return ["--stack", "native", "--server-netns", self.server_ns,
                "--server-iface", self.server_if, "--server-port", self.port,
                "--server-queues", str(self.max_queues())]

    def max_queues(self):
        """Queue pairs a port on the server's veth end can have: af_packet
        any number (qpairs=N, PACKET_FANOUT); net_af_xdp what DPDK 22.11
        reads, the combined channels, 1 where there are none (a veth)."""
        if self.port == "af_packet":
            return 64
        out = self.ns(self.server_ns, "ethtool", "-l", self.server_if, check=False)
        maxima = out.split("Current hardware settings:")[0]
        for line in maxima.splitlines():
            if line.startswith("Combined:") and line.split()[1].isdigit():
                return max(1, int(line.split()[1]))
        return 1

    def vdev(self, queues=1):
        """The --vdev for the server's end, with queues queue pairs."""
        if self.port == "af_xdp":
            return vdev_af_xdp(self.server_if, queues)
        v = "net_af_packet0,iface=%s" % self.server_if
        return v + (",qpairs=%d" % queues if queues > 1 else "")

    def af_xdp_unsupported(self, segcached):
        """None when net_af_xdp serves on the server's veth end here, else
        the reason why not. The real thing: segcached starts on the port
        (the PMD loads, the AF_XDP socket binds, the XDP program attaches)
        and answers a ping from the client namespace."""
        why = af_xdp_static_reason()
        if why:
            return why
        prefix = "scxp%d" % os.getpid()
        cmd = ["ip", "netns", "exec", self.server_ns, segcached, "-l", "0-1", "--no-huge",
               "--no-pci", "--no-shconf", "--file-prefix", prefix,
               "--vdev=" + vdev_af_xdp(self.server_if, 1), "--", "--stack", "native",
               "--ip", "%s/%d" % (SERVER_IP, PREFIX), "-m", "8", "-c", "16"]
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)

        def out():
            log.seek(0)
            return log.read().decode(errors="replace")
        try:
            deadline = time.monotonic() + 60
            while " ready: " not in out() and proc.poll() is None and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            if " ready: " not in out():
                lines = [ln for ln in out().splitlines()
                         if "xdp" in ln.lower() or "no DPDK port" in ln]
                return "segcached did not start on net_af_xdp: %s" % (
                    " / ".join(lines[:4]) or out()[-500:])
            ping = self.client("ping", "-c", "1", "-W", "5", SERVER_IP, check=False)
            if " 1 received" not in ping:
                return "segcached started on net_af_xdp but did not answer a ping"
            return None
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            log.close()
            shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)


def vdev_af_xdp(ifname, queues):
    return "net_af_xdp0,iface=%s,start_queue=0,queue_count=%d" % (ifname, queues)


def af_xdp_static_reason():
    """Why net_af_xdp cannot work here without trying it: the DPDK build
    has no such driver, or the kernel no AF_XDP sockets. None otherwise."""
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "libdpdk"],
                            stdout=subprocess.PIPE, text=True).stdout.strip() or "/usr/lib"
    if not glob.glob(os.path.join(libdir, "dpdk", "pmds-*", "librte_net_af_xdp.so*")) and \
            not glob.glob(os.path.join(libdir, "librte_net_af_xdp.so*")):
        return "this DPDK has no net_af_xdp driver (librte-net-af-xdp23, tools/install-deps.sh)"
    try:
        socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
    except OSError as e:
        return "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS): %s" % e.strerror
    return None

    def loss(self, percent):
        """Drops percent% of the packets arriving in the client namespace
        (nftables; netem is not available)."""
        self.client("nft", "add", "table", "inet", "scloss")
        self.client("nft", "add", "chain", "inet", "scloss", "in",
                    "{ type filter hook input priority 0 ; }")
        self.client("nft", "add", "chain", "inet", "scloss", "out",
                    "{ type filter hook output priority 0 ; }")
        rule = "numgen random mod 100 < %d drop" % percent
        self.client("nft", "add", "rule", "inet", "scloss", "in", *rule.split())
        self.client("nft", "add", "rule", "inet", "scloss", "out", *rule.split())

    def no_loss(self):
        self.client("nft", "delete", "table", "inet", "scloss", check=False)
