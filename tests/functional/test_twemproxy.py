#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""twemproxy (nutcracker) in front of two servers on loopback.

Keys written through the proxy must spread over both servers (seen in
each server's own stats and by direct gets), and every get through the
proxy must return what was set.

    test_twemproxy.py --segcached build/app/segcached/segcached
    test_twemproxy.py --target memcached
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import harness

NKEYS = 400


class Twemproxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = shutil.which("nutcracker")
        if cls.tool is None:
            raise RuntimeError("nutcracker not found: install it (tools/install-deps.sh)")
        cls.tmp = tempfile.mkdtemp(prefix="segcached-twemproxy-")
        cls.backends = []
        cls.proxy = None
        try:
            for name in ("a", "b"):
                cls.backends.append(harness.Server(name="backend-" + name).start())
            cls.start_proxy()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def start_proxy(cls):
        last = None
        for _ in range(5):
            cls.port = harness.free_port()
            stats_port = harness.free_port()
            conf = os.path.join(cls.tmp, "nutcracker.yml")
            with open(conf, "w") as f:
                f.write("pool:\n"
                        "  listen: 127.0.0.1:%d\n"
                        "  hash: fnv1a_64\n"
                        "  distribution: ketama\n"
                        "  timeout: 5000\n"
                        "  auto_eject_hosts: false\n"
                        "  servers:\n" % cls.port)
                for i, b in enumerate(cls.backends):
                    f.write("   - 127.0.0.1:%d:1 backend%d\n" % (b.port, i))
            check = subprocess.run([cls.tool, "-t", "-c", conf],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if check.returncode != 0:
                raise RuntimeError("nutcracker -t: %s" % check.stdout.decode())
            cls.logpath = os.path.join(cls.tmp, "nutcracker.log")
            cls.proxy = subprocess.Popen(
                [cls.tool, "-c", conf, "-s", str(stats_port), "-a", "127.0.0.1",
                 "-o", cls.logpath, "-p", os.path.join(cls.tmp, "nutcracker.pid")],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT)
            deadline = time.monotonic() + harness.START_TIMEOUT
            while time.monotonic() < deadline and cls.proxy.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", cls.port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.05)
            last = "nutcracker exited with %s" % cls.proxy.poll()
            cls.stop_proxy()
        raise RuntimeError(last)

    @classmethod
    def stop_proxy(cls):
        if cls.proxy is not None and cls.proxy.poll() is None:
            cls.proxy.kill()
            cls.proxy.wait(timeout=harness.STOP_TIMEOUT)
        cls.proxy = None

    @classmethod
    def tearDownClass(cls):
        cls.stop_proxy()
        for b in cls.backends:
            b.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def client(self):
        from pymemcache.client.base import Client
        return Client(("127.0.0.1", self.port), default_noreply=False,
                      connect_timeout=harness.IO_TIMEOUT, timeout=harness.IO_TIMEOUT)

    def test_keys_spread_and_read_back(self):
        mc = self.client()
        try:
            data = {"tw-%d" % i: ("value-%d-" % i).encode() * (1 + i % 7)
                    for i in range(NKEYS)}
            for k, v in data.items():
                self.assertTrue(mc.set(k, v, expire=0, noreply=False), k)
            for k, v in data.items():
                self.assertEqual(mc.get(k), v, k)
            # Multi-key gets are split across the servers by the proxy.
            keys = list(data)
            for i in range(0, NKEYS, 50):
                self.assertEqual(mc.get_many(keys[i:i + 50]),
                                 {k: data[k] for k in keys[i:i + 50]})
        finally:
            mc.close()

        # Where did the keys go? Each key on exactly one server, and both
        # servers hold a share.
        where = {}
        for i, b in enumerate(self.backends):
            c = b.connect()
            try:
                for k in data:
                    got = c.get(k.encode())
                    if got:
                        self.assertEqual(got[k.encode()][1], data[k])
                        self.assertNotIn(k, where, "key on both servers")
                        where[k] = i
                items = int(c.stats()["curr_items"])
            finally:
                c.close()
            share = sum(1 for v in where.values() if v == i)
            self.assertGreater(share, NKEYS // 10, "server %d holds %d keys" % (i, share))
            self.assertGreaterEqual(items, share)
        self.assertEqual(len(where), NKEYS)

    def test_delete_and_counters_through_proxy(self):
        mc = self.client()
        try:
            for i in range(50):
                k = "cnt-%d" % i
                self.assertTrue(mc.set(k, b"10", noreply=False))
                self.assertEqual(mc.incr(k, i), 10 + i)
                self.assertEqual(mc.decr(k, 5), 5 + i)
                self.assertTrue(mc.delete(k, noreply=False))
                self.assertIsNone(mc.get(k))
        finally:
            mc.close()


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
