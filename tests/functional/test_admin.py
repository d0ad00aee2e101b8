#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""memcached's admin commands as its tools use them (issue 23), on either
stack:

* `cache_memlimit`: a cut frees whole segments down to the new budget
  while a client keeps being served; growing back up to -m is allowed,
  beyond it refused; `limit_maxbytes` and `stats settings maxbytes`
  follow;
* `lru_crawler metadump all|<classes>` and `stats cachedump`: memcached's
  line formats, URL-encoded keys, every live key exactly once, END; while
  one connection's dump waits for its reader, another connection on the
  same worker (one thread) is served;
* Debian's memcached-tool `display`, `stats`, `settings` and `dump` run
  without an error, and `dump` writes back every key;
* every name a real memcached (started here on loopback) prints in
  `stats` and `stats settings` is printed by segcached or listed in
  docs/protocol.md with why it is absent.

    tests/functional/test_admin.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_admin.py

Every loop is bounded; the waits are hang guards, not timing checks.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import unittest
import urllib.parse

import harness
from harness import wait_for

MEMORY_MB = 64
MEMCACHED_TOOL = "/usr/share/memcached/scripts/memcached-tool"
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                    "protocol.md")
TOOL_TIMEOUT = 120


def fill(c, prefix, n, size, exptime=0):
    """n items prefix<i> of size bytes, pipelined noreply, then a round trip."""
    batch = []
    for i in range(n):
        batch.append(b"set %s%d 0 %d %d noreply\r\n%s\r\n" % (prefix, i, exptime, size,
                                                               b"v" * size))
        if len(batch) == 1000:
            c.send(b"".join(batch))
            batch = []
    c.send(b"".join(batch))
    assert c.cmd(b"mn\r\n") == b"MN\r\n"


def metadump(c, classes=b"all"):
    """{key: fields} of one metadump, checking its line format."""
    c.send(b"lru_crawler metadump " + classes + b"\r\n")
    body = c.until(b"END\r\n")[:-len(b"END\r\n")]
    out = {}
    for ln in body.split(b"\n")[:-1]:
        m = re.fullmatch(rb"key=(\S+) exp=(-?\d+) la=(\d+) cas=(\d+) fetch=(yes|no) "
                         rb"cls=(\d+) size=(\d+)", ln)
        assert m, "bad metadump line %r" % ln
        key = urllib.parse.unquote_to_bytes(m.group(1))
        assert key not in out, "key %r dumped twice" % key
        out[key] = {"exp": int(m.group(2)), "fetch": m.group(5), "cls": int(m.group(6))}
    return out


def absent_stats():
    """The names docs/protocol.md lists as absent, with their reasons."""
    with open(DOCS) as f:
        text = f.read()
    block = text.split("<!-- absent-stats -->")[1].split("<!-- /absent-stats -->")[0]
    names = set()
    for row in block.splitlines():
        if row.startswith("| `"):
            names.update(re.findall(r"`([a-z_0-9]+)`", row.split("|")[1]))
    return names


def stat_names(host, port, arg):
    s = socket.create_connection((host, port), timeout=harness.IO_TIMEOUT)
    c = harness.Conn(s)
    try:
        c.send(b"stats" + arg + b"\r\n")
        body = c.until(b"END\r\n")
    finally:
        c.close()
    return [ln.split()[1].decode() for ln in body.split(b"\r\n") if ln.startswith(b"STAT ")]


