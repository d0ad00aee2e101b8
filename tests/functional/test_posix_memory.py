#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What connections cost the posix stack in C heap, and requests that
arrive in pieces on many connections at once.

An idle connection holds no input buffer: it reads into its worker's, and
keeps bytes of its own only while part of a request waits
(drivers/net/posix/posix_tcp.c, conn_in_borrow). The heap is read from
`malloc_bytes_in_use` in the /segcached/stats telemetry.

    test_posix_memory.py --segcached build/app/segcached/segcached
    test_posix_memory.py --target memcached   (the request tests only)
"""

import os
import random
import shutil
import socket
import sys
import threading
import time
import unittest

import harness
from harness import telemetry, wait_for

# C heap per connection, idle or holding part of a request, that the tests
# allow. Measured: 643 bytes idle (struct posix_conn and its command state),
# 664 holding a few bytes, up to about 1,000 after large replies (the
# workers keep output buffers of up to 64 KiB for the next replies);
# 17,026 when every connection had a 16 KiB input buffer.
HEAP_PER_CONN_MAX = 2048

_prefixes = iter(range(1, 1 << 30))


def heap(srv):
    return telemetry(srv, "/segcached/stats")["malloc_bytes_in_use"]


def bytes_read(srv):
    return telemetry(srv, "/segcached/stats")["bytes_read"]


def counts_heap():
    return harness.is_segcached() and not harness.is_native()


def heap_or_none(srv):
    """The C heap in use, or None where malloc_bytes_in_use reads 0: a
    sanitizer's allocator, which mallinfo2 does not see."""
    if not counts_heap():
        return None
    return heap(srv) or None


def start_server(name, **kw):
    """A posix server with a telemetry socket of its own (segcached), or
    memcached."""
    if counts_heap():
        prefix = "scpm%d_%d" % (os.getpid(), next(_prefixes))
        srv = harness.Server(name=name, eal=["--no-shconf", "--file-prefix", prefix], **kw)
        srv.file_prefix = prefix  # where telemetry_path() looks; removed at exit
    else:
        srv = harness.Server(name=name, **kw)
    return srv.start()


