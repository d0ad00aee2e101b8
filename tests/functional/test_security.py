#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Issue 35, replayed from outside against the real server: what a client,
a local user or a forged packet could take that the server did not give.

    tests/functional/test_security.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_security.py

* the heap file (--heap-file): a symbolic link, a file of another user or
  one open to group or others, a world-writable directory without the
  sticky bit are refused with a message and exit status 1; a new file is
  0600 whatever the umask; the file truncated while the server runs ends
  it with status 74 and a line that says so, not a death by SIGBUS;
* UDP: gat, gats and mg with T, N or R (each changes the item) are
  refused and counted (udp_refused); the key keeps its value and TTL; the
  error line does not take a datagram's replies past --udp-reply-max;
* the admin port: counters only by default (stats cachedump, lru_crawler
  metadump, stats hotkeys, cache_memlimit, verbosity refused and counted,
  nothing evicted), 4 connections from one address, silent connections
  closed after --admin-idle-timeout, loopback only whatever -l says
  (native: only when --admin-listen names its address);
* /metrics: --allow applies, 4 connections from one address, a client
  sending a byte now and then is cut off, /metrics%00 is not /metrics,
  loopback only whatever -l says;
* stats cachedump writes a binary key base64 with " b", so a key holding
  "\\r\\nEND\\r\\nSTAT evil 1\\r\\n" ends nothing and injects nothing;
* a binary-protocol request (0x80) without a newline is hung up on at
  once (with --request-timeout 0 the server would otherwise wait for ever).

UDP, the admin port, cachedump and the binary request run on both stacks;
the heap file and /metrics are the same code on both (kernel files and
sockets), run on the posix stack. Every wait is bounded.
"""

import os
import pwd
import re
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import harness
import netenv

ADMIN_PORT_NATIVE = 11212
EXTRA_SOURCE_NATIVE = "198.18.0.5"
COUNTERS_ONLY = (b"CLIENT_ERROR the admin port serves counters only "
                 b"(this command needs --admin-commands all)\r\n")
UDP_NO = b"CLIENT_ERROR only reads are served over UDP\r\n"
TOO_MANY = b"ERROR Too many open connections\r\n"
# Bounds against hangs (not timing checks).
EXIT_TIMEOUT = 60
TRICKLE_FOR = 30.0  # /metrics: how long the slow client keeps sending


def client_iface():
    for name in os.listdir("/sys/class/net"):
        if name != "lo":
            return name
    raise AssertionError("no interface in the client namespace")


def setUpModule():
    if harness.is_native():
        subprocess.run(["ip", "addr", "add", EXTRA_SOURCE_NATIVE + "/24", "dev",
                        client_iface()], check=True, timeout=30)


def tearDownModule():
    if harness.is_native():
        subprocess.run(["ip", "addr", "del", EXTRA_SOURCE_NATIVE + "/24", "dev",
                        client_iface()], timeout=30)


def other_source():
    """An address of this host's besides the first, to connect from."""
    return EXTRA_SOURCE_NATIVE if harness.is_native() else "127.0.0.2"


def connect(port, src=None, host=None, timeout=harness.IO_TIMEOUT):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src is not None:
        s.bind((src, 0))
    s.connect((host or harness.HOST, port))
    return harness.Conn(s)


def worker_sum(conn, name):
    """A per-worker counter of `stats workers`, summed over the workers."""
    st = conn.stats(b"workers")
    return sum(int(v) for k, v in st.items() if k.endswith(":" + name))


def start_fails(seg_extra, **kw):
    """Runs a server that must not start: (exit status, its output)."""
    srv = harness.Server(seg_extra=seg_extra, **kw)
    srv.port = harness.free_port()
    proc = subprocess.run(srv.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, timeout=EXIT_TIMEOUT)
    return proc.returncode, proc.stdout


class SegcachedCase(unittest.TestCase):
    def setUp(self):
        if not harness.is_segcached():
            self.skipTest("segcached's own rules; memcached has none of them")


