#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What a hostile network gets from the native stack (issue 10).

Also 2,000 half-open connections (HalfOpen): SYNs from spoofed sources
that never complete, while clients are served; the SYN backlog and SYN
cookie counters show where each went. Hostile clients on both stacks are
in test_limits.py.

Run through run_native.py (root; the private network of netenv.py):

    run_native.py --segcached build/app/segcached/segcached test_hardening.py

Frames are forged with an AF_PACKET socket on the client's veth: spoofed
addresses stay inside the test's namespaces (198.18.0.0/24). Each attack is
bounded in packets and time, and each test ends by checking that a normal
client is still served with nothing lost.
"""

import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

import harness
from test_native import NativeCase, curr_connections, telemetry, wait_for

SERVER_PORT = harness.NATIVE_PORT
ETH_P_ALL = 0x0003


def client_iface():
    """The veth end in this (the client's) namespace."""
    for name in os.listdir("/sys/class/net"):
        if name != "lo":
            return name
    raise AssertionError("no interface in the client namespace")


def mac_bytes(text):
    return bytes(int(x, 16) for x in text.split(":"))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(text):
    return socket.inet_aton(text)


def frame(src_mac, dst_mac, src_ip, dst_ip, proto, l4):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), random.getrandbits(16), 0x4000,
                     64, proto, 0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + l4


def tcp_syn(src_ip, dst_ip, sport, dport, seq):
    opts = struct.pack("!BBH", 2, 4, 1460)
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, (5 + 1) << 4, 0x02, 65535, 0, 0) + opts
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 6, len(hdr))
    return hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]


def udp(src_ip, dst_ip, sport, dport, payload):
    hdr = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 17, 8 + len(payload))
    c = csum(pseudo + hdr + payload) or 0xffff
    return hdr[:6] + struct.pack("!H", c) + payload


