#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 23: the live miss-ratio curve and hot keys over the protocol.

`stats mrc` has one line per modelled size (1/8x to 4x of -m, -m among
them), since start and over the recent window (issue 36), and follows
the traffic: a working set that fits everywhere is
predicted to hit everywhere; one that is cycled through a cache too small
for it is predicted to miss at -m (as the server does) and to hit far more
at 4x, where it fits. `stats hotkeys` lists the most requested sampled
keys with their sizes; --no-mrc turns both off.

    test_mrc.py --segcached build/app/segcached/segcached [--stack native ...]
"""

import unittest

import harness


def mrc_points(st, prefix="mrc:"):
    """{bytes: (miss ratio, sampled gets)} from `stats mrc` (the recent
    window's with prefix "mrc_recent:")."""
    out = {}
    for k, v in st.items():
        if k.startswith(prefix):
            ratio, gets = v.split()
            out[int(k[len(prefix):])] = (float(ratio), int(gets))
    return out


def cycle(conn, keys, value, passes):
    """Gets every key in turn, setting it on a miss (a look-aside client),
    `passes` times; pipelined in batches."""
    for _ in range(passes):
        for i in range(0, len(keys), 100):
            batch = keys[i:i + 100]
            conn.send(b"".join(b"get " + k + b"\r\n" for k in batch))
            missed = []
            for k in batch:
                ln = conn.line()
                if ln.startswith(b"VALUE"):
                    n = int(ln.split()[3])
                    conn.exact(n + 2)
                    assert conn.line() == b"END\r\n"
                else:
                    assert ln == b"END\r\n", ln
                    missed.append(k)
            if missed:
                conn.send(b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(value), value)
                                   for k in missed))


