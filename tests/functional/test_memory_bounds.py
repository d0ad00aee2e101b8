#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 35, findings 1-3: what clients can make the posix stack hold
beside -m is bounded by --tcp-buffer-memory, and given back.

  - 300 connections each send a 1,000,000-byte set but its last 1,000
    bytes, then nothing (finding 1): the values go straight into their
    items (store_streamed), so the server's RSS peak (VmHWM) stays within
    -m + the stated budget (`stats settings` tcp_buffer_memory) + 64 MB
    with no buffer charged, and once the connections close RSS is back
    within 20% of before in at most 10 s (finding 3); the same with
    16,000-byte values, which are buffered whole: the stores over a 2 MiB
    budget are refused (conn_buffer_in_refused);
  - 300 connections each send 2,000 `get big` for a 1,000,000-byte value
    and never read (finding 2): the same bound, and the readers that fell
    behind are reset and counted (conns_slow_readers_closed);
  - an append refused for the budget answers SERVER_ERROR out of memory
    storing object and leaves its connection usable: its data block is
    swallowed, the next request is answered; the append that holds the
    budget completes, and a set of the same size, streamed, is stored;
  - the start-up sizing line and `stats` name every part.

The attacks are tools/security/memory-attack.py's (run it with --compare
to measure segcached beside memcached at -c 1024). Loopback only, bounded
in connections, bytes and seconds; RSS is a count, not a time.

    test_memory_bounds.py --segcached build/app/segcached/segcached
"""

import importlib.util
import os
import shutil
import sys
import time
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "memory_attack", os.path.join(HERE, "..", "..", "tools", "security", "memory-attack.py"))
attack_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attack_tool)

MB = 1 << 20
SLACK_MB = 64        # the allowance beside -m and the budget
CONNS = 300
MEMORY_MB = 64
# The warm-up round runs the attack on every connection first: what is
# asserted is that the memory an attack takes goes back, not that glibc
# keeps nothing at its worker arenas' tops (up to twice the largest block
# freed there, a few MiB, bounded whatever the attack; the tool's smaller
# default warm-up shows it in docs/bench/journal/memory.md).
WARM_CONNS = CONNS


def posix_segcached():
    return harness.is_segcached() and not harness.is_native()


class ServerCase(unittest.TestCase):
    server_args = {}

    def setUp(self):
        if not posix_segcached():
            self.skipTest("segcached's posix stack (its budget and counters)")
        self.srv = harness.Server(name=type(self).__name__, memory_mb=MEMORY_MB, threads=4,
                                  **self.server_args).start()

    def tearDown(self):
        try:
            self.srv.stop_clean(type(self).__name__)
        finally:
            shutil.rmtree(self.srv.logdir, ignore_errors=True)

    def settings(self):
        return attack_tool.settings(self.srv.port)

    def budget_mb(self):
        """The budget the server states (0 where it states none)."""
        return int(self.settings().get("tcp_buffer_memory", "0")) / MB

    def check_bound_and_recovery(self, r):
        bound = MEMORY_MB + self.budget_mb() + SLACK_MB
        print("%s: RSS %.1f MB before, peak %.1f MB (bound %.1f), %.1f MB %.1f s after"
              % (r["attack"], r["rss_before_mb"], r["rss_peak_mb"], bound, r["rss_after_mb"],
                 r["recover_s"]), file=sys.stderr)
        self.assertLessEqual(r["rss_peak_mb"], bound, r)
        # The workers keep their buffers for the next replies, up to the
        # bound the server states (worker_buffer_bytes): back within 20%
        # of before plus those. (20% alone was a bound of a few MB once
        # the posix stack ran without the EAL, at an idle RSS of 5 MB.)
        kept_mb = int(self.settings().get("worker_buffer_bytes", "0")) / MB
        self.assertLessEqual(r["rss_after_mb"],
                             r["rss_before_mb"] * attack_tool.RECOVER_RATIO + kept_mb,
                             "RSS not back within 20%% of before (plus %.1f MB of worker "
                             "buffers) in %.0f s: %r" % (kept_mb, attack_tool.RECOVER_MAX, r))


class PartialValues(ServerCase):
    server_args = {"max_conns": 1024}

    def test_values_held_in_flight_are_bounded_and_given_back(self):
        r = attack_tool.attack(self.srv.port, self.srv.proc.pid, "partial", conns=CONNS,
                               warm_conns=WARM_CONNS)
        self.assertEqual(r["sent_whole"], CONNS, r)
        self.check_bound_and_recovery(r)
        # 1,000,000-byte values go straight into their items (cmd_stream.c):
        # heap memory -m bounds, no connection buffer charged or refused
        st = attack_tool.stats(self.srv.port)
        self.assertGreaterEqual(int(st["store_streamed"]), CONNS, st)
        self.assertEqual(r["conn_buffer_in_refused"], 0, r)
        self.assertEqual(int(st["conn_buffer_in_bytes"]), 0, "charges left after the close")


class PartialSmallValues(ServerCase):
    """Values under CMD_STREAM_MIN (16 KiB) are buffered whole, each in
    the connection's own allowance (posix_buffers.c): bounded too."""
    server_args = {"max_conns": 1024}

    def test_buffered_values_are_bounded(self):
        r = attack_tool.attack(self.srv.port, self.srv.proc.pid, "partial", conns=CONNS,
                               vlen=16000, warm_conns=WARM_CONNS)
        self.assertEqual(r["sent_whole"], CONNS, r)
        self.check_bound_and_recovery(r)
        st = attack_tool.stats(self.srv.port)
        self.assertEqual(int(st["store_streamed"]), 0, st)
        self.assertEqual(int(st["conn_buffer_in_bytes"]), 0, "charges left after the close")