class Hostile(NativeCase):
    server_args = {"threads": 1, "udp": True, "max_conns": 1024}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.iface = client_iface()
        with open("/sys/class/net/%s/address" % cls.iface) as f:
            cls.my_mac = mac_bytes(f.read().strip())
        cls.raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        cls.raw.bind((cls.iface, 0))
        cls.server_mac = mac_bytes(telemetry(cls.srv, "/segcached/net")["mac"])
        cls.server_ip = ip4(harness.HOST)

    @classmethod
    def tearDownClass(cls):
        cls.raw.close()
        super().tearDownClass()

    def counters(self):
        return telemetry(self.srv, "/segcached/net")

    def assert_serves(self, n=200):
        """A normal client stores and reads back n values, all intact."""
        c = self.srv.pymemcache()
        try:
            for i in range(n):
                v = ("%d-" % i).encode() + os.urandom(16).hex().encode()
                self.assertTrue(c.set("h%d" % i, v, noreply=False))
                self.assertEqual(c.get("h%d" % i), v)
        finally:
            c.close()

    def test_syn_flood_from_spoofed_ports(self):
        before = self.counters()
        sent = 0
        deadline = time.monotonic() + 60
        while sent < 100000 and time.monotonic() < deadline:
            src = ip4("198.18.0.%d" % random.randint(10, 250))
            f = frame(self.my_mac, self.server_mac, src, self.server_ip, 6,
                      tcp_syn(src, self.server_ip, random.randint(1024, 65535), SERVER_PORT,
                              random.getrandbits(32)))
            self.raw.send(f)
            sent += 1
        self.assertEqual(sent, 100000, "could not send the flood in time")
        after = self.counters()
        # Beyond the backlog the SYNs were answered with cookies, not slots.
        self.assertGreater(after["tcp_syncookies_sent"], before["tcp_syncookies_sent"])
        self.assert_serves()

    def test_spoofed_broadcast_and_offnet_udp_gets_nothing(self):
        request = struct.pack("!HHHH", 7, 0, 1, 0) + b"get k k k k k k k k\r\n"
        bcast = b"\xff" * 6
        before = self.counters()
        sources = [
            (self.my_mac, "198.18.0.255"),   # the subnet's broadcast address
            (self.my_mac, "255.255.255.255"),
            (self.my_mac, "224.0.0.1"),
            (bcast, "198.18.0.1"),           # a broadcast source MAC
            (self.my_mac, "203.0.113.9"),    # beyond the subnet
        ]
        sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        sniff.bind((self.iface, 0))
        sniff.settimeout(0.2)
        try:
            for mac, src in sources:
                s = ip4(src)
                self.raw.send(frame(mac, self.server_mac, s, self.server_ip, 17,
                                    udp(s, self.server_ip, 4000, SERVER_PORT, request)))
            replies = 0
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                try:
                    d = sniff.recv(2048)
                except socket.timeout:
                    continue
                if d[6:12] == self.server_mac and d[12:14] == b"\x08\x00" and d[23] == 17:
                    replies += 1
        finally:
            sniff.close()
        self.assertEqual(replies, 0)
        after = self.counters()
        dropped = (after["drop_ip_bad_source"] - before["drop_ip_bad_source"] +
                   after["drop_udp_bad_source"] - before["drop_udp_bad_source"])
        self.assertEqual(dropped, len(sources))
        self.assertEqual(after["udp_tx"], before["udp_tx"])
        self.assert_serves()

    def test_udp_reply_bounded(self):
        """A small datagram asking for big values gets at most
        --udp-reply-max (4096) bytes back: the reflection it can cause is
        bounded (memcached's 13-key get of 100 KB values: 16,533x)."""
        c = self.srv.pymemcache()
        try:
            self.assertTrue(c.set("big", b"b" * 100000, noreply=False))
        finally:
            c.close()
        request = struct.pack("!HHHH", 9, 0, 1, 0) + b"get" + b" big" * 13 + b"\r\n"
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(1.5)
        got = 0
        try:
            u.sendto(request, (harness.HOST, self.srv.udp_port))
            while True:
                try:
                    got += len(u.recv(65536))
                except socket.timeout:
                    break
        finally:
            u.close()
        self.assertGreater(got, 0)
        self.assertLessEqual(got, 4096 + 8 * 3)
        print("UDP reply/request: %d/%d bytes = %.1fx" % (got, len(request), got / len(request)))

    def test_ten_megabytes_of_random_bytes(self):
        s = socket.create_connection((harness.HOST, self.srv.port), timeout=5)
        rng = random.Random(7)
        sent = 0
        done = threading.Event()

        def drain():
            # Read whatever comes back (error lines) so the server is never
            # held up by a full window, until it closes or we are done.
            while not done.is_set():
                try:
                    if not s.recv(65536):
                        return
                except OSError:
                    return

        t = threading.Thread(target=drain, daemon=True)
        t.start()
        try:
            while sent < 10 << 20:
                chunk = rng.randbytes(64 << 10)
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass  # the server closed the connection: allowed
        done.set()
        s.close()
        t.join(10)
        self.assert_serves()
        self.assert_no_leak()

    def test_over_the_connection_limit_refused_at_once(self):
        """2,000 connections against -c 1024: each one is served or gets
        memcached's error line and a close, none is left hanging."""
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 2200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
        conns, served, refused, other = [], 0, 0, []
        try:
            for _ in range(2000):
                try:
                    c = socket.create_connection((harness.HOST, self.srv.port), timeout=10)
                except OSError as e:
                    other.append("connect: %s" % e)
                    continue
                conns.append(c)
                c.sendall(b"version\r\n")
            for c in conns:
                try:
                    line = c.makefile("rb").readline()
                except OSError as e:  # a reset is a refusal too, if a rude one
                    other.append(str(e))
                    continue
                if line.startswith(b"VERSION "):
                    served += 1
                elif line == b"ERROR Too many open connections\r\n":
                    refused += 1
                    self.assertEqual(c.recv(16), b"", "refused but not closed")
                else:
                    other.append(line)
        finally:
            for c in conns:
                c.close()
        self.assertEqual(other, [])
        self.assertEqual(served + refused, 2000)
        self.assertGreaterEqual(served, 1000)
        self.assert_no_leak()
        self.assert_serves()

    def test_slowloris(self):
        conns = []
        try:
            for _ in range(500):
                conns.append(socket.create_connection((harness.HOST, self.srv.port),
                                                      timeout=5))
            for second in range(5):
                for c in conns:
                    c.send(b"g" if second == 0 else b"e")
                time.sleep(1)
            # 500 half-sent requests do not stop anyone else.
            self.assert_serves()
        finally:
            for c in conns:
                c.close()
        self.assert_no_leak()


