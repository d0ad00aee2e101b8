#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""tools/nic-qualify, the operator's port check, against virtual ports.

Runs the command as docs/operations.md ("Qualifying a NIC") shows it, from
inside the server namespace of a netenv.py network, its client being
`ip netns exec CLIENT-NS`:

  * net_af_packet with two queues and two worker lcores: every line ok,
    the flows spread over both workers, exit 0;
  * net_af_xdp (skipped with the reason where the kernel or DPDK lacks
    AF_XDP): one queue, every line ok, exit 0;
  * a peer whose veth leaves checksums unfilled (tx offload on): the
    checksums line FAILs naming the drop counters, the self-test lines
    FAIL, result FAIL, exit 1;
  * no port at all: the start line FAILs with the server's own words.

Needs root (skipped otherwise).
"""

import argparse
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "nic-qualify")
sys.path.insert(0, HERE)
import netenv  # noqa: E402

SEGCACHED = None
TIMEOUT = 600  # the tool bounds each step itself; this bounds the whole run


def qualify(net, eal, lcores="0-1", flows=64):
    cmd = ["ip", "netns", "exec", net.server_ns, TOOL, "--segcached", SEGCACHED,
           "--ip", "%s/%d" % (netenv.SERVER_IP, netenv.PREFIX),
           "--client", "ip netns exec %s" % net.client_ns, "--lcores", lcores,
           "--flows", str(flows), "--", "--no-pci", "--no-huge", "--no-shconf"] + eal
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    lines = {}
    for ln in p.stdout.splitlines():
        name, _, rest = ln.partition(":")
        if name and " " not in name and rest:
            status, _, detail = rest.strip().partition(" ")
            lines[name] = (status, detail.strip())
    return p.returncode, lines, p.stdout


class NicQualify(unittest.TestCase):
    def assert_all_good(self, lines, out):
        for name in ("start", "link", "queues", "connections", "large", "udp", "checksums",
                     "errors", "stop"):
            self.assertIn(name, lines, out)
            self.assertEqual(lines[name][0], "ok", "%s: %s\n%s" % (name, lines[name], out))
        for name in ("port", "rss", "offloads"):
            self.assertIn(name, lines, out)
        self.assertEqual(lines["result"][0], "PASS", out)

    def test_af_packet_two_queues(self):
        with netenv.NetEnv(tag="nq%d" % os.getpid()) as net:
            rc, lines, out = qualify(net, ["--vdev=" + net.vdev(2)], lcores="0@0,1@1,2@0")
        self.assertEqual(rc, 0, out)
        self.assert_all_good(lines, out)
        self.assertIn("driver net_af_packet", lines["port"][1])
        self.assertTrue(lines["queues"][1].startswith("2 RX/TX queue pair(s) for 2 worker "
                                                      "lcore(s)"), out)
        self.assertIn("64 of 64 connections", lines["connections"][1])
        self.assertIn("1048000", lines["large"][1])
        # both workers served flows of the 64
        self.assertEqual(lines["spread"][0], "ok", out)
        per = [int(x) for x in lines["spread"][1].split("[")[1].split("]")[0].split(",")]
        self.assertEqual(len(per), 2, out)
        self.assertGreaterEqual(sum(per), 64, out)
        self.assertTrue(all(n > 0 for n in per), out)

    def test_af_xdp(self):
        with netenv.NetEnv(tag="nx%d" % os.getpid(), port="af_xdp") as net:
            why = net.af_xdp_unsupported(SEGCACHED)
            if why:
                self.skipTest("net_af_xdp: " + why)
            rc, lines, out = qualify(net, ["--vdev=" + net.vdev(1)], flows=32)
        self.assertEqual(rc, 0, out)
        self.assert_all_good(lines, out)
        self.assertIn("driver net_af_xdp", lines["port"][1])
        self.assertEqual(lines["spread"][0], "info", out)
        # the 32 flows and the large values' connection
        self.assertIn("all 33 connections of the self-test on it", lines["spread"][1])

    def test_unfilled_checksums_fail(self):
        with netenv.NetEnv(tag="nc%d" % os.getpid()) as net:
            net.client("ethtool", "-K", net.client_if, "tx", "on")
            rc, lines, out = qualify(net, ["--vdev=" + net.vdev(1)], flows=4)
        self.assertEqual(rc, 1, out)
        self.assertEqual(lines["checksums"][0], "FAIL", out)
        self.assertIn("drop_tcp_bad_cksum", lines["checksums"][1])
        self.assertIn("ethtool -K IFACE tx off", lines["checksums"][1])
        self.assertEqual(lines["connections"][0], "FAIL", out)
        self.assertEqual(lines["stop"][0], "ok", out)
        self.assertTrue(lines["result"][0] == "FAIL" and "checksums" in lines["result"][1],
                        out)

    def test_no_port(self):
        with netenv.NetEnv(tag="nn%d" % os.getpid()) as net:
            rc, lines, out = qualify(net, ["--vdev=net_af_packet0,iface=nosuchif0"], flows=1)
        self.assertEqual(rc, 1, out)
        self.assertEqual(lines["start"][0], "FAIL", out)
        self.assertIn("no DPDK port found", out)
        self.assertEqual(lines["result"], ("FAIL", "(start)"), out)


def main():
    global SEGCACHED
    ap = argparse.ArgumentParser()
    ap.add_argument("--segcached", required=True)
    args, rest = ap.parse_known_args()
    SEGCACHED = os.path.abspath(args.segcached)
    netenv.need_root_or_skip("tools/nic-qualify")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