class MrcTest(unittest.TestCase):
    def setUp(self):
        if harness.ARGS.target == "memcached":
            self.skipTest("memcached has no miss-ratio curve")

    def test_curve_lines(self):
        with harness.Server(memory_mb=16) as srv:
            c = srv.connect()
            st = c.stats(b"mrc")
            self.assertEqual(st["mrc_status"], "enabled")
            # 1% of -m 16 holds a few hundred keys: the sample gets the
            # floor within a 16th of -m (about 3,800 keys in 1 MiB) and
            # starts at its rate, 1/4; idle, only the caches' segments and
            # the index are counted (the key and item records untouched),
            # within 2%.
            self.assertAlmostEqual(float(st["mrc_sample_rate"]), 1 / 4, delta=1e-6)
            self.assertGreater(int(st["mrc_sample_max_keys"]), 2048)
            self.assertGreater(int(st["mrc_memory"]), (16 << 20) // 100)
            self.assertLessEqual(int(st["mrc_memory"]), 1 << 20)
            self.assertLessEqual(int(st["mrc_memory_used"]), (16 << 20) // 50)
            self.assertEqual(int(st["mrc_recent_epochs"]), 0)
            self.assertEqual(mrc_points(st, "mrc_recent:").keys(), mrc_points(st).keys())
            pts = mrc_points(st)
            self.assertGreaterEqual(len(pts), 8)
            self.assertEqual(min(pts), (16 << 20) // 8)
            self.assertEqual(max(pts), (16 << 20) * 4)
            self.assertIn(16 << 20, pts)
            self.assertEqual(int(st["mrc_current_bytes"]), 16 << 20)
            # A young sample, short of its floor at its highest rate: the
            # curve names every point below -m rough (test_mrc_window.cc
            # has the rest of the rule).
            rough = [int(b) for b in st["mrc_rough_sizes"].split(",")]
            self.assertEqual(rough, sorted(b for b in pts if b < 16 << 20))
            self.assertTrue(set(rough) <= set(pts), rough)
            c.close()

    def test_fits_everywhere(self):
        # 2,000 keys of 1 KiB: 2 MB, which 1/8 of 64 MB holds.
        with harness.Server(memory_mb=64) as srv:
            c = srv.connect()
            keys = [b"fit:%d" % i for i in range(2000)]
            cycle(c, keys, b"v" * 1024, 4)
            st = c.stats(b"mrc")
            pts = mrc_points(st)
            for size, (ratio, gets) in pts.items():
                self.assertGreater(gets, 0, size)
                # the first pass misses (cold), the three after it hit
                self.assertAlmostEqual(ratio, 0.25, delta=0.05, msg=size)
            self.assertAlmostEqual(float(st["mrc_measured_miss_ratio"]), 0.25, delta=0.01)
            c.close()

    def test_recent_window_forgets_the_start(self):
        # 500 keys that fit everywhere, read 20 times (1 in 20 of their
        # gets misses), then gets of 800 keys never stored, in multi-key gets, until two
        # epochs of the recent window have ended (32,768 sampled gets
        # each; at the floor's rate of 1/4, some 130,000 gets): the recent
        # window then holds only the misses, at every size and in the
        # server's own count, while since start the first part still
        # counts.
        with harness.Server(memory_mb=16) as srv:
            c = srv.connect()
            keys = [b"fit:%d" % i for i in range(500)]
            cycle(c, keys, b"v" * 1024, 20)
            absent = [b"absent:%d" % i for i in range(800)]
            cmds = b"".join(b"get " + b" ".join(absent[i:i + 100]) + b"\r\n"
                            for i in range(0, len(absent), 100))
            st = c.stats(b"mrc")
            self.assertEqual(int(st["mrc_recent_epochs"]), 0)
            for rounds in range(4000):
                c.send(cmds * 10)
                for _ in range(80):
                    self.assertEqual(c.line(), b"END\r\n")
                if rounds % 20 == 19:
                    st = c.stats(b"mrc")
                    if int(st["mrc_recent_epochs"]) >= 2:
                        break
            self.assertGreaterEqual(int(st["mrc_recent_epochs"]), 2, st)
            # (a fresh reading: a second may have ended one more epoch)
            st = c.stats(b"mrc")
            # The epoch's start reads the server's cmd_get and get_misses
            # one after the other while workers serve (mrc_note_gets), so
            # a get in flight may fall between them: a skew of a few gets
            # in the window (once 0.999999, one get). The first part's
            # 9,500 hits still in the window would be over 0.01.
            self.assertAlmostEqual(float(st["mrc_recent_measured_miss_ratio"]), 1.0, delta=1e-3)
            window = int(st["mrc_recent_gets"])
            self.assertGreater(window, 32768 * 2)
            # Since start, the first part's 9,500 hits still count.
            gets = int(c.stats()["cmd_get"])
            since = 1 - 0.5 * 9500 / gets
            self.assertLess(float(st["mrc_measured_miss_ratio"]), since)
            recent = mrc_points(st, "mrc_recent:")
            for size, (ratio, gets) in recent.items():
                self.assertAlmostEqual(ratio, 1.0, delta=0.001, msg=size)
                self.assertGreater(gets, 0, size)
            for size, (ratio, gets) in mrc_points(st).items():
                self.assertLess(ratio, since, size)
                self.assertGreater(gets, recent[size][1], size)
            c.close()

    def test_hot_key_that_always_misses(self):
        # 2,000 keys that fit everywhere (a quarter of their gets miss,
        # the cold first pass), and 6,000 gets of a few hot keys that are
        # never stored: the server misses each of them, as a cache of any
        # size would: (2,000 + 6,000) / 14,000 gets miss. At 1/128 the hot keys
        # are outside the sample (or, sampled, miss in the model too):
        # the curve must count their gets as the server's misses, not as
        # hits (SHARDS-adj alone put it at 0.14 at every size).
        with harness.Server(memory_mb=64) as srv:
            c = srv.connect()
            keys = [b"fit:%d" % i for i in range(2000)]
            cycle(c, keys, b"v" * 1024, 4)
            absent = [b"absent:%d" % i for i in range(3)]
            for _ in range(20):
                c.send(b"".join(b"get %s\r\n" % k for k in absent) * 100)
                for _ in range(300):
                    self.assertEqual(c.line(), b"END\r\n")
            st = c.stats(b"mrc")
            measured = float(st["mrc_measured_miss_ratio"])
            self.assertAlmostEqual(measured, 8000 / 14000, delta=0.01)
            for size, (ratio, gets) in mrc_points(st).items():
                self.assertAlmostEqual(ratio, measured, delta=0.1, msg=size)
            c.close()

    def test_too_small_here_fits_at_4x(self):
        # 5,000 keys of 4 KiB, cycled: 20 MB, more than -m 16 holds (so
        # a pass misses nearly everything there), less than 4x holds.
        # FIFO: with merge eviction a small sample can keep an item through
        # a cycle by chance, and a read item then makes the merge model
        # keep it (docs/bench/journal/mrc-accuracy.md).
        with harness.Server(memory_mb=16, seg_extra=["--eviction", "fifo"]) as srv:
            c = srv.connect()
            keys = [b"cyc:%d" % i for i in range(5000)]
            cycle(c, keys, b"w" * 4096, 3)
            st = c.stats(b"mrc")
            pts = mrc_points(st)
            measured = float(st["mrc_measured_miss_ratio"])
            here = pts[16 << 20][0]
            at4x = pts[(16 << 20) * 4][0]
            self.assertGreater(measured, 0.9)
            self.assertAlmostEqual(here, measured, delta=0.1)
            # at 4x only the first pass misses
            self.assertAlmostEqual(at4x, 1 / 3, delta=0.1)
            self.assertGreater(pts[(16 << 20) // 8][0], 0.9)

            # Hot keys: 1,000 keys requested 30 times each after the
            # cycled ones (6 requests each): those sampled top the list,
            # by rate, with their sizes.
            hot = [b"hot:%d" % i for i in range(1000)]
            c.send(b"".join(b"set %s 0 0 100 noreply\r\n%s\r\n" % (k, b"h" * 100) for k in hot))
            for _ in range(30):
                for i in range(0, len(hot), 200):
                    c.send(b"".join(b"mg %s v\r\n" % k for k in hot[i:i + 200]))
                    for _ in hot[i:i + 200]:
                        ln = c.line()
                        self.assertTrue(ln.startswith(b"VA 100"), ln)
                        c.exact(102)
            hk = c.stats(b"hotkeys")
            self.assertEqual(len(hk), 20, hk)
            rates, kinds = [], []
            for rank in range(1, 21):
                key, rate, size, requests, klen = hk["hotkey:%d" % rank].split()
                self.assertEqual(int(klen), len(key))
                rates.append(float(rate))
                kinds.append(key.split(":")[0])
                if key.startswith("hot:"):
                    self.assertEqual(int(requests), 31, hk)  # the set and 30 gets
                    self.assertGreater(int(size), 100 + len(key))
                    self.assertLess(int(size), 100 + len(key) + 16)
                else:
                    self.assertEqual(key.split(":")[0], "cyc", hk)
            self.assertEqual(rates, sorted(rates, reverse=True))
            self.assertEqual(kinds[0], "hot", hk)
            self.assertEqual(kinds, sorted(kinds, reverse=True), hk)  # hot ones first
            c.close()

    def test_off(self):
        with harness.Server(memory_mb=16, seg_extra=["--no-mrc"]) as srv:
            c = srv.connect()
            self.assertEqual(c.stats(b"mrc"), {"mrc_status": "disabled"})
            self.assertEqual(c.stats(b"hotkeys"), {"hotkeys_status": "disabled"})
            c.close()


if __name__ == "__main__":
    unittest.main(argv=harness.setup())
