#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Which path each packet took, from segcached's own counters, on a port
that offers checksum offload and TSO (net_virtio_user behind a net_vhost
bridge, vhostenv.py), with the offloads --offloads lets it use:

    run_vhost.py --bridge csum --offloads cksum,tso --segcached SEGCACHED test_offloads.py
    run_vhost.py --bridge io --offloads cksum ...
    run_vhost.py --bridge io --offloads none ...

Values of 10 bytes to 1 MiB round-trip over TCP on 2 queues and 2 worker
lcores (both serving), UDP too, and the counters say the offloads in use
did the work: checksums left to the port and 0 computed in software (none:
the reverse), TSO segments with tso (none without). On the io bridge a
TCP segment and a UDP datagram with a wrong checksum arrive as sent and
are dropped and counted. The fourth combination, TSO without checksum
offload, is refused at start with the reason.
"""

import os
import socket
import struct
import subprocess
import sys
import unittest

import harness
from harness import telemetry, wait_for

SERVER_MAC_TIMEOUT = 30.0  # hang guards, not timing checks
MAX_CONNS = 64


def offloads():
    extra = harness.ARGS.server_extra.split()
    return extra[extra.index("--offloads") + 1] if "--offloads" in extra else "cksum,tso"


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, proto, l4):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + l4


def pseudo(src, dst, proto, n):
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, n)


def bad_tcp_syn(src, dst, sport, dport):
    """A SYN whose checksum is off by one bit pattern (never the right one)."""
    th = struct.pack("!HHIIBBHHH", sport, dport, 12345, 0, 5 << 4, 0x02, 65535, 0, 0)
    good = csum(pseudo(src, dst, 6, len(th)) + th)
    return th[:16] + struct.pack("!H", good ^ 0x5a5a) + th[18:]


def bad_udp(src, dst, sport, dport, payload):
    uh = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    good = csum(pseudo(src, dst, 17, 8 + len(payload)) + uh + payload) or 0xffff
    return uh[:6] + struct.pack("!H", good ^ 0x5a5a) + payload


def tap():
    return harness.ARGS.server_tap


def ip_mac(dev):
    with open("/sys/class/net/%s/address" % dev) as f:
        return bytes(int(x, 16) for x in f.read().strip().split(":"))


def server_mac():
    def lookup():
        out = subprocess.run(["ip", "neigh", "show", harness.ARGS.server_ip, "dev", tap()],
                             stdout=subprocess.PIPE, text=True, timeout=30).stdout.split()
        return out[out.index("lladdr") + 1] if "lladdr" in out else None
    mac = wait_for("the server's MAC in the client's ARP cache", lookup,
                   timeout=SERVER_MAC_TIMEOUT)
    return bytes(int(x, 16) for x in mac.split(":"))


class Offloads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # -I 2m: a value of exactly 1 MiB with its key and header fits
        cls.srv = harness.Server(name="offloads", threads=2, udp=True, item_max="2m",
                                 memory_mb=64)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop_clean("offloads")

    def net(self):
        return telemetry(self.srv, "/segcached/net")

    def conns_on_both_workers(self):
        """Connections until each worker lcore has one (the tap spreads
        flows over its queues by their hash; bounded)."""
        conns = []
        for _ in range(MAX_CONNS):
            conns.append(self.srv.connect())
            conns[-1].cmd(b"version\r\n")
            if all(n > 0 for n in self.net()["worker_curr_connections"]):
                return conns
        self.fail("%d connections all on one worker: %s" % (
            MAX_CONNS, self.net()["worker_curr_connections"]))

    def test_1_values_round_trip_on_the_offload_paths(self):
        before = self.net()
        conns = self.conns_on_both_workers()
        try:
            for i, size in enumerate((10, 1400, 3000, 200000, 1 << 20)):
                for c in conns[-2:]:  # one on each worker, the last two
                    v = os.urandom(size)
                    k = b"off%d_%d" % (size, i)
                    self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, size, v)),
                                     b"STORED\r\n")
                    self.assertEqual(c.get(k), {k: (0, v, None)})
        finally:
            for c in conns:
                c.close()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(harness.IO_TIMEOUT)
        try:
            u.sendto(b"\0\1\0\0\0\1\0\0get off10_0\r\n", (harness.HOST, self.srv.port))
            self.assertTrue(u.recv(2048)[8:].startswith(b"VALUE off10_0 0 10\r\n"))
        finally:
            u.close()
        n = self.net()
        d = {k: n[k] - before[k] for k in n if isinstance(n[k], int) and k in before}
        sent_l4 = d["tx_l4_cksum_offload"] + d["tx_l4_cksum_sw"]
        self.assertGreater(sent_l4, (1 << 20) // 65000)
        self.assertGreater(min(n["worker_rx_packets"]), 0)
        self.assertEqual(n["driver"], "net_virtio_user")
        self.assertEqual(n["queues"], 2)
        # virtio has no IPv4 header checksum offload: always in software
        self.assertEqual(n["tx_ip_cksum_offload"], 0)
        self.assertEqual(d["tx_ip_cksum_offload"], 0)
        mode = offloads()
        if mode == "none":
            self.assertEqual((n["rx_cksum_offload"], n["tx_cksum_offload"], n["tx_tso"]),
                             (0, 0, 0))
            self.assertEqual(d["tx_l4_cksum_offload"], 0)
            self.assertEqual(d["tx_l4_cksum_sw"], sent_l4)
            self.assertEqual(d["tcp_tx_tso"], 0)
        else:
            self.assertEqual((n["rx_cksum_offload"], n["tx_cksum_offload"]), (1, 1))
            self.assertEqual(d["tx_l4_cksum_sw"], 0)
            self.assertEqual(d["tx_l4_cksum_offload"], sent_l4)
            if mode == "cksum,tso":
                self.assertEqual(n["tx_tso"], 1)
                # the 200 kB and 1 MiB replies went out in segments the
                # port cut (up to 65,000 bytes each), not MSS by MSS
                self.assertGreater(d["tcp_tx_tso"], 0)
                self.assertLess(d["tcp_tx_segs"], 2 * ((1 << 20) + 200000) // 1446)
            else:
                self.assertEqual(n["tx_tso"], 0)
                self.assertEqual(d["tcp_tx_tso"], 0)
        if harness.ARGS.server_vhost == "csum" and mode != "none":
            # the bridge left the kernel's checksums to the vhost port:
            # virtio's "not filled in, data valid", trusted
            self.assertGreater(d["rx_l4_cksum_none"], 0)
        else:
            # frames as the kernel sent them: no verdict, checked here
            self.assertEqual(d["rx_l4_cksum_none"] + d["rx_l4_cksum_good"], 0)
            self.assertGreater(d["rx_l4_cksum_unknown"], 0)
        self.assertEqual(d["rx_l4_cksum_bad"] + d["rx_ip_cksum_bad"], 0)
        self.assertEqual(n["drop_tcp_bad_cksum"] + n["drop_udp_bad_cksum"] +
                         n["drop_ip_bad_cksum"], 0)
        self.assertGreater(d["rx_ip_cksum_unknown"], 0)

    def test_2_wrong_checksums_dropped_and_counted(self):
        if harness.ARGS.server_vhost != "io":
            self.skipTest("the csum bridge computes every checksum again on the way")
        c = self.srv.connect()  # the client learns the server's MAC
        c.cmd(b"version\r\n")
        c.close()
        before = self.net()
        raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        raw.bind((tap(), 0))
        eth = server_mac() + ip_mac(tap()) + b"\x08\x00"
        src, dst = "198.18.0.1", harness.ARGS.server_ip
        try:
            raw.send(eth + ipv4(src, dst, 6, bad_tcp_syn(src, dst, 45678, self.srv.port)))
            raw.send(eth + ipv4(src, dst, 17, bad_udp(src, dst, 45679, self.srv.port,
                                                      b"\0\1\0\0\0\1\0\0version\r\n")))
        finally:
            raw.close()
        wait_for("both drops counted", lambda: (
            self.net()["drop_tcp_bad_cksum"] - before["drop_tcp_bad_cksum"],
            self.net()["drop_udp_bad_cksum"] - before["drop_udp_bad_cksum"]) == (1, 1),
            timeout=30)
        n = self.net()
        self.assertEqual(n["tcp_passive_opens"], before["tcp_passive_opens"])
        self.assertEqual(n["udp_rx"], before["udp_rx"])
        # still serving
        c = self.srv.connect()
        try:
            self.assertTrue(c.cmd(b"version\r\n").startswith(b"VERSION "))
        finally:
            c.close()


class TsoWithoutChecksums(unittest.TestCase):
    """The fourth combination: TSO leaves the checksums to the NIC, so
    --offloads tso alone is refused before anything starts."""

    def test_refused_with_the_reason(self):
        p = subprocess.run([harness.ARGS.segcached, "--no-huge", "--no-pci", "--",
                            "--stack", "native", "--ip", "198.18.0.2/24", "--offloads", "tso"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        out = p.stdout.decode(errors="replace")
        self.assertNotEqual(p.returncode, 0, out)
        self.assertIn("tso needs cksum", out)
        p = subprocess.run([harness.ARGS.segcached, "--no-huge", "--no-pci", "--",
                            "--stack", "native", "--ip", "198.18.0.2/24", "--offloads", "gso"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("offloads are cksum and tso", p.stdout.decode(errors="replace"))


if __name__ == "__main__":
    argv = harness.setup()
    if not harness.ARGS.server_vhost:
        print("test_offloads.py runs through run_vhost.py (it needs a port with offloads)")
        sys.exit(2)
    unittest.main(argv=argv, verbosity=2)
