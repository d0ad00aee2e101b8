#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Every option of `memcached -h` (memcached 1.6.18), short and long,
through segcached on memcached's own kind of command line (no `--`):
each one works with memcached's meaning (checked through the server it
started), starts with exactly one "ignored: " line naming it, or is
refused with exit 64 and its reason; and none of their values reaches
the DPDK EAL, whose letters -n, -r, -s, -S mean other things (the EAL
options segcached starts with, logged at -v, hold none of them; a
refused option starts no EAL at all). The options are read from the
installed memcached's -h, so an option it has and this test does not know
fails the test.

    test_memcached_cli.py --segcached build/app/segcached/segcached
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import harness

EX_USAGE = 64


def memcached_help():
    """(short letters with their long names, -o suboptions) from memcached -h."""
    memcached = shutil.which("memcached")
    if memcached is None:
        raise RuntimeError("memcached not found: install it (tools/install-deps.sh)")
    out = subprocess.run([memcached, "-h"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=30).stdout.decode()
    opts, subs = {}, set()
    for line in out.splitlines():
        m = re.match(r"^-(\w)(?:,?\s+--([\w-]+))?", line)
        if m:
            opts[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^   - (\w+):", line)
        if m:
            subs.add(m.group(1))
    return opts, subs


class Run:
    """One segcached start: the process, its port or socket, its log."""

    def __init__(self, args, tmp, unix=None):
        self.tmp = tmp
        self.unix = unix
        self.port = harness.free_port()
        self.log_path = os.path.join(tmp, "server.log")
        base = ["-l", "127.0.0.1", "-p", str(self.port), "-m", "16", "-t", "1", "-v"]
        self.argv = [harness.ARGS.segcached] + base + list(args)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def connect(self):
        if self.unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(harness.IO_TIMEOUT)
            s.connect(self.unix)
        else:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=harness.IO_TIMEOUT)
        return harness.Conn(s)

    def wait_ready(self):
        """Waits until it answers `version`; None, or why it did not."""
        deadline = time.monotonic() + harness.START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited with %d" % self.proc.returncode
            try:
                c = self.connect()
                try:
                    if c.cmd(b"version\r\n").startswith(b"VERSION "):
                        return None
                finally:
                    c.close()
            except (OSError, EOFError):
                pass
            time.sleep(0.05)
        return "not answering"

    def finish(self):
        """Exit status (0 for a clean stop), for the caller to check;
        then the log is complete."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=harness.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed"

    def eal_words(self):
        m = re.search(r"segcached: EAL options: (.*)", self.log())
        return m.group(1).split() if m else None


def stat(c, arg, name):
    """One stats line's value, as bytes (None when it has no such line)."""
    v = c.stats(arg).get(name)
    return None if v is None else v.encode()


class MemcachedCommandLine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not harness.is_segcached():
            raise unittest.SkipTest("segcached's command line")
        cls.opts, cls.subs = memcached_help()
        cls.tmp = tempfile.mkdtemp(prefix="segcached-cli-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # The three outcomes. -----------------------------------------------

    def check_eal_clean(self, r, args):
        """The EAL got only the host's defaults: no memcached letter but -l
        (the CPU list) and -m (the posix stack's 8 MiB), no value given."""
        words = r.eal_words()
        self.assertIsNotNone(words, "no EAL options line at -v:\n" + r.log())
        for i, w in enumerate(words):
            if re.fullmatch(r"-\w", w):
                self.assertIn(w, ("-l", "-m"), "%r put %s in the EAL options %r" %
                              (args, w, words))
        given = [a for a in args if not a.startswith("-")]
        given += [a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a]
        for v in given:
            self.assertNotIn(v, words, "%r: the value %r reached the EAL %r" %
                             (args, v, words))

    def works(self, args, check=None, unix=None):
        """Starts with args, has check(run, conn) pass, stops with 0."""
        r = Run(args, self.tmp, unix=unix)
        try:
            why = r.wait_ready()
            self.assertIsNone(why, "%r: %s\n%s" % (args, why, r.log()))
            self.check_eal_clean(r, args)
            self.assertNotIn("ignored:", r.log(), "%r" % (args,))
            if check is not None:
                c = r.connect()
                try:
                    check(r, c)
                finally:
                    c.close()
        finally:
            rc = r.finish()
        self.assertEqual(rc, 0, "%r: exit status after SIGTERM\n%s" % (args, r.log()))
        return r

    def ignored(self, args, name):
        """Starts and serves, with exactly one "ignored: NAME" line."""
        r = Run(args, self.tmp)
        try:
            why = r.wait_ready()
            self.assertIsNone(why, "%r: %s\n%s" % (args, why, r.log()))
            self.check_eal_clean(r, args)
            lines = [l for l in r.log().splitlines() if "segcached: ignored: " in l]
            self.assertEqual(len([l for l in lines if ("ignored: " + name) in l]), 1,
                             "%r: want one 'ignored: %s' line:\n%s" % (args, name, r.log()))
            self.assertEqual(len(lines), 1, "%r: %r" % (args, lines))
            self.assertTrue(re.search(r"ignored: %s: \w" % re.escape(name), lines[0]),
                            "no reason in %r" % lines[0])
        finally:
            rc = r.finish()
        self.assertEqual(rc, 0, "%r\n%s" % (args, r.log()))

    def refused(self, args, *reason):
        """Exits 64 before the EAL starts, with the reason and no hint to
        hand the value to the EAL."""
        p = subprocess.run([harness.ARGS.segcached, "-p", "0", "-U", "0"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=60)
        # -p 0 -U 0 alone is a usage error too; the reason tells them apart
        err = p.stderr.decode()
        self.assertEqual(p.returncode, EX_USAGE, "%r: %s" % (args, err))
        for w in reason:
            self.assertIn(w, err, "%r" % (args,))
        self.assertNotIn("EAL:", err + p.stdout.decode(), "%r started the EAL" % (args,))
        self.assertNotIn("--eal", err, "%r: a hint sends it to the EAL" % (args,))

    def forms(self, letter, value=None):
        """The short and the long form of one of memcached's options."""
        out = [["-" + letter] + ([value] if value is not None else [])]
        long = self.opts.get(letter)
        if long:
            out.append(["--%s=%s" % (long, value)] if value is not None else ["--" + long])
        return out

    # Every letter. -----------------------------------------------------

    def test_every_option_is_covered(self):
        handled = set("pUsaAldrumMckvhiVPfnLDtRCbBISFXWYeZoN")
        self.assertEqual(set(self.opts), handled,
                         "memcached -h has options this test does not check")

    def test_works(self):
        sock = os.path.join(self.tmp, "mc.sock")
        heap = os.path.join(self.tmp, "heap")
        udp_port = harness.free_port(udp_too=True)

        def settings(name, want):
            return lambda r, c: self.assertEqual(stat(c, b"settings", name), want, name)

        def udp(r, c):
            reply, _ = harness.udp_request(udp_port, b"version\r\n")
            self.assertTrue(reply.startswith(b"VERSION "), reply)

        def shutdown(r, c):
            c.send(b"shutdown\r\n")
            self.assertEqual(r.proc.wait(timeout=harness.STOP_TIMEOUT), 0)

        def core(r, c):
            with open("/proc/%d/limits" % r.proc.pid) as f:
                line = [l for l in f if l.startswith("Max core file size")][0]
            with open("/proc/self/limits") as f:
                hard = [l for l in f if l.startswith("Max core file size")][0].split()[5]
            self.assertEqual(line.split()[4], hard, line)  # soft raised to the hard

        def locked(r, c):
            with open("/proc/%d/status" % r.proc.pid) as f:
                kib = int([l for l in f if l.startswith("VmLck:")][0].split()[1])
            self.assertGreaterEqual(kib, 8 << 10, "VmLck %d kB" % kib)  # the heap's MiBs

        def no_flush(r, c):
            self.assertTrue(c.cmd(b"flush_all\r\n").startswith(b"CLIENT_ERROR"))

        def no_dumps(r, c):
            self.assertEqual(c.cmd(b"stats cachedump 1 1\r\n"),
                             b"CLIENT_ERROR stats cachedump not allowed\r\n")
            self.assertEqual(c.cmd(b"lru_crawler metadump all\r\n"),
                             b"ERROR metadump not allowed\r\n")
            self.assertEqual(stat(c, b"settings", "dump_enabled"), b"no")

        def unix(r, c):
            self.assertEqual(os.stat(sock).st_mode & 0o777, 0o770)
            self.assertEqual(c.cmd(b"set k 0 0 1\r\nv\r\n"), b"STORED\r\n")
            self.assertEqual(stat(c, b"settings", "domain_socket"), sock.encode())
            self.assertEqual(stat(c, b"settings", "umask"), b"770")
            # -s disables the network, as in memcached
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", r.port), timeout=2).close()

        def capped(r, c):
            c.send(b"get k\r\n" * 200)
            for _ in range(200):
                self.assertEqual(c.line(), b"END\r\n")
            # a client that sends its requests and shuts down its side
            # still has every one answered, turn after turn
            d = r.connect()
            d.send(b"set k 0 0 1\r\nv\r\n" + b"get k\r\n" * 500)
            d.sock.shutdown(socket.SHUT_WR)
            self.assertTrue(d.closed())
            self.assertEqual(d.buf, b"STORED\r\n" + b"VALUE k 0 1\r\nv\r\nEND\r\n" * 500)
            d.close()
            self.assertGreaterEqual(int(stat(c, b"", "conn_yields")), 200 // 20 - 1)
            self.assertEqual(stat(c, b"settings", "reqs_per_event"), b"20")

        def big_item(r, c):
            v = b"x" * (2 << 20)
            self.assertEqual(c.cmd(b"set big 0 0 %d\r\n%s\r\n" % (len(v), v)), b"STORED\r\n")

        def heap_file(r, c):
            self.assertGreater(os.path.getsize(heap), 0)

        cases = {
            "p": ([], None),  # every run has -p
            "l": ([], None),  # and -l 127.0.0.1
            "U": (["-U", str(udp_port)], udp),
            "A": (["-A"], shutdown),
            "r": (["-r"], core),
            "m": ([], settings("maxbytes", b"16777216")),
            "M": (["-M"], settings("evictions", b"off")),
            "c": (["-c", "77"], settings("maxconns", b"77")),
            "k": (["-k"], locked),
            "t": (["-t", "2"], settings("num_threads", b"2")),
            "R": (["-R", "20"], capped),
            "C": (["-C"], settings("cas_enabled", b"no")),
            "b": (["-b", "77"], settings("tcp_backlog", b"77")),
            "B": (["-B", "ascii"], settings("binding_protocol", b"ascii")),
            "I": (["-I", "4m"], big_item),
            "F": (["-F"], no_flush),
            "X": (["-X"], no_dumps),
        }
        for letter, (args, check) in cases.items():
            if not args:
                self.works(args, check)
                continue
            value = args[1] if len(args) > 1 else None
            for form in self.forms(letter, value):
                with self.subTest(option=form):
                    if letter == "I":
                        form = form + ["-m", "64"]
                    self.works(form, check)
        for form in self.forms("s", sock):
            with self.subTest(option=form):
                self.works(form + ["-a", "770"], unix, unix=sock)
                self.assertFalse(os.path.exists(sock), "the socket file is left")
        for form in self.forms("a", "770"):
            with self.subTest(option=form):
                self.works(["-s", sock] + form, unix, unix=sock)
        for form in self.forms("e", heap):
            with self.subTest(option=form):
                self.works(form, heap_file)
                os.unlink(heap)
        # -v, -vv, -vvv: the verbosity
        for form, level in ((["-v"], b"1"), (["-vv"], b"2"), (["-vvv"], b"3"),
                            (["--verbose", "--verbose"], b"2")):
            with self.subTest(option=form):
                # Run adds one -v of its own (for the EAL line)
                want = min(int(level) + 1, 3)
                self.works(form, settings("verbosity", str(want).encode()))

    def test_answers_and_exits(self):
        for letter, want in (("h", "Usage:"), ("V", "segcached "), ("i", "BSD-3-Clause")):
            for form in self.forms(letter):
                with self.subTest(option=form):
                    p = subprocess.run([harness.ARGS.segcached] + form, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr.decode())
                    self.assertIn(want, p.stdout.decode())
                    self.assertNotIn("EAL:", p.stdout.decode() + p.stderr.decode())

    def test_ignored(self):
        for letter, value, name in (("f", "1.25", "-f 1.25"), ("n", "48", "-n 48"),
                                    ("L", None, "-L"), ("D", ":", "-D :"),
                                    ("W", None, "-W"), ("N", "2", "-N 2")):
            for form in self.forms(letter, value):
                with self.subTest(option=form):
                    self.ignored(form, name)

    def test_refused(self):
        cases = (
            ("S", None, ["SASL", "binary protocol"]),
            ("Y", os.path.join(self.tmp, "auth"), ["ascii authentication is not supported"]),
            ("Z", None, ["TLS is not supported"]),
            ("d", None, ["no daemon mode", "systemd"]),
            ("u", "nobody", ["does not switch users", "User="]),
            ("P", os.path.join(self.tmp, "pid"), ["no pid file", "MainPID"]),
        )
        for letter, value, reason in cases:
            for form in self.forms(letter, value):
                with self.subTest(option=form):
                    self.refused(form, *reason)
        for proto in ("binary", "auto"):
            for form in self.forms("B", proto):
                with self.subTest(option=form):
                    self.refused(form, "ascii protocol only")
        # -s on the native stack: no kernel sockets to put it on
        self.refused(["-s", os.path.join(self.tmp, "x.sock"), "--stack", "native",
                      "--ip", "198.18.0.2/24"], "--unix-socket needs --stack posix")

    # -o's suboptions. --------------------------------------------------

    WORKING_SUBS = {"hashpower": ("16", "hashpower_init", b"16"),
                    "idle_timeout": ("5", "idle_timeout", b"5"),
                    "no_hashexpand": (None, "hash_grow_max", b"1"),
                    "maxconns_fast": (None, None, None)}

    def test_suboptions(self):
        refused = {s for s in self.subs if s.startswith(("ext_", "ssl_"))}
        ignored = self.subs - refused - set(self.WORKING_SUBS)
        self.assertTrue(set(self.WORKING_SUBS) <= self.subs)
        for sub, (value, name, want) in self.WORKING_SUBS.items():
            arg = sub if value is None else "%s=%s" % (sub, value)
            for form in (["-o", arg], ["--extended=" + arg]):
                with self.subTest(option=form):
                    self.works(form, None if name is None else
                               (lambda r, c, name=name, want=want:
                                self.assertEqual(stat(c, b"settings", name), want)))
        for sub in sorted(ignored):
            with self.subTest(suboption=sub):
                self.ignored(["-o", sub], "-o " + sub)
        for sub in sorted(refused):
            with self.subTest(suboption=sub):
                self.refused(["-o", sub + "=1"],
                             "extstore" if sub.startswith("ext_") else "TLS is not supported")

    def test_vv_traces(self):
        """-vv (and `verbosity 2` on a server started without it) logs
        memcached's per-connection and per-command lines, in order."""
        for start, first in ((["-v"], None), ([], b"verbosity 2\r\n")):
            r = Run(start + (["-v"] if first is None else []), self.tmp)
            try:
                self.assertIsNone(r.wait_ready(), r.log())
                c = r.connect()
                if first is not None:
                    self.assertEqual(c.cmd(first), b"OK\r\n")
                self.assertEqual(c.cmd(b"set foo 0 0 3\r\nbar\r\n"), b"STORED\r\n")
                self.assertEqual(c.get(b"foo"), {b"foo": (0, b"bar", None)})
                self.assertEqual(c.get(b"nope"), {})
                c.send(b"quit\r\n")
                self.assertTrue(c.closed())
                c.close()
                harness.wait_for("the close traced",
                                 lambda: "connection closed." in r.log(), timeout=30)
            finally:
                self.assertEqual(r.finish(), 0, r.log())
            lines = [l.split("Z ", 1)[1] for l in r.log().splitlines()
                     if re.match(r"\S+Z [<>]?\d+[: ]", l)]
            # the connection that set foo (wait_ready's probes are others)
            fd = re.match(r"<(\d+) set foo", [l for l in lines if " set foo" in l][0]).group(1)
            mine = [l for l in lines if re.match(r"[<>]?%s[: ]" % fd, l)]
            want = ["<%s set foo 0 0 3" % fd, ">%s STORED" % fd, "<%s get foo" % fd,
                    ">%s sending key foo" % fd, ">%s END" % fd, "<%s get nope" % fd,
                    ">%s END" % fd, "<%s quit" % fd, "<%s connection closed." % fd]
            if first is None:
                want = ["<%s new auto-negotiating client connection" % fd,
                        "%s: Client using the ascii protocol" % fd] + want
            else:
                # traced from the reply of the command that turned it on
                want = [">%s OK" % fd, "%s: Client using the ascii protocol" % fd] + want
            start = len(mine) - 1 - mine[::-1].index(want[0])
            self.assertEqual(mine[start:], want, "\n".join(lines))

    def test_port_held_by_memcached_is_named(self):
        """Debian's memcached.service holds 11211: the error names the
        process and how to stop the service (a memcached on a free port
        here stands for it)."""
        port = harness.free_port()
        cmd = [shutil.which("memcached"), "-p", str(port), "-l", "127.0.0.1", "-U", "0"]
        if os.geteuid() == 0:
            cmd += ["-u", "nobody"]
        mc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        try:
            harness.wait_for("memcached", lambda: _connects(port), timeout=30)
            p = subprocess.run([harness.ARGS.segcached, "-l", "127.0.0.1", "-p", str(port),
                                "-m", "16", "-t", "1"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
        finally:
            mc.terminate()
            mc.wait(timeout=harness.STOP_TIMEOUT)
        out = p.stdout.decode()
        self.assertEqual(p.returncode, 71, out)
        self.assertIn("Address already in use (memcached (pid %d) has it" % mc.pid, out)
        self.assertIn("systemctl disable --now memcached", out)

    def test_eal_hint_only_for_letters_memcached_lacks(self):
        # -x is no memcached option: maybe an EAL one, and the hint says so
        p = subprocess.run([harness.ARGS.segcached, "-x", "1"], stderr=subprocess.PIPE,
                           stdout=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, EX_USAGE)
        self.assertIn("--eal '-x ...'", p.stderr.decode())


def _connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
