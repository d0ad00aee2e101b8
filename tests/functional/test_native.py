#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""segcached's native (DPDK) stack against Linux clients.

Run through run_native.py, which creates the private network (netenv.py)
and starts this script inside the client namespace:

    run_native.py --segcached build/app/segcached/segcached test_native.py

The server answers as 198.18.0.2 from the server namespace over
net_af_packet (or net_af_xdp: run_native.py --port af_xdp) on a veth pair.
Every loop here is bounded in count and time.
"""

import os
import random
import resource
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

import harness
from harness import telemetry, wait_for

# Bounds against hangs, not timing checks.
PHASE_TIMEOUT = 120.0


def nft(*args):
    subprocess.run(["nft"] + list(args), check=True, timeout=30,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def curr_connections(srv):
    c = srv.connect()
    try:
        # Not counting the connection that asks.
        return int(c.stats()["curr_connections"]) - 1
    finally:
        c.close()


class NativeCase(unittest.TestCase):
    server_args = {"threads": 1, "udp": True}

    @classmethod
    def setUpClass(cls):
        cls.srv = harness.Server(name=cls.__name__, **cls.server_args)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop_clean(cls.__name__)

    def assert_no_leak(self):
        """Every connection the test opened is gone on the server too."""
        wait_for("curr_connections back to 0", lambda: curr_connections(self.srv) == 0)


class Basics(NativeCase):
    # UDP as memcached serves it: every command, replies of any size
    server_args = dict(NativeCase.server_args,
                       seg_extra=["--udp-writes", "--udp-reply-max", "0"])

    def test_ping(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.settimeout(2)
        ident = os.getpid() & 0xffff
        answered = 0
        try:
            for seq in range(1, 6):
                payload = bytes(random.getrandbits(8) for _ in range(56))
                hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
                pkt = struct.pack("!BBHHH", 8, 0, icmp_checksum(hdr + payload), ident,
                                  seq) + payload
                s.sendto(pkt, (harness.HOST, 0))
                deadline = time.monotonic() + 2
                while time.monotonic() < deadline:
                    try:
                        d, addr = s.recvfrom(2048)
                    except socket.timeout:
                        break
                    icmp = d[(d[0] & 0xf) * 4:]
                    typ, code, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
                    if addr[0] == harness.HOST and typ == 0 and rid == ident and rseq == seq:
                        self.assertEqual(icmp[8:], payload)
                        self.assertEqual(icmp_checksum(icmp), 0)
                        answered += 1
                        break
        finally:
            s.close()
        # Echo is best effort only on a lossy path; here nothing drops.
        self.assertEqual(answered, 5)
        net = telemetry(self.srv, "/segcached/net")
        self.assertGreaterEqual(net["icmp_echo_replies"], 5)

    def test_udp_get_set(self):
        resp, n = harness.udp_request(self.srv.udp_port, b"set udpk 3 0 5\r\nhello\r\n", 11)
        self.assertEqual((resp, n), (b"STORED\r\n", 1))
        resp, n = harness.udp_request(self.srv.udp_port, b"get udpk\r\n", 12)
        self.assertEqual(resp, b"VALUE udpk 3 5\r\nhello\r\nEND\r\n")

    def test_udp_large_response_numbered(self):
        v = bytes(random.getrandbits(8) for _ in range(50000))
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set udpbig 0 0 %d\r\n%s\r\n" % (len(v), v)), b"STORED\r\n")
        finally:
            c.close()
        resp, n = harness.udp_request(self.srv.udp_port, b"get udpbig\r\n", 0xbeef)
        self.assertEqual(resp, b"VALUE udpbig 0 %d\r\n%s\r\nEND\r\n" % (len(v), v))
        self.assertGreater(n, 30)

    def test_large_values_over_tcp(self):
        # Values far larger than the stack's receive and send buffers.
        c = self.srv.connect()
        try:
            for size in (1, 1459, 1460, 1461, 40000, 300000, 1000000 - 100):
                v = bytes(random.getrandbits(8) for _ in range(size))
                k = b"large%d" % size
                self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, size, v)), b"STORED\r\n")
                self.assertEqual(c.get(k), {k: (0, v, None)})
        finally:
            c.close()
        self.assert_no_leak()

    def test_slow_reader_is_held_back(self):
        # 20 MB of replies to a client that does not read: the server stops
        # executing its requests while the unsent output is over the bound
        # (counted), and every reply still arrives, in order.
        v = os.urandom(100000)
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set slow 0 0 %d\r\n%s\r\n" % (len(v), v)), b"STORED\r\n")
            before = telemetry(self.srv, "/segcached/net")["backpressure_stalls"]
            n = 200
            c.send(b"get slow\r\n" * n)
            wait_for("the server to stall on the output bound",
                     lambda: telemetry(self.srv, "/segcached/net")["backpressure_stalls"] > before)
            expect = b"VALUE slow 0 %d\r\n%s\r\nEND\r\n" % (len(v), v)
            for _ in range(n):
                self.assertEqual(c.exact(len(expect)), expect)
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()

    def test_endless_line_is_cut_off(self):
        # Garbage that can never become a request: the connection is closed
        # before it can hold more than a request's worth of memory.
        c = self.srv.connect()
        try:
            try:
                for _ in range(300):
                    c.send(b"a" * 10000)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.assertTrue(c.closed())
        finally:
            c.close()
        c = self.srv.connect()
        try:
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()
        self.assert_no_leak()

    def test_large_sets_and_gets_pipelined_to_a_slow_reader(self):
        # Large sets (assembled beside TCP's receive buffer) mixed with gets
        # whose replies exceed the output bound: the server must hold the
        # client back through TCP's window, never buffer without bound or
        # drop the connection, and answer everything in order.
        vals = [os.urandom(400000 + i) for i in range(4)]
        stream = b""
        expect = b""
        for i, v in enumerate(vals):
            stream += b"set pl%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)
            expect += b"STORED\r\n"
            stream += b"get pl%d\r\n" % i * 12
            expect += b"VALUE pl%d 0 %d\r\n%s\r\nEND\r\n" % (i, len(v), v) * 12
        c = self.srv.connect()
        errors = []

        def sender():
            try:
                c.send(stream)
            except OSError as e:
                errors.append(e)
        t = threading.Thread(target=sender)
        t.start()
        try:
            time.sleep(1)  # let the server run into its bound while we do not read
            self.assertEqual(c.exact(len(expect)), expect)
        finally:
            t.join(PHASE_TIMEOUT)
            c.close()
        self.assertFalse(t.is_alive())
        self.assertEqual(errors, [])
        self.assertEqual(telemetry(self.srv, "/segcached/net")["conns_oversized"], 0)

    def test_replies_composed_in_tcps_send_ring(self):
        # Replies are composed in the free space of TCP's send ring (one
        # copy fewer); one that does not fit before the ring's end goes
        # through the worker's buffer instead. 40 pipelined gets of up to
        # 20 KB fill the 64 KiB ring several times over within one
        # segment's requests, so both paths run, and every byte must
        # arrive in order.
        rng = random.Random(8)
        vals = {b"ring%d" % i: os.urandom(rng.choice((10, 100, 3000, 9000, 20000)))
                for i in range(40)}
        c = self.srv.connect()
        try:
            for k, v in vals.items():
                self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)),
                                 b"STORED\r\n")
            before = telemetry(self.srv, "/segcached/net")
            stream, expect = b"", b""
            for k, v in vals.items():
                stream += b"get %s\r\n" % k
                expect += b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v)
                stream += b"mg %s v\r\n" % k
                expect += b"VA %d\r\n%s\r\n" % (len(v), v)
            c.send(stream)
            self.assertEqual(c.exact(len(expect)), expect)
        finally:
            c.close()
        after = telemetry(self.srv, "/segcached/net")
        in_place = after["bytes_composed_in_place"] - before["bytes_composed_in_place"]
        written = after["bytes_written"] - before["bytes_written"]
        self.assertGreater(in_place, 0)
        self.assertGreater(written, in_place, "no reply went through the worker's buffer")
        self.assertEqual(after["conns_out_of_memory"], 0)

    def test_stats_conns(self):
        a, b = self.srv.connect(), self.srv.connect()
        try:
            st = a.stats(b"conns")
            ports = {c.sock.getsockname()[1] for c in (a, b)}
        finally:
            a.close()
            b.close()
        self.assertEqual(st["0:addr"], "tcp:%s:%d" % (harness.HOST, self.srv.port))
        self.assertEqual(st["0:state"], "conn_listening")
        self.assertEqual(st["1:addr"], "udp:%s:%d" % (harness.HOST, self.srv.udp_port))
        peers = {v for k, v in st.items()
                 if k.endswith(":addr") and v.startswith("tcp:198.18.0.1:")}
        self.assertEqual(peers, {"tcp:198.18.0.1:%d" % p for p in ports})
        threads = {v for k, v in st.items() if k.endswith(":thread")}
        self.assertTrue(threads and all(t.startswith("lcore") for t in threads), threads)

    def test_telemetry(self):
        st = telemetry(self.srv, "/segcached/stats")
        self.assertEqual(st["stack"], "native")
        self.assertEqual(st["pid"], self.srv.proc.pid)
        self.assertIn("curr_items", st)
        net = telemetry(self.srv, "/segcached/net")
        self.assertEqual(net["driver"], harness.native_driver())
        self.assertEqual(net["queues"], 1)
        self.assertEqual(net["workers"], 1)
        # af_packet and af_xdp offer no checksum offloads: the stack does them.
        self.assertEqual(net["tx_cksum_offload"], 0)
        self.assertGreater(net["rx_packets"], 0)
        w0 = telemetry(self.srv, "/segcached/net,0")
        self.assertEqual(w0["queue"], 0)
        self.assertEqual(w0["lcore"], net["worker_lcores"][0])
        self.assertGreater(w0["rx_packets"], 0)


class ManyConnections(NativeCase):
    server_args = {"threads": 1, "max_conns": 2000}

    def test_thousand_concurrent_connections(self):
        n = 1000
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < n + 64:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
        sel = selectors.DefaultSelector()
        socks = []
        heap_before = telemetry(self.srv, "/segcached/net")["malloc_bytes_in_use"]
        try:
            # All open at once before any request is sent.
            for i in range(n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                s.connect_ex((harness.HOST, self.srv.port))
                socks.append(s)
            pending = {}
            for i, s in enumerate(socks):
                sel.register(s, selectors.EVENT_WRITE, i)
                pending[i] = b""
            expected = {}
            for i in range(n):
                v = b"value-%d-" % i + os.urandom(8).hex().encode()
                expected[i] = b"STORED\r\nVALUE c%d 0 %d\r\n%s\r\nEND\r\n" % (i, len(v), v)
                pending[i] = b"set c%d 0 0 %d\r\n%s\r\nget c%d\r\n" % (i, len(v), v, i)
            got = {i: b"" for i in range(n)}
            connected = set()
            deadline = time.monotonic() + PHASE_TIMEOUT
            done = 0
            while done < n and time.monotonic() < deadline:
                for key, ev in sel.select(timeout=1):
                    i, s = key.data, key.fileobj
                    if ev & selectors.EVENT_WRITE:
                        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                        self.assertEqual(err, 0, "connection %d failed: %s" % (i, os.strerror(err)))
                        connected.add(i)
                        sent = s.send(pending[i])
                        pending[i] = pending[i][sent:]
                        if not pending[i]:
                            sel.modify(s, selectors.EVENT_READ, i)
                    else:
                        d = s.recv(65536)
                        self.assertTrue(d, "connection %d closed early" % i)
                        got[i] += d
                        if len(got[i]) >= len(expected[i]):
                            sel.unregister(s)
                            done += 1
            self.assertEqual(done, n, "only %d of %d connections answered" % (done, n))
            for i in range(n):
                self.assertEqual(got[i], expected[i], "connection %d" % i)
            # All of them were open at the same time on the server.
            self.assertGreaterEqual(curr_connections(self.srv), n)
            # Answered and idle, a connection costs the application its
            # state only (docs/net.md "Memory": about 400 bytes), no
            # output buffer (one was 16 KiB each before)
            heap = telemetry(self.srv, "/segcached/net")["malloc_bytes_in_use"]
            per_conn = (heap - heap_before) / n
            print("C heap per idle connection: %.0f bytes" % per_conn, file=sys.stderr)
            self.assertLess(per_conn, 1024)
        finally:
            sel.close()
            for s in socks:
                s.close()
        self.assert_no_leak()


class PacketLoss(NativeCase):
    """5% of the packets into and out of the client namespace are dropped."""

    def setUp(self):
        nft("add", "table", "inet", "scloss")
        nft("add", "chain", "inet", "scloss", "in", "{ type filter hook input priority 0 ; }")
        nft("add", "chain", "inet", "scloss", "out", "{ type filter hook output priority 0 ; }")
        for chain in ("in", "out"):
            nft("add", "rule", "inet", "scloss", chain, "ip", "saddr", "198.18.0.0/15",
                "numgen", "random", "mod", "100", "<", "5", "counter", "drop")
            nft("add", "rule", "inet", "scloss", chain, "ip", "daddr", "198.18.0.0/15",
                "numgen", "random", "mod", "100", "<", "5", "counter", "drop")

    def tearDown(self):
        subprocess.run(["nft", "delete", "table", "inet", "scloss"], timeout=30)

    def test_every_response_intact(self):
        before = telemetry(self.srv, "/segcached/net")
        rng = random.Random(5)
        conns = [self.srv.connect(timeout=60) for _ in range(8)]
        try:
            deadline = time.monotonic() + 3 * PHASE_TIMEOUT
            for round_ in range(12):
                self.assertLess(time.monotonic(), deadline, "too slow to finish")
                for j, c in enumerate(conns):
                    size = rng.choice([10, 1000, 5000, 30000, 120000])
                    v = bytes(rng.getrandbits(8) for _ in range(size))
                    k = b"loss-%d-%d" % (round_, j)
                    self.assertEqual(c.cmd(b"set %s 7 0 %d\r\n%s\r\n" % (k, size, v)),
                                     b"STORED\r\n")
                    self.assertEqual(c.get(k), {k: (7, v, None)})
        finally:
            for c in conns:
                c.close()
        after = telemetry(self.srv, "/segcached/net")
        # The loss was real: the server had to repair it.
        repaired = (after["tcp_retransmits"] - before["tcp_retransmits"]) + \
            (after["tcp_ooo_segs"] - before["tcp_ooo_segs"])
        self.assertGreater(repaired, 0)


class VanishingClients(NativeCase):
    server_args = {"threads": 1, "extra": ["--idle-timeout", "3"]}

    def big_value(self):
        v = os.urandom(600000)
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set vbig 0 0 %d\r\n%s\r\n" % (len(v), v)), b"STORED\r\n")
        finally:
            c.close()

    def test_reset_mid_response(self):
        self.big_value()
        for _ in range(5):
            s = socket.create_connection((harness.HOST, self.srv.port), timeout=10)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"get vbig\r\nget vbig\r\nget vbig\r\n")
            s.recv(1000)
            # Unread data and SO_LINGER 0: the kernel answers with RST.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        self.assert_no_leak()

    def test_idle_connection_closed_and_counted(self):
        # --idle-timeout 3: a connection that goes quiet after a request is
        # closed, and `stats` counts it in memcached's idle_kicks.
        def idle_kicks():
            c = self.srv.connect()
            try:
                return int(c.stats()["idle_kicks"])
            finally:
                c.close()
        before = idle_kicks()
        c = self.srv.connect()
        try:
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
            self.assertTrue(c.closed(timeout=60), "the idle connection was never closed")
        finally:
            c.close()
        self.assertGreaterEqual(idle_kicks() - before, 1)

    def test_silent_vanish_mid_response(self):
        self.big_value()
        s = socket.create_connection((harness.HOST, self.srv.port), timeout=10)
        port = s.getsockname()[1]
        nft("add", "table", "inet", "scvanish")
        nft("add", "chain", "inet", "scvanish", "in", "{ type filter hook input priority 0 ; }")
        nft("add", "chain", "inet", "scvanish", "out", "{ type filter hook output priority 0 ; }")
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"get vbig\r\nget vbig\r\n")
            s.recv(1000)
            # From now on nothing of this connection gets through either
            # way: to the server the client is simply gone.
            nft("add", "rule", "inet", "scvanish", "in", "tcp", "dport", str(port), "drop")
            nft("add", "rule", "inet", "scvanish", "out", "tcp", "sport", str(port), "drop")
            s.close()
            self.assertGreaterEqual(curr_connections(self.srv), 1)
            self.assert_no_leak()
            net = telemetry(self.srv, "/segcached/net")
            self.assertGreaterEqual(net["tcp_idle_timeouts"] + net["tcp_timeouts"], 1)
        finally:
            subprocess.run(["nft", "delete", "table", "inet", "scvanish"], timeout=30)


class MultiQueue(NativeCase):
    """Two worker lcores, a two-queue port: af_packet fans flows out over
    its queues by flow hash, as RSS does on a NIC."""
    server_args = {"threads": 2, "udp": True}

    def test_both_lcores_serve_without_crossing(self):
        before = telemetry(self.srv, "/segcached/net")
        self.assertEqual(before["queues"], 2)
        self.assertEqual(len(before["worker_lcores"]), 2)
        n = 64
        for i in range(n):
            c = self.srv.connect()
            try:
                v = b"mq%d" % i
                self.assertEqual(c.cmd(b"set mq%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)),
                                 b"STORED\r\n")
                self.assertEqual(c.get(b"mq%d" % i), {b"mq%d" % i: (0, v, None)})
            finally:
                c.close()
        self.assert_no_leak()
        after = telemetry(self.srv, "/segcached/net")
        opened = [a - b for a, b in zip(after["worker_conns_opened"],
                                        before["worker_conns_opened"])]
        self.assertGreaterEqual(sum(opened), n)
        self.assertTrue(all(x > 0 for x in opened), "connections per lcore: %r" % opened)
        # A segment that reached the lcore not owning its connection would
        # find no connection there (dropped and answered with RST), and the
        # client would reset the connection.
        for name in ("drop_tcp_no_conn", "tcp_resets_rx", "tcp_resets_tx"):
            self.assertEqual(after[name] - before[name], 0, "%s: per lcore %r" % (
                name, [telemetry(self.srv, "/segcached/net,%d" % w) for w in (0, 1)]))
        for w in (0, 1):
            wn = telemetry(self.srv, "/segcached/net,%d" % w)
            self.assertGreater(wn["tcp_established"], 0)
        # Each lcore's own count returns to zero too (the last stats
        # connection may still be closing).
        wait_for("both lcores without connections", lambda: telemetry(
            self.srv, "/segcached/net")["worker_curr_connections"] == [0, 0])


class BufferBudget(NativeCase):
    """--tcp-buffer-memory 384K on one worker lcore: four buffer pairs of
    96 KiB (and their bookkeeping) for the busy ones among -c 100000
    connections."""
    server_args = {"threads": 1, "max_conns": 100000,
                   "seg_extra": ["--tcp-buffer-memory", "384K"]}

    def test_more_busy_connections_than_buffer_pairs(self):
        # 32 clients at once, each setting and reading back 20 KB values:
        # requests that find no pair wait for their client to send them
        # again, and every value still comes back byte for byte.
        net = telemetry(self.srv, "/segcached/net")
        self.assertEqual(net["tcp_buf_pairs_per_worker"], 4)
        nclients, rounds, size = 32, 6, 20000
        errors = []
        ready = threading.Barrier(nclients, timeout=PHASE_TIMEOUT)

        def client(i):
            try:
                c = self.srv.connect(timeout=PHASE_TIMEOUT)
                try:
                    ready.wait()
                    for r in range(rounds):
                        k = b"budget%d_%d" % (i, r)
                        v = os.urandom(size)
                        line = c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, size, v))
                        if line != b"STORED\r\n":
                            errors.append("client %d: set answered %r" % (i, line))
                            return
                        if c.get(k) != {k: (0, v, None)}:
                            errors.append("client %d: %s came back different" % (i, k))
                            return
                finally:
                    c.close()
            except Exception as e:  # reported below, with the others
                errors.append("client %d: %r" % (i, e))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(nclients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(3 * PHASE_TIMEOUT)
        self.assertFalse(any(t.is_alive() for t in threads), "clients still running")
        self.assertEqual(errors, [])
        after = telemetry(self.srv, "/segcached/net")
        # The budget was reached, and never exceeded.
        self.assertGreater(after["tcp_no_buffers"], net["tcp_no_buffers"])
        self.assertLessEqual(after["tcp_buffer_bytes"], 4 * after["tcp_buf_pair_bytes"])
        self.assert_no_leak()

    def test_settings_and_memory(self):
        c = self.srv.connect()
        try:
            self.assertEqual(c.stats(b"settings")["tcp_buffer_memory"], str(384 * 1024))
        finally:
            c.close()
        # --no-huge sizes the EAL's memory for the budget: far less than a
        # pair for every connection slot.
        net = telemetry(self.srv, "/segcached/net")
        heap = telemetry(self.srv, "/eal/heap_info,0")["Heap_size"]
        self.assertLess(heap, net["tcp_slots_per_worker"] * net["tcp_buf_pair_bytes"])
        self.assertIn("TCP buffers for 4 busy connections per lcore", self.srv.log())


class SlowReaders(NativeCase):
    """--request-timeout counts what TCP holds unacknowledged as output
    still owed: a client that takes a reply fitting in the 64 KiB send ring
    and then keeps its window shut is reset, and its buffer pair freed; a
    client that reads slowly but steadily is not."""
    server_args = {"threads": 1,
                   "seg_extra": ["--request-timeout", "2", "--tcp-buffer-memory", "384K"]}

    def stats(self):
        c = self.srv.connect()
        try:
            return c.stats()
        finally:
            c.close()

    def set_value(self, key, size):
        v = os.urandom(size)
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (key, size, v)), b"STORED\r\n")
        finally:
            c.close()
        return v

    def small_window_client(self):
        # A 4 KiB receive buffer, set before the handshake: the window
        # the kernel offers stays small, and shuts when the app stops
        # reading.
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(harness.IO_TIMEOUT)
        s.connect((harness.HOST, self.srv.port))
        return s

    def test_window_shut_on_a_reply_in_the_ring_is_reset(self):
        self.set_value(b"ring40k", 40000)
        before = int(self.stats()["conns_write_timeouts"])
        s = self.small_window_client()
        try:
            # The whole reply fits TCP's send ring at once: nothing waits
            # in the session's output, only unacknowledged bytes.
            s.sendall(b"get ring40k\r\n")
            wait_for("the non-reader to be reset",
                     lambda: int(self.stats()["conns_write_timeouts"]) > before, 30)
            self.assert_no_leak()
            wait_for("its buffer pair back",
                     lambda: telemetry(self.srv, "/segcached/net")["tcp_buffer_bytes_in_use"]
                     == 0, 30)
            # The reset reaches the client, after what it did receive.
            got = 0
            with self.assertRaises(ConnectionResetError):
                for _ in range(100):
                    d = s.recv(65536)
                    if not d:
                        break
                    got += len(d)
            self.assertLess(got, 40000)
        finally:
            s.close()

    def test_slow_steady_reader_is_kept(self):
        # 2 KB every 100 ms of a 95 KB value, about 5 s. The ring takes
        # 64 KiB, the rest when half of it is acknowledged; from then on
        # about 62 KB wait in the ring alone, with no call into the server
        # (writable comes only after a send was cut short), for longer
        # than the timeout: ACKs seen at its expiry keep the client.
        v = self.set_value(b"slow100k", 95000)
        before = int(self.stats()["conns_write_timeouts"])
        s = self.small_window_client()
        try:
            s.sendall(b"get slow100k\r\n")
            want = b"VALUE slow100k 0 95000\r\n" + v + b"\r\nEND\r\n"
            got = b""
            for _ in range(1000):  # at most 100 s
                if len(got) >= len(want):
                    break
                got += s.recv(2048)
                time.sleep(0.1)
            self.assertEqual(got, want)
            s.sendall(b"version\r\n")
            self.assertRegex(s.recv(100), rb"^VERSION ")
        finally:
            s.close()
        self.assertEqual(int(self.stats()["conns_write_timeouts"]), before)


class ChecksumOffload(unittest.TestCase):
    """net_tap offers IPv4/TCP/UDP checksum offloads (done in software by
    the PMD): the stack then leaves checksums to the port and trusts its RX
    flags. The tap's kernel side is in this (the client) namespace, on a
    subnet of its own."""

    def test_offloads_used_and_traffic_intact(self):
        ifname = "sctap%d" % (os.getpid() % 100000)
        prefix = "sctap%d" % os.getpid()
        cmd = [harness.ARGS.segcached, "-l", "0-1", "--no-huge", "--no-pci", "--no-shconf",
               "--file-prefix", prefix, "--vdev=net_tap0,iface=%s" % ifname, "--",
               "--stack", "native", "--ip", "198.18.1.2/24", "-U", "11211"]
        log = open(os.path.join(harness.tempfile.gettempdir(), prefix + ".log"), "wb+")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        failed = False
        try:
            wait_for("the tap interface", lambda: proc.poll() is not None or
                     os.path.exists("/sys/class/net/%s" % ifname), timeout=60)
            self.assertIsNone(proc.poll(), "server exited")
            subprocess.run(["ip", "addr", "add", "198.18.1.1/24", "dev", ifname], check=True,
                           timeout=30)
            subprocess.run(["ip", "link", "set", ifname, "up"], check=True, timeout=30)
            srv = harness.Server()  # only for telemetry_path()
            srv.file_prefix = prefix

            def answers():
                try:
                    socket.create_connection(("198.18.1.2", 11211), timeout=1).close()
                    return True
                except OSError:
                    return False
            wait_for("the server on the tap", answers, timeout=60)
            s = socket.create_connection(("198.18.1.2", 11211), timeout=harness.IO_TIMEOUT)
            c = harness.Conn(s)
            try:
                for size in (10, 3000, 200000, 900000):
                    v = os.urandom(size)
                    k = b"tap%d" % size
                    self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, size, v)),
                                     b"STORED\r\n")
                    self.assertEqual(c.get(k), {k: (0, v, None)})
            finally:
                c.close()
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(harness.IO_TIMEOUT)
            try:
                u.sendto(b"\0\1\0\0\0\1\0\0get tap10\r\n", ("198.18.1.2", 11211))
                self.assertTrue(u.recv(2048)[8:].startswith(b"VALUE tap10 0 10\r\n"))
            finally:
                u.close()
            net = telemetry(srv, "/segcached/net")
            self.assertEqual(net["driver"], "net_tap")
            self.assertEqual(net["rx_cksum_offload"], 1)
            self.assertEqual(net["tx_cksum_offload"], 1)
            # with checksums offloaded and chained mbufs, the large
            # replies' segments went out pointing into the send ring
            self.assertEqual(net["tx_multi_seg"], 1)
            self.assertGreater(net["tcp_tx_zero_copy"], 200000 // 1500)
            self.assertEqual(net["drop_tcp_bad_cksum"] + net["drop_udp_bad_cksum"] +
                             net["drop_ip_bad_cksum"], 0)
            proc.terminate()
            self.assertEqual(proc.wait(timeout=harness.STOP_TIMEOUT), 0)
        except BaseException:
            failed = True
            raise
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=harness.STOP_TIMEOUT)
            log.seek(0)
            out = log.read().decode(errors="replace")
            log.close()
            os.unlink(log.name)
            harness.shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
            if failed:
                print(out)


class MemcachedLine(unittest.TestCase):
    """Issue 22: the native stack on a line without `--`: --vdev and
    --file-prefix go to the EAL wherever they stand, the lcores come from
    the affinity mask (every CPU but the main lcore's a worker: the
    af_packet port gets as many queue pairs), hugepages as the host has
    them. (The line with `--` is every other test's.)"""

    def test_starts_and_serves(self):
        prefix = "scline%d" % os.getpid()
        workers = max(1, len(os.sched_getaffinity(0)) - 1)
        vdev = "--vdev=net_af_packet0,iface=%s,qpairs=%d" % (harness.ARGS.server_iface, workers)
        cmd = ["ip", "netns", "exec", harness.ARGS.server_netns, harness.ARGS.segcached,
               "--stack", "native", "--ip", "%s/24" % harness.ARGS.server_ip, "-m", "32",
               "-U", "0", vdev, "--file-prefix", prefix, "-v"]
        log = harness.tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)

        def out():
            log.seek(0)
            return log.read().decode(errors="replace")
        try:
            wait_for("the ready line", lambda: proc.poll() is not None or " ready: " in out())
            self.assertIsNone(proc.poll(), out())
            eal = out().split("segcached: EAL options: ", 1)[1].split("\n", 1)[0].split()
            self.assertIn(vdev, eal)
            self.assertIn("-l", eal)
            self.assertEqual(eal[eal.index("--file-prefix") + 1], prefix)
            s = socket.create_connection((harness.HOST, harness.NATIVE_PORT),
                                         timeout=harness.IO_TIMEOUT)
            c = harness.Conn(s)
            try:
                self.assertEqual(c.cmd(b"set line 0 0 2\r\nok\r\n"), b"STORED\r\n")
                self.assertEqual(int(c.stats(b"settings")["maxbytes"]), 32 << 20)
            finally:
                c.close()
            proc.terminate()
            self.assertEqual(proc.wait(timeout=harness.STOP_TIMEOUT), 0, out())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=harness.STOP_TIMEOUT)
            log.close()
            harness.shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)


