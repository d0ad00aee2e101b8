#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""tools/segcached-stat against a running server: it finds the server's
DPDK telemetry socket by pid and by --file-prefix, prints /segcached/stats
(the figures `stats` has) and /segcached/net, readable and as JSON; a
wrong pid or prefix is an error that says what it looked for. On the posix
stack /segcached/net has no answer, which it says; on the native stack
(run_native.py) it is the stack's counters. DPDK's own dpdk-telemetry.py
(Debian package dpdk-dev) is checked on the same server where installed.

    test_segcached_stat.py --segcached build/app/segcached/segcached
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

import harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAT = os.path.join(ROOT, "tools", "segcached-stat")


def stat(*args):
    return subprocess.run([sys.executable, STAT] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


class SegcachedStat(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prefix = "scstat%d" % os.getpid()
        eal = [] if harness.is_native() else ["--file-prefix", cls.prefix]
        cls.srv = harness.Server(threads=1, eal=eal).start()
        if harness.is_native():
            cls.prefix = cls.srv.file_prefix
        c = cls.srv.pymemcache()
        c.set("k", "v" * 100)
        c.close()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        if not harness.is_native():
            shutil.rmtree("/var/run/dpdk/" + cls.prefix, ignore_errors=True)

    def stats(self):
        c = self.srv.connect()
        try:
            return c.stats()
        finally:
            c.close()

    def check_json(self, p):
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out["pid"], self.srv.proc.pid)
        st = out["/segcached/stats"]
        stats = self.stats()
        self.assertEqual(st["pid"], int(stats["pid"]))
        self.assertEqual(st["limit_maxbytes"], int(stats["limit_maxbytes"]))
        self.assertGreaterEqual(st["curr_items"], 1)
        self.assertEqual(st["stack"], "native" if harness.is_native() else "posix")
        return out

    def test_by_pid_and_by_prefix(self):
        for args in (["--pid", str(self.srv.proc.pid)], ["--file-prefix", self.prefix]):
            with self.subTest(args=args):
                out = self.check_json(stat("--json", *args))
                if harness.is_native():
                    net = out["/segcached/net"]
                    self.assertIn("tcp_slots_in_use", net)
                    self.assertGreaterEqual(net["tcp_conns_opened"]
                                            if "tcp_conns_opened" in net else 1, 1)
                else:
                    self.assertIsNone(out["/segcached/net"])

    def test_readable(self):
        p = stat("--pid", str(self.srv.proc.pid))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("segcached pid %d, telemetry " % self.srv.proc.pid, p.stdout)
        lines = p.stdout.splitlines()
        self.assertIn("/segcached/stats", lines)
        self.assertIn("/segcached/net", lines)
        maxbytes = int(self.stats()["limit_maxbytes"])
        self.assertRegex(p.stdout, r"\n  limit_maxbytes +%d\n" % maxbytes)
        if harness.is_native():
            self.assertRegex(p.stdout, r"\n  tcp_slots_in_use +\d+\n")
        else:
            self.assertIn("  (no answer: not served by the posix stack)", lines)

    def test_one_command(self):
        p = stat("--pid", str(self.srv.proc.pid), "--json", "--command", "/segcached/stats")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(json.loads(p.stdout)), ["/segcached/stats", "pid", "socket"])

    def test_wrong_instance(self):
        p = stat("--file-prefix", self.prefix + "-none")
        self.assertEqual(p.returncode, 1)
        self.assertIn("segcached-stat: no telemetry socket answers for --file-prefix "
                      "%s-none (looked in /var/run/dpdk/%s-none" % (self.prefix, self.prefix),
                      p.stderr)
        p = stat("--pid", str(os.getpid()))
        self.assertEqual(p.returncode, 1)
        self.assertIn("segcached-stat: no telemetry socket answers for pid %d" % os.getpid(),
                      p.stderr)

    def test_dpdk_telemetry_py(self):
        tool = shutil.which("dpdk-telemetry.py")
        if tool is None:
            self.skipTest("dpdk-telemetry.py not installed (Debian package dpdk-dev)")
        # Root's runtime directory is /var/run/dpdk/PREFIX, where it looks.
        if os.geteuid() != 0:
            self.skipTest("the server runs as this user: its socket is not under /var/run")
        p = subprocess.run([tool, "-f", self.prefix], input="/segcached/stats\n",
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn('"pid": %d' % self.srv.proc.pid, p.stdout)
        self.assertIn('"limit_maxbytes"', p.stdout)


if __name__ == "__main__":
    argv = harness.setup()
    if not harness.is_segcached():
        print("segcached-stat reads segcached's telemetry: skipped against memcached")
        sys.exit(77)
    unittest.main(argv=argv, verbosity=2)
