#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A reply in flight never carries another object's bytes (issue 8).

Client A asks for a large value (a multi-key get, then 12 more gets
pipelined) and then does not read: its receive buffer is tiny, so TCP's
window closes after a few kilobytes and the rest waits on the server's
side (the output buffer and TCP's send buffer on the native stack; those
and the kernel's socket buffer on the posix one). While it waits, client
B overwrites the value, deletes and sets it again, writes and reads other
objects until the segments of the small heap (-m 8: six of 1 MiB) were
evicted three times over, flushes everything and fills the heap again.
Then A reads: the first reply must be the value as it was when the get
ran, byte for byte; each later one the value at one moment, whole, or a
miss; and A's next get must see B's last write.

Why this catches a reply that points into segment memory: today a value
is copied out of its segment when the get runs (engine -> output buffer
-> TCP's send buffer -> mbuf). A zero-copy reply would hand the NIC (or
the kernel, with MSG_ZEROCOPY) mbufs or pages that point into the
segment, which is only correct while the segment is kept alive until the
last byte is acknowledged. Here A's value is dead (overwritten, deleted,
flushed) and its segment is reused, so without such a reference the
bytes sent to A later are B's. Every value is made of 32-byte blocks that
name their key, a version tag and their offset: any foreign byte fails
the comparison, and the message names the object it came from.

B reads back half of what it writes because merge eviction keeps one
segment in reserve as its destination, and a merge that keeps nothing
(data never read) leaves that reserve as it was: A's value sat there,
intact, through every eviction and the flush. Read objects are kept by
merges, so the reserve is written and turns over (the test checks that
merges happened).

Shown once with a local change, not committed: the value's segment
address was remembered at the get, and each time the output buffer handed
bytes to TCP (native) or send() (posix) they were first copied again from
that address, as a zero-copy path without a reference would send them.
The test failed on both stacks and all three eviction policies ("byte
65509 differs: found '<fill:b:164/f@4840>...' where
'<inflight:K/v1@ffe0>...' belongs"), and passes without the change.

The same script runs on the posix stack on loopback and, through
run_native.py, on the native stack over a veth into the test's network
namespace. It also checks that the native stack keeps serving B while A's
window is closed and lets A's connection live (no reset, no timeout, no
refused bytes). Every loop is bounded in count and time; nothing is
timed.

    tests/functional/test_inflight.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_inflight.py
