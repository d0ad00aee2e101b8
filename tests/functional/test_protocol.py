#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The memcached text protocol against a real server, over TCP and UDP.

Every expectation here is memcached 1.6's behaviour: run with
`--target memcached` to check the tests against Debian's memcached.

    tests/functional/test_protocol.py --segcached build/app/segcached/segcached
    tests/functional/test_protocol.py --target memcached
"""

import itertools
import re
import socket
import sys
import time
import unittest

import harness

_counter = itertools.count()


def key(name="k"):
    """A key no other test uses."""
    return ("%s-%d" % (name, next(_counter))).encode()


class ServerCase(unittest.TestCase):
    """One server for the whole class."""
    server_args = {}

    @classmethod
    def setUpClass(cls):
        cls.srv = harness.Server(name=cls.__name__, **cls.server_args)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.kill()

    def setUp(self):
        self.c = self.srv.connect()

    def tearDown(self):
        self.c.close()

    def set(self, k, v, flags=0, exptime=0, conn=None):
        conn = conn or self.c
        r = conn.cmd(b"set %s %d %d %d\r\n%s\r\n" % (k, flags, exptime, len(v), v))
        self.assertEqual(r, b"STORED\r\n")

    def in_one_server_second(self, steps, tries=10):
        """Runs steps() until one run lay within one second of the server's
        own clock (`stats` time, the clock expiry reads, the same before and
        after), and returns what it returned. steps() sets keys with short
        TTLs (or a delayed flush_all) and checks what must hold before that
        clock moves on: a 1 s TTL set in second T ends when the clock reads
        T + 1, which a slow path (the vhost bridge on a busy host) can reach
        between the set and the check. A run that crossed a second is not
        judged and another runs, with fresh keys; a check that fails within
        one second fails the test. The bound is tries runs."""
        for _ in range(tries):
            t0 = int(self.c.stats()["time"])
            failure = result = None
            try:
                result = steps()
            except AssertionError as e:
                failure = e
            if int(self.c.stats()["time"]) == t0:
                if failure is not None:
                    raise failure
                return result
        self.fail("none of %d runs lay within one second of the server's clock" % tries)

    def assert_miss(self, k):
        self.assertEqual(self.c.get(k), {})

    def assert_value(self, k, v, flags=None):
        got = self.c.get(k)
        self.assertIn(k, got, "key %r missing" % k)
        self.assertEqual(got[k][1], v)
        if flags is not None:
            self.assertEqual(got[k][0], flags)


class Storage(ServerCase):
    def test_version(self):
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION \S+\r\n$")

    def test_set_get(self):
        k = key()
        self.set(k, b"hello")
        self.assertEqual(self.c.get(k), {k: (0, b"hello", None)})

    def test_get_miss(self):
        self.assert_miss(key())

    def test_empty_value(self):
        k = key()
        self.set(k, b"")
        self.assert_value(k, b"")

    def test_binary_value_with_crlf_inside(self):
        k = key()
        v = bytes(range(256)) + b"\r\nEND\r\n" + bytes(range(256))
        self.set(k, v)
        self.assert_value(k, v)

    def test_flags(self):
        for flags in (0, 1, 12345, 2**31, 2**32 - 1):
            k = key()
            self.set(k, b"x", flags=flags)
            self.assert_value(k, b"x", flags=flags)

    def test_overwrite(self):
        k = key()
        self.set(k, b"one", flags=1)
        self.set(k, b"two", flags=2)
        self.assert_value(k, b"two", flags=2)

    def test_multi_get(self):
        ks = [key() for _ in range(20)]
        for i, k in enumerate(ks[::2]):
            self.set(k, b"v%d" % i)
        got = self.c.get(*ks)
        self.assertEqual(sorted(got), sorted(ks[::2]))
        # Hits come back in request order.
        self.c.send(b"get " + b" ".join(ks) + b"\r\n")
        body = self.c.until(b"END\r\n")
        order = re.findall(rb"VALUE (\S+) ", body)
        self.assertEqual(order, ks[::2])

    def test_same_key_twice_in_get(self):
        k = key()
        self.set(k, b"v")
        self.c.send(b"get %s %s\r\n" % (k, k))
        self.assertEqual(self.c.until(b"END\r\n"),
                         b"VALUE %s 0 1\r\nv\r\nVALUE %s 0 1\r\nv\r\nEND\r\n" % (k, k))

    def test_key_250_ok_251_rejected(self):
        k = b"a" * 249 + str(next(_counter) % 10).encode()
        self.set(k, b"v")
        self.assert_value(k, b"v")
        long_key = b"b" * 251
        self.assertEqual(self.c.cmd(b"get %s\r\n" % long_key),
                         b"CLIENT_ERROR bad command line format\r\n")
        # The data block of a refused set is then read as a command.
        self.c.send(b"set %s 0 0 1\r\nx\r\n" % long_key)
        self.assertEqual(self.c.line(), b"CLIENT_ERROR bad command line format\r\n")
        self.assertEqual(self.c.line(), b"ERROR\r\n")
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_add(self):
        k = key()
        self.assertEqual(self.c.cmd(b"add %s 3 0 1\r\na\r\n" % k), b"STORED\r\n")
        self.assertEqual(self.c.cmd(b"add %s 0 0 1\r\nb\r\n" % k), b"NOT_STORED\r\n")
        self.assert_value(k, b"a", flags=3)

    def test_replace(self):
        k = key()
        self.assertEqual(self.c.cmd(b"replace %s 0 0 1\r\na\r\n" % k), b"NOT_STORED\r\n")
        self.assert_miss(k)
        self.set(k, b"a")
        self.assertEqual(self.c.cmd(b"replace %s 7 0 1\r\nb\r\n" % k), b"STORED\r\n")
        self.assert_value(k, b"b", flags=7)

    def test_append_prepend(self):
        k = key()
        self.assertEqual(self.c.cmd(b"append %s 0 0 1\r\na\r\n" % k), b"NOT_STORED\r\n")
        self.assertEqual(self.c.cmd(b"prepend %s 0 0 1\r\na\r\n" % k), b"NOT_STORED\r\n")
        self.set(k, b"mid", flags=9)
        self.assertEqual(self.c.cmd(b"append %s 0 0 4\r\n-end\r\n" % k), b"STORED\r\n")
        self.assertEqual(self.c.cmd(b"prepend %s 5 0 6\r\nstart-\r\n" % k), b"STORED\r\n")
        # append/prepend keep the item's flags.
        self.assert_value(k, b"start-mid-end", flags=9)

    def test_cas(self):
        k = key()
        self.assertEqual(self.c.cmd(b"cas %s 0 0 1 1\r\na\r\n" % k), b"NOT_FOUND\r\n")
        self.set(k, b"a")
        cas = self.c.get(k, cmd=b"gets")[k][2]
        self.assertIsNotNone(cas)
        self.assertEqual(self.c.cmd(b"cas %s 0 0 1 %d\r\nb\r\n" % (k, cas + 1)), b"EXISTS\r\n")
        self.assertEqual(self.c.cmd(b"cas %s 4 0 1 %d\r\nb\r\n" % (k, cas)), b"STORED\r\n")
        self.assert_value(k, b"b", flags=4)
        # The old cas unique is spent.
        self.assertEqual(self.c.cmd(b"cas %s 0 0 1 %d\r\nc\r\n" % (k, cas)), b"EXISTS\r\n")

    def test_cas_unique_changes_on_every_write(self):
        k = key()
        seen = set()
        for i in range(5):
            self.set(k, b"v%d" % i)
            seen.add(self.c.get(k, cmd=b"gets")[k][2])
        self.assertEqual(len(seen), 5)
        # ... and is different per key.
        k2 = key()
        self.set(k2, b"v")
        self.assertNotIn(self.c.get(k2, cmd=b"gets")[k2][2], seen)

    def test_gets_unchanged_without_write(self):
        k = key()
        self.set(k, b"v")
        a = self.c.get(k, cmd=b"gets")[k][2]
        b = self.c.get(k, cmd=b"gets")[k][2]
        self.assertEqual(a, b)

    def test_delete(self):
        k = key()
        self.assertEqual(self.c.cmd(b"delete %s\r\n" % k), b"NOT_FOUND\r\n")
        self.set(k, b"v")
        self.assertEqual(self.c.cmd(b"delete %s\r\n" % k), b"DELETED\r\n")
        self.assert_miss(k)
        self.assertEqual(self.c.cmd(b"delete %s\r\n" % k), b"NOT_FOUND\r\n")
        # memcached accepts a legacy time of 0, and nothing else.
        self.set(k, b"v")
        self.assertEqual(self.c.cmd(b"delete %s 0\r\n" % k), b"DELETED\r\n")
        self.assertEqual(self.c.cmd(b"delete %s 5\r\n" % k),
                         b"CLIENT_ERROR bad command line format.  "
                         b"Usage: delete <key> [noreply]\r\n")

    def test_incr_decr(self):
        k = key()
        self.assertEqual(self.c.cmd(b"incr %s 1\r\n" % k), b"NOT_FOUND\r\n")
        self.assertEqual(self.c.cmd(b"decr %s 1\r\n" % k), b"NOT_FOUND\r\n")
        self.set(k, b"10", flags=5)
        self.assertEqual(self.c.cmd(b"incr %s 5\r\n" % k), b"15\r\n")
        self.assertEqual(self.c.cmd(b"decr %s 3\r\n" % k), b"12\r\n")
        self.assertEqual(self.c.cmd(b"decr %s 100\r\n" % k), b"0\r\n")  # stops at 0
        self.assertEqual(self.c.cmd(b"incr %s 18446744073709551615\r\n" % k),
                         b"18446744073709551615\r\n")
        self.assertEqual(self.c.cmd(b"incr %s 2\r\n" % k), b"1\r\n")  # wraps at 2^64
        got = self.c.get(k)[k]
        self.assertEqual(got[0], 5)  # flags kept
        self.assertEqual(got[1].rstrip(b" "), b"1")

    def test_incr_errors(self):
        k = key()
        self.set(k, b"abc")
        self.assertEqual(self.c.cmd(b"incr %s 1\r\n" % k),
                         b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n")
        self.set(k, b"1")
        for bad in (b"abc", b"-1", b"18446744073709551616"):
            self.assertEqual(self.c.cmd(b"incr %s %s\r\n" % (k, bad)),
                             b"CLIENT_ERROR invalid numeric delta argument\r\n")
        self.assert_value(k, b"1")

    def test_incr_changes_cas(self):
        k = key()
        self.set(k, b"1")
        a = self.c.get(k, cmd=b"gets")[k][2]
        self.assertEqual(self.c.cmd(b"incr %s 1\r\n" % k), b"2\r\n")
        b = self.c.get(k, cmd=b"gets")[k][2]
        self.assertNotEqual(a, b)

    def test_touch_and_gat(self):
        k = key()
        self.assertEqual(self.c.cmd(b"touch %s 10\r\n" % k), b"NOT_FOUND\r\n")
        self.set(k, b"v", flags=2)
        self.assertEqual(self.c.cmd(b"touch %s 100\r\n" % k), b"TOUCHED\r\n")
        self.assertEqual(self.c.get(b"100 " + k, cmd=b"gat"), {k: (2, b"v", None)})
        got = self.c.get(b"100 " + k, cmd=b"gats")
        self.assertEqual(got[k][:2], (2, b"v"))
        self.assertIsNotNone(got[k][2])
        self.assertEqual(self.c.get(b"100 " + key(), cmd=b"gat"), {})

    def test_verbosity(self):
        self.assertEqual(self.c.cmd(b"verbosity 1\r\n"), b"OK\r\n")
        self.assertEqual(self.c.cmd(b"verbosity 0\r\n"), b"OK\r\n")
        self.c.send(b"verbosity 1 noreply\r\n")
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_quit_closes(self):
        self.c.send(b"quit\r\n")
        self.assertTrue(self.c.closed())
        self.assertEqual(self.c.buf, b"")


class Noreply(ServerCase):
    def sync(self):
        """Everything sent before is answered when version is."""
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_every_command_with_noreply_is_silent(self):
        k, n = key(), key()
        reqs = [
            b"set %s 0 0 1 noreply\r\na\r\n" % k,
            b"add %s 0 0 1 noreply\r\nb\r\n" % k,      # NOT_STORED, silent
            b"replace %s 0 0 1 noreply\r\nc\r\n" % k,
            b"append %s 0 0 1 noreply\r\nd\r\n" % k,
            b"prepend %s 0 0 1 noreply\r\ne\r\n" % k,
            b"cas %s 0 0 1 1 noreply\r\nf\r\n" % k,    # EXISTS, silent
            b"set %s 0 0 1 noreply\r\n5\r\n" % n,
            b"incr %s 3 noreply\r\n" % n,
            b"decr %s 1 noreply\r\n" % n,
            b"touch %s 100 noreply\r\n" % n,
            b"delete %s noreply\r\n" % key(),           # NOT_FOUND, silent
            b"incr %s 1 noreply\r\n" % key(),           # NOT_FOUND, silent
        ]
        self.c.send(b"".join(reqs))
        self.sync()
        self.assertEqual(self.c.buf, b"")
        self.assert_value(k, b"ecd")
        self.assert_value(n, b"7")
        self.c.send(b"delete %s noreply\r\n" % k)
        self.sync()
        self.assert_miss(k)

    def test_noreply_silences_errors_too(self):
        # memcached: noreply also hides CLIENT_ERROR lines; the data block
        # of the refused set is then read as a command (ERROR).
        k = key()
        self.c.send(b"set %s abc 0 1 noreply\r\nx\r\n" % k)
        self.assertEqual(self.c.line(), b"ERROR\r\n")
        self.c.send(b"set %s 0 0 3 noreply\r\nabcde\r\n" % k)
        self.assertEqual(self.c.line(), b"ERROR\r\n")
        self.sync()
        self.assertEqual(self.c.buf, b"")
        self.assert_miss(k)

    def test_too_large_noreply_is_silent(self):
        big = 2 * 1024 * 1024
        k = key()
        self.c.send(b"set %s 0 0 %d noreply\r\n" % (k, big) + b"x" * big + b"\r\n")
        self.sync()
        self.assertEqual(self.c.buf, b"")
        self.assert_miss(k)

    def test_pymemcache_default_noreply(self):
        # pymemcache sends sets with noreply unless told otherwise.
        mc = self.srv.pymemcache()
        try:
            ks = [key().decode() for _ in range(50)]
            for i, k in enumerate(ks):
                self.assertTrue(mc.set(k, b"value-%d" % i))
            got = mc.get_many(ks)
            self.assertEqual(got, {k: b"value-%d" % i for i, k in enumerate(ks)})
        finally:
            mc.close()


class Pymemcache(ServerCase):
    def setUp(self):
        super().setUp()
        self.mc = self.srv.pymemcache(default_noreply=False)

    def tearDown(self):
        self.mc.close()
        super().tearDown()

    def test_every_call(self):
        mc = self.mc
        k = key().decode()
        self.assertTrue(mc.set(k, b"1"))
        self.assertEqual(mc.get(k), b"1")
        self.assertFalse(mc.add(k, b"2"))
        self.assertTrue(mc.replace(k, b"3"))
        self.assertTrue(mc.append(k, b"4"))
        self.assertTrue(mc.prepend(k, b"5"))
        self.assertEqual(mc.get(k), b"534")
        self.assertEqual(mc.incr(k, 6), 540)
        self.assertEqual(mc.decr(k, 40), 500)
        value, cas = mc.gets(k)
        self.assertEqual(value, b"500")
        self.assertTrue(mc.cas(k, b"x", cas))
        self.assertFalse(mc.cas(k, b"y", cas))
        self.assertIsNone(mc.cas(key().decode(), b"y", cas))
        self.assertTrue(mc.touch(k, 100))
        if hasattr(mc, "gat"):  # pymemcache >= 4
            self.assertEqual(mc.gat(k, 100), b"x")
        self.assertTrue(mc.delete(k))
        self.assertFalse(mc.delete(k))
        self.assertIsNone(mc.get(k))
        self.assertIsNone(mc.incr(k, 1))
        self.assertTrue(mc.version())
        self.assertIn(b"curr_items", mc.stats())

    def test_many(self):
        data = {key().decode(): ("v%d" % i).encode() * (i + 1) for i in range(200)}
        self.assertEqual(self.mc.set_many(data), [])
        self.assertEqual(self.mc.get_many(list(data)), data)
        self.assertTrue(self.mc.delete_many(list(data)[:100]))
        self.assertEqual(len(self.mc.get_many(list(data))), 100)


class Pipelining(ServerCase):
    def test_many_requests_in_one_send(self):
        ks = [key() for _ in range(200)]
        req = b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (k, i, len(k), k) for i, k in enumerate(ks))
        req += b"".join(b"get %s\r\n" % k for k in ks)
        req += b"incr %s 1\r\n" % ks[0] + b"delete %s\r\n" % ks[1] + b"get %s\r\n" % ks[1]
        self.c.send(req)
        for _ in ks:
            self.assertEqual(self.c.line(), b"STORED\r\n")
        for i, k in enumerate(ks):
            self.assertEqual(self.c.until(b"END\r\n"),
                             b"VALUE %s %d %d\r\n%s\r\nEND\r\n" % (k, i, len(k), k))
        self.assertEqual(self.c.line(),
                         b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n")
        self.assertEqual(self.c.line(), b"DELETED\r\n")
        self.assertEqual(self.c.line(), b"END\r\n")

    def test_large_pipeline_with_slow_reader(self):
        # Responses far larger than any socket buffer while the client is
        # not reading: the server must neither drop nor reorder them.
        k = key()
        v = b"z" * 100000
        self.set(k, v)
        n = 200
        self.c.send(b"get %s\r\n" % k * n)
        time.sleep(0.5)
        expect = b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v)
        for _ in range(n):
            self.assertEqual(self.c.exact(len(expect)), expect)
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")


class SplitRequests(ServerCase):
    def send_bytewise(self, data):
        for i in range(len(data)):
            self.c.send(data[i:i + 1])
            if i % 7 == 0:
                time.sleep(0.001)

    def test_set_get_byte_by_byte(self):
        k = key()
        v = b"split\r\nvalue"
        self.send_bytewise(b"set %s 3 0 %d\r\n%s\r\n" % (k, len(v), v))
        self.assertEqual(self.c.line(), b"STORED\r\n")
        self.send_bytewise(b"gets %s\r\n" % k)
        body = self.c.until(b"END\r\n")
        self.assertRegex(body, rb"^VALUE %s 3 %d \d+\r\nsplit\r\nvalue\r\nEND\r\n$" % (k, len(v)))

    def test_every_command_byte_by_byte(self):
        k = key()
        script = [
            (b"set %s 0 0 1\r\n1\r\n" % k, b"STORED\r\n"),
            (b"incr %s 41\r\n" % k, b"42\r\n"),
            (b"touch %s 100\r\n" % k, b"TOUCHED\r\n"),
            (b"append %s 0 0 1\r\n0\r\n" % k, b"STORED\r\n"),
            (b"delete %s\r\n" % k, b"DELETED\r\n"),
            (b"mn\r\n", b"MN\r\n"),
        ]
        for req, resp in script:
            self.send_bytewise(req)
            self.assertEqual(self.c.line(), resp)

    def test_split_at_every_position(self):
        k = key()
        req = b"set %s 1 0 5\r\nabcde\r\nget %s\r\n" % (k, k)
        expect = b"STORED\r\nVALUE %s 1 5\r\nabcde\r\nEND\r\n" % k
        for cut in range(1, len(req)):
            self.c.send(req[:cut])
            time.sleep(0.002)
            self.c.send(req[cut:])
            self.assertEqual(self.c.exact(len(expect)), expect, "cut at %d" % cut)

    def test_large_value_in_small_chunks(self):
        k = key()
        v = bytes(i % 251 for i in range(300000))
        data = b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)
        for i in range(0, len(data), 1000):
            self.c.send(data[i:i + 1000])
        self.assertEqual(self.c.line(), b"STORED\r\n")
        self.assert_value(k, v)


class BigValues(ServerCase):
    server_args = {"memory_mb": 64, "item_max": "1m"}

    def test_near_the_limit(self):
        k = key()
        v = bytes(i % 256 for i in range(1024 * 1024 - 1024))
        self.set(k, v)
        self.assert_value(k, v)

    def test_over_the_limit(self):
        k = key()
        size = 1024 * 1024 + 1
        self.c.send(b"set %s 0 0 %d\r\n" % (k, size) + b"y" * size + b"\r\n")
        self.assertEqual(self.c.line(), b"SERVER_ERROR object too large for cache\r\n")
        # The data was swallowed; the connection goes on.
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")
        self.assert_miss(k)

    def test_too_large_replaces_nothing(self):
        k = key()
        self.set(k, b"small")
        size = 2 * 1024 * 1024
        self.c.send(b"set %s 0 0 %d\r\n" % (k, size) + b"y" * size + b"\r\n")
        self.assertEqual(self.c.line(), b"SERVER_ERROR object too large for cache\r\n")
        # memcached drops the old value when a set of the key fails.
        self.assert_miss(k)

    def test_many_sizes(self):
        sizes = [1, 100, 1000, 4095, 4096, 4097, 65535, 65536, 100000, 500000]
        ks = []
        for s in sizes:
            k = key()
            ks.append(k)
            self.set(k, bytes([s % 256]) * s)
        for k, s in zip(ks, sizes):
            self.assert_value(k, bytes([s % 256]) * s)


class Expiry(ServerCase):
    def test_short_ttl_expires(self):
        def steps():
            k1, k2 = key(), key()
            self.set(k1, b"v", exptime=1)
            self.set(k2, b"v", exptime=100)
            self.assert_value(k1, b"v")
            return k1, k2
        k1, k2 = self.in_one_server_second(steps)
        time.sleep(2.5)
        self.assert_miss(k1)
        self.assert_value(k2, b"v")

    def test_negative_exptime_is_expired(self):
        k = key()
        self.set(k, b"v", exptime=-1)
        self.assert_miss(k)

    def test_absolute_exptime(self):
        now = int(self.c.stats()["time"])
        past, future = key(), key()
        self.set(past, b"v", exptime=now - 10)
        self.set(future, b"v", exptime=now + 100)
        self.assert_miss(past)
        self.assert_value(future, b"v")

    def test_touch_extends_and_shortens(self):
        def steps():
            k1, k2 = key(), key()
            self.set(k1, b"v", exptime=1)
            self.set(k2, b"v", exptime=100)
            self.assertEqual(self.c.cmd(b"touch %s 100\r\n" % k1), b"TOUCHED\r\n")
            self.assertEqual(self.c.get(b"1 " + k2, cmd=b"gat"), {k2: (0, b"v", None)})
            return k1, k2
        k1, k2 = self.in_one_server_second(steps)
        time.sleep(2.5)
        self.assert_value(k1, b"v")
        self.assert_miss(k2)

    def test_expired_items_are_swept(self):
        # The control thread's sweep removes expired items without any get.
        ks = [key() for _ in range(50)]
        for k in ks:
            self.set(k, b"v" * 100, exptime=1)
        before = int(self.c.stats()["curr_items"])
        self.assertGreaterEqual(before, 50)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            time.sleep(1)
            if int(self.c.stats()["curr_items"]) <= before - 50:
                break
        self.assertLessEqual(int(self.c.stats()["curr_items"]), before - 50)


class Flush(ServerCase):
    def test_flush_all(self):
        ks = [key() for _ in range(10)]
        for k in ks:
            self.set(k, b"v")
        self.assertEqual(self.c.cmd(b"flush_all\r\n"), b"OK\r\n")
        for k in ks:
            self.assert_miss(k)
        self.set(ks[0], b"new")
        self.assert_value(ks[0], b"new")

    def test_flush_all_noreply(self):
        k = key()
        self.set(k, b"v")
        self.c.send(b"flush_all noreply\r\n")
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")
        self.assert_miss(k)

    def test_flush_all_delayed(self):
        # flush_all 2 in second T invalidates from T + 1 (memcached's
        # oldest_live): the value must still be there within T
        def steps():
            k = key()
            self.set(k, b"v")
            self.assertEqual(self.c.cmd(b"flush_all 2\r\n"), b"OK\r\n")
            self.assert_value(k, b"v")
            return k
        k = self.in_one_server_second(steps)
        time.sleep(3.5)
        self.assert_miss(k)
        self.set(k, b"after")
        self.assert_value(k, b"after")


class FlushDisabled(ServerCase):
    server_args = {"extra": ["-F"]}

    def test_flush_refused(self):
        k = key()
        self.set(k, b"v")
        self.assertEqual(self.c.cmd(b"flush_all\r\n"), b"CLIENT_ERROR flush_all not allowed\r\n")
        self.assert_value(k, b"v")


class CasDisabled(ServerCase):
    server_args = {"extra": ["-C"]}

    def test_gets_returns_zero(self):
        k = key()
        self.set(k, b"v")
        self.assertEqual(self.c.get(k, cmd=b"gets")[k][2], 0)
        self.assertEqual(self.c.stats(b"settings")["cas_enabled"], "no")


class Meta(ServerCase):
    def test_mn(self):
        self.assertEqual(self.c.cmd(b"mn\r\n"), b"MN\r\n")

    def test_ms_mg(self):
        k = key()
        self.assertEqual(self.c.cmd(b"ms %s 2 T0 F5\r\nhi\r\n" % k), b"HD\r\n")
        self.assertRegex(self.c.cmd(b"mg %s v f t s k c\r\n" % k),
                         rb"^VA 2 f5 t-1 s2 k%s c\d+\r\n$" % re.escape(k))
        self.assertEqual(self.c.exact(4), b"hi\r\n")
        self.assertEqual(self.c.cmd(b"mg %s\r\n" % k), b"HD\r\n")
        self.assertEqual(self.c.cmd(b"mg %s v\r\n" % key()), b"EN\r\n")

    def test_quiet_mode(self):
        k = key()
        self.c.send(b"ms %s 1 q\r\nx\r\nmg %s v q\r\nmg %s v q\r\nmn\r\n" % (k, key(), k))
        self.assertEqual(self.c.until(b"MN\r\n"), b"VA 1\r\nx\r\nMN\r\n")

    def test_opaque(self):
        self.assertEqual(self.c.cmd(b"mg %s v Oabc123\r\n" % key()), b"EN Oabc123\r\n")
        k = key()
        self.assertEqual(self.c.cmd(b"ms %s 1 O77\r\nx\r\n" % k), b"HD O77\r\n")

    def test_md(self):
        k = key()
        self.assertEqual(self.c.cmd(b"md %s\r\n" % k), b"NF\r\n")
        self.set(k, b"v")
        self.assertEqual(self.c.cmd(b"md %s\r\n" % k), b"HD\r\n")
        self.assert_miss(k)

    def test_ma(self):
        k = key()
        self.assertEqual(self.c.cmd(b"ma %s\r\n" % k), b"NF\r\n")
        self.assertEqual(self.c.cmd(b"ma %s N0 J13\r\n" % k), b"HD\r\n")
        self.assertEqual(self.c.cmd(b"ma %s MD D5 v\r\n" % k), b"VA 1\r\n")
        self.assertEqual(self.c.exact(3), b"8\r\n")
        self.assertEqual(self.c.cmd(b"ma %s v\r\n" % k), b"VA 1\r\n")
        self.assertEqual(self.c.exact(3), b"9\r\n")

    def test_ms_modes(self):
        k = key()
        self.assertEqual(self.c.cmd(b"ms %s 1 MR\r\nx\r\n" % k), b"NS\r\n")  # replace
        self.assertEqual(self.c.cmd(b"ms %s 1 ME\r\na\r\n" % k), b"HD\r\n")  # add
        self.assertEqual(self.c.cmd(b"ms %s 1 ME\r\nb\r\n" % k), b"NS\r\n")
        self.assertEqual(self.c.cmd(b"ms %s 1 MA\r\nc\r\n" % k), b"HD\r\n")  # append
        self.assertEqual(self.c.cmd(b"ms %s 1 MP\r\nd\r\n" % k), b"HD\r\n")  # prepend
        self.assert_value(k, b"dac")

    def test_ms_cas(self):
        k = key()
        self.set(k, b"v")
        cas = self.c.get(k, cmd=b"gets")[k][2]
        self.assertEqual(self.c.cmd(b"ms %s 1 C%d\r\nx\r\n" % (k, cas + 1)), b"EX\r\n")
        self.assertEqual(self.c.cmd(b"ms %s 1 C%d\r\ny\r\n" % (k, cas)), b"HD\r\n")
        self.assert_value(k, b"y")


class BadInput(ServerCase):
    def test_unknown_command(self):
        self.assertEqual(self.c.cmd(b"bogus\r\n"), b"ERROR\r\n")
        self.assertEqual(self.c.cmd(b"\r\n"), b"ERROR\r\n")
        self.assertEqual(self.c.cmd(b"get\r\n"), b"ERROR\r\n")
        self.assertEqual(self.c.cmd(b"incr\r\n"), b"ERROR\r\n")
        self.assertEqual(self.c.cmd(b"touch k\r\n"), b"ERROR\r\n")
        self.assertEqual(self.c.cmd(b"verbosity\r\n"), b"ERROR\r\n")
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_bad_command_line(self):
        k = key()
        for line in (b"set %s abc 0 1\r\n" % k, b"set %s 0 0 -1\r\n" % k,
                     b"set %s 0 0 abc\r\n" % k):
            self.assertEqual(self.c.cmd(line), b"CLIENT_ERROR bad command line format\r\n")
        self.assertEqual(self.c.cmd(b"set %s 0 0\r\n" % k), b"ERROR\r\n")
        self.assert_miss(k)

    def test_bad_data_chunk_resynchronises(self):
        k = key()
        # Two bytes more than announced: memcached reports the bad chunk,
        # then reads what follows its end as the next command.
        self.c.send(b"set %s 0 0 3\r\nabcde\r\n" % k)
        self.assertEqual(self.c.line(), b"CLIENT_ERROR bad data chunk\r\n")
        self.assertEqual(self.c.line(), b"ERROR\r\n")
        self.assert_miss(k)
        self.set(k, b"abc")
        self.assert_value(k, b"abc")

    def test_line_without_end_closes(self):
        c = self.srv.connect()
        try:
            c.send(b"x" * (64 * 1024))
            self.assertTrue(c.closed(), "connection still open after a 64 KiB line")
        finally:
            c.close()
        # The server lives on.
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_garbage_bytes(self):
        c = self.srv.connect()
        try:
            c.send(bytes(range(256)) * 4 + b"\r\n")
            c.closed(timeout=1)
        finally:
            c.close()
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")

    def test_shutdown_not_enabled(self):
        self.assertEqual(self.c.cmd(b"shutdown\r\n"), b"ERROR: shutdown not enabled\r\n")
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")


# Stats fields that prometheus' memcached_exporter (and telegraf) parse as
# numbers from `stats`; a missing one or a non-number breaks the scrape.
EXPORTER_STATS = [
    "pid", "uptime", "time", "curr_connections", "total_connections",
    "rejected_connections", "connection_structures", "max_connections",
    "cmd_get", "cmd_set", "cmd_flush", "cmd_touch",
    "get_hits", "get_misses", "get_expired", "get_flushed",
    "delete_hits", "delete_misses", "incr_hits", "incr_misses",
    "decr_hits", "decr_misses", "cas_hits", "cas_misses", "cas_badval",
    "touch_hits", "touch_misses", "bytes_read", "bytes_written",
    "limit_maxbytes", "threads", "curr_items", "total_items", "bytes",
    "evictions", "reclaimed",
]


class Stats(ServerCase):
    server_args = {"memory_mb": 64, "threads": 3}

    def test_exporter_fields(self):
        st = self.c.stats()
        for name in EXPORTER_STATS:
            self.assertIn(name, st)
            float(st[name])
        for name in ("rusage_user", "rusage_system"):
            self.assertRegex(st[name], r"^\d+\.\d{6}$")
        self.assertIn("version", st)
        self.assertEqual(int(st["pid"]), self.srv.proc.pid)
        self.assertEqual(int(st["threads"]), 3)
        self.assertEqual(int(st["limit_maxbytes"]), 64 * 1024 * 1024)
        self.assertLess(abs(int(st["time"]) - time.time()), 60)
        self.assertGreaterEqual(int(st["uptime"]), 0)
        self.assertGreaterEqual(int(st["curr_connections"]), 1)

    def test_settings(self):
        st = self.c.stats(b"settings")
        self.assertEqual(int(st["maxbytes"]), 64 * 1024 * 1024)
        self.assertEqual(int(st["maxconns"]), 1024)
        self.assertEqual(int(st["tcpport"]), self.srv.port)
        self.assertEqual(int(st["udpport"]), 0)
        self.assertEqual(int(st["num_threads"]), 3)
        self.assertEqual(int(st["item_size_max"]), 1024 * 1024)
        self.assertEqual(st["evictions"], "on")
        self.assertEqual(st["cas_enabled"], "yes")
        self.assertEqual(st["flush_enabled"], "yes")

    def test_counters_move(self):
        k = key()
        a = self.c.stats()
        self.set(k, b"v")
        self.c.get(k)
        self.c.get(key())
        self.c.cmd(b"delete %s\r\n" % k)
        self.c.cmd(b"touch %s 1\r\n" % k)
        b = self.c.stats()

        def d(name):
            return int(b[name]) - int(a[name])
        self.assertEqual(d("cmd_set"), 1)
        self.assertEqual(d("cmd_get"), 2)
        self.assertEqual(d("get_hits"), 1)
        self.assertEqual(d("get_misses"), 1)
        self.assertEqual(d("delete_hits"), 1)
        self.assertEqual(d("touch_misses"), 1)
        self.assertEqual(d("total_items"), 1)
        self.assertGreater(d("bytes_read"), 0)
        self.assertGreater(d("bytes_written"), 0)

    def test_connections_counted(self):
        # Connections of earlier tests may still be closing (on the native
        # stack the FIN is processed a little later): start from a count
        # that holds still, so the deltas below are exact.
        a = self.c.stats()
        for _ in range(50):
            time.sleep(0.1)
            again = self.c.stats()
            if again["curr_connections"] == a["curr_connections"]:
                break
            a = again
        others = [self.srv.connect() for _ in range(3)]
        for o in others:
            self.assertRegex(o.cmd(b"version\r\n"), rb"^VERSION ")
        b = self.c.stats()
        self.assertEqual(int(b["curr_connections"]) - int(a["curr_connections"]), 3)
        self.assertEqual(int(b["total_connections"]) - int(a["total_connections"]), 3)
        for o in others:
            o.close()

    def test_reset(self):
        self.c.get(key())
        self.assertEqual(self.c.cmd(b"stats reset\r\n"), b"RESET\r\n")
        st = self.c.stats()
        self.assertEqual(int(st["get_misses"]), 0)
        self.assertEqual(int(st["cmd_get"]), 0)

    def test_other_stats_groups_end(self):
        for arg in (b"items", b"slabs", b"conns"):
            self.c.send(b"stats %s\r\n" % arg)
            body = self.c.until(b"END\r\n")
            for ln in body.split(b"\r\n")[:-2]:
                self.assertTrue(ln.startswith(b"STAT "), ln)


class Udp(ServerCase):
    # memcached's UDP as it is: every command, replies of any size
    server_args = {"udp": True, "seg_extra": ["--udp-writes", "--udp-reply-max", "0"]}

    def test_set_get(self):
        k = key()
        resp, n = harness.udp_request(self.srv.udp_port, b"set %s 5 0 3\r\nabc\r\n" % k, 7)
        self.assertEqual((resp, n), (b"STORED\r\n", 1))
        resp, n = harness.udp_request(self.srv.udp_port, b"get %s\r\n" % k, 8)
        self.assertEqual(resp, b"VALUE %s 5 3\r\nabc\r\nEND\r\n" % k)
        # Same item over TCP.
        self.assert_value(k, b"abc", flags=5)

    def test_several_requests_in_one_datagram(self):
        # memcached frames each request's response on its own (all with
        # the request's id); what counts is every response, in order.
        k = key()
        resp = harness.udp_collect(
            self.srv.udp_port, b"set %s 0 0 1\r\n1\r\nincr %s 4\r\nget %s\r\n" % (k, k, k), 9)
        self.assertEqual(resp, b"STORED\r\n5\r\nVALUE %s 0 1\r\n5\r\nEND\r\n" % k)

    def test_multi_datagram_response(self):
        k = key()
        v = bytes(i % 256 for i in range(20000))
        self.set(k, v)
        resp, n = harness.udp_request(self.srv.udp_port, b"get %s\r\n" % k, 0x1234)
        self.assertEqual(resp, b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v))
        self.assertGreater(n, 1)

    def test_multi_key_get(self):
        # one get line of several keys over UDP (one engine batch on
        # segcached): hits in order, misses left out, a value that needs
        # several datagrams in the middle
        a, b, big, miss = key(), key(), key(), key()
        vbig = bytes(i % 251 for i in range(30000))
        self.set(a, b"va", flags=3)
        self.set(b, b"vb")
        self.set(big, vbig)
        req = b"get %s %s %s %s\r\n" % (a, miss, big, b)
        want = b"VALUE %s 3 2\r\nva\r\nVALUE %s 0 %d\r\n%s\r\nVALUE %s 0 2\r\nvb\r\nEND\r\n" % (
            a, big, len(vbig), vbig, b)
        # memcached sends a message per key, segcached one for the line
        self.assertEqual(harness.udp_collect(self.srv.udp_port, req, 0x4321), want)
        if harness.is_segcached():
            resp, n = harness.udp_request(self.srv.udp_port, req, 0x4322)
            self.assertEqual(resp, want)
            self.assertGreater(n, 1)
        resp = harness.udp_collect(self.srv.udp_port, b"get %s %s\r\n" % (miss, miss), 11)
        self.assertEqual(resp, b"END\r\n")

    def test_multi_key_gets_and_pipelined_lines(self):
        # gets' cas uniques are TCP's; get lines and mg one after another
        # in one datagram answer in order
        a, b = key(), key()
        self.set(a, b"1")
        self.set(b, b"22")
        self.c.send(b"gets %s %s\r\n" % (a, b))
        tcp = self.c.until(b"END\r\n")
        resp = harness.udp_collect(self.srv.udp_port, b"gets %s %s\r\n" % (a, b), 12)
        self.assertEqual(resp, tcp)
        resp = harness.udp_collect(
            self.srv.udp_port, b"get %s\r\nget %s %s\r\nmg %s v\r\n" % (b, a, b, a), 13)
        self.assertEqual(resp, b"VALUE %s 0 2\r\n22\r\nEND\r\nVALUE %s 0 1\r\n1\r\n"
                         b"VALUE %s 0 2\r\n22\r\nEND\r\nVA 1\r\n1\r\n" % (b, a, b))

    def test_request_ids_echoed(self):
        for rid in (0, 1, 0x7fff, 0xffff):
            resp, _ = harness.udp_request(self.srv.udp_port, b"version\r\n", rid)
            self.assertTrue(resp.startswith(b"VERSION "))

    def test_short_datagram_ignored(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1)
        s.sendto(b"\x00\x01", (harness.HOST, self.srv.udp_port))
        with self.assertRaises(socket.timeout):
            s.recv(65536)
        s.close()
        resp, _ = harness.udp_request(self.srv.udp_port, b"version\r\n", 3)
        self.assertTrue(resp.startswith(b"VERSION "))


class UdpDefaults(ServerCase):
    """segcached's UDP defaults against reflection: reads only, replies to
    one datagram bounded (memcached has neither)."""
    server_args = {"udp": True}

    def setUp(self):
        if not harness.is_segcached():
            self.skipTest("segcached's UDP limits")
        super().setUp()

    def test_writes_refused(self):
        k = key()
        for req in (b"set %s 0 0 1\r\nx\r\n" % k, b"delete %s\r\n" % k, b"flush_all\r\n",
                    b"stats\r\n"):
            resp, n = harness.udp_request(self.srv.udp_port, req, 5)
            self.assertEqual(resp, b"CLIENT_ERROR only reads are served over UDP\r\n")
        self.assertNotIn(k, self.c.get(k))

    def test_replies_bounded(self):
        k = key()
        self.set(k, b"r" * 20000)
        req = b"get %s\r\n" % k
        resp, n = harness.udp_request(self.srv.udp_port, req, 6)
        self.assertEqual(resp, b"SERVER_ERROR reply over the UDP size limit\r\n")
        small = key()
        self.set(small, b"s" * 100)
        resp, n = harness.udp_request(self.srv.udp_port, b"get %s\r\n" % small, 7)
        self.assertEqual(resp, b"VALUE %s 0 100\r\n%s\r\nEND\r\n" % (small, b"s" * 100))

    def test_multi_key_replies_bounded(self):
        # the cap holds for a whole get line of several keys: the line
        # that goes over it is one error line and the rest of the datagram
        # is dropped; the lines before it are answered
        big, small = key(), key()
        self.set(big, b"r" * 3000)
        self.set(small, b"s" * 100)
        vs = b"VALUE %s 0 100\r\n%s\r\n" % (small, b"s" * 100)
        resp, n = harness.udp_request(self.srv.udp_port, b"get %s %s %s\r\n" % (small, big, big), 8)
        self.assertEqual(resp, b"SERVER_ERROR reply over the UDP size limit\r\n")
        resp = harness.udp_collect(self.srv.udp_port, b"get %s\r\nget %s %s\r\nget %s\r\n" %
                                   (small, big, big, small), 9)
        self.assertEqual(resp, vs + b"END\r\nSERVER_ERROR reply over the UDP size limit\r\n")
        resp, n = harness.udp_request(self.srv.udp_port, b"get %s %s\r\n" % (small, big), 10)
        self.assertEqual(resp, vs + b"VALUE %s 0 3000\r\n%s\r\nEND\r\n" % (big, b"r" * 3000))


class Concurrency(ServerCase):
    server_args = {"threads": 4}

    def test_clients_in_parallel(self):
        # 16 clients on 4 worker threads: each checks its own keys, and all
        # of them increment one shared counter, which must not lose any.
        import threading
        shared = key(b"shared".decode())
        self.set(shared, b"0")
        nclients, rounds = 16, 200
        errors = []

        def client(n):
            try:
                c = self.srv.connect()
                try:
                    for i in range(rounds):
                        k = b"par-%d-%d" % (n, i)
                        v = b"%d:%d:" % (n, i) * (1 + i % 50)
                        c.send(b"set %s %d 0 %d\r\n%s\r\n" % (k, n, len(v), v))
                        if c.line() != b"STORED\r\n":
                            raise AssertionError("set failed")
                        got = c.get(k)
                        if got != {k: (n, v, None)}:
                            raise AssertionError("read back %r" % (got,))
                        r = c.cmd(b"incr %s 1\r\n" % shared)
                        if not r.rstrip().isdigit():
                            raise AssertionError("incr: %r" % r)
                finally:
                    c.close()
            except Exception as e:  # reported below, in the main thread
                errors.append("client %d: %r" % (n, e))

        threads = [threading.Thread(target=client, args=(n,)) for n in range(nclients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        self.assertFalse(any(t.is_alive() for t in threads), "clients hung")
        self.assertEqual(errors, [])
        self.assert_value(shared, b"%d" % (nclients * rounds))

    def test_client_vanishes_mid_request(self):
        for cut in (b"set vanish 0 0 10\r\nabc", b"get vani",
                    b"set vanish 0 0 1000000\r\n" + b"x" * 5000):
            c = self.srv.connect()
            c.send(cut)
            c.close()
        self.assertRegex(self.c.cmd(b"version\r\n"), rb"^VERSION ")
        self.assert_miss(b"vanish")

    def test_half_close_still_answered(self):
        c = self.srv.connect()
        try:
            k = key()
            c.send(b"set %s 0 0 2\r\nhi\r\nget %s\r\n" % (k, k))
            c.sock.shutdown(socket.SHUT_WR)
            self.assertEqual(c.until(b"END\r\n"), b"STORED\r\nVALUE %s 0 2\r\nhi\r\nEND\r\n" % k)
            self.assertTrue(c.closed())
        finally:
            c.close()


class MaxConns(unittest.TestCase):
    def test_rejected_over_limit(self):
        # memcached reserves some of -c for itself, so the limit is probed:
        # connections are opened until one is refused. segcached counts
        # client connections only: exactly -c are accepted.
        limit = 20 if harness.is_segcached() else 64
        with harness.Server(name="maxconns", max_conns=limit) as srv:
            conns, refused = [], None
            try:
                for _ in range(limit + 5):
                    c = srv.connect()
                    c.send(b"version\r\n")
                    try:
                        ln = c.line()
                    except (EOFError, ConnectionResetError):
                        ln = b""
                    if ln.startswith(b"VERSION "):
                        conns.append(c)
                        continue
                    refused = (c, ln)
                    break
                self.assertIsNotNone(refused, "no connection refused")
                c, ln = refused
                self.assertEqual(ln, b"ERROR Too many open connections\r\n")
                self.assertTrue(c.closed())
                c.close()
                self.assertLessEqual(len(conns), limit)
                if harness.is_segcached():
                    self.assertEqual(len(conns), limit)
                st = conns[0].stats()
                self.assertGreaterEqual(int(st["rejected_connections"]), 1)
                # A closed connection makes room for a new one.
                conns.pop().close()
                deadline = time.monotonic() + 10
                while True:
                    c = srv.connect()
                    c.send(b"version\r\n")
                    try:
                        ok = c.line().startswith(b"VERSION ")
                    except (EOFError, ConnectionResetError):
                        ok = False
                    if ok or time.monotonic() > deadline:
                        break
                    c.close()
                    time.sleep(0.1)
                self.assertTrue(ok)
                conns.append(c)
            finally:
                for c in conns:
                    c.close()


class Lifecycle(unittest.TestCase):
    def test_sigterm_exits_cleanly(self):
        srv = harness.Server(name="sigterm").start()
        try:
            c = srv.connect()
            c.cmd(b"set a 0 0 1\r\na\r\n")
            # An open idle connection must not hold the shutdown up.
            self.assertEqual(srv.stop(), 0)
            self.assertTrue(c.closed())
            c.close()
        finally:
            srv.kill()

    def test_sigint_exits_cleanly(self):
        srv = harness.Server(name="sigint").start()
        try:
            import signal
            srv.signal(signal.SIGINT)
            self.assertEqual(srv.wait(), 0)
        finally:
            srv.kill()

    def test_shutdown_command(self):
        srv = harness.Server(name="shutdown", extra=["-A"]).start()
        try:
            c = srv.connect()
            c.send(b"shutdown\r\n")
            self.assertTrue(c.closed())
            c.close()
            self.assertEqual(srv.wait(), 0)
        finally:
            srv.kill()


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