class PosixOnly(SegcachedCase):
    def setUp(self):
        super().setUp()
        if harness.is_native():
            self.skipTest("files and kernel sockets, the same code on both stacks")


# ---- finding 4: the heap file ------------------------------------------------

class HeapFile(PosixOnly):
    def setUp(self):
        super().setUp()
        # a directory of this test's own (mkdtemp: 0700, ours) on tmpfs
        self.dir = tempfile.mkdtemp(prefix="segcached-sec-", dir="/dev/shm")
        self.heap = os.path.join(self.dir, "heap")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def refused(self, needle, path=None):
        rc, out = start_fails(["--heap-file", path or self.heap], memory_mb=16)
        self.assertEqual(rc, 1, out)
        self.assertIn(needle, out)
        return out

    def test_a_symbolic_link_is_not_followed(self):
        victim = os.path.join(self.dir, "victim")
        with open(victim, "wb") as f:
            f.write(b"precious")
        os.chmod(victim, 0o600)
        os.symlink(victim, self.heap)
        self.refused("is a symbolic link: refused")
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"precious")

    def test_another_users_file_is_refused(self):
        nobody = pwd.getpwnam("nobody")
        with open(self.heap, "wb"):
            pass
        os.chmod(self.heap, 0o600)
        os.chown(self.heap, nobody.pw_uid, nobody.pw_gid)
        self.refused("belongs to uid %d, not to the server's user" % nobody.pw_uid)
        self.assertEqual(os.stat(self.heap).st_size, 0)

    def test_a_file_others_may_read_or_write_is_refused(self):
        for mode in (0o666, 0o640, 0o604):
            with open(self.heap, "wb"):
                pass
            os.chmod(self.heap, mode)
            out = self.refused("has mode %04o" % mode)
            self.assertIn("chmod 600", out)
            self.assertEqual(stat.S_IMODE(os.stat(self.heap).st_mode), mode)
            os.unlink(self.heap)

    def test_a_world_writable_directory_without_sticky_bit_is_refused(self):
        os.chmod(self.dir, 0o777)
        self.refused("which anyone may write and which has no sticky bit")
        self.assertFalse(os.path.exists(self.heap))

    def test_a_new_file_is_0600_and_a_sticky_public_directory_is_warned_about(self):
        os.chmod(self.dir, 0o1777)
        old = os.umask(0)
        try:
            srv = harness.Server(memory_mb=16, seg_extra=["--heap-file", self.heap]).start()
        finally:
            os.umask(old)
        try:
            st = os.stat(self.heap)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
            self.assertEqual(st.st_uid, os.geteuid())
            self.assertIn("which every user may write: another user can create the name "
                          "first", srv.log())
        finally:
            srv.stop_clean("heap file server")

    def test_truncating_the_file_stops_the_server_with_a_message(self):
        srv = harness.Server(memory_mb=16, seg_extra=["--heap-file", self.heap]).start()
        try:
            c = srv.connect()
            for i in range(50):
                self.assertEqual(c.cmd(b"set k%d 0 0 1000\r\n%s\r\n" % (i, b"v" * 1000)),
                                 b"STORED\r\n")
            os.truncate(self.heap, 0)
            # the next read of a value touches a page the file no longer has
            try:
                c.send(b"get k1\r\n")
                c.closed()
            except OSError:
                pass
            c.close()
            rc = srv.wait(timeout=EXIT_TIMEOUT)
        finally:
            srv.kill()
        self.assertEqual(rc, 74, srv.log())
        self.assertIn("heap file %s: reading or writing the mapping failed (SIGBUS" % self.heap,
                      srv.log())


# ---- finding 5 and a smaller one: UDP --------------------------------------------

