#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 36: segcached-mrc-accuracy on a small generated Twitter-shaped
trace at -m 8: both tables (since start, and the recent window against
each size's miss ratio over the same last gets), their arithmetic (each
error is |predicted - measured|, the MAE their mean), the -m row measured
by the prediction run itself, and the rough sizes marked where a server
of that size has fewer than 16 segments (1 and 2 MiB at -m 8, as
`stats mrc` names them).

    test_mrc_accuracy.py TOOL WORKLOAD_PY
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

TOOL, WORKLOAD = sys.argv[1], sys.argv[2]
ROW = re.compile(r'^\| (\d+) MiB( \(-m\)| \(rough\))? \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$', re.M)


class MrcAccuracyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.dir.name, 't.csv')
        with open(cls.trace, 'wb') as f:
            subprocess.run(['/usr/bin/python3', WORKLOAD, 'twitter', '--objects', '4000',
                            '--requests', '80000', '--seed', '5'], stdout=f, check=True,
                           timeout=120)
        with open(cls.trace) as f:
            cls.gets = sum(1 for ln in f if ln.split(',')[5] == 'get')
        cls.out = subprocess.run([TOOL, cls.trace, '-m', '8M'], capture_output=True,
                                 text=True, timeout=300, check=True).stdout
        cls.out_floor = subprocess.run([TOOL, cls.trace, '-m', '8M', '--floor', '500'],
                                       capture_output=True, text=True, timeout=300,
                                       check=True).stdout

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def tables(self):
        since, recent = self.out.split('recent window')
        return ROW.findall(since), ROW.findall(recent), since, recent

    def test_since_start(self):
        rows, _, since, _ = self.tables()
        self.assertEqual([int(r[0]) for r in rows], [1, 2, 3, 4, 6, 8, 12, 16, 24, 32])
        head = re.search(r'sample rate ([\d.]+), (\d+) keys.*measured at -m: ([\d.]+)', since)
        rate, keys, here = float(head.group(1)), int(head.group(2)), float(head.group(3))
        # The floor's rate (1/4 at most) on 4,000 keys: hundreds sampled.
        self.assertLessEqual(rate, 0.25)
        self.assertGreater(keys, 500)
        self.assertLessEqual(keys, 4000)
        errs = []
        for mib, mark, pred, meas, err in rows:
            self.assertAlmostEqual(float(err), abs(float(pred) - float(meas)), delta=2e-4)
            self.assertLessEqual(float(pred), 1.0)
            errs.append(float(err))
            if mark == ' (-m)':
                self.assertEqual(int(mib), 8)
                self.assertAlmostEqual(float(meas), here, delta=1e-4)
        self.assertEqual([int(r[0]) for r in rows if r[1] == ' (rough)'], [1, 2, 3, 4, 6])
        mae = float(re.search(r'^MAE ([\d.]+), max ([\d.]+)', since, re.M).group(1))
        self.assertAlmostEqual(mae, sum(errs) / len(errs), delta=2e-4)
        fine = [e for r, e in zip(rows, errs) if r[1] != ' (rough)']
        m = re.search(r'^without the rough sizes: MAE ([\d.]+), max ([\d.]+) \((\d+) sizes\)',
                      since, re.M)
        self.assertEqual(int(m.group(3)), len(fine))
        self.assertAlmostEqual(float(m.group(2)), max(fine), delta=2e-4)
        # More memory misses less, measured and predicted alike.
        self.assertLessEqual(float(rows[-1][3]), float(rows[5][3]))
        self.assertLessEqual(float(rows[-1][2]), float(rows[5][2]))
        self.assertLessEqual(float(rows[5][3]), float(rows[0][3]))

    def test_rough_with_a_full_sample(self):
        rows = ROW.findall(self.out_floor.split('recent window')[0])
        head = re.search(r'sample rate ([\d.]+), (\d+) keys', self.out_floor)
        # (filled: the rate fell from 1/4, some keys shed)
        self.assertLess(float(head.group(1)), 0.25)
        self.assertLessEqual(int(head.group(2)), 500)
        self.assertGreater(int(head.group(2)), 100)
        # 1 MiB: 16 segments of lib/seg's smallest default, 64 KiB
        self.assertEqual([int(r[0]) for r in rows if r[1] == ' (rough)'], [1])

    def test_recent_window(self):
        since_rows, rows, _, recent = self.tables()
        self.assertEqual(len(rows), 10)
        m = re.search(r'the last (\d+) gets of the trace \((\d+) epochs ended\)', recent)
        window, epochs = int(m.group(1)), int(m.group(2))
        self.assertGreater(window, 0)
        if epochs == 0:
            # (no epoch ended: the window is since start)
            self.assertEqual(window, self.gets)
            for a, b in zip(rows, since_rows):
                self.assertEqual(a[2], b[2])
        else:
            self.assertLess(window, self.gets)
        for mib, mark, pred, meas, err in rows:
            self.assertAlmostEqual(float(err), abs(float(pred) - float(meas)), delta=2e-4)


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1])
