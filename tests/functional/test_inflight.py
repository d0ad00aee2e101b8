#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A reply in flight never carries another object's bytes (issue 8).

Client A asks for a large value and then does not read: its receive
buffer is tiny, so TCP's window closes after a few kilobytes and the rest
of the reply waits on the server's side (the output buffer and TCP's send
buffer on the native stack; those and the kernel's socket buffer on the
posix one). While it waits, client B overwrites the value, deletes and sets
it again, writes enough other objects that every segment of the small heap
is evicted and written again, flushes everything and writes again. Then A
reads: the reply must be the value as it was when the get ran, byte for
byte, and A's next get must see B's last write.

Why this catches a reply that points into segment memory: today a value
is copied out of its segment when the get runs (engine -> output buffer ->
TCP's send buffer -> mbuf). A zero-copy reply would instead hand the NIC
(or the kernel, with MSG_ZEROCOPY) mbufs or pages that point into the
segment, and is only correct if the segment stays alive until the last
byte is acknowledged. Here the segment that held A's value is dead
(overwritten, deleted), and B's writes make every segment of the heap be
evicted and reused several times over (checked with `stats segments`), so
without such a reference the bytes the server sends A later are B's.
Every value is built of 32-byte blocks that name their key, a tag for the
version and their offset, so any foreign byte fails the comparison and
the message names the object it came from.

The same script runs on the posix stack on loopback and, through
run_native.py, on the native stack over a veth into the test's network
namespace. It also checks that the native stack keeps serving B while A's
window is closed (no connection reset or timed out) and that A's reply
resumes when A reads. Every loop is bounded in count and time; nothing is
timed.

    tests/functional/test_inflight.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_inflight.py
"""

import fcntl
import json
import random
import socket
import struct
import sys
import termios
import unittest

import harness
from harness import wait_for

MEMORY_MB = 8            # a heap of a few segments
ITEM_MAX = 512 << 10     # -I: A's value needs more than the default for -m 8
# Over the output bound (CMD_SESSION_OUT_HIGH, 256 KiB): most of the reply
# waits in the server, and the pipelined get after it is held back.
VALUE_LEN = 400 << 10
SMALL_VALUE_LEN = 100 << 10
# Gets pipelined behind the first: over the posix server's kernel send
# buffer too (tcp_wmem's usual maximum, 4 MiB), so on both stacks some
# replies wait in the server's own output.
PIPELINED = 12
RCVBUF = 4096            # A's receive buffer: the window closes at once
BLOCK = 32
FILL_BATCH_BYTES = 1 << 20
FILL_SIZES = (700, 3001, 9000, 24000, 47000, 65000)
# Every segment is evicted at least this many times over (on average)
# before the flush, and the heap is filled again after it.
EVICT_ROUNDS = 3
# Bound on what B writes: this many heaps' worth of bytes per phase.
FILL_HEAPS_MAX = 16

K = b"inflight:K"
K2 = b"inflight:K2"


def pattern(key, tag, n):
    """n bytes of 32-byte blocks '<key/tag@offset>......' (a short last)."""
    blocks = [(b"<%s/%s@%x>" % (key, tag, off)).ljust(BLOCK, b".")
              for off in range(0, n, BLOCK)]
    return b"".join(blocks)[:n]


def describe(got, want):
    """Where got first differs from want, and whose bytes are there."""
    if len(got) != len(want):
        return "length %d, expected %d" % (len(got), len(want))
    i = next(i for i in range(len(got)) if got[i] != want[i])
    at = i - i % BLOCK
    return "byte %d differs: found %r where %r belongs" % (
        i, got[at:at + 2 * BLOCK], want[at:at + 2 * BLOCK])


def pending_bytes(sock):
    """Bytes the kernel holds in sock's receive queue (FIONREAD)."""
    buf = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    return struct.unpack("i", buf)[0]


def telemetry(srv, cmd):
    """One DPDK telemetry command to a native server; returns its value."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(harness.IO_TIMEOUT)
    try:
        s.connect(srv.telemetry_path())
        json.loads(s.recv(16384).decode())  # the greeting
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
    finally:
        s.close()
    return reply[cmd.split(",")[0]]


class InFlight(unittest.TestCase):
    # The stall lasts as long as B's work, which a loaded host can stretch
    # past any write timeout: this test is about bytes (test_limits.py
    # tests --request-timeout).
    server_args = dict(memory_mb=MEMORY_MB, item_max=ITEM_MAX, udp=False,
                       seg_extra=["--request-timeout", "0"])

    @classmethod
    def setUpClass(cls):
        args = dict(cls.server_args)
        # native: one worker lcore serialises A and B; posix: two workers,
        # so B's evictions run on another thread than A's connection.
        args["threads"] = 1 if harness.is_native() else 2
        cls.srv = harness.Server(name=cls.__name__, **args)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        if harness.is_segcached():
            cls.srv.stop_clean(cls.__name__)
        else:
            cls.srv.kill()

    def connect_stalled(self):
        """A client whose receive buffer is set before connect(), so the
        window it offers is small from the handshake on."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        s.settimeout(harness.IO_TIMEOUT)
        s.connect((harness.HOST, self.srv.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return harness.Conn(s)

    def set(self, c, key, value):
        self.assertEqual(c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value)),
                         b"STORED\r\n", key)

    def read_get(self, c, keys, allowed, what):
        """Reads one reply to `get keys...`: each key present is answered,
        in order, with exactly one of allowed[key] (name -> bytes), absent
        ones only where allowed[key] has None. Returns key -> name."""
        seen = {}
        pending = list(keys)
        while True:
            ln = c.line()
            if ln == b"END\r\n":
                break
            parts = ln.split()
            self.assertEqual(len(parts), 4, "%s: bad line %r" % (what, ln[:80]))
            self.assertEqual(parts[0], b"VALUE", "%s: bad line %r" % (what, ln[:80]))
            key = parts[1]
            self.assertIn(key, pending, "%s: %r out of order in %r" % (what, key, keys))
            for skipped in pending[:pending.index(key)]:
                self.assertIn(None, allowed[skipped].values(),
                              "%s: %r missing" % (what, skipped))
                seen[skipped] = "miss"
            pending = pending[pending.index(key) + 1:]
            self.assertEqual(parts[2], b"0", what)
            data = c.exact(int(parts[3]) + 2)
            self.assertEqual(data[-2:], b"\r\n", "%s: %r not ended by CRLF" % (what, key))
            data = data[:-2]
            names = [n for n, v in allowed[key].items() if v == data]
            if not names:
                near = [v for v in allowed[key].values() if v is not None]
                self.fail("%s: %r carries bytes of no version of it: %s" % (
                    what, key, "; ".join(describe(data, v) for v in near)))
            seen[key] = names[0]
        for skipped in pending:
            self.assertIn(None, allowed[skipped].values(), "%s: %r missing" % (what, skipped))
            seen[skipped] = "miss"
        return seen

    def segments(self, c):
        s = c.stats(b"segments")
        return int(s["seg_total"]), int(s["seg_evicted"])

    def fill(self, c, tag, rounds):
        """Writes other objects until the heap's segments were evicted
        `rounds` times over (segcached's `stats segments`; memcached: that
        many heaps' worth of bytes), bounded by FILL_HEAPS_MAX heaps.
        Returns some of the keys written and their values."""
        maxbytes = int(c.stats()["limit_maxbytes"])
        total, evicted0 = self.segments(c) if harness.is_segcached() else (0, 0)
        rnd = random.Random(tag)
        written = 0
        n = 0
        kept = {}
        while True:
            if harness.is_segcached():
                if self.segments(c)[1] - evicted0 >= rounds * total:
                    print("fill %r: %d bytes, %d segments, %d evicted" % (
                        tag, written, total, self.segments(c)[1] - evicted0))
                    return kept
            elif written >= rounds * maxbytes:
                return kept
            self.assertLess(written, FILL_HEAPS_MAX * maxbytes,
                            "%d bytes written and segments not evicted %d times over"
                            % (written, rounds))
            batch = []
            size = 0
            while size < FILL_BATCH_BYTES:
                key = b"fill:%s:%d" % (tag, n)
                v = pattern(key, b"f", rnd.choice(FILL_SIZES) + rnd.randrange(BLOCK))
                batch.append(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(v), v))
                size += len(v)
                if n % 97 == 0:
                    kept[key] = v
                n += 1
            c.send(b"".join(batch))
            for _ in batch:
                self.assertEqual(c.line(), b"STORED\r\n")
            written += size

    def test_reply_in_flight_keeps_its_bytes(self):
        v1 = pattern(K, b"v1", VALUE_LEN)
        v2 = pattern(K, b"v2", VALUE_LEN)
        w1 = pattern(K2, b"w1", SMALL_VALUE_LEN)
        w2 = pattern(K2, b"w2", SMALL_VALUE_LEN)
        native = harness.is_native() and harness.is_segcached()
        net0 = telemetry(self.srv, "/segcached/net") if native else None

        b = self.srv.connect()
        a = self.connect_stalled()
        try:
            self.set(b, K, v1)
            self.set(b, K2, w1)
            hits0 = int(b.stats()["get_hits"])

            # A: a multi-key get (the batched path) and pipelined gets,
            # then no reads until B is done.
            a.send(b"get %s %s\r\n" % (K, K2) + b"get %s\r\n" % K * PIPELINED)
            first_len = len(b"VALUE %s 0 %d\r\n" % (K, VALUE_LEN)) + VALUE_LEN + 2
            # The get of K ran (B's changes come after it): A must get v1.
            wait_for("A's get to run", lambda: int(b.stats()["get_hits"]) > hits0)

            # B, served while A's window is closed.
            self.set(b, K, v2)
            self.assertEqual(b.get(K), {K: (0, v2, None)})
            self.assertEqual(b.cmd(b"delete %s\r\n" % K), b"DELETED\r\n")
            self.assertEqual(b.get(K), {})
            self.set(b, K, v2)
            self.set(b, K2, w2)
            self.fill(b, b"a", EVICT_ROUNDS)
            self.assertEqual(b.cmd(b"flush_all\r\n"), b"OK\r\n")
            self.assertEqual(b.get(K, K2), {})
            # Every segment the flush freed is written again.
            kept = self.fill(b, b"b", 1)
            self.set(b, K, v2)

            # The premise: A's reply was still on the server's side all
            # along (A's kernel holds at most its small receive buffer).
            self.assertLess(pending_bytes(a.sock), first_len,
                            "A's reply left the server before B's writes: nothing tested")

            # K's get ran before B's first write; K2's and the pipelined
            # gets may have waited for the output bound, so they may see
            # any state B left on the way, but each one whole.
            first = self.read_get(a, [K, K2], {K: {"v1": v1},
                                               K2: {"w1": w1, "w2": w2, "miss": None}},
                                  "A's get in flight")
            later = [self.read_get(a, [K], {K: {"v1": v1, "v2": v2, "miss": None}},
                                   "A's pipelined get %d" % i)[K] for i in range(PIPELINED)]
            print("A's replies: %r, then %r" % (first, later))
            # Now the state B left, on both connections.
            self.assertEqual(a.get(K, K2), {K: (0, v2, None)})
            self.assertEqual(b.get(K, K2), {K: (0, v2, None)})
            for key, v in kept.items():
                self.read_get_one(b, key, v)
            self.assertRegex(a.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            a.close()
            b.close()
        if native:
            net1 = telemetry(self.srv, "/segcached/net")
            print("native: zero-window probes %d, backpressure stalls %d, retransmits %d" % (
                net1["tcp_zero_window_probes"] - net0["tcp_zero_window_probes"],
                net1["backpressure_stalls"] - net0["backpressure_stalls"],
                net1["tcp_retransmits"] - net0["tcp_retransmits"]))
            for name in ("tcp_timeouts", "tcp_resets_tx", "tcp_resets_rx", "tcp_no_buffers"):
                self.assertEqual(net1[name], net0[name], name)

    def read_get_one(self, c, key, v):
        """A filler object is its own bytes, or gone (evicted)."""
        c.send(b"get %s\r\n" % key)
        self.read_get(c, [key], {key: {"own": v, "miss": None}}, "filler get")


def main():
    argv = harness.setup()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    sys.exit(main())
