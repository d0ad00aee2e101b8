#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The posix stack's worker threads (issue 12): where they run, read from
/proc/PID/task/*/status, and how connections spread over them, read from
`stats workers`.

    test_posix_threads.py --segcached build/app/segcached/segcached
"""

import os
import time
import unittest

import harness


def cpu_list(text):
    """"0-3,8" -> {0, 1, 2, 3, 8}"""
    cpus = set()
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def worker_cpus(pid, expect):
    """{thread name: CPUs it may run on} for the posix-w* threads, once all
    `expect` of them run (a server answers as soon as its first worker
    does; polled, bounded)."""
    for _ in range(200):
        found = _worker_cpus(pid)
        if len(found) >= expect:
            break
        time.sleep(0.05)
    return found


def _worker_cpus(pid):
    found = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        fields = {}
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    fields[k] = v.strip()
        except OSError:
            continue  # a thread that just ended
        if fields.get("Name", "").startswith("posix-w"):
            found[fields["Name"]] = cpu_list(fields["Cpus_allowed_list"])
    return found


def workers_stats(conn):
    """`stats workers` as {worker: {counter: value}}."""
    out = {}
    for name, value in conn.stats(b"workers").items():
        _, w, counter = name.split(":", 2)
        out.setdefault(int(w), {})[counter] = int(value)
    return out


class PosixThreads(unittest.TestCase):
    def setUp(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("segcached's posix stack only")
        self.cpus = sorted(os.sched_getaffinity(0))

    def test_unpinned_workers_run_on_every_cpu(self):
        """Without -l the EAL still pins the main thread to one CPU; the
        workers must get every CPU the server was started with."""
        with harness.Server(threads=4) as srv:
            got = worker_cpus(srv.proc.pid, 4)
            self.assertEqual(sorted(got), ["posix-w%d" % i for i in range(4)])
            for name, cpus in got.items():
                self.assertEqual(cpus, set(self.cpus), name)

    def test_each_worker_on_its_lcore(self):
        """-l: worker i runs on the i-th lcore's CPU, and only there."""
        n = min(len(self.cpus), 4)
        lcores = self.cpus[:n]
        with harness.Server(threads=n, eal=["-l", ",".join(map(str, lcores))]) as srv:
            got = worker_cpus(srv.proc.pid, n)
            self.assertEqual(len(got), n)
            for i in range(n):
                self.assertEqual(got["posix-w%d" % i], {lcores[i]}, i)

    def test_lcore_cpusets_not_ids(self):
        """--lcores maps lcore ids to CPUs: the CPU is what counts."""
        if len(self.cpus) < 2:
            self.skipTest("needs two CPUs")
        a, b = self.cpus[:2]
        with harness.Server(threads=2, eal=["--lcores=0@%d,1@%d" % (b, a)]) as srv:
            got = worker_cpus(srv.proc.pid, 2)
            self.assertEqual(got, {"posix-w0": {b}, "posix-w1": {a}})

    def test_more_workers_than_lcores_share_them_in_turn(self):
        lcores = self.cpus[:2]
        n = 2 * len(lcores) + 1
        with harness.Server(threads=n, eal=["-l", ",".join(map(str, lcores))]) as srv:
            got = worker_cpus(srv.proc.pid, n)
            self.assertEqual(len(got), n)
            for i in range(n):
                self.assertEqual(got["posix-w%d" % i], {lcores[i % len(lcores)]}, i)
            self.assertIn("%d posix threads on %d CPUs (" % (n, len(lcores)), srv.log())
            self.assertIn("threads share CPUs", srv.log())

    def test_thread_line_true(self):
        """Issue 37: as many threads as the process's CPUs, unpinned, share
        nothing worth a warning, and the log says where they run."""
        n = len(self.cpus)
        with harness.Server(threads=n, extra=["-v"]) as srv:
            worker_cpus(srv.proc.pid, n)
            log = srv.log()
            self.assertNotIn("threads share CPUs", log)
            self.assertNotIn("CPU sets", log)
            self.assertRegex(log, r"posix: %d posix threads on CPUs [0-9,-]+, placed by the "
                             r"kernel" % n)

    def test_connections_spread_over_workers(self):
        """64 connections to 4 workers: each gets 16 +- 4 (round-robin
        gives exactly 16), and each connection is served."""
        with harness.Server(threads=4) as srv:
            conns = [srv.connect() for _ in range(64)]
            try:
                for i, c in enumerate(conns):
                    c.send(b"set k%d 0 0 1\r\n%d\r\n" % (i, i % 10))
                for c in conns:
                    self.assertEqual(c.line(), b"STORED\r\n")
                for i, c in enumerate(conns):
                    self.assertEqual(c.get(b"k%d" % i)[b"k%d" % i][1], b"%d" % (i % 10))
                # the harness's ready probe came and went before them; its
                # worker may not have seen the close yet: poll (bounded)
                for _ in range(200):
                    per_worker = workers_stats(conns[0])
                    curr = [per_worker[w]["curr_connections"] for w in range(4)]
                    if sum(curr) == 64:
                        break
                    time.sleep(0.05)
                self.assertEqual(sorted(per_worker), [0, 1, 2, 3])
                self.assertEqual(sum(curr), 64, curr)
                for w in range(4):
                    self.assertLessEqual(abs(curr[w] - 16), 4, curr)
                    self.assertGreaterEqual(per_worker[w]["total_connections"], curr[w])
                    self.assertIn("get_hits", per_worker[w])
            finally:
                for c in conns:
                    c.close()

    def test_closed_connections_leave_their_worker(self):
        with harness.Server(threads=2) as srv:
            conns = [srv.connect() for _ in range(10)]
            for c in conns:
                self.assertEqual(c.cmd(b"version\r\n")[:8], b"VERSION ")
            for c in conns[1:]:
                c.close()
            # closes are seen by the workers in their own time: poll (bounded)
            for _ in range(200):
                per_worker = workers_stats(conns[0])
                curr = [per_worker[w]["curr_connections"] for w in range(2)]
                if sum(curr) == 1:
                    break
                time.sleep(0.05)
            self.assertEqual(sum(curr), 1, curr)
            conns[0].close()


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
