#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What hostile clients get (issue 10), on either stack:

* --max-conns-per-source: one address holds at most N connections, more
  are reset at once and counted (conns_refused_per_source);
* --admin-port: `stats` answers on a server at its connection limit, and
  the admin port serves nothing but administration;
* --request-timeout: a request begun and never finished (slowloris) is
  reset and counted (conns_request_timeouts), idle connections and busy
  pipelining ones are not; replies a client never takes are bounded in
  memory and, with the timeout, reset (conns_write_timeouts).

    tests/functional/test_limits.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_limits.py

These are segcached's own options; memcached has none of them. Clients come
from loopback addresses (127.0.0.1-3) on the posix stack and from
198.18.0.1, .3 and .4 inside the test's client namespace on the native
one. Every loop is bounded in count and time.
"""

import os
import resource
import socket
import subprocess
import sys
import threading
import time
import unittest

import harness
from harness import wait_for
import netenv

# Bounds against hangs, not timing checks.
PHASE_TIMEOUT = 120.0
ADMIN_PORT_NATIVE = 11212
ADMIN_CONNS = 16  # STACK_ADMIN_CONNS
ADMIN_CONNS_PER_SOURCE = 4  # STACK_ADMIN_CONNS_PER_SOURCE
EXTRA_NATIVE_SOURCES = ["198.18.0.3", "198.18.0.4"]
# besides those, for the admin port's 16 (4 from each of 4 addresses) and a 17th
ADMIN_NATIVE_SOURCES = ["198.18.0.6", "198.18.0.7"]


def sources():
    """Three addresses the test's clients can connect from."""
    if harness.is_native():
        return [netenv.CLIENT_IP] + EXTRA_NATIVE_SOURCES
    return ["127.0.0.1", "127.0.0.2", "127.0.0.3"]


def admin_sources():
    """Five addresses: four hold the admin port's 16 connections, the
    fifth asks for a 17th."""
    if harness.is_native():
        return sources() + ADMIN_NATIVE_SOURCES
    return ["127.0.0.%d" % i for i in range(1, 6)]


def client_iface():
    for name in os.listdir("/sys/class/net"):
        if name != "lo":
            return name
    raise AssertionError("no interface in the client namespace")


def setUpModule():
    if harness.is_native():
        for a in EXTRA_NATIVE_SOURCES + ADMIN_NATIVE_SOURCES:
            subprocess.run(["ip", "addr", "add", a + "/24", "dev", client_iface()],
                           check=True, timeout=30)


def tearDownModule():
    if harness.is_native():
        for a in EXTRA_NATIVE_SOURCES + ADMIN_NATIVE_SOURCES:
            subprocess.run(["ip", "addr", "del", a + "/24", "dev", client_iface()],
                           timeout=30)