"""

import fcntl
import random
import struct
import sys
import termios
import unittest

import harness
from harness import wait_for
from test_limits import connect
from test_native import curr_connections, telemetry

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
FILL_BATCH_KEYS = 64     # B's read-back gets stay short lines
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


class InFlight(unittest.TestCase):
    # The stall lasts as long as B's work, which a loaded host can stretch
    # past any write timeout: this test is about bytes (test_limits.py
    # tests --request-timeout).
    server_args = dict(memory_mb=MEMORY_MB, item_max=ITEM_MAX, udp=False,
                       seg_extra=["--request-timeout", "0"])
    policy = None  # the default eviction, merge

    @classmethod
    def setUpClass(cls):
        args = dict(cls.server_args)
        if cls.policy is not None:
            if not harness.is_segcached():
                raise unittest.SkipTest("memcached has no --eviction %s" % cls.policy)
            args["seg_extra"] = args["seg_extra"] + ["--eviction", cls.policy]
        # native: one worker lcore serialises A and B; posix: two workers,
        # so A's and B's connections may be served by different threads.
        args["threads"] = 1 if harness.is_native() else 2
        cls.srv = harness.Server(name=cls.__name__, **args)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        if harness.is_segcached():
            cls.srv.stop_clean(cls.__name__)
        else:
            cls.srv.kill()

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
        return {k: int(s[k]) for k in ("seg_total", "seg_evicted", "seg_merged")}

    def fill(self, c, tag, rounds):
        """Writes other objects until the heap's segments were evicted
        `rounds` times over (segcached's `stats segments`; memcached: that
        many heaps' worth of bytes), bounded by FILL_HEAPS_MAX heaps.
        Half of them are read back at once (and must be their own bytes):
        read objects are what a merge keeps, so merges write them into
        their destination and the segment merge keeps in reserve turns
        over too (a merge that keeps nothing leaves it as it was).
        Returns some of the keys written and their values, and the
        number of merges (segcached) or None."""
        maxbytes = int(c.stats()["limit_maxbytes"])
        seg0 = self.segments(c) if harness.is_segcached() else None
        rnd = random.Random(tag)
        written = 0
        n = 0
        kept = {}
        while True:
            if seg0 is not None:
                seg = self.segments(c)
                if seg["seg_evicted"] - seg0["seg_evicted"] >= rounds * seg0["seg_total"]:
                    print("fill %r: %d bytes, %d segments, %d evicted, %d merges" % (
                        tag, written, seg0["seg_total"],
                        seg["seg_evicted"] - seg0["seg_evicted"],
                        seg["seg_merged"] - seg0["seg_merged"]))
                    return kept, seg["seg_merged"] - seg0["seg_merged"]
            elif written >= rounds * maxbytes:
                return kept, None
            self.assertLess(written, FILL_HEAPS_MAX * maxbytes,
                            "%d bytes written and segments not evicted %d times over"
                            % (written, rounds))
            batch = []
            values = {}
            size = 0
            while size < FILL_BATCH_BYTES and len(batch) < FILL_BATCH_KEYS:
                key = b"fill:%s:%d" % (tag, n)
                v = pattern(key, b"f", rnd.choice(FILL_SIZES) + rnd.randrange(BLOCK))
                batch.append(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(v), v))
                if n % 2 == 0:
                    values[key] = v
                if n % 97 == 0:
                    kept[key] = v
                size += len(v)
                n += 1
            c.send(b"".join(batch))
            for _ in batch:
                self.assertEqual(c.line(), b"STORED\r\n")
            c.send(b"get %s\r\n" % b" ".join(values))
            self.read_get(c, list(values), {k: {"own": v, "miss": None}
                                            for k, v in values.items()}, "B's get")
            written += size

    def test_reply_in_flight_keeps_its_bytes(self):
        v1 = pattern(K, b"v1", VALUE_LEN)
        v2 = pattern(K, b"v2", VALUE_LEN)
        w1 = pattern(K2, b"w1", SMALL_VALUE_LEN)
        w2 = pattern(K2, b"w2", SMALL_VALUE_LEN)
        native = harness.is_native() and harness.is_segcached()
        net0 = telemetry(self.srv, "/segcached/net") if native else None

        b = self.srv.connect()
        # A's receive buffer is set before connect(), so the window it
        # offers is small from the handshake on.
        a = connect(self.srv.port, rcvbuf=RCVBUF)
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
            if native:
                # A's gets stop on the output bound: its replies wait in
                # the server's output, not only in TCP's send buffer.
                wait_for("A's gets to stop on the output bound",
                         lambda: telemetry(self.srv, "/segcached/net")["backpressure_stalls"] >
                         net0["backpressure_stalls"])

            # B, served while A's window is closed.
            self.set(b, K, v2)
            self.assertEqual(b.get(K), {K: (0, v2, None)})
            self.assertEqual(b.cmd(b"delete %s\r\n" % K), b"DELETED\r\n")
            self.assertEqual(b.get(K), {})
            self.set(b, K, v2)
            self.set(b, K2, w2)
            _, merges_a = self.fill(b, b"a", EVICT_ROUNDS)
            self.assertEqual(b.cmd(b"flush_all\r\n"), b"OK\r\n")
            self.assertEqual(b.get(K, K2), {})
            # Every segment the flush freed is written again.
            kept, merges_b = self.fill(b, b"b", 1)
            self.set(b, K, v2)
            if harness.is_segcached() and self.policy is None:
                # merges that kept data, so merge's reserve segment (the
                # home of v1 in the runs seen) was written too
                self.assertGreater(merges_a, 0)
                self.assertGreater(merges_b, 0)

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
        wait_for("curr_connections back to 0", lambda: curr_connections(self.srv) == 0)
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


class InFlightFifo(InFlight):
    """Whole segments evicted oldest first, straight back to the pool."""
    policy = "fifo"


class InFlightRandom(InFlight):
    """Segments evicted at random."""
    policy = "random"


def main():
    argv = harness.setup()
    unittest.main(argv=argv, verbosity=2)


if __name__ == "__main__":
    sys.exit(main())
