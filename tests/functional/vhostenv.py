# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A network for the native stack on the paths a real NIC takes: checksum
and segmentation offloads, several queues.

    segcached                 dpdk-testpmd (the bridge)             client netns
    net_virtio_user  <====>  net_vhost (tso=1) <-> net_tap  ====  tap 198.18.0.1/24
    198.18.0.2        vhost-user socket      queue q to queue q      Linux clients

virtio_user and net_vhost negotiate TCP/UDP checksum offload and TSO
between two processes, so segcached takes its offload branches (TX
checksum flags and the pseudo-header sums, TSO segment sizes, the RX
"checksum not filled in" flag) as on a NIC that has them. The kernel on the
far side of the tap then checks every checksum and every TSO segment's
headers: a wrong pseudo-header sum or TSO field is a packet Linux drops,
and a test that fails.

Why this and not another peer: this host's kernel has no vhost-net
(/dev/vhost-net, which would give virtio_user a kernel tap with offloads
directly), net_tap and net_af_packet offer no TSO that works (net_tap's
is the one used here, behind the bridge's MTU care, see vhost_server.py),
and segcached's own load generator speaks lib/net too, which would check
lib/net against itself. The bridge runs in one of two modes (vhost_server.py
says what each exercises): io (checksums; frames pass unchanged, a bad
checksum from the client included) and csum (TSO cut by the tap port).

The tap is created persistent here, with its address, so that it keeps
them while the bridge comes and goes with every server start; the
namespace, the tap and the bridge's files are removed on exit.
"""

import atexit
import glob
import os
import shutil
import signal
import subprocess
import sys

import harness
import netenv

CLIENT_IP = "198.18.0.1"
PREFIX = 24


def need_or_skip(what):
    """Exits with meson's 'skipped' status, saying why, where this host
    cannot run the bridge."""
    netenv.need_root_or_skip(what)
    for tool, pkg in (("dpdk-testpmd", "dpdk"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            print("SKIP %s: '%s' not found (Debian package %s)" % (what, tool, pkg))
            sys.exit(netenv.SKIP)
    if not os.path.exists("/dev/net/tun"):
        print("SKIP %s: no /dev/net/tun (the bridge's tap)" % what)
        sys.exit(netenv.SKIP)
    pmds = harness.dpdk_pmd_dir()
    for pmd in ("net_vhost", "net_virtio", "net_tap"):
        if pmds is None or not glob.glob(os.path.join(pmds, "librte_%s.so*" % pmd)):
            print("SKIP %s: DPDK's %s driver not found (%s)" % (what, pmd, pmds))
            sys.exit(netenv.SKIP)


class VhostEnv:
    """The client namespace and its persistent tap; a context manager."""

    def __init__(self, tag=None):
        tag = tag or str(os.getpid())
        self.tag = tag
        self.client_ns = "scvh%s" % tag
        self.tap = ("scvt%s" % tag)[:15]

    def client(self, *cmd, check=True):
        return netenv._run("ip", "netns", "exec", self.client_ns, *cmd, check=check)

    def create(self):
        atexit.register(self.destroy)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        self.destroy()
        netenv._run("ip", "netns", "add", self.client_ns)
        self.client("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        self.client("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        self.client("sysctl", "-qw", "net.ipv4.conf.all.forwarding=0")
        self.client("ip", "link", "set", "lo", "up")
        # multi_queue: net_tap opens one queue per testpmd queue
        self.client("ip", "tuntap", "add", "dev", self.tap, "mode", "tap", "multi_queue")
        self.client("ip", "addr", "add", "%s/%d" % (CLIENT_IP, PREFIX), "dev", self.tap)
        return self

    def _on_signal(self, sig, frame):
        self.destroy()
        sys.exit(128 + sig)

    def destroy(self):
        self.client("ip", "tuntap", "del", "dev", self.tap, "mode", "tap", "multi_queue",
                    check=False)
        netenv._run("ip", "netns", "del", self.client_ns, check=False)
        # the bridge's socket, command and log files, and testpmd's
        # runtime directory, of every server start (vhost_server.py)
        for f in glob.glob("/tmp/scvh-%s_*" % self.tap):
            os.unlink(f)
        for d in glob.glob("/var/run/dpdk/scvh%s_*" % self.tap):
            shutil.rmtree(d, ignore_errors=True)

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.destroy()
        return False

    def harness_args(self, bridge, offloads):
        """What harness.py needs to start native servers behind the bridge."""
        return ["--stack", "native", "--server-vhost", bridge, "--server-tap", self.tap,
                "--server-extra=--offloads %s" % offloads]
