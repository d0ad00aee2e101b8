#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""A server on a unix socket (memcached's -s, -a) with real clients:

* pymemcache's own integration tests (pymemcache/test/test_integration.py,
  run by pytest with Client, PooledClient and HashClient) pass over it;
* nutcracker (twemproxy) with two unix-socket servers in its pool: keys set
  through the proxy spread over both and read back exact, directly and
  through it;
* memccapable's ASCII tests pass through a socat pair (TCP on loopback to
  the socket: memccapable has no -s), when socat is installed.

The server listens on the socket only (-s turns TCP and UDP off, as in
memcached), so every reply came over it.

    test_unix_socket.py --segcached build/app/segcached/segcached
    test_unix_socket.py --target memcached
"""

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))


class UnixServer:
    """segcached or memcached listening on a unix socket only."""

    def __init__(self, path, name, mask="700"):
        self.path = path
        self.log_path = path + ".log"
        a = ["-s", path, "-a", mask, "-m", "64", "-t", "2"]
        if harness.is_segcached():
            cmd = [harness.ARGS.segcached, "--no-huge", "--", "--stack", "posix"] + a
        else:
            cmd = [harness.ARGS.memcached] + a
            if os.geteuid() == 0:
                cmd += ["-u", "nobody"]
        self.name = name
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        harness.wait_for("%s on %s" % (name, path), self.answers, timeout=harness.START_TIMEOUT)

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(harness.IO_TIMEOUT)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            raise
        return harness.Conn(s)

    def answers(self):
        if self.proc.poll() is not None:
            raise AssertionError("%s exited with %d:\n%s" % (self.name, self.proc.returncode,
                                                             self.log()))
        try:
            c = self.connect()
        except OSError:
            return False
        try:
            return c.cmd(b"version\r\n").startswith(b"VERSION ")
        finally:
            c.close()

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=harness.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed"


class UnixSocket(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="segcached-unix-")
        os.chmod(cls.tmp, 0o777)  # memcached -u nobody makes its socket here
        cls.servers = []

    @classmethod
    def tearDownClass(cls):
        for s in cls.servers:
            s.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def server(self, name):
        s = UnixServer(os.path.join(self.tmp, name + ".sock"), name)
        self.servers.append(s)
        return s

    def stop(self, s):
        rc = s.stop()
        self.servers.remove(s)
        self.assertEqual(rc, 0, "%s: exit status after SIGTERM\n%s" % (s.name, s.log()))
        if harness.is_segcached():
            self.assertFalse(os.path.exists(s.path), "the socket file is left behind")

    def test_pymemcache_integration(self):
        tests = glob.glob("/usr/lib/python3/dist-packages/pymemcache/test/test_integration.py")
        if not tests:
            raise RuntimeError("pymemcache's tests not found: install python3-pymemcache")
        try:
            import pytest  # noqa: F401
        except ImportError:
            raise RuntimeError("pytest not found: install python3-pytest "
                               "(tools/install-deps.sh)")
        s = self.server("pymemcache")
        env = dict(os.environ, SEGCACHED_UNIX_SOCKET=s.path,
                   PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
        # test_tls needs a TLS server: not this one
        p = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-p", "pymemcache_unix",
                            "-p", "no:cacheprovider", "-q", "-k", "not test_tls",
                            "--server=unix", "--port=0", tests[0]],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, env=env, timeout=600, cwd=self.tmp)
        out = p.stdout.decode(errors="replace")
        self.assertEqual(p.returncode, 0, out + "\n--- server log ---\n" + s.log())
        self.assertRegex(out, r"\b\d{2,} passed\b")
        self.assertNotIn("failed", out)
        c = s.connect()
        try:
            st = c.stats()
        finally:
            c.close()
        # every client connected over the socket
        self.assertGreater(int(st["total_connections"]), 20)
        self.assertGreater(int(st["cmd_set"]), 20)
        self.stop(s)

    def test_nutcracker(self):
        tool = shutil.which("nutcracker")
        if tool is None:
            raise RuntimeError("nutcracker not found: install it (tools/install-deps.sh)")
        backends = [self.server("twem-a"), self.server("twem-b")]
        proxy = None
        for _ in range(5):
            port, stats_port = harness.free_port(), harness.free_port()
            conf = os.path.join(self.tmp, "nutcracker.yml")
            with open(conf, "w") as f:
                f.write("pool:\n  listen: 127.0.0.1:%d\n  hash: fnv1a_64\n"
                        "  distribution: ketama\n  timeout: 5000\n"
                        "  auto_eject_hosts: false\n  servers:\n" % port)
                for i, b in enumerate(backends):
                    f.write("   - %s:1 backend%d\n" % (b.path, i))
            proxy = subprocess.Popen([tool, "-c", conf, "-s", str(stats_port), "-a", "127.0.0.1",
                                      "-o", os.path.join(self.tmp, "nutcracker.log")],
                                     stdin=subprocess.DEVNULL)
            try:
                harness.wait_for("nutcracker", lambda: proxy.poll() is not None or
                                 _connects(port), timeout=30)
            except AssertionError:
                pass
            if proxy.poll() is None and _connects(port):
                break
            proxy.kill()
            proxy.wait()
            proxy = None
        self.assertIsNotNone(proxy, "nutcracker did not start")
        try:
            from pymemcache.client.base import Client
            mc = Client(("127.0.0.1", port), connect_timeout=harness.IO_TIMEOUT,
                        timeout=harness.IO_TIMEOUT, default_noreply=False)
            keys = ["k%d" % i for i in range(300)]
            for k in keys:
                self.assertTrue(mc.set(k, ("v-" + k).encode()), k)
            for k in keys:
                self.assertEqual(mc.get(k), ("v-" + k).encode(), k)
            mc.close()
        finally:
            proxy.send_signal(signal.SIGTERM)
            proxy.wait(timeout=harness.STOP_TIMEOUT)
        # both servers hold some, and together all, each read directly
        held = []
        for b in backends:
            c = b.connect()
            try:
                got = sum(1 for k in keys if c.get(k.encode()).get(k.encode()) is not None)
            finally:
                c.close()
            held.append(got)
        self.assertTrue(all(n > 0 for n in held), held)
        self.assertEqual(sum(held), len(keys), held)
        for b in backends:
            self.stop(b)

    def test_memccapable_through_socat(self):
        socat = shutil.which("socat")
        tool = shutil.which("memccapable") or shutil.which("memcapable")
        if socat is None:
            self.skipTest("socat not installed (tools/install-deps.sh installs it)")
        if tool is None:
            raise RuntimeError("memccapable not found: install libmemcached-tools")
        s = self.server("memccapable")
        port = harness.free_port()
        relay = subprocess.Popen([socat, "TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr" % port,
                                  "UNIX-CONNECT:" + s.path], stdin=subprocess.DEVNULL)
        try:
            harness.wait_for("socat", lambda: _connects(port), timeout=30)
            p = subprocess.run([tool, "-a", "-t", "10", "-h", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=600)
        finally:
            relay.send_signal(signal.SIGTERM)
            relay.wait(timeout=harness.STOP_TIMEOUT)
        out = p.stdout.decode(errors="replace")
        lines = [ln for ln in out.splitlines() if ln.startswith("ascii ")]
        failed = [ln for ln in lines if not ln.rstrip().endswith("[pass]")]
        self.assertTrue(p.returncode == 0 and "All tests passed" in out and lines and
                        not failed, out + "\n--- server log ---\n" + s.log())
        self.stop(s)

    def test_stale_socket_file_and_live_server(self):
        if not harness.is_segcached():
            self.skipTest("segcached's start-up messages")
        path = os.path.join(self.tmp, "stale.sock")
        # a socket file nobody listens on (a server killed with -9) is replaced
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dead.bind(path)
        dead.close()
        s = self.server("stale")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o700)
        # a second server on the live one's path is refused, saying why
        p = subprocess.run([harness.ARGS.segcached, "--no-huge", "--", "-s", path, "-m", "16",
                            "-t", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=60)
        self.assertEqual(p.returncode, 71, p.stdout.decode())
        self.assertIn("another server listens on it", p.stdout.decode())
        self.assertTrue(s.answers())
        # a path that is no socket is never removed
        plain = os.path.join(self.tmp, "plain")
        with open(plain, "w") as f:
            f.write("keep")
        p = subprocess.run([harness.ARGS.segcached, "--no-huge", "--", "-s", plain, "-m", "16",
                            "-t", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=60)
        self.assertEqual(p.returncode, 71, p.stdout.decode())
        self.assertIn("exists and is not a socket", p.stdout.decode())
        with open(plain) as f:
            self.assertEqual(f.read(), "keep")
        self.stop(s)


def _connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
