# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A private network for testing the native (DPDK) stack against Linux.

    server netns  [ veth S ] ===== [ veth C  198.18.0.1/24 ]  client netns
                   (DPDK net_af_packet,
                    stack address 198.18.0.2)

Two network namespaces created for the test, named after its pid, and a
veth pair between them. The server's end has no kernel address: segcached
drives it through net_af_packet and answers as 198.18.0.2 with its own
stack; IPv6 and forwarding are off in both namespaces, so nothing leaves
them. Checksum offload is off on both ends: otherwise Linux hands af_packet
TCP/UDP packets whose checksums are not filled in yet: lib/net drops them.

Everything is removed again on exit, also when a test fails or is killed
by a signal.
"""

import atexit
import os
import shutil
import signal
import subprocess
import sys

SERVER_IP = "198.18.0.2"
CLIENT_IP = "198.18.0.1"
PREFIX = 24

SKIP = 77  # meson's exit status for a skipped test


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

    def __init__(self, tag=None):
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
        _run("ip", "link", "add", self.server_if, "type", "veth", "peer", "name", self.client_if)
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
                "--server-iface", self.server_if]

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
