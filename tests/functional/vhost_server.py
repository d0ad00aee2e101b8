#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Starts segcached on net_virtio_user with a net_vhost peer in front of it.

    vhost_server.py --tag T --queues N -- SEGCACHED EAL... -- OPTIONS...

The peer is Debian's dpdk-testpmd: a net_vhost port (the vhost-user
socket's server, tso=1, N queues) forwarding, queue for queue, to a
net_tap port whose kernel side appears in this network namespace as 198.18.0.1/24
(vhostenv.py has the picture and says why this bridge). This script starts
testpmd, waits for its socket and tap, gives the tap its address, then
becomes segcached itself (exec: the harness's pid, signals and exit status
are segcached's). testpmd gets SIGKILL when segcached exits (its parent
death signal), so nothing outlives the server.

The virtio_user vdev (net_virtio_user0,path=SOCK,queues=N) is appended to
segcached's EAL arguments here.
"""

import argparse
import os
import subprocess
import sys
import time

CLIENT_IP = "198.18.0.1"
PREFIX = 24
START_TIMEOUT = 60.0  # a hang guard
# The kernel side's MTU: net_tap's TSO in DPDK 22.11 counts the Ethernet
# header against the port's MTU (1500, at most 1504 there) and drops every
# segment of MSS + 54 bytes above it. The clients' MTU of 1486 makes the
# MSS 1446, whose segments are 1500 bytes with that header.
TAP_MTU = 1486


def paths(tag, tap=None):
    """The socket, the tap's name (15 characters at most) and testpmd's
    --file-prefix of one server start."""
    return ("/tmp/scvh-%s.sock" % tag, tap or ("scvt%s" % tag)[:15], "scvh%s" % tag)


# --bridge io: testpmd forwards each packet as it came. The vhost port
# finishes in software the TCP/UDP checksums virtio_user left to it (no RX
# checksum offload asked: DPDK 22.11's net_vhost then sums the packet with
# the pseudo-header sum segcached put in, as a NIC does, so a wrong one
# reaches the kernel as a bad checksum), and a frame the kernel sends
# arrives at segcached unchanged, a bad checksum included. It cannot carry
# TSO: net_vhost hands over a TSO packet whole, and the tap drops a frame
# over its MTU.
#
# --bridge csum: testpmd's checksum engine cuts segcached's TSO packets
# into MSS-sized ones on the tap port (net_tap's software TSO, with the
# IPv4 and TCP checksums of every segment) and leaves the checksums of the
# kernel's packets to the vhost port's offload, so that segcached sees
# virtio's "checksum not filled in, data valid" flag (RX_L4_CKSUM_NONE).
# It recomputes every checksum on the way, so a bad one never reaches
# segcached here.
CSUM_SETUP = """port stop all
set fwd csum
csum mac-swap off 0
csum mac-swap off 1
csum set ip hw 1
csum set tcp hw 1
csum set udp hw 1
tso set %d 1
csum set ip sw 0
csum set tcp hw 0
csum set udp hw 0
port start all
"""


def cmdline_file(tag, mss):
    path = "/tmp/scvh-%s.cmds" % tag
    with open(path, "w") as f:
        f.write(CSUM_SETUP % mss)
    return path


def testpmd_command(tag, tap, queues, log_cores, bridge):
    sock, tap, prefix = paths(tag, tap)
    # stdbuf -oL: testpmd's stdout is a file here, which stdio buffers in
    # 4 KiB blocks; the line main() waits for ("packet forwarding -
    # ports=") would otherwise reach the file only when later output
    # fills the block, seconds to never after testpmd forwards
    cmd = ["setpriv", "--pdeathsig", "KILL", "--", "stdbuf", "-oL", "-eL",
           "dpdk-testpmd", "-l", log_cores, "--no-huge", "-m", "256", "--no-pci",
           "--file-prefix", prefix,
           # tso=1: the vhost port offers TSO to virtio_user (off by
           # default in DPDK 22.11); checksum offload it always offers
           "--vdev", "net_vhost0,iface=%s,queues=%d,tso=1" % (sock, queues),
           "--vdev", "net_tap0,iface=%s" % tap,
           "--", "--rxq=%d" % queues, "--txq=%d" % queues, "--total-num-mbufs=16384",
           "--stats-period", "3600"]
    if bridge == "csum":
        return cmd + ["--cmdline-file=" + cmdline_file(tag, TAP_MTU - 40)]
    return cmd + ["--forward-mode=io"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tag", required=True)
    p.add_argument("--queues", type=int, default=1)
    p.add_argument("--lcores", default="0,1", help="testpmd's -l")
    p.add_argument("--bridge", choices=["io", "csum"], default="io")
    p.add_argument("--tap", help="the tap's name (default: from the tag); a persistent "
                   "tap of that name keeps its address between starts")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if "--" not in cmd[1:]:
        p.error("the segcached command needs its EAL arguments and -- OPTIONS")
    sock, tap, _ = paths(a.tag, a.tap)
    for stale in (sock,):
        if os.path.exists(stale):
            os.unlink(stale)
    # testpmd's output goes to a file of its own, read for the line that
    # says it forwards (its ports configured: the MTU can be set after)
    log = "/tmp/scvh-%s.log" % a.tag
    with open(log, "wb") as out:
        bridge = subprocess.Popen(testpmd_command(a.tag, tap, a.queues, a.lcores, a.bridge),
                                  stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT)

    def forwarding():
        with open(log, "rb") as f:
            return b"packet forwarding - ports=" in f.read()
    deadline = time.monotonic() + START_TIMEOUT
    while not (os.path.exists(sock) and forwarding()):
        if bridge.poll() is not None:
            with open(log, "rb") as f:
                sys.stdout.write(f.read().decode(errors="replace"))
            print("vhost_server: dpdk-testpmd exited with %d" % bridge.returncode, flush=True)
            return 1
        if time.monotonic() > deadline:
            print("vhost_server: no vhost socket or tap after %.0f s" % START_TIMEOUT,
                  flush=True)
            bridge.kill()
            return 1
        time.sleep(0.05)
    # net_tap sets the MTU back to 1500 when it attaches; the address
    # stays on a tap the test created persistent (vhostenv.py)
    steps = [["ip", "link", "set", tap, "mtu", str(TAP_MTU)], ["ip", "link", "set", tap, "up"]]
    addr = subprocess.run(["ip", "-br", "addr", "show", tap], stdout=subprocess.PIPE,
                          text=True, timeout=30).stdout
    if CLIENT_IP + "/" not in addr:
        steps.insert(0, ["ip", "addr", "add", "%s/%d" % (CLIENT_IP, PREFIX), "dev", tap])
    for step in steps:
        subprocess.run(step, check=True, timeout=30, stdin=subprocess.DEVNULL)
    i = cmd.index("--", 1)
    vdev = "--vdev=net_virtio_user0,path=%s,queues=%d" % (sock, a.queues)
    argv = cmd[:i] + [vdev] + cmd[i:]
    sys.stdout.flush()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main())