class Udp(SegcachedCase):
    def setUp(self):
        super().setUp()
        self.srv = harness.Server(udp=True).start()
        self.c = self.srv.connect()

    def tearDown(self):
        self.c.close()
        self.srv.stop_clean("UDP server")

    def test_requests_that_change_an_item_are_refused(self):
        self.assertEqual(self.c.cmd(b"set victim 0 100 5\r\nalive\r\n"), b"STORED\r\n")
        before = worker_sum(self.c, "udp_refused")
        for i, req in enumerate((b"gat -1 victim\r\n", b"gats -1 victim\r\n",
                                 b"mg victim T-1 v\r\n", b"mg victim N30 v\r\n",
                                 b"mg victim R30 v\r\n", b"mg nokey N30 v\r\n")):
            resp, _ = harness.udp_request(self.srv.udp_port, req, 100 + i)
            self.assertEqual(resp, UDP_NO, req)
        self.assertEqual(worker_sum(self.c, "udp_refused") - before, 6)
        # the key is as it was: value and TTL (a reading mg is still served)
        resp, _ = harness.udp_request(self.srv.udp_port, b"mg victim v\r\n", 120)
        self.assertEqual(resp, b"VA 5\r\nalive\r\n")
        ttl = self.c.cmd(b"mg victim t\r\n")
        self.assertRegex(ttl, rb"^HD t(9\d|100)\r\n$")
        self.assertEqual(self.c.cmd(b"mg nokey v\r\n"), b"EN\r\n")

    def test_the_error_line_stays_within_the_reply_cap(self):
        # a first reply just under the 4,096-byte cap, then one over it:
        # the error line must not be added beyond the cap
        small = 4096 - len(b"VALUE a 0 4060\r\n\r\nEND\r\n") - 20
        self.assertEqual(self.c.cmd(b"set a 0 0 %d\r\n%s\r\n" % (small, b"a" * small)),
                         b"STORED\r\n")
        self.assertEqual(self.c.cmd(b"set b 0 0 3000\r\n%s\r\n" % (b"b" * 3000)),
                         b"STORED\r\n")
        resp = harness.udp_collect(self.srv.udp_port, b"get a\r\nget b\r\n", 130)
        self.assertLessEqual(len(resp), 4096)
        self.assertTrue(resp.endswith(b"SERVER_ERROR reply over the UDP size limit\r\n"), resp)


# ---- finding 7: the admin port ------------------------------------------------------

def admin_args(port, *more):
    a = ["--admin-port", str(port)]
    if harness.is_native():
        a += ["--admin-listen", harness.ARGS.server_ip]
    return a + list(more)


class AdminPort(SegcachedCase):
    extra = []

    def setUp(self):
        super().setUp()
        self.admin = ADMIN_PORT_NATIVE if harness.is_native() else harness.free_port()
        self.srv = harness.Server(seg_extra=admin_args(self.admin, *self.extra)).start()

    def tearDown(self):
        self.srv.stop_clean("admin port server")