class SlowReaders(ServerCase):
    server_args = {"max_conns": 1024}

    def test_readers_that_fall_behind_are_reset_and_counted(self):
        r = attack_tool.attack(self.srv.port, self.srv.proc.pid, "readers", conns=CONNS,
                               warm_conns=WARM_CONNS)
        self.check_bound_and_recovery(r)
        self.assertIsNotNone(r["conns_slow_readers_closed"],
                             "no conns_slow_readers_closed in stats")
        self.assertGreater(r["conns_slow_readers_closed"], 0, r)
        # the clients saw the resets (the counter also has the warm-up's)
        self.assertGreater(r["resets_seen"], 0, r)
        st = attack_tool.stats(self.srv.port)
        self.assertEqual(int(st["conn_buffer_out_bytes"]), 0, "charges left after the close")
        # a reader that reads is served
        c = self.srv.connect()
        try:
            got = c.get(b"big")
        finally:
            c.close()
        self.assertEqual(got[b"big"][1], b"b" * 1000000)


class RefusedStore(ServerCase):
    """A budget of 2 MiB: 1.5 MiB for input, so one 1,000,000-byte append
    in flight (append joins the old value: it is buffered, not streamed)
    leaves no room for a second."""
    server_args = {"seg_extra": ["--tcp-buffer-memory", "2"]}

    def test_refused_store_is_swallowed_and_the_connection_goes_on(self):
        value = os.urandom(500000).hex().encode()  # 1,000,000 bytes
        a, b = self.srv.connect(), self.srv.connect()
        try:
            self.assertEqual(b.cmd(b"set victim 0 0 3\r\nold\r\n"), b"STORED\r\n")
            self.assertEqual(a.cmd(b"set holder 0 0 1\r\nx\r\n"), b"STORED\r\n")
            a.send(b"append holder 0 0 %d\r\n" % len(value) + value[:-1000])
            # a's block is held in the server before b's starts
            deadline = time.monotonic() + harness.IO_TIMEOUT
            while int(attack_tool.stats(self.srv.port)["conn_buffer_in_bytes"]) < len(value):
                self.assertLess(time.monotonic(), deadline, "a's block never held")
                time.sleep(0.05)
            b.send(b"append victim 0 0 %d\r\n" % len(value) + value + b"\r\nget victim\r\n")
            self.assertEqual(b.line(), b"SERVER_ERROR out of memory storing object\r\n")
            # swallowed; memcached keeps the old value of a failed append
            self.assertEqual(b.line(), b"VALUE victim 0 3\r\n")
            self.assertEqual(b.line(), b"old\r\n")
            self.assertEqual(b.line(), b"END\r\n")
            a.send(value[-1000:] + b"\r\n")
            self.assertEqual(a.line(), b"STORED\r\n")
            self.assertEqual(a.get(b"holder")[b"holder"][1], b"x" + value)
            # a set of the same size is not buffered: it goes into its item
            b.send(b"set victim 0 0 %d\r\n" % len(value) + value + b"\r\n")
            self.assertEqual(b.line(), b"STORED\r\n")
        finally:
            a.close()
            b.close()
        st = attack_tool.stats(self.srv.port)
        self.assertEqual(int(st["conn_buffer_in_refused"]), 1)
        self.assertGreaterEqual(int(st["store_streamed"]), 1)
        self.assertEqual(int(self.settings()["tcp_buffer_memory"]), 2 * MB)


class Sizing(ServerCase):
    server_args = {"max_conns": 1024, "item_max": "1m"}

    def test_sizing_line_and_stats_name_every_part(self):
        line = [ln for ln in self.srv.log().splitlines() if "sizing:" in ln]
        self.assertEqual(len(line), 1, self.srv.log())
        for part in ("segments", "hash table", "segment headers", "connection buffers up to",
                     "MiB input", "MiB output", "per connection uncharged", "worker buffers",
                     "connection objects"):
            self.assertIn(part, line[0])
        s = self.settings()
        # the default: 2 x min(-c, 32) x (-I + 64 KiB)
        self.assertEqual(int(s["tcp_buffer_memory"]), 2 * 32 * (MB + 64 * 1024))
        for name in ("heap_bytes", "hash_table_bytes", "segment_headers_bytes",
                     "worker_buffer_bytes", "conn_struct_bytes", "conn_buffer_uncharged"):
            self.assertGreater(int(s[name]), 0, name)
        st = attack_tool.stats(self.srv.port)
        for name in ("conn_buffer_in_bytes", "conn_buffer_out_bytes", "conn_buffer_in_refused",
                     "conns_slow_readers_closed"):
            self.assertIn(name, st)


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