class StartupErrors(unittest.TestCase):
    """What an operator sees when the port or the lcores do not fit."""

    def run_server(self, eal, args=()):
        cmd = ["ip", "netns", "exec", harness.ARGS.server_netns, harness.ARGS.segcached,
               "--no-pci", "--no-shconf", "--file-prefix", "scerr%d" % os.getpid()] + eal + \
            ["--", "--stack", "native", "--ip", "198.18.0.2/24"] + list(args)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=120)
        finally:
            harness.shutil.rmtree("/var/run/dpdk/scerr%d" % os.getpid(), ignore_errors=True)
        return p.returncode, p.stdout.decode(errors="replace")

    def vdev(self, extra=""):
        return "--vdev=net_af_packet0,iface=%s%s" % (harness.ARGS.server_iface, extra)

    def test_no_port(self):
        rc, out = self.run_server(["--no-huge", "-l", "0-1"])
        self.assertEqual(rc, 1, out)
        self.assertIn("no DPDK port found", out)
        self.assertIn("dpdk-devbind", out)
        self.assertIn("--vdev", out)

    def test_no_worker_lcore(self):
        rc, out = self.run_server(["--no-huge", "-l", "0", self.vdev()])
        # a usage mistake, found before the EAL starts (issue 37), with a
        # hint that works on both lines
        self.assertEqual(rc, 64, out)
        self.assertIn("at least two lcores", out)
        self.assertIn("--lcores 0-1", out)
        self.assertNotIn("EAL:", out)

    def test_more_lcores_than_port_queues(self):
        rc, out = self.run_server(["--no-huge", "--lcores=0@0,1@0,2@0", self.vdev()])
        self.assertEqual(rc, 1, out)
        self.assertIn("1 RX / 1 TX queues but 2 worker lcores", out)
        self.assertIn("qpairs", out)

    def test_more_queues_than_lcores(self):
        rc, out = self.run_server(["--no-huge", "-l", "0-1", self.vdev()], ["--queues", "3"])
        self.assertEqual(rc, 1, out)
        self.assertIn("--queues 3 needs 3 worker lcores", out)

    def test_mtu_larger_than_the_port_takes(self):
        # net_af_packet takes frames of at most 1518 bytes by default.
        rc, out = self.run_server(["--no-huge", "-l", "0-1", self.vdev()], ["--mtu", "9000"])
        self.assertEqual(rc, 1, out)
        self.assertIn("--mtu 9000 needs frames of 9018 bytes; the port takes at most", out)

    def test_no_such_port_id(self):
        rc, out = self.run_server(["--no-huge", "-l", "0-1", self.vdev()], ["--port-id", "5"])
        self.assertEqual(rc, 1, out)
        self.assertIn("--port-id 5: no such port", out)

    def test_no_hugepages(self):
        free = 0
        base = "/sys/kernel/mm/hugepages"
        for d in os.listdir(base) if os.path.isdir(base) else []:
            with open(os.path.join(base, d, "free_hugepages")) as f:
                free += int(f.read())
        if free > 0:
            self.skipTest("this host has free hugepages")
        rc, out = self.run_server(["-l", "0-1", self.vdev()])
        self.assertEqual(rc, 1, out)
        self.assertIn("no free hugepages", out)
        self.assertIn("--no-huge", out)


if __name__ == "__main__":
    argv = harness.setup()
    if not harness.is_native():
        print("test_native.py runs through run_native.py (it needs the native stack's network)")
        sys.exit(2)
    unittest.main(argv=argv, verbosity=2)