class AdminCountersOnly(AdminPort):
    def test_what_lists_keys_or_changes_memory_is_refused(self):
        c = self.srv.pymemcache()
        try:
            for i in range(2000):
                c.set("k%d" % i, b"v" * 100, noreply=True)
            self.assertEqual(c.get("k1999"), b"v" * 100)
        finally:
            c.close()
        adm = connect(self.admin)
        try:
            before = worker_sum(adm, "admin_refused")
            items = adm.stats()["curr_items"]
            for req in (b"lru_crawler metadump all\r\n", b"stats cachedump 1 0\r\n",
                        b"stats hotkeys\r\n", b"stats conns\r\n", b"stats reset\r\n",
                        b"cache_memlimit 13\r\n", b"verbosity 1\r\n", b"shutdown\r\n"):
                self.assertEqual(adm.cmd(req), COUNTERS_ONLY, req)
            self.assertEqual(worker_sum(adm, "admin_refused") - before, 8)
            st = adm.stats()
            self.assertEqual(st["curr_items"], items)
            self.assertEqual(st["limit_maxbytes"], str(64 << 20))
            self.assertRegex(adm.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            adm.close()
        self.assertIn("admin port %d on " % self.admin, self.srv.log())
        self.assertIn("counters only", self.srv.log())


class AdminAllCommands(AdminPort):
    extra = ["--admin-commands", "all"]

    def test_all_serves_the_administration_commands(self):
        adm = connect(self.admin)
        try:
            self.assertEqual(adm.cmd(b"verbosity 0\r\n"), b"OK\r\n")
            self.assertEqual(adm.cmd(b"stats cachedump 1 1\r\n"), b"END\r\n")
        finally:
            adm.close()


class AdminPerSource(AdminPort):
    def test_one_address_holds_four(self):
        held = [connect(self.admin) for _ in range(4)]
        try:
            for h in held:
                self.assertRegex(h.cmd(b"version\r\n"), rb"^VERSION ")
            fifth = connect(self.admin)
            try:
                self.assertTrue(fifth.closed())
                self.assertEqual(fifth.buf, TOO_MANY)
            finally:
                fifth.close()
            # another address still gets in
            other = connect(self.admin, src=other_source())
            try:
                self.assertRegex(other.cmd(b"version\r\n"), rb"^VERSION ")
            finally:
                other.close()
        finally:
            for h in held:
                h.close()


class AdminIdle(AdminPort):
    extra = ["--admin-idle-timeout", "1"]

    def test_a_silent_connection_is_closed(self):
        quiet = connect(self.admin)
        try:
            self.assertTrue(quiet.closed())
        finally:
            quiet.close()
        # and one that asks is answered
        adm = connect(self.admin)
        try:
            self.assertRegex(adm.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            adm.close()


class AdminBind(SegcachedCase):
    def test_loopback_whatever_l_says(self):
        if harness.is_native():
            self.skipTest("posix: the native stack's case is below")
        admin = harness.free_port()
        srv = harness.Server(extra=["-l", "127.0.0.1,127.0.0.2"],
                             seg_extra=["--admin-port", str(admin)]).start()
        try:
            connect(srv.port, host="127.0.0.2").close()  # the clients' port is there
            with self.assertRaises(ConnectionRefusedError):
                connect(admin, host="127.0.0.2").close()
            adm = connect(admin, host="127.0.0.1")
            self.assertRegex(adm.cmd(b"version\r\n"), rb"^VERSION ")
            adm.close()
        finally:
            srv.stop_clean("admin bind server")

    def test_native_admin_port_only_where_named(self):
        if not harness.is_native():
            self.skipTest("the native stack has no loopback")
        rc, out = start_fails(["--admin-port", str(ADMIN_PORT_NATIVE)])
        self.assertEqual(rc, 64, out)
        self.assertIn("--admin-listen %s" % harness.ARGS.server_ip, out)


# ---- finding 6 and a smaller one: /metrics ---------------------------------------------

def http(port, request, host="127.0.0.1", src=None):
    """The whole answer to one raw request ('' when closed without one)."""
    s = socket.socket()
    s.settimeout(harness.IO_TIMEOUT)
    if src is not None:
        s.bind((src, 0))
    s.connect((host, port))
    try:
        s.sendall(request)
        data = b""
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                break
            if not d:
                break
            data += d
        return data
    finally:
        s.close()


GET = b"GET /metrics HTTP/1.0\r\n\r\n"


class Metrics(PosixOnly):
    extra = []
    seg = []

    def setUp(self):
        super().setUp()
        self.port = harness.free_port()
        self.srv = harness.Server(extra=self.extra,
                                  seg_extra=["--metrics-port", str(self.port)] + self.seg)
        self.srv.start()

    def tearDown(self):
        self.srv.stop_clean("metrics server")


class MetricsBasics(Metrics):
    extra = ["-l", "127.0.0.1,127.0.0.2"]

    def test_only_the_path_as_sent(self):
        self.assertTrue(http(self.port, GET).startswith(b"HTTP/1.1 200 OK"))
        self.assertTrue(http(self.port, b"GET /metrics%00 HTTP/1.0\r\n\r\n")
                        .startswith(b"HTTP/1.1 404"))
        self.assertTrue(http(self.port, b"GET /metric%73 HTTP/1.0\r\n\r\n")
                        .startswith(b"HTTP/1.1 404"))

    def test_loopback_whatever_l_says(self):
        with self.assertRaises(ConnectionRefusedError):
            http(self.port, GET, host="127.0.0.2")

    def test_four_connections_from_one_address(self):
        held = []
        try:
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(b"GET /metrics HTTP/1.1\r\n")  # a request not finished
                held.append(s)
            self.assertEqual(http(self.port, GET), b"")
            self.assertTrue(http(self.port, GET, src="127.0.0.2").startswith(
                b"HTTP/1.1 200 OK"))
        finally:
            for s in held:
                s.close()

    def test_a_trickling_client_is_cut_off(self):
        """One header byte every second resets an inactivity timeout for
        ever; the connection's whole time is bounded instead."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        closed = False
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            end = time.monotonic() + TRICKLE_FOR
            while time.monotonic() < end and not closed:
                try:
                    s.sendall(b"X")
                    s.settimeout(1.0)
                    closed = s.recv(1) == b""
                except socket.timeout:
                    pass
                except (ConnectionResetError, BrokenPipeError):
                    closed = True
        finally:
            s.close()
        self.assertTrue(closed, "still open after %.0f s of one byte a second" % TRICKLE_FOR)
        self.assertTrue(http(self.port, GET).startswith(b"HTTP/1.1 200 OK"))


class MetricsAllow(Metrics):
    # the harness's own probes come from 127.0.0.1
    seg = ["--allow", "127.0.0.1/32"]

    def test_allow_applies(self):
        self.assertTrue(http(self.port, GET).startswith(b"HTTP/1.1 200 OK"))
        self.assertEqual(http(self.port, GET, src="127.0.0.2"), b"")


# ---- finding 8 and a smaller one: cachedump, the binary protocol --------------------

class Lines(SegcachedCase):
    def setUp(self):
        super().setUp()
        self.srv = harness.Server(seg_extra=["--request-timeout", "0"]).start()

    def tearDown(self):
        self.srv.stop_clean("lines server")

    def test_cachedump_encodes_a_binary_key(self):
        import base64
        evil = b"\r\nEND\r\nSTAT evil 1\r\n"
        b64 = base64.b64encode(evil)
        c = self.srv.connect()
        try:
            self.assertEqual(c.cmd(b"ms %s 1 b\r\nx\r\n" % b64), b"HD\r\n")
            c.send(b"lru_crawler metadump all\r\n")
            dump = c.until(b"END\r\n")
            cls = dump.split(b" cls=")[1].split(b" ")[0]
            c.send(b"stats cachedump %s 0\r\n" % cls)
            lines = c.until(b"END\r\n")
        finally:
            c.close()
        self.assertRegex(lines, rb"^ITEM %s b \[1 b; \d+ s\]\r\nEND\r\n$" % re.escape(b64))

    def test_a_binary_request_is_hung_up_on(self):
        c = self.srv.connect()
        try:
            # a binary get's 24-byte header and key, no newline anywhere
            c.send(struct.pack("!BBHBBHIIQ", 0x80, 0, 1, 0, 0, 0, 1, 0, 0) + b"k")
            self.assertTrue(c.closed())
            self.assertEqual(c.buf, b"")
        finally:
            c.close()
        # the server serves on
        c = self.srv.connect()
        try:
            self.assertRegex(c.cmd(b"version\r\n"), rb"^VERSION ")
        finally:
            c.close()


if __name__ == "__main__":
    unittest.main(argv=harness.setup())
