#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 36: tools/miss-ratio/missratio.py --quick replays its five shapes
(tiny) against segcached and memcached at -m 8 and 16, and writes JSON,
the plot and its doc section. Checked: every (shape, -m, server) row is
there, from the server it names, with miss ratios in [0, 1] and the
requests all sent; on the shapes without TTLs or deletes the infinite
cache misses exactly once per distinct key (counted here from the same
seeded workload) and no server misses less; the tables' columns and one
section per shape are in the doc, and --from-json writes the same section
from the rows. Also the curve arithmetic (log-linear interpolation) and
that rewriting the doc touches only the section. No
timing is checked. Skipped without memcached.

    test_miss_ratio_suite.py --segcached build/app/segcached/segcached
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
TOOL = os.path.join(ROOT, 'tools', 'miss-ratio')
sys.path.insert(0, os.path.join(ROOT, 'tools', 'protocol-bench'))
sys.path.insert(0, TOOL)

import compare  # noqa: E402
import shapes   # noqa: E402
import missratio  # noqa: E402
import policies  # noqa: E402
import workload  # noqa: E402

RUN_TIMEOUT = 900   # a bound against a hang, not a speed check
MIB = 1 << 20


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


class Arithmetic(unittest.TestCase):
    def test_rss_for_ratio(self):
        pts = [(10 * MIB, 0.5), (40 * MIB, 0.1)]
        # Halfway in miss ratio is halfway in log RSS: sqrt(10 * 40) = 20.
        self.assertAlmostEqual(compare.rss_for_ratio(pts, 0.3) / MIB, 20.0, places=6)
        self.assertEqual(compare.rss_for_ratio(pts, 0.5), 10 * MIB)
        self.assertEqual(compare.rss_for_ratio(pts, 0.7), ('<', 10 * MIB))
        self.assertEqual(compare.rss_for_ratio(pts, 0.05), ('>', 40 * MIB))

    def test_value_at_rss(self):
        pts = [(10 * MIB, 0.5), (40 * MIB, 0.1)]
        self.assertAlmostEqual(compare.value_at_rss(pts, 20 * MIB), 0.3, places=9)
        self.assertIsNone(compare.value_at_rss(pts, 9 * MIB))
        self.assertIsNone(compare.value_at_rss(pts, 41 * MIB))

    def test_doc_rewrite_keeps_the_rest(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'perf.md')
            with open(p, 'w') as f:
                f.write('# head\n\n%s\n\n## next\ntext\n' % missratio.AFTER)
            missratio.write_doc(p, '%s\nfirst\n%s\n' % (missratio.BEGIN, missratio.END))
            missratio.write_doc(p, '%s\nsecond\n%s\n' % (missratio.BEGIN, missratio.END))
            with open(p) as f:
                doc = f.read()
        self.assertEqual(doc, '# head\n\n%s\n\n%s\nsecond\n%s\n\n## next\ntext\n' % (
            missratio.AFTER, missratio.BEGIN, missratio.END))


class QuickSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='miss-ratio-')
        cls.json = os.path.join(cls.tmp, 'rows.json')
        cls.png = os.path.join(cls.tmp, 'plot.png')
        cls.doc = os.path.join(cls.tmp, 'perf.md')
        cls.result = None
        if not harness.is_segcached():
            return
        memcached = harness.ARGS.memcached
        if not (shutil.which(memcached) or os.access(memcached, os.X_OK)):
            return
        cls.memcached = shutil.which(memcached) or memcached
        cmd = ['/usr/bin/python3', os.path.join(TOOL, 'missratio.py'), '--quick',
               '--segcached', harness.ARGS.segcached, '--memcached', cls.memcached,
               '--json', cls.json, '--png', cls.png, '--out', cls.doc]
        cls.proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        print(cls.proc.stderr[-3000:], flush=True)
        if cls.proc.returncode == 0:
            with open(cls.json) as f:
                cls.result = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not harness.is_segcached():
            self.skipTest('the suite compares segcached with memcached')
        memcached = harness.ARGS.memcached
        if not (shutil.which(memcached) or os.access(memcached, os.X_OK)):
            self.skipTest('memcached is not installed (%s)' % memcached)
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-3000:])

    def test_every_row_ran(self):
        rows = self.result['rows']
        quick = [s.quick() for s in shapes.SHAPES]
        targets = ['memcached', 'segcached'] + ['segcached ' + e for e in missratio.DEFAULT_EXTRA]
        self.assertEqual(len(rows), sum(len(s.sizes) for s in quick) * len(targets))
        for s in quick:
            for mem in s.sizes:
                for t in targets:
                    got = [r for r in rows if (r['shape'], r['memory_mb'], r['target'])
                           == (s.name, mem, t)]
                    self.assertEqual(len(got), 1, (s.name, mem, t))
                    r = got[0]
                    self.assertNotIn('error', r)
                    binary = os.path.basename(r['command'][0])
                    self.assertEqual(binary, t.split()[0], r['command'])
                    self.assertEqual(r['command'][r['command'].index('-m') + 1], str(mem))
                    self.assertEqual(r['counters']['requests'], s.params['requests'])
                    self.assertGreater(r['counters']['gets'], 0)
                    self.assertEqual(r['counters']['write_errors'], 0, r)
                    for k in ('miss_ratio', 'miss_ratio_2nd_half'):
                        self.assertGreaterEqual(r[k], 0.0)
                        self.assertLessEqual(r[k], 1.0)
                    self.assertGreater(r['rss'], 0)
                    self.assertGreater(r['curr_items'], 0)
                    self.assertEqual(r['avoidable_misses'],
                                     r['counters']['misses'] - r['infinite_misses'])
                    # memcached says 1.6.18, segcached 1.6.18-segcached-...
                    self.assertEqual('segcached' in r['version'], t != 'memcached',
                                     r['version'])

    def test_infinite_cache_is_the_first_touches(self):
        """Without TTLs or deletes an infinite cache misses each key once."""
        rows = self.result['rows']
        for s in shapes.SHAPES:
            if s.twitter:
                continue
            q = s.quick()
            distinct = len({rec[1] for rec in workload.requests(q.kind, **q.params)})
            for r in rows:
                if r['shape'] != s.name:
                    continue
                self.assertEqual(r['infinite_misses'], distinct, (s.name, r['target']))
                self.assertGreaterEqual(r['counters']['misses'], distinct,
                                        (s.name, r['target'], r['memory_mb']))

    def test_comparison(self):
        comps = self.result['comparison']
        for s in shapes.SHAPES:
            c = comps[s.name]
            self.assertEqual(len(c), 2 * (1 + len(missratio.DEFAULT_EXTRA)), s.name)
            for row in c:
                for k in ('memcached_rss_for_miss_ratio', 'rss_ratio',
                          'memcached_miss_ratio_at_rss', 'miss_ratio_vs_memcached'):
                    self.assertIn(k, row)
                self.assertEqual('avoidable_share' in row, s.twitter)
                need = row['memcached_rss_for_miss_ratio']
                self.assertIsNotNone(need)   # a number, or the side it lies on
                m = row['memcached_miss_ratio_at_rss']
                if m is not None:
                    self.assertGreaterEqual(m, 0.0)
                    self.assertLessEqual(m, 1.0)

    def test_doc_section(self):
        with open(self.doc) as f:
            doc = f.read()
        self.assertEqual(doc.count(missratio.BEGIN), 1)
        self.assertEqual(doc.count(missratio.END), 1)
        for col in ('memcached RSS MiB at this miss ratio', 'RSS memcached / segcached',
                    'memcached miss ratio at this RSS', 'miss ratio vs memcached',
                    "share of memcached's", 'infinite cache\'s', 'stores refused',
                    'tools/miss-ratio/missratio.py'):
            self.assertIn(col, doc)
        for s in shapes.SHAPES:
            self.assertEqual(doc.count('\n### %s\n' % s.title), 1, s.title)
        if have_matplotlib():
            self.assertGreater(os.path.getsize(self.png), 1000)
            self.assertIn('](plot.png)', doc)

    def test_from_json_writes_the_same_section(self):
        """The tables come from the rows: --from-json redraws them alike."""
        again = os.path.join(self.tmp, 'again.md')
        cmd = ['/usr/bin/python3', os.path.join(TOOL, 'missratio.py'), '--from-json',
               self.json, '--png', self.png, '--out', again]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(self.doc) as f, open(again) as g:
            self.assertEqual(g.read(), f.read())



class Policies(unittest.TestCase):
    """tools/miss-ratio/policies.py: the textbook policies it bounds a
    target with do what their names say."""

    def test_a_sequence_each_policy_answers_its_own_way(self):
        # two objects; a is read, then c comes: FIFO drops a, the others b
        recs = [(0, k, 1, 1, 1, op, 0) for k, op in
                ((b'a', b'set'), (b'b', b'set'), (b'a', b'get'), (b'c', b'set'),
                 (b'a', b'get'), (b'b', b'get'))]
        self.assertEqual(policies.get_misses(recs, None), 0)
        got = {n: policies.get_misses(recs, p(2)) for n, p in policies.POLICIES.items()}
        # FIFO misses a, and b that refilling a pushed out; the others b only
        self.assertEqual(got, {'fifo': 2, 'lru': 1, 'clock': 1, 's3fifo': 1})
        # after a delete the infinite cache misses too
        recs.append((0, b'c', 1, 1, 1, b'delete', 0))
        recs.append((0, b'c', 1, 1, 1, b'get', 0))
        self.assertEqual(policies.get_misses(recs, None), 1)
        # LRU keeps the item read last, FIFO the one stored last
        recs = [(0, k, 1, 1, 1, op, 0) for k, op in
                ((b'a', b'set'), (b'b', b'set'), (b'a', b'get'), (b'c', b'set'),
                 (b'a', b'get'))]
        self.assertEqual(policies.get_misses(recs, policies.Fifo(2)), 1)
        self.assertEqual(policies.get_misses(recs, policies.Lru(2)), 0)
        self.assertEqual(policies.get_misses(recs, policies.Clock(2)), 0)
        self.assertEqual(policies.get_misses(recs, policies.S3Fifo(2)), 0)

    def test_quick_shapes_bounded_by_the_infinite_cache(self):
        for s in shapes.SHAPES:
            q = s.quick()
            rows = policies.run(q, [10 ** 9, 200], list(policies.POLICIES))
            for r in rows:
                self.assertGreaterEqual(r['avoidable'], 0, r)
                if r['objects'] == 10 ** 9:
                    self.assertEqual(r['avoidable'], 0, r)   # nothing evicted
            small = {r['policy']: r['avoidable'] for r in rows if r['objects'] == 200}
            self.assertGreater(small['fifo'], 0, q.name)

if __name__ == '__main__':
    unittest.main(argv=harness.setup(), verbosity=2)