class HalfOpen(NativeCase):
    """2,000 handshakes that are never completed: spoofed sources on the
    segment whose SYN-ACKs nobody answers. A server of its own, since they
    hold slots for a minute."""
    server_args = {"threads": 1, "max_conns": 1024}
    HALF_OPEN = 2000

    def net_when(self, what, pred, timeout=120):
        """/segcached/net once pred holds for it (bounded wait)."""
        def check():
            n = telemetry(self.srv, "/segcached/net")
            return n if pred(n) else None
        return wait_for(what, check, timeout)

    def test_two_thousand_half_open_connections(self):
        iface = client_iface()
        with open("/sys/class/net/%s/address" % iface) as f:
            my_mac = mac_bytes(f.read().strip())
        server_mac = mac_bytes(telemetry(self.srv, "/segcached/net")["mac"])
        server_ip = ip4(harness.HOST)
        before = telemetry(self.srv, "/segcached/net")
        slots = before["tcp_slots_per_worker"]
        backlog = slots // 4  # lib/net's default SYN backlog

        def delta(name, now):
            return now[name] - before[name]

        def taken(n):
            """SYNs the stack has seen: given a slot, or beyond the backlog."""
            return delta("tcp_passive_opens", n) + delta("tcp_backlog_full", n)

        def settled():
            """The counters once they stop moving (a bounded wait)."""
            last = telemetry(self.srv, "/segcached/net")
            for _ in range(100):
                time.sleep(0.1)
                n = telemetry(self.srv, "/segcached/net")
                if taken(n) == taken(last):
                    return n
                last = n
            return last

        raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        raw.bind((iface, 0))
        sent = 0
        after = before
        try:
            # From 100 addresses of the client's subnet that no host has
            # (the client's kernel drops the SYN-ACKs: not its address, no
            # forwarding), in batches of 100. A frame the virtual port drops
            # on a busy host is made up for with a new one, until the stack
            # has seen 2,000.
            for _ in range(200):
                missing = self.HALF_OPEN - taken(after)
                if missing <= 0:
                    break
                for _ in range(min(missing, 100)):
                    src = ip4("198.18.0.%d" % (100 + sent % 100))
                    raw.send(frame(my_mac, server_mac, src, server_ip, 6,
                                   tcp_syn(src, server_ip, 20000 + sent // 100, SERVER_PORT,
                                           random.getrandbits(32))))
                    sent += 1
                after = settled()
        finally:
            raw.close()
        print("%d SYNs sent, %d seen by the stack" % (sent, taken(after)))
        self.assertGreaterEqual(taken(after), self.HALF_OPEN)
        # The SYN backlog filled up, no further: the rest got SYN cookies
        # and cost no slot.
        self.assertEqual(delta("tcp_passive_opens", after), backlog)
        self.assertEqual(delta("tcp_backlog_full", after), taken(after) - backlog)
        self.assertEqual(delta("tcp_syncookies_sent", after), taken(after) - backlog)
        self.assertGreaterEqual(after["tcp_slots_in_use"], backlog)
        self.assertLessEqual(after["tcp_slots_in_use"], slots)
        self.assertEqual(curr_connections(self.srv), 0)  # none reached the application

        # Meanwhile clients are served: their SYNs get cookies too.
        clients = [self.srv.pymemcache() for _ in range(50)]
        try:
            for i, c in enumerate(clients):
                self.assertTrue(c.set("half%d" % i, b"v%d" % i, noreply=False))
            for i, c in enumerate(clients):
                self.assertEqual(c.get("half%d" % i), b"v%d" % i)
        finally:
            for c in clients:
                c.close()
        self.assertGreaterEqual(delta("tcp_syncookies_ok",
                                      telemetry(self.srv, "/segcached/net")), 50)
        self.assert_no_leak()
        # The half-open ones give up after the SYN-ACK retries (about a
        # minute) and leave nothing behind.
        done = self.net_when("the half-open connections to time out",
                             lambda n: n["tcp_slots_in_use"] == 0, timeout=180)
        self.assertEqual(delta("tcp_timeouts", done), backlog)


class AllowList(NativeCase):
    """--allow: a client outside the list gets nothing, not even a refusal."""
    server_args = {"threads": 1, "udp": True, "extra": ["--allow", "198.18.0.1/32"]}
    OTHER = "198.18.0.3"

    def setUp(self):
        iface = client_iface()
        subprocess.run(["ip", "addr", "add", self.OTHER + "/24", "dev", iface], check=True,
                       timeout=30)
        self.addCleanup(subprocess.run, ["ip", "addr", "del", self.OTHER + "/24", "dev", iface],
                        timeout=30)

    def test_only_listed_clients_are_served(self):
        before = telemetry(self.srv, "/segcached/net")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((self.OTHER, 0))
        s.settimeout(2)
        with self.assertRaises(OSError):  # no SYN-ACK, no RST: a timeout
            s.connect((harness.HOST, self.srv.port))
        s.close()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((self.OTHER, 0))
        u.settimeout(1)
        u.sendto(struct.pack("!HHHH", 1, 0, 1, 0) + b"version\r\n",
                 (harness.HOST, self.srv.port))
        with self.assertRaises(socket.timeout):
            u.recv(2048)
        u.close()
        after = telemetry(self.srv, "/segcached/net")
        self.assertGreaterEqual(after["drop_ip_not_allowed"] - before["drop_ip_not_allowed"], 2)
        # The listed client is served.
        c = self.srv.pymemcache()
        try:
            self.assertTrue(c.set("allowed", b"yes", noreply=False))
            self.assertEqual(c.get("allowed"), b"yes")
        finally:
            c.close()


if __name__ == "__main__":
    argv = harness.setup()
    if not harness.is_native():
        print("test_hardening.py runs through run_native.py (it forges frames on its network)")
        sys.exit(2)
    unittest.main(argv=argv, verbosity=2)