class Admin(unittest.TestCase):
    def setUp(self):
        # one worker: a dump and another client share it
        self.srv = harness.Server(memory_mb=MEMORY_MB, threads=1).start()

    def tearDown(self):
        self.srv.stop()

    def test_cache_memlimit_shrinks_and_grows(self):
        if not harness.is_segcached():
            self.skipTest("segcached's segments")
        c = self.srv.connect()
        other = self.srv.connect()
        try:
            fill(c, b"m", 90000, 500)
            self.assertGreater(int(c.stats()["bytes"]), 40 << 20)
            self.assertEqual(c.cmd(b"cache_memlimit 24\r\n"), b"OK\r\n")
            self.assertEqual(int(c.stats()["limit_maxbytes"]), 24 << 20)
            self.assertEqual(int(c.stats(b"settings")["maxbytes"]), 24 << 20)
            # served while segments are parked (a bounded number per second)
            for i in range(50):
                self.assertEqual(other.cmd(b"set live%d 0 0 1\r\nx\r\n" % i), b"STORED\r\n")
                self.assertEqual(other.get(b"live%d" % i)[b"live%d" % i][1], b"x")
            wait_for("the cache to fit 24 MB",
                     lambda: int(c.stats()["bytes"]) <= 24 << 20 and
                     int(c.stats(b"segments")["seg_parked"]) > 0)
            self.assertGreater(int(c.stats()["evictions"]), 0)
            # beyond the budget at start: refused; back to it: allowed
            self.assertEqual(c.cmd(b"cache_memlimit %d\r\n" % (2 * MEMORY_MB)),
                             b"MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n")
            self.assertEqual(int(c.stats()["limit_maxbytes"]), 24 << 20)
            self.assertEqual(c.cmd(b"cache_memlimit %d\r\n" % MEMORY_MB), b"OK\r\n")
            wait_for("the parked segments to come back",
                     lambda: int(c.stats(b"segments")["seg_parked"]) == 0)
            fill(c, b"n", 90000, 500)
            self.assertGreater(int(c.stats()["bytes"]), 40 << 20)
            self.assertEqual(c.cmd(b"cache_memlimit 7\r\n"),
                             b"MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n")
        finally:
            c.close()
            other.close()

    def test_metadump_and_cachedump(self):
        c = self.srv.connect()
        try:
            odd = [b"a%20b", b"k:1", b"x/y?z=1", b"caf\xc3\xa9"]
            for k in odd:
                self.assertEqual(c.cmd(b"set " + k + b" 3 0 2\r\nhi\r\n"), b"STORED\r\n")
            self.assertEqual(c.cmd(b"set ttl 0 1000 2\r\nhi\r\n"), b"STORED\r\n")
            c.get(b"k:1")
            d = metadump(c)
            for k in odd:
                self.assertEqual(d[k]["exp"], -1, k)
            self.assertGreater(d[b"ttl"]["exp"], 0)
            self.assertEqual(d[b"k:1"]["fetch"], b"yes")
            self.assertEqual(d[b"a%20b"]["fetch"], b"no")
            if harness.is_segcached():
                # classes are TTL ranges: 1 never expires, 2 up to 2048 s
                self.assertEqual(d[b"k:1"]["cls"], 1)
                self.assertEqual(d[b"ttl"]["cls"], 2)
                self.assertEqual(set(metadump(c, b"2")), {b"ttl"})
                self.assertEqual(set(metadump(c, b"1,3")), set(odd))
                c.send(b"stats cachedump 2 0\r\n")
                lines = c.until(b"END\r\n").split(b"\r\n")
                self.assertRegex(lines[0], rb"^ITEM ttl \[2 b; \d+ s\]$")
                self.assertEqual(lines[1:], [b"END", b""])
                c.send(b"stats cachedump 1 2\r\n")
                self.assertEqual(len(c.until(b"END\r\n").split(b"\r\n")), 4)
                self.assertEqual(c.cmd(b"lru_crawler metadump 1,x\r\n"),
                                 b"CLIENT_ERROR bad class id\r\n")
        finally:
            c.close()

    def test_large_dump_streams_beside_other_clients(self):
        n = 60000
        c = self.srv.connect()
        other = self.srv.connect()
        try:
            fill(c, b"key", n, 100)
            # the dump (several MB) waits for its reader: the worker goes on
            c.send(b"lru_crawler metadump all\r\n")
            for i in range(20):
                self.assertEqual(other.cmd(b"set o%d 0 0 1\r\nx\r\n" % i), b"STORED\r\n")
                self.assertIn(b"o%d" % i, other.get(b"o%d" % i))
            body = c.until(b"END\r\n")
            keys = [ln.split(b" ", 1)[0] for ln in body.split(b"\n")[:-1]]
            self.assertEqual(len(keys), len(set(keys)))
            want = {b"key=key%d" % i for i in range(n)}
            self.assertEqual(want - set(keys), set())
            self.assertEqual(c.cmd(b"version\r\n")[:8], b"VERSION ")
        finally:
            c.close()
            other.close()

    def test_memcached_tool(self):
        if not os.path.exists(MEMCACHED_TOOL):
            self.skipTest("no memcached-tool (Debian's memcached package)")
        c = self.srv.connect()
        try:
            fill(c, b"tool", 300, 40, exptime=3000)
            fill(c, b"keep", 300, 40)
        finally:
            c.close()
        addr = "%s:%d" % (harness.HOST, self.srv.port)
        out = {}
        for mode in ("display", "stats", "settings", "dump"):
            r = subprocess.run(["perl", MEMCACHED_TOOL, addr, mode], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT)
            self.assertEqual(r.returncode, 0, (mode, r.stderr))
            err = r.stderr.decode()
            if mode == "dump":
                err = err.replace("Dumping memcache contents\n", "")
            self.assertEqual(err, "", mode)
            out[mode] = r.stdout
        self.assertIn(b"Item_Size", out["display"])
        rows = re.findall(rb"^\s*(\d+)\s+\S+B\s+\d+s\s+(\d+)\s+(\d+)", out["display"], re.M)
        self.assertTrue(rows, out["display"])
        if harness.is_segcached():
            # one row per TTL range: 1 never expires, 2 up to 2048 s,
            # 3 up to 32768 s (the 300 keys of each)
            counts = {int(n): int(count) for n, _, count in rows}
            self.assertEqual(counts, {1: 300, 3: 300}, out["display"])
        self.assertRegex(out["stats"], rb"\n\s+curr_items\s+600\r?\n")
        self.assertRegex(out["settings"], rb"\n\s+maxbytes\s+%d\r?\n" % (MEMORY_MB << 20))
        adds = re.findall(rb"add (\S+) 0 (\d+) 40\r\n", out["dump"])
        self.assertEqual({k for k, _ in adds},
                         {b"tool%d" % i for i in range(300)} | {b"keep%d" % i for i in range(300)})
        for k, exp in adds:
            self.assertEqual(exp == b"0", k.startswith(b"keep"), k)

    def test_baseline_engine_refuses_with_memcached_lines(self):
        if not harness.is_segcached() or harness.is_native():
            # lib/cmd's replies, the same on both stacks; the native
            # stack has one server address, which setUp's server holds
            self.skipTest("segcached's --engine baseline, posix stack")
        with harness.Server(name="baseline", memory_mb=MEMORY_MB, threads=1,
                            extra=["--engine", "baseline"]) as srv:
            c = srv.connect()
            try:
                # rte_hash is sized once: memcached's line for a limit it
                # cannot set, except the one in force
                self.assertEqual(c.cmd(b"cache_memlimit 32\r\n"),
                                 b"MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n")
                self.assertEqual(c.cmd(b"cache_memlimit %d\r\n" % MEMORY_MB), b"OK\r\n")
                self.assertEqual(int(c.stats()["limit_maxbytes"]), MEMORY_MB << 20)
                # no dump beside writers: memcached's lines with dumps off
                self.assertEqual(c.cmd(b"lru_crawler metadump all\r\n"),
                                 b"ERROR metadump not allowed\r\n")
                self.assertEqual(c.cmd(b"stats cachedump 1 1\r\n"),
                                 b"CLIENT_ERROR stats cachedump not allowed\r\n")
                self.assertEqual(c.stats(b"settings")["dump_enabled"], "no")
            finally:
                c.close()

    def test_stats_names_against_memcached(self):
        if not harness.is_segcached() or harness.is_native():
            # stats are lib/cmd's, the same on both stacks; memcached
            # listens on the posix side's loopback
            self.skipTest("compares segcached with memcached on loopback")
        memcached = shutil.which("memcached")
        if memcached is None:
            self.skipTest("no memcached")
        port = harness.free_port()
        cmd = [memcached, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "64"]
        if os.geteuid() == 0:
            cmd += ["-u", "nobody"]
        mc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        try:
            wait_for("memcached to listen", lambda: _connects("127.0.0.1", port))
            absent = absent_stats()
            for arg in (b"", b" settings"):
                theirs = stat_names("127.0.0.1", port, arg)
                ours = set(stat_names(harness.HOST, self.srv.port, arg))
                missing = [n for n in theirs if n not in ours and n not in absent]
                self.assertEqual(missing, [], "stats%s: neither printed nor documented"
                                 % arg.decode())
                # a name documented absent is absent indeed
                self.assertEqual(sorted(ours & absent), [], arg)
        finally:
            mc.terminate()
            mc.wait(timeout=harness.STOP_TIMEOUT)


def _connects(host, port):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
