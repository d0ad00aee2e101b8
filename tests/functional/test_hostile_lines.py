#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 10, protocol items 10 and 11, against a real server.

10. A first line that looks like an HTTP request (GET / HTTP/1.1, ...) is
    hung up on at once, unanswered, as memcached 1.6.18 does: a browser
    cannot be turned into a client of the cache.
11. memcached's administration commands (cache_memlimit, slabs,
    lru_crawler, stats cachedump, verbosity) get memcached's lines, never a
    bare ERROR; where segcached lacks the feature, the line memcached gives
    when that feature is off (docs/protocol.md, "Administration commands").

Every expectation marked "both" is memcached's behaviour: run with
`--target memcached` to check them against Debian's memcached.

    tests/functional/test_hostile_lines.py --segcached build/app/segcached/segcached
    tests/functional/test_hostile_lines.py --target memcached
"""

import unittest

import harness

MEMORY_MB = 64
BAD = b"CLIENT_ERROR bad command line format\r\n"


class HostileLines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = harness.Server(name="hostile-lines", memory_mb=MEMORY_MB)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.kill()

    def assert_serves(self):
        """A normal client is still served afterwards."""
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set served 0 0 2\r\nok\r\n"), b"STORED\r\n")
            self.assertEqual(c.get(b"served"), {b"served": (0, b"ok", None)})
        finally:
            c.close()

    def test_http_request_lines_are_hung_up_on(self):
        for req in (b"GET / HTTP/1.0\r\n",
                    b"PUT /x HTTP/1.1\r\n",
                    b"DELETE HTTP/1.1\r\n",
                    # a form POST whose body holds memcached commands
                    b"POST /form HTTP/1.1\r\nHost: cache\r\nContent-Length: 24\r\n\r\n"
                    b"set pwned 0 0 1\r\nx\r\n",
                    b"OPTIONS * HTTP/1.1\r\n"):
            with self.subTest(req=req):
                c = self.srv.connect()
                try:
                    c.send(req)
                    self.assertTrue(c.closed(), "the connection stayed open")
                    self.assertEqual(c.buf, b"", "the server answered")
                finally:
                    c.close()
        c = self.srv.connect()
        try:
            self.assertEqual(c.get(b"pwned"), {}, "the POST body was executed")
        finally:
            c.close()
        self.assert_serves()

    def test_lines_that_are_not_http_keep_the_connection(self):
        c = self.srv.connect()
        try:
            # commands whose arguments look like HTTP run as usual (both)
            self.assertEqual(c.cmd(b"get / HTTP/1.0\r\n"), b"END\r\n")
            self.assertEqual(c.cmd(b"delete HTTP/1.1\r\n"), b"NOT_FOUND\r\n")
            # a word that starts like a classic command, a lower-case or
            # incomplete version: ERROR, and the connection stays (both)
            self.assertEqual(c.cmd(b"sxx / HTTP/1.1\r\n"), b"ERROR\r\n")
            self.assertEqual(c.cmd(b"GET / http/1.1\r\n"), b"ERROR\r\n")
            self.assertEqual(c.cmd(b"GET / HTTPX\r\n"), b"ERROR\r\n")
            self.assertTrue(c.cmd(b"version\r\n").startswith(b"VERSION "))
        finally:
            c.close()

    def test_cache_memlimit(self):
        c = self.srv.connect()
        try:
            # both: memcached's bounds
            self.assertEqual(c.cmd(b"cache_memlimit 7\r\n"),
                             b"MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n")
            self.assertEqual(c.cmd(b"cache_memlimit 4294967295\r\n"),
                             b"MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n")
            # both: the limit in force
            self.assertEqual(c.cmd(b"cache_memlimit %d\r\n" % MEMORY_MB), b"OK\r\n")
            r = c.cmd(b"cache_memlimit %d\r\n" % (2 * MEMORY_MB))
            bad = c.cmd(b"cache_memlimit x\r\n")
            if harness.is_segcached():
                # the Segcache heap is laid out once at start: memcached's
                # line for a limit it cannot set, and the limit stays
                self.assertEqual(
                    r, b"MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n")
                self.assertEqual(int(c.stats()["limit_maxbytes"]), MEMORY_MB << 20)
                # memcached answers a bare ERROR here
                self.assertEqual(bad, BAD)
            else:
                self.assertEqual(r, b"OK\r\n")
                self.assertEqual(int(c.stats()["limit_maxbytes"]), (2 * MEMORY_MB) << 20)
                self.assertEqual(c.cmd(b"cache_memlimit %d\r\n" % MEMORY_MB), b"OK\r\n")
                self.assertEqual(bad, b"ERROR\r\n")
        finally:
            c.close()

    def test_slabs(self):
        c = self.srv.connect()
        try:
            # both
            self.assertEqual(c.cmd(b"slabs automove 0\r\n"), b"OK\r\n")
            self.assertEqual(c.cmd(b"slabs automove x\r\n"), BAD)
            self.assertEqual(c.cmd(b"slabs reassign x y\r\n"), BAD)
            r = c.cmd(b"slabs reassign 1 2\r\n")
            if harness.is_segcached():
                # no slab classes: memcached's line with reassignment off
                self.assertEqual(r, b"CLIENT_ERROR slab reassignment disabled\r\n")
                self.assertEqual(c.cmd(b"slabs automove 1\r\n"),
                                 b"CLIENT_ERROR slab reassignment disabled\r\n")
                self.assertEqual(c.cmd(b"slabs foo\r\n"), BAD)
            else:
                self.assertEqual(r, b"NOSPARE source class has no spare pages\r\n")
                self.assertEqual(c.cmd(b"slabs automove 0\r\n"), b"OK\r\n")
        finally:
            c.close()

    def test_lru_crawler(self):
        c = self.srv.connect()
        try:
            # both
            self.assertEqual(c.cmd(b"lru_crawler tocrawl x\r\n"), BAD)
            self.assertEqual(c.cmd(b"lru_crawler sleep x\r\n"), BAD)
            self.assertEqual(c.cmd(b"lru_crawler sleep 2000000\r\n"),
                             b"CLIENT_ERROR sleep must be one second or less\r\n")
            self.assertEqual(c.cmd(b"lru_crawler tocrawl 0\r\n"), b"OK\r\n")
            r = c.cmd(b"lru_crawler crawl all\r\n")
            if harness.is_segcached():
                # Segcache frees expired segments itself: memcached's line
                # with its crawler off
                self.assertEqual(r, b"CLIENT_ERROR lru crawler disabled\r\n")
                # the dump is test_admin.py's; here: it ends
                c.send(b"lru_crawler metadump all\r\n")
                self.assertTrue(c.until(b"END\r\n").endswith(b"END\r\n"))
                self.assertEqual(c.cmd(b"lru_crawler foo\r\n"), BAD)
            else:
                self.assertIn(r, (b"OK\r\n", b"BUSY currently processing crawler request\r\n"))
        finally:
            c.close()

    def test_stats_cachedump_and_verbosity(self):
        c = self.srv.connect()
        try:
            # both
            self.assertEqual(c.cmd(b"stats cachedump 1\r\n"), b"CLIENT_ERROR bad command line\r\n")
            self.assertEqual(c.cmd(b"stats cachedump x y\r\n"), BAD)
            self.assertEqual(c.cmd(b"stats cachedump 64 1\r\n"),
                             b"CLIENT_ERROR Illegal slab id\r\n")
            self.assertEqual(c.cmd(b"verbosity x\r\n"), BAD)
            self.assertEqual(c.cmd(b"verbosity -1\r\n"), BAD)
            self.assertEqual(c.cmd(b"verbosity 1\r\n"), b"OK\r\n")
            c.send(b"stats cachedump 1 10\r\n")
            # both: the class's ITEM lines (segcached: a TTL range,
            # test_admin.py), END
            self.assertTrue(c.until(b"END\r\n").endswith(b"END\r\n"))
            self.assertTrue(c.cmd(b"version\r\n").startswith(b"VERSION "))
        finally:
            c.close()
        self.assert_serves()


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