def connect(port, src=None, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(harness.IO_TIMEOUT)
    if src is not None:
        s.bind((src, 0))
    s.connect((harness.HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return harness.Conn(s)


def refused(port, src):
    """A connection from src that the server resets before serving it
    (the reset may even reach connect())."""
    try:
        c = connect(port, src)
    except ConnectionResetError:
        return True
    try:
        return answer(c) is None
    finally:
        c.close()


def answer(c, request=b"version\r\n"):
    """The server's first line to a request, or None when it reset or
    closed the connection instead."""
    if c is None:
        return None
    try:
        c.send(request)
        return c.line()
    except (ConnectionResetError, BrokenPipeError, EOFError):
        return None


def gone(c, timeout=harness.IO_TIMEOUT):
    """True when the server closed or reset c within the bound."""
    return c.closed(timeout)


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


class LimitsCase(unittest.TestCase):
    seg_extra = []
    posix_extra = []  # the posix stack only
    max_conns = None
    threads = 2

    @classmethod
    def setUpClass(cls):
        if not harness.is_segcached():
            raise unittest.SkipTest("segcached's own options; memcached has none")
        # Every server has an admin port: the test's own questions (stats)
        # go there, counted neither against -c nor against any source.
        cls.admin_port = ADMIN_PORT_NATIVE if harness.is_native() else harness.free_port()
        extra = cls.seg_extra + ["--admin-port", str(cls.admin_port)]
        if harness.is_native():
            # the native stack serves it on its address only when asked
            extra += ["--admin-listen", harness.ARGS.server_ip]
        else:
            extra += cls.posix_extra
        cls.srv = harness.Server(name=cls.__name__, threads=1 if harness.is_native() else
                                 cls.threads, max_conns=cls.max_conns, seg_extra=extra)
        cls.srv.start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop_clean(cls.__name__)

    def stats(self, arg=b""):
        c = connect(self.admin_port)
        try:
            return c.stats(arg)
        finally:
            c.close()

    def curr(self):
        """Client connections open (the admin port's are not)."""
        return int(self.stats()["curr_connections"])

    def assert_serves(self, n=100):
        c = self.srv.connect()
        try:
            for i in range(n):
                v = b"%d-%s" % (i, os.urandom(8).hex().encode())
                self.assertEqual(c.cmd(b"set served%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)),
                                 b"STORED\r\n")
                self.assertEqual(c.get(b"served%d" % i), {b"served%d" % i: (0, v, None)})
        finally:
            c.close()


class PerSource(LimitsCase):
    seg_extra = ["--max-conns-per-source", "4"]
    max_conns = 64

    def test_a_source_holds_at_most_n(self):
        a, b, _ = sources()
        before = int(self.stats()["conns_refused_per_source"])
        held = []
        try:
            for _ in range(4):
                held.append(connect(self.srv.port, a))
                self.assertRegex(answer(held[-1]) or b"", rb"^VERSION ")
            # The fifth from a: reset at once, never served.
            for _ in range(3):
                self.assertTrue(refused(self.srv.port, a))
            # Another address is counted on its own.
            for _ in range(4):
                held.append(connect(self.srv.port, b))
                self.assertRegex(answer(held[-1]) or b"", rb"^VERSION ")
            # A close makes room for one more of a.
            held.pop(0).close()
            again = wait_for("a's closed connection to be counted out",
                             lambda: self._served_from(a))
            held.append(again)
            st = self.stats()
            self.assertEqual(int(st["conns_refused_per_source"]) - before,
                             3 + self._refused_while_waiting)
            self.assertEqual(st["curr_connections"], "8")
        finally:
            for c in held:
                c.close()
        wait_for("every connection closed", lambda: self.curr() == 0)

    _refused_while_waiting = 0

    def _served_from(self, src):
        try:
            c = connect(self.srv.port, src)
        except ConnectionResetError:
            c = None
        if answer(c) is None:
            if c is not None:
                c.close()
            self._refused_while_waiting += 1
            return None
        return c

    def test_default_limits(self):
        st = self.stats(b"settings")
        self.assertEqual(st["max_conns_per_source"], "4")
        self.assertEqual(st["request_timeout"], "30")  # the default
        self.assertEqual(st["admin_port"], str(self.admin_port))


class AdminPort(LimitsCase):
    max_conns = 8

    def test_stats_on_a_full_server(self):
        held = []
        try:
            for _ in range(8):
                held.append(self.srv.connect())
                self.assertRegex(held[-1].cmd(b"version\r\n"), rb"^VERSION ")
            # Full: the clients' port refuses as memcached does ...
            over = self.srv.connect()
            self.assertEqual(answer(over), b"ERROR Too many open connections\r\n")
            over.close()
            # ... and the admin port answers stats.
            adm = connect(self.admin_port)
            try:
                st = adm.stats()
                self.assertEqual(st["curr_connections"], "8")
                self.assertEqual(st["max_connections"], "8")
                self.assertEqual(st["admin_connections"], "1")
                self.assertGreaterEqual(int(st["rejected_connections"]), 1)
                self.assertEqual(adm.stats(b"settings")["admin_port"], str(self.admin_port))
                self.assertRegex(adm.cmd(b"version\r\n"), rb"^VERSION ")
                # counters only (issue 35): verbosity needs --admin-commands all
                self.assertEqual(adm.cmd(b"verbosity 0\r\n"),
                                 b"CLIENT_ERROR the admin port serves counters only "
                                 b"(this command needs --admin-commands all)\r\n")
                # Administration only: no item goes in or out.
                no = b"CLIENT_ERROR only administration commands on the admin port\r\n"
                self.assertEqual(adm.cmd(b"get k\r\n"), no)
                self.assertEqual(adm.cmd(b"set k 0 0 1\r\nx\r\n"), no)
                self.assertEqual(adm.cmd(b"flush_all\r\n"), no)
                self.assertEqual(adm.cmd(b"mn\r\n"), no)
                # At most 16 at once, the asker included, 4 from one
                # address (issue 35): 4 addresses hold them all.
                srcs = admin_sources()
                more = [connect(self.admin_port, src)
                        for i, src in enumerate(srcs[:4])
                        for _ in range(ADMIN_CONNS_PER_SOURCE - (i == 0))]  # adm is srcs[0]
                self.assertEqual(len(more), ADMIN_CONNS - 1)
                try:
                    for m in more:
                        self.assertRegex(m.cmd(b"version\r\n"), rb"^VERSION ")
                    seventeenth = connect(self.admin_port, srcs[4])
                    self.assertEqual(answer(seventeenth),
                                     b"ERROR Too many open connections\r\n")
                    seventeenth.close()
                finally:
                    for m in more:
                        m.close()
                adm.send(b"quit\r\n")
                self.assertTrue(gone(adm))
            finally:
                adm.close()
        finally:
            for c in held:
                c.close()
        # Clients are served again once there is room.
        wait_for("the held connections to close", lambda: self.curr() == 0)
        self.assert_serves()


class RequestTimeout(LimitsCase):
    seg_extra = ["--request-timeout", "2"]

    def test_begun_requests_that_never_finish_are_reset(self):
        before = int(self.stats()["conns_request_timeouts"])
        idle = self.srv.connect()            # connected, never sends
        keepalive = self.srv.connect()       # a pooled connection between requests
        self.assertRegex(keepalive.cmd(b"version\r\n"), rb"^VERSION ")
        line = self.srv.connect()
        line.send(b"get half")               # a line without its end
        block = self.srv.connect()
        block.send(b"set never 0 0 10\r\nabc")  # a data block cut short
        drip = self.srv.connect()
        dripped = []

        def dribble():
            # A byte every 0.4 s: 40 bytes would take 16 s.
            try:
                for ch in b"get " + b"d" * 36:
                    drip.send(bytes([ch]))
                    dripped.append(ch)
                    time.sleep(0.4)
            except OSError:
                pass
        t = threading.Thread(target=dribble, daemon=True)
        t.start()
        try:
            for c in (line, block, drip):
                self.assertTrue(gone(c, PHASE_TIMEOUT), "a begun request was not cut off")
                self.assertEqual(c.buf, b"", "the server answered a half request")
            t.join(PHASE_TIMEOUT)
            self.assertLess(len(dripped), 40, "the dribbled request was let finish")
            # Idle connections, with nothing begun, are kept (memcached's
            # idle_timeout is off by default; so is segcached's).
            time.sleep(3)
            self.assertRegex(idle.cmd(b"version\r\n"), rb"^VERSION ")
            self.assertRegex(keepalive.cmd(b"version\r\n"), rb"^VERSION ")
            st = self.stats()
            self.assertEqual(int(st["conns_request_timeouts"]) - before, 3)
            self.assertEqual(self.stats(b"settings")["request_timeout"], "2")
        finally:
            for c in (idle, keepalive, line, block, drip):
                c.close()
        c = self.srv.connect()
        try:
            self.assertEqual(c.get(b"never"), {})
        finally:
            c.close()

    def test_pipelining_client_whose_reads_end_mid_request_is_kept(self):
        # Every write ends inside a request, for longer than the timeout:
        # requests keep completing, so no deadline is ever reached.
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"set pk 0 0 2\r\nok\r\n"), b"STORED\r\n")
            stream = b"get pk\r\n" * 150
            got = []

            def reader():
                try:
                    for _ in range(150):
                        got.append(c.until(b"END\r\n"))
                except (OSError, EOFError):
                    pass
            t = threading.Thread(target=reader, daemon=True)
            t.start()
            for i in range(0, len(stream), 5):   # 240 writes, 25 ms apart: 6 s
                c.send(stream[i:i + 5])
                time.sleep(0.025)
            t.join(PHASE_TIMEOUT)
            self.assertEqual(len(got), 150)
            self.assertTrue(all(g == b"VALUE pk 0 2\r\nok\r\nEND\r\n" for g in got))
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()


class StalledReaders(LimitsCase):
    """Many clients ask for large values and never read: the server keeps
    serving the others, holds each stalled connection's replies within the
    output bound, and keeps them (no timeout) - or resets them after
    --request-timeout (the subclass)."""
    seg_extra = ["--request-timeout", "0"]
    # The posix stack's output budget (a quarter of --tcp-buffer-memory)
    # holds all of them here; over it a reader that fell behind is reset
    # at once (test_memory_bounds.py).
    posix_extra = ["--tcp-buffer-memory", "256"]
    STALLED = 40
    VALUE = 500 * 1024
    GETS = 100  # 50 MB of replies asked by each, 2 GB in all
    # What one stalled connection may hold: the output bound (256 KiB) and
    # the largest reply (-I 1m), and the session's other buffers; plus
    # slack for the allocator and the server's own working set.
    PER_CONN = (256 + 1024 + 64 + 64) * 1024
    SLACK = 48 << 20

    def stall(self):
        c = self.srv.connect()
        try:
            v = os.urandom(self.VALUE)
            self.assertEqual(c.cmd(b"set big 0 0 %d\r\n%s\r\n" % (len(v), v)), b"STORED\r\n")
            self.assertEqual(len(c.get(b"big")[b"big"][1]), self.VALUE)
        finally:
            c.close()
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 1024:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
        self.rss_before = rss_bytes(self.srv.proc.pid)
        stalled = []
        for _ in range(self.STALLED):
            s = connect(self.srv.port, rcvbuf=4096)
            s.send(b"get big\r\n" * self.GETS)
            stalled.append(s)
        return stalled

    def test_held_within_the_bound_and_others_served(self):
        stalled = self.stall()
        try:
            self.assert_serves()
            wait_for("the stalled connections to be open",
                     lambda: self.curr() == self.STALLED)
            rss = 0
            for _ in range(5):
                rss = max(rss, rss_bytes(self.srv.proc.pid))
                time.sleep(0.2)
            bound = self.rss_before + self.STALLED * self.PER_CONN + self.SLACK
            print("RSS %.1f MB -> %.1f MB with %d stalled readers (bound %.1f MB)" % (
                self.rss_before / 1e6, rss / 1e6, self.STALLED, bound / 1e6))
            self.assertLess(rss, bound)
            # Still open: without a timeout they are held, not dropped.
            self.assertEqual(self.curr(), self.STALLED)
        finally:
            for s in stalled:
                s.close()
        wait_for("every connection closed", lambda: self.curr() == 0)


class StalledReadersTimeout(StalledReaders):
    seg_extra = ["--request-timeout", "2"]
    posix_extra = StalledReaders.posix_extra

    def test_held_within_the_bound_and_others_served(self):
        before = int(self.stats()["conns_write_timeouts"])
        stalled = self.stall()
        try:
            self.assert_serves()
            wait_for("the stalled readers to be reset", lambda: self.curr() == 0)
            self.assertEqual(int(self.stats()["conns_write_timeouts"]) - before, self.STALLED)
            for s in stalled:
                self.assertTrue(gone(s))
        finally:
            for s in stalled:
                s.close()

    def test_slow_but_steady_reader_is_kept(self):
        # A small receive buffer, read a little every 50 ms, 2 MB in all:
        # longer than the timeout, but it always takes something, so it
        # is never cut off.
        c = connect(self.srv.port, rcvbuf=8192)
        try:
            v = os.urandom(self.VALUE)
            self.assertEqual(c.cmd(b"set steady 0 0 %d\r\n%s\r\n" % (len(v), v)),
                             b"STORED\r\n")
            c.send(b"get steady\r\n" * 4)
            expect = b"VALUE steady 0 %d\r\n%s\r\nEND\r\n" % (len(v), v)
            got = b""
            deadline = time.monotonic() + PHASE_TIMEOUT
            while len(got) < 4 * len(expect) and time.monotonic() < deadline:
                d = c.sock.recv(32 * 1024)
                if not d:
                    break
                got += d
                time.sleep(0.05)
            self.assertEqual(got, expect * 4)
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()


class BadOptions(unittest.TestCase):
    """The new options' bad values exit 64 (EX_USAGE) and say why."""

    def test_bad_values(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("segcached's command line, checked once (posix run)")
        for args, words in (
                (["--max-conns-per-source", "x"], ["--max-conns-per-source", "not a number"]),
                (["--max-conns-per-source", "-1"], ["--max-conns-per-source"]),
                (["--max-conns-per-source", "1000001"], ["--max-conns-per-source",
                                                         "out of range"]),
                (["--request-timeout", "86401"], ["--request-timeout", "out of range"]),
                (["--request-timeout", "1s"], ["--request-timeout", "not a number"]),
                (["--admin-port", "70000"], ["--admin-port", "out of range"]),
                (["-p", "11311", "--admin-port", "11311"],
                 ["--admin-port 11311 is the client port"])):
            p = subprocess.run([harness.ARGS.segcached, "--no-huge", "--"] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, timeout=60)
            err = p.stderr.decode()
            self.assertEqual(p.returncode, 64, "%r: %s" % (args, err))
            for w in words:
                self.assertIn(w, err, "%r" % (args,))


if __name__ == "__main__":
    argv = harness.setup()
    unittest.main(argv=argv, verbosity=2)
