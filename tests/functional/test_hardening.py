#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What a hostile network gets from the native stack (issue 10).

Also 2,000 half-open connections (HalfOpen): SYNs from spoofed sources
that never complete, while clients are served; the SYN backlog and SYN
cookie counters show where each went. A connection driven by hand (RawTcp)
closes the server's receive window and probes it with a byte of data.
Hostile clients on both stacks are in test_limits.py.

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
import netenv
from test_limits import ADMIN_PORT_NATIVE
from test_native import NativeCase, curr_connections, telemetry, wait_for

SERVER_PORT = harness.NATIVE_PORT
ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


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


def tcp_seg(src_ip, dst_ip, sport, dport, seq, ack, flags, wnd, payload=b""):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4,
                      flags, wnd, 0, 0)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 6, len(hdr) + len(payload))
    return hdr[:16] + struct.pack("!H", csum(pseudo + hdr + payload)) + hdr[18:] + payload


def tcp_mss(opts):
    """The MSS option's value (536 without one)."""
    i = 0
    while i < len(opts) and opts[i] != 0:
        if opts[i] == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if opts[i] == 2 and opts[i + 1] == 4:
            return struct.unpack("!H", opts[i + 2:i + 4])[0]
        i += opts[i + 1]
    return 536


def udp(src_ip, dst_ip, sport, dport, payload):
    hdr = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 17, 8 + len(payload))
    c = csum(pseudo + hdr + payload) or 0xffff
    return hdr[:6] + struct.pack("!H", c) + payload