def connect(srv):
    s = socket.create_connection((harness.HOST, srv.port), timeout=harness.IO_TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return harness.Conn(s)


class ServerCase(unittest.TestCase):
    """A server of its own per test (start_server with server_args), named
    after the class, stopped cleanly and its logs removed afterwards."""
    server_args = {}

    def setUp(self):
        self.srv = start_server(type(self).__name__, **self.server_args)

    def tearDown(self):
        try:
            self.srv.stop_clean(type(self).__name__)
        finally:
            shutil.rmtree(self.srv.logdir, ignore_errors=True)


class IdleConnections(ServerCase):
    server_args = {"max_conns": 2000}

    def setUp(self):
        if not counts_heap():
            self.skipTest("segcached's posix stack only (its telemetry)")
        super().setUp()

    def test_thousand_idle_connections_hold_no_input_buffer(self):
        n = 1000
        before = heap_or_none(self.srv)
        if before is None:
            self.skipTest("malloc_bytes_in_use reads 0 (not glibc's malloc)")
        conns = []
        try:
            for i in range(n):
                c = connect(self.srv)
                conns.append(c)
                v = b"idle-%d-" % i + os.urandom(8).hex().encode()
                c.send(b"set idle%d 0 0 %d\r\n%s\r\nget idle%d\r\n" % (i, len(v), v, i))
                self.assertEqual(c.until(b"END\r\n"),
                                 b"STORED\r\nVALUE idle%d 0 %d\r\n%s\r\nEND\r\n" % (i, len(v), v))
            # All n are open and idle, each answered once.
            per_conn = (heap(self.srv) - before) / n
            print("C heap per idle connection: %.0f bytes" % per_conn, file=sys.stderr)
            self.assertLess(per_conn, HEAP_PER_CONN_MAX)
        finally:
            for c in conns:
                c.close()


def pieces(data, rng):
    """data cut into up to 4 pieces: the first ends inside the command
    line (so every connection then holds a few bytes of a request), the
    others at random places in the rest (the value, its \\r\\n, the get
    that follows)."""
    line_end = data.index(b"\r\n")
    cuts = sorted({rng.randrange(1, line_end)} |
                  {rng.randrange(line_end, len(data)) for _ in range(3)})
    cuts = [0] + cuts + [len(data)]
    return [data[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


class RequestsInPieces(ServerCase):
    """300 connections at once each send a set and a get in pieces, one
    piece on every connection and then the next: the server holds part of
    a request on all of them at the same time. Some values are larger than
    the worker's 16 KiB input buffer, so that their connections' own
    buffers grow; every value is read back exact."""

    server_args = {"max_conns": 2000, "item_max": "1m"}

    def test_sets_in_pieces_on_many_connections(self):
        n = 300
        rng = random.Random(20261123)
        conns, expected, parts = [], [], []
        before = heap_or_none(self.srv)
        try:
            for i in range(n):
                conns.append(connect(self.srv))
                size = (10, 1000, 40000, 300000)[i % 4] + rng.randrange(100)
                v = bytes(rng.getrandbits(8) for _ in range(64)) * (size // 64 + 1)
                v = v[:size]
                k = b"piece-%d" % i
                data = b"set %s %d 0 %d\r\n%s\r\nget %s\r\n" % (k, i, len(v), v, k)
                parts.append(pieces(data, rng))
                expected.append(b"STORED\r\nVALUE %s %d %d\r\n%s\r\nEND\r\n" % (k, i, len(v), v))
            sent = 0
            for p in range(max(len(x) for x in parts)):
                for c, x in zip(conns, parts):
                    if p < len(x):
                        c.send(x[p])
                        sent += len(x[p])
                # A pause: every piece is read apart from the next.
                if counts_heap():
                    wait_for("pieces %d read" % p, lambda: bytes_read(self.srv) >= sent)
                else:
                    time.sleep(0.05)
                if p == 0 and before is not None:
                    # Every connection holds the start of a command line.
                    per_conn = (heap(self.srv) - before) / n
                    print("C heap per connection holding a few bytes: %.0f bytes" % per_conn,
                          file=sys.stderr)
                    self.assertLess(per_conn, HEAP_PER_CONN_MAX)
            for i, c in enumerate(conns):
                self.assertEqual(c.exact(len(expected[i])), expected[i], "connection %d" % i)
            if before is not None:
                # Answered: the buffers of the large requests are gone too.
                per_conn = (heap(self.srv) - before) / n
                print("C heap per connection answered: %.0f bytes" % per_conn,
                      file=sys.stderr)
                self.assertLess(per_conn, HEAP_PER_CONN_MAX)
        finally:
            for c in conns:
                c.close()


class HeldBackRequests(ServerCase):
    """More pipelined requests than the worker's 16 KiB input buffer holds
    while the client reads nothing: the server stops at its output bound
    with complete requests read and not yet run, keeps them (more than
    half a buffer: in a buffer of the connection's own that it then reads
    after), and runs them in order once the client reads."""

    def test_pipeline_larger_than_the_input_buffer_with_a_slow_reader(self):
        c = connect(self.srv)
        try:
            big = bytes(range(256)) * 80  # 20,480 bytes
            c.send(b"set held-big 0 0 %d\r\n%s\r\n" % (len(big), big))
            self.assertEqual(c.line(), b"STORED\r\n")
            req, expect = [], []
            for i in range(4000):
                if i % 2:
                    req.append(b"get held-big\r\n")
                    expect.append(b"VALUE held-big 0 %d\r\n%s\r\nEND\r\n" % (len(big), big))
                else:
                    v = b"%d" % i * (1 + i % 7)
                    req.append(b"set held-%d 0 0 %d\r\n%s\r\nget held-%d\r\n" %
                               (i, len(v), v, i))
                    expect.append(b"STORED\r\nVALUE held-%d 0 %d\r\n%s\r\nEND\r\n" %
                                  (i, len(v), v))
            req = b"".join(req)
            self.assertGreater(len(req), 64 * 1024)
            sender = threading.Thread(target=c.sock.sendall, args=(req,))
            sender.start()
            time.sleep(0.5)  # the server fills its output bound meanwhile
            for i, e in enumerate(expect):
                self.assertEqual(c.exact(len(e)), e, "reply %d" % i)
            sender.join(harness.IO_TIMEOUT)
            self.assertFalse(sender.is_alive())
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()


def mappings(pid):
    """(path, perms, Rss kB, Anonymous kB) of every mapping in
    /proc/PID/smaps."""
    out, cur = [], None
    with open("/proc/%d/smaps" % pid) as f:
        for ln in f:
            parts = ln.split()
            if "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
                cur = [parts[5] if len(parts) > 5 else "", parts[1], 0, 0]
                out.append(cur)
            elif parts[0] == "Rss:":
                cur[2] = int(parts[1])
            elif parts[0] == "Anonymous:":
                cur[3] = int(parts[1])
    return out


class EalDriversGivenBack(ServerCase):
    """Issue 23: the EAL of a shared DPDK build loads every driver in its
    plugin directory, and the posix stack calls none of them. Where an EAL
    option starts the EAL on the posix stack (here --file-prefix, for
    telemetry), once it serves no page of their code is resident
    (app/segcached/eal/eal_trim.c drops them after the EAL's start; a
    driver the stack did use, the mempool ring driver of an mbuf pool for
    one, would be paged back in), and the EAL is given the posix stack's
    8 MiB on --no-huge."""

    def setUp(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("segcached's posix stack only")
        self.pmds = harness.dpdk_pmd_dir()
        if self.pmds is None:
            self.skipTest("no DPDK driver directory (a static DPDK build loads none)")
        prefix = "scpe%d_%d" % (os.getpid(), next(_prefixes))
        self.srv = harness.Server(name=type(self).__name__, extra=["-v"],  # EAL options line
                                  eal=["--file-prefix", prefix])
        self.srv.file_prefix = prefix  # removed at exit
        self.srv.start()

    def test_no_driver_code_resident_while_serving(self):
        c = self.srv.connect()
        for i in range(200):
            self.assertEqual(c.cmd(b"set d%d 0 0 5\r\nvalue\r\n" % i), b"STORED\r\n")
        self.assertEqual(c.get(b"d7"), {b"d7": (0, b"value", None)})
        st = c.stats()
        c.close()
        self.assertEqual(int(st["curr_items"]), 200)
        drivers = [m for m in mappings(self.srv.proc.pid)
                   if m[0].startswith(self.pmds + "/")]
        if not drivers:
            self.skipTest("the EAL loaded no driver (a static DPDK build)")
        code = [m for m in drivers if "x" in m[1]]
        self.assertGreater(len(code), 0)
        self.assertEqual([m for m in code if m[2] > 0], [],
                         "driver code resident on the posix stack")
        # Read-only mappings keep only the pages the dynamic linker wrote.
        self.assertEqual([m for m in drivers if "w" not in m[1] and m[2] > m[3]], [])
        log = self.srv.log()
        self.assertIn("of the EAL's drivers, which it does not use, given back", log)
        eal = log.split("EAL options: ", 1)[1].split("\n", 1)[0].split()
        if "--no-huge" in eal:
            self.assertEqual(eal[eal.index("-m") + 1], "8", eal)


class PosixWithoutEal(ServerCase):
    """Issue 36: the posix stack on the seg engine, with no EAL option that
    asks for the EAL (the harness gives --no-huge only), runs without it:
    no DPDK driver, no EAL thread, and no libpmem2 (with its ndctl, kmod,
    udev and libcrypto) until a heap file is mapped. That is what takes its
    idle RSS at -m 16 below memcached's (docs/performance.md)."""
    def setUp(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("segcached's posix stack only")
        # not start_server(): its --file-prefix (for telemetry) starts the EAL
        self.srv = harness.Server(name=type(self).__name__, memory_mb=16,
                                  extra=["-v"]).start()

    def test_no_eal_no_driver_no_pmem(self):
        c = self.srv.connect()
        for i in range(200):
            self.assertEqual(c.cmd(b"set e%d 0 0 5\r\nvalue\r\n" % i), b"STORED\r\n")
        self.assertEqual(c.get(b"e7"), {b"e7": (0, b"value", None)})
        c.close()
        files = {m[0] for m in mappings(self.srv.proc.pid)}
        pmds = harness.dpdk_pmd_dir()
        self.assertEqual([f for f in files if pmds and f.startswith(pmds + "/")], [])
        self.assertEqual([f for f in files if "libpmem2" in f or "libndctl" in f or
                          "libcrypto" in f], [])
        threads = os.listdir("/proc/%d/task" % self.srv.proc.pid)
        names = set()
        for t in threads:
            with open("/proc/%d/task/%s/comm" % (self.srv.proc.pid, t)) as f:
                names.add(f.read().strip())
        self.assertFalse([n for n in names if n.startswith(("eal-", "rte_", "telemetry"))],
                         names)
        log = self.srv.log()
        self.assertIn("posix stack without the DPDK EAL (no EAL option asks for it)", log)
        self.assertNotIn("EAL: ", log)


if __name__ == "__main__":
    unittest.main(argv=harness.setup())