class RawTcp:
    """One TCP connection driven by hand from an AF_PACKET socket, from a
    spoofed address of the client's subnet that no host has: the client's
    kernel drops what the server sends it (not its address, no forwarding),
    so only the test answers. Sequence numbers are kept as stream offsets
    (0 = the first byte after the SYN) and sent modulo 2**32."""

    MAX_FRAMES = 50000  # what one connection may read, at most

    def __init__(self, iface, my_mac, server_mac, src, dst, dport):
        self.my_mac, self.server_mac = my_mac, server_mac
        self.src, self.dst = ip4(src), ip4(dst)
        self.sport, self.dport = random.randint(40000, 60000), dport
        self.iss = random.getrandbits(32)
        self.irs = None
        self.frames = 0
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        # A window's worth of the server's segments at once.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((iface, 0))

    def close(self):
        self.sock.close()

    @staticmethod
    def rel(x, base):
        d = (x - base) & 0xffffffff
        return d - (1 << 32) if d >= 1 << 31 else d

    def send(self, off, ack_off, flags, wnd, payload=b""):
        """A segment at stream offset off, acknowledging ack_off."""
        seq = self.iss + 1 + off
        ack = self.irs + 1 + ack_off if self.irs is not None else 0
        self.sock.send(frame(self.my_mac, self.server_mac, self.src, self.dst, 6,
                             tcp_seg(self.src, self.dst, self.sport, self.dport, seq, ack,
                                     flags, wnd, payload)))

    def send_syn(self):
        self.sock.send(frame(self.my_mac, self.server_mac, self.src, self.dst, 6,
                             tcp_syn(self.src, self.dst, self.sport, self.dport, self.iss)))

    def recv(self, timeout):
        """The server's next segment on this connection within timeout, as
        a dict (seq and ack as offsets once the handshake is done), or None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                return None
            self.frames += 1
            if self.frames > self.MAX_FRAMES:
                raise AssertionError("more than %d frames on one connection" % self.MAX_FRAMES)
            if len(d) < 54 or d[12:14] != b"\x08\x00" or d[23] != 6:
                continue
            ihl = (d[14] & 0x0f) * 4
            if d[26:30] != self.dst or d[30:34] != self.src:
                continue
            t = d[14 + ihl:14 + struct.unpack("!H", d[16:18])[0]]
            sport, dport, seq, ack, off, flags, wnd = struct.unpack("!HHIIBBH", t[:16])
            if (sport, dport) != (self.dport, self.sport):
                continue
            seg = {"seq": seq, "ack": ack, "flags": flags, "wnd": wnd,
                   "data": t[(off >> 4) * 4:], "opts": t[20:(off >> 4) * 4]}
            if self.irs is not None:
                seg["seq"] = self.rel(seq, self.irs + 1)
                seg["ack"] = self.rel(ack, self.iss + 1)
            return seg

    def handshake(self, wnd):
        """SYN (window 65535, no scaling), SYN-ACK, then the ACK advertising
        wnd. Returns the SYN-ACK."""
        for _ in range(10):
            self.send_syn()
            deadline = time.monotonic() + 1.0
            while True:
                seg = self.recv(deadline - time.monotonic())
                if seg is None:
                    break
                if seg["flags"] & (SYN | ACK) == SYN | ACK and \
                        seg["ack"] == (self.iss + 1) & 0xffffffff:
                    self.irs = seg["seq"]
                    self.send(0, 0, ACK, wnd)
                    return seg
        raise AssertionError("no SYN-ACK in 10 tries")


class Hostile(NativeCase):
    # The admin port: stats while the clients' port is over its limit.
    server_args = {"threads": 1, "udp": True, "max_conns": 1024,
                   "seg_extra": ["--admin-port", str(ADMIN_PORT_NATIVE),
                                 "--admin-listen", netenv.SERVER_IP]}

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

    def admin_stats(self):
        """stats on the admin port (it answers whatever the clients' port
        is doing)."""
        adm = harness.Conn(socket.create_connection((harness.HOST, ADMIN_PORT_NATIVE),
                                                    timeout=10))
        try:
            return adm.stats()
        finally:
            adm.close()

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
        memcached's error line and a close, none is left hanging; and
        meanwhile the admin port answers stats."""
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 2200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
        conns, served, refused, other = [], 0, 0, []
        before, net_before = self.admin_stats(), self.counters()
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
            # Every connection served is still open: stats on the admin port.
            st, net = self.admin_stats(), self.counters()
            rejected = int(st["rejected_connections"]) - int(before["rejected_connections"])
            full = net["tcp_refused_full"] - net_before["tcp_refused_full"]
            print("%d served, %d refused; stats: curr_connections %s, rejected_connections "
                  "+%d; lib/net's tcp_refused_full +%d"
                  % (served, refused, st["curr_connections"], rejected, full))
            self.assertGreaterEqual(int(st["curr_connections"]), served)
            self.assertLessEqual(int(st["curr_connections"]), 1024)
            self.assertEqual(st["max_connections"], "1024")
            # Refused by the application (stats) or, every slot taken, by
            # lib/net at the handshake (its counter): each one is counted.
            self.assertGreaterEqual(rejected + full, refused)
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

    def test_zero_window_probe_with_data(self):
        """The server's receive window closes (its replies cannot leave: our
        window is 0, so its output passes the bound and it stops taking
        input); a one-byte probe at the closed window is answered at once
        with an ACK carrying the window, and the byte is not lost: once
        our window opens every reply arrives, that of the request the probe
        began included."""
        big = os.urandom(100000)
        last = b"the probe byte was kept"
        c = self.srv.pymemcache()
        try:
            self.assertTrue(c.set("zwp-big", big, noreply=False))
            self.assertTrue(c.set("zwp-last", last, noreply=False))
        finally:
            c.close()
        # Four gets of 100 KB fill TCP's send buffer (64 KB) and put the
        # output over its bound (256 KB): the server stops reading. The sets
        # after them wait in its 32 KB receive buffer until it is full; the
        # last request's first byte is the probe.
        fill = b"".join(b"set zwp-f%d 0 0 1000\r\n%s\r\n" % (i, b"%04d" % i * 250)
                        for i in range(40))
        tail = b"get zwp-last\r\n"
        stream = b"get zwp-big\r\n" * 4 + fill + tail
        expected = ((b"VALUE zwp-big 0 100000\r\n" + big + b"\r\nEND\r\n") * 4 +
                    b"STORED\r\n" * 40 +
                    b"VALUE zwp-last 0 %d\r\n%s\r\nEND\r\n" % (len(last), last))
        before = self.counters()
        t = RawTcp(self.iface, self.my_mac, self.server_mac, "198.18.0.253",
                   harness.HOST, SERVER_PORT)
        finished = False
        una = nxt = 0               # what the server acknowledged; what we sent
        try:
            synack = t.handshake(wnd=0)
            # and what this interface's MTU carries (1486 on the vhost
            # bridge's tap, vhost_server.py: a 1460-byte segment is EMSGSIZE)
            with open("/sys/class/net/%s/mtu" % self.iface) as f:
                mss = min(tcp_mss(synack["opts"]), 1460, int(f.read()) - 40)
            swnd = synack["wnd"]    # the server's window
            rcv = bytearray()       # what the server sent, in order
            probes_seen = 0         # the server's own zero-window probes

            def take_ack(seg):
                nonlocal una, nxt, swnd
                if seg["flags"] & ACK and una <= seg["ack"] <= len(stream):
                    una, swnd = seg["ack"], seg["wnd"]
                    nxt = max(nxt, una)

            def answer_probe(seg, mywnd):
                """The server probing our closed window: answer with it."""
                nonlocal probes_seen
                if not seg["data"] and seg["seq"] == len(rcv) - 1:
                    probes_seen += 1
                    t.send(nxt, len(rcv), ACK, mywnd)

            def push(mywnd):
                """Send what the server's window takes, from its ACK on."""
                nonlocal nxt
                while nxt < min(una + swnd, len(stream)):
                    n = min(mss, una + swnd - nxt, len(stream) - nxt)
                    t.send(nxt, len(rcv), ACK | PSH, mywnd, stream[nxt:nxt + n])
                    nxt += n

            # 1. Requests while advertising a zero window, until the
            # server's window is 0 with everything sent acknowledged.
            deadline = time.monotonic() + 60
            while not (swnd == 0 and una == nxt):
                self.assertLess(time.monotonic(), deadline,
                                "the server's window never closed: %d of %d bytes taken, "
                                "window %d" % (una, len(stream), swnd))
                self.assertLess(una, len(stream), "the server took every byte")
                push(0)
                seg = t.recv(1.0)
                if seg is None:
                    nxt = una  # a frame lost on a busy host: go back
                    continue
                self.assertFalse(seg["flags"] & (RST | FIN), seg)
                self.assertEqual(seg["data"], b"", "data sent into our zero window")
                take_ack(seg)
                answer_probe(seg, 0)
            print("the server's window closed after %d of %d bytes" % (una, len(stream)))
            self.assertGreater(una, 4 * 13)  # the gets went in
            self.assertGreater(len(stream) - una, len(tail))

            # Any ACK of the server's still on its way comes before the probe.
            for _ in range(20):
                seg = t.recv(1.0)
                if seg is None:
                    break
                answer_probe(seg, 0)

            # 2. The probe: one byte at the closed window. The answer comes
            # at once (not a persist probe of the server's, which is sent
            # below its snd_nxt): nothing taken, window still 0.
            t.send(nxt, 0, ACK | PSH, 0, stream[nxt:nxt + 1])
            answer = None
            deadline = time.monotonic() + 5
            while answer is None and time.monotonic() < deadline:
                seg = t.recv(deadline - time.monotonic())
                if seg is None:
                    break
                if seg["seq"] == 0 and not seg["data"] and seg["flags"] & ACK:
                    answer = seg
                else:
                    answer_probe(seg, 0)
            self.assertIsNotNone(answer, "no ACK to a zero-window probe carrying data")
            self.assertEqual(answer["flags"] & (RST | FIN | SYN), 0)
            self.assertEqual(answer["ack"], nxt, "the probe byte taken into a zero window")
            self.assertEqual(answer["wnd"], 0)
            take_ack(answer)

            # Meanwhile the server serves others, and probes our window on
            # its own (lib/net counts the probes it sends).
            self.assert_serves(50)
            deadline = time.monotonic() + 20
            while probes_seen == 0 and time.monotonic() < deadline:
                seg = t.recv(deadline - time.monotonic())
                if seg is not None:
                    self.assertFalse(seg["flags"] & (RST | FIN), seg)
                    answer_probe(seg, 0)
            self.assertGreater(probes_seen, 0, "the server never probed our zero window")
            self.assertGreater(self.counters()["tcp_zero_window_probes"],
                               before["tcp_zero_window_probes"])

            # 3. Our window opens: every reply arrives, and the rest of the
            # stream (the probe byte first, as it was not taken) goes in
            # as the server's window opens.
            t.send(nxt, len(rcv), ACK, 65535)
            stalls = 0
            deadline = time.monotonic() + 120
            while len(rcv) < len(expected) or una < len(stream):
                self.assertLess(time.monotonic(), deadline,
                                "%d of %d reply bytes, %d of %d request bytes taken"
                                % (len(rcv), len(expected), una, len(stream)))
                push(65535)
                seg = t.recv(1.0)
                if seg is None:
                    # A frame lost on a busy host: go back and repeat our
                    # window, or probe the server's if it is closed.
                    stalls += 1
                    nxt = una
                    if swnd == 0 and una < len(stream):
                        t.send(una, len(rcv), ACK | PSH, 65535, stream[una:una + 1])
                    else:
                        t.send(nxt, len(rcv), ACK, 65535)
                    continue
                self.assertFalse(seg["flags"] & (RST | SYN), seg)
                take_ack(seg)
                if seg["data"]:
                    if seg["seq"] == len(rcv):
                        rcv += seg["data"]
                    t.send(nxt, len(rcv), ACK, 65535)
                else:
                    answer_probe(seg, 65535)
                self.assertFalse(seg["flags"] & FIN, "closed by the server")
            print("%d frames read, %d stalls once our window opened" % (t.frames, stalls))
            if bytes(rcv) != expected:
                i = next((i for i in range(min(len(rcv), len(expected)))
                          if rcv[i] != expected[i]), min(len(rcv), len(expected)))
                self.fail("replies differ at byte %d of %d (got %d): %r, expected %r"
                          % (i, len(expected), len(rcv), bytes(rcv[i:i + 40]),
                             expected[i:i + 40]))

            # 4. Close: our FIN, the server's FIN, our ACK.
            t.send(nxt, len(rcv), FIN | ACK, 65535)
            deadline = time.monotonic() + 30
            while not finished and time.monotonic() < deadline:
                seg = t.recv(1.0)
                if seg is None:
                    t.send(nxt, len(rcv), FIN | ACK, 65535)
                elif seg["flags"] & FIN and seg["seq"] == len(rcv):
                    t.send(nxt + 1, len(rcv) + 1, ACK, 65535)
                    finished = True
            self.assertTrue(finished, "the server never closed its side")
        finally:
            if not finished and t.irs is not None:
                # Do not leave the slot held (exactly at what the server
                # took, with or without our FIN).
                t.send(una, 0, RST, 0)
                t.send(una + 1, 0, RST, 0)
            t.close()
        self.assert_no_leak()
        self.assert_serves()


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
