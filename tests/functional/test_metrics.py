#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""GET /metrics on --metrics-port (issue 22), on either stack:

* the page parses with python3-prometheus-client's text parser, every
  family has its HELP and TYPE, counters end in _total, no name twice;
* memcached's figures carry memcached_exporter's names and move exactly
  as the test's traffic moves them (hits, misses, sets, deletes, incr,
  bytes read, items), and agree with `stats`;
* the network stack's own counters are there beside them (the native
  stack's drops, tcp_no_buffers, retransmissions, the port's imissed, the
  link);
* other paths get 404, other methods 405; a --metrics-port that is the
  client port, or one in use, stops the start with a message (posix);
* the log: every line starts with its UTC timestamp, and runtime events
  (connections refused at -c or at --max-conns-per-source, stores refused
  on a full heap) are logged, at most once per kind per 10 s
  (UTIL_RATELIMIT_EVENT_S), the line saying how many it stands for.

    tests/functional/test_metrics.py --segcached build/app/segcached/segcached
    run_native.py --segcached build/app/segcached/segcached test_metrics.py

The endpoint is on kernel sockets at the -l host (127.0.0.1): on the
native stack that is the server namespace's loopback, so the scrapes run
there (ip netns exec) while the memcached traffic goes over the DPDK port.
"""

import math
import os
import re
import socket
import subprocess
import sys
import time
import unittest

import harness

from prometheus_client.parser import text_string_to_metric_families

METRICS_PORT_NATIVE = 9150  # the server namespace is the test's own
SCRAPE_TIMEOUT = 10

# Fetches a URL with a method; prints the status line, then the body.
SCRAPER = r"""
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2])
try:
    with urllib.request.urlopen(req, timeout=%d) as r:
        status, ctype, body = r.status, r.headers.get("Content-Type", ""), r.read()
except urllib.error.HTTPError as e:
    status, ctype, body = e.code, e.headers.get("Content-Type", ""), e.read()
sys.stdout.write("%%d %%s\n" %% (status, ctype))
sys.stdout.write(body.decode())
""" % SCRAPE_TIMEOUT

# Families that must be there on both stacks, memcached_exporter's first.
COMMON_FAMILIES = [
    "memcached_up", "memcached_uptime_seconds", "memcached_version",
    "memcached_commands", "memcached_current_items", "memcached_current_bytes",
    "memcached_limit_bytes", "memcached_items", "memcached_items_evicted",
    "memcached_items_reclaimed", "memcached_read_bytes", "memcached_written_bytes",
    "memcached_current_connections", "memcached_max_connections",
    "memcached_connections", "memcached_connections_rejected",
    "memcached_process_user_cpu_seconds", "memcached_process_system_cpu_seconds",
    "segcached_engine_set_no_memory", "segcached_engine_get_expired",
    "segcached_conns_rejected", "segcached_conns_refused_per_source",
    "segcached_malloc_bytes_in_use",
]
NATIVE_FAMILIES = [
    "segcached_tcp_no_buffers", "segcached_tcp_conn_table_full",
    "segcached_tcp_retransmits", "segcached_nic_imissed", "segcached_nic_rx_nombuf",
    "segcached_mempool_empty", "segcached_drop_ip_bad_cksum", "segcached_link_up",
    "segcached_mbufs_available", "segcached_tcp_buffer_bytes_in_use",
]


def scrape_raw(port, path="/metrics", method="GET"):
    """(status, content type, body) of one request to the server's endpoint."""
    url = "http://127.0.0.1:%d%s" % (port, path)
    cmd = ["/usr/bin/python3", "-c", SCRAPER, url, method]
    if harness.is_native():
        cmd = ["ip", "netns", "exec", harness.ARGS.server_netns] + cmd
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=SCRAPE_TIMEOUT * 3)
    if out.returncode != 0:
        raise AssertionError("scrape of %s failed: %s" % (url, out.stderr))
    head, _, body = out.stdout.partition("\n")
    status, _, ctype = head.partition(" ")
    return int(status), ctype, body


def scrape(port):
    """{family name: family} of the page, checked for the format's rules."""
    status, ctype, body = scrape_raw(port)
    assert status == 200, (status, body)
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    families = {}
    for fam in text_string_to_metric_families(body):
        assert fam.name not in families, "family %s twice" % fam.name
        families[fam.name] = fam
    return families


def value(families, name, **labels):
    """The value of the sample `name` (with these labels)."""
    for fam in families.values():
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise AssertionError("no sample %s%s" % (name, labels or ""))


def stats(srv):
    c = srv.connect()
    try:
        c.send(b"stats\r\n")
        lines = c.until(b"END\r\n").decode().split("\r\n")
    finally:
        c.close()
    return {p[1]: p[2] for p in (l.split(" ", 2) for l in lines) if len(p) == 3}


class Metrics(unittest.TestCase):
    srv = None
    port = None

    @classmethod
    def setUpClass(cls):
        if not harness.is_segcached():
            raise unittest.SkipTest("--metrics-port is segcached's own")
        cls.port = METRICS_PORT_NATIVE if harness.is_native() else harness.free_port()
        cls.srv = harness.Server(seg_extra=["--metrics-port", str(cls.port)]).start()

    @classmethod
    def tearDownClass(cls):
        if cls.srv is not None:
            cls.srv.stop_clean("metrics server")

    def test_format(self):
        fams = scrape(self.port)
        expected = COMMON_FAMILIES + (NATIVE_FAMILIES if harness.is_native() else [])
        for name in expected:
            self.assertIn(name, fams)
        for name, fam in fams.items():
            self.assertIn(fam.type, ("counter", "gauge"), name)
            self.assertTrue(fam.documentation, "%s has no HELP" % name)
            for s in fam.samples:
                # a counter's samples are NAME_total, a gauge's NAME
                self.assertEqual(s.name, name + "_total" if fam.type == "counter" else name)
                self.assertGreaterEqual(s.value, 0, s.name)
        self.assertEqual(value(fams, "memcached_up"), 1)
        self.assertEqual(value(fams, "memcached_limit_bytes"), self.srv.memory_mb << 20)
        if harness.is_native():
            self.assertEqual(value(fams, "segcached_link_up"), 1)

    def test_counters_follow_traffic(self):
        before = scrape(self.port)
        c = self.srv.connect()
        sent = 0
        try:
            def req(data, terminator=b"\r\n"):
                nonlocal sent
                sent += len(data)
                c.send(data)
                return c.until(terminator)
            for i in range(5):
                self.assertEqual(req(b"set mk%d 0 0 2\r\nv%d\r\n" % (i, i)), b"STORED\r\n")
            for i in range(3):
                self.assertIn(b"VALUE", req(b"get mk%d\r\n" % i, b"END\r\n"))
            for i in range(2):
                self.assertEqual(req(b"get mk-absent%d\r\n" % i, b"END\r\n"), b"END\r\n")
            self.assertEqual(req(b"delete mk4\r\n"), b"DELETED\r\n")
            self.assertEqual(req(b"delete mk-absent\r\n"), b"NOT_FOUND\r\n")
            self.assertEqual(req(b"set mn 0 0 1\r\n7\r\n"), b"STORED\r\n")
            self.assertEqual(req(b"incr mn 5\r\n"), b"12\r\n")
            self.assertEqual(req(b"incr mn-absent 5\r\n"), b"NOT_FOUND\r\n")
            self.assertEqual(req(b"touch mk0 100\r\n"), b"TOUCHED\r\n")
        finally:
            c.close()
        after = scrape(self.port)

        def moved(name, **labels):
            return value(after, name, **labels) - value(before, name, **labels)
        cmds = "memcached_commands_total"
        self.assertEqual(moved(cmds, command="get", status="hit"), 3)
        self.assertEqual(moved(cmds, command="get", status="miss"), 2)
        self.assertEqual(moved(cmds, command="set", status="hit"), 6)
        self.assertEqual(moved(cmds, command="delete", status="hit"), 1)
        self.assertEqual(moved(cmds, command="delete", status="miss"), 1)
        self.assertEqual(moved(cmds, command="incr", status="hit"), 1)
        self.assertEqual(moved(cmds, command="incr", status="miss"), 1)
        self.assertEqual(moved(cmds, command="touch", status="hit"), 1)
        self.assertEqual(moved(cmds, command="cas", status="hit"), 0)
        self.assertEqual(moved("memcached_items_total"), 6)
        self.assertEqual(moved("memcached_current_items"), 5)  # 6 stored, 1 deleted
        self.assertEqual(moved("segcached_engine_get_hits_total"), 3)
        self.assertEqual(moved("memcached_connections_total"), 1)
        self.assertEqual(moved("memcached_read_bytes_total"), sent)
        self.assertEqual(moved("segcached_bytes_read_total"), sent)
        # the same figures as `stats`, the scrape before it and after
        st = stats(self.srv)
        self.assertEqual(int(st["get_hits"]),
                         value(after, cmds, command="get", status="hit"))
        self.assertEqual(int(st["get_misses"]),
                         value(after, cmds, command="get", status="miss"))
        self.assertEqual(int(st["curr_items"]), value(after, "memcached_current_items"))

    def test_stats_reset_does_not_move_counters_back(self):
        c = self.srv.connect()
        try:
            c.send(b"get mk-reset\r\n")
            c.until(b"END\r\n")
            before = value(scrape(self.port), "memcached_commands_total",
                           command="get", status="miss")
            self.assertGreaterEqual(before, 1)
            self.assertEqual(c.cmd(b"stats reset\r\n"), b"RESET\r\n")
        finally:
            c.close()
        self.assertEqual(value(scrape(self.port), "memcached_commands_total",
                               command="get", status="miss"), before)

    def test_other_paths_and_methods(self):
        status, _, body = scrape_raw(self.port, "/")
        self.assertEqual(status, 404)
        self.assertIn("/metrics", body)
        status, _, _ = scrape_raw(self.port, "/metrics", "POST")
        self.assertEqual(status, 405)
        status, _, body = scrape_raw(self.port, "/metrics", "HEAD")
        self.assertEqual((status, body), (200, ""))


class MetricsLibraryOnlyWhenAsked(unittest.TestCase):
    """libmicrohttpd (and GnuTLS, p11-kit, which it brings, 3 MiB of RSS)
    is loaded only by a server given --metrics-port."""

    def setUp(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("posix segcached only")

    def mapped(self, srv):
        with open("/proc/%d/maps" % srv.proc.pid) as f:
            return f.read()

    def test_not_loaded_without_the_option(self):
        with harness.Server() as srv:
            maps = self.mapped(srv)
            self.assertNotIn("libmicrohttpd", maps)
            self.assertNotIn("libgnutls", maps)
            srv.stop_clean("server without --metrics-port")

    def test_loaded_with_it(self):
        port = harness.free_port()
        with harness.Server(seg_extra=["--metrics-port", str(port)]) as srv:
            self.assertIn("libmicrohttpd", self.mapped(srv))
            self.assertEqual(value(scrape(port), "memcached_up"), 1)
            srv.stop_clean("server with --metrics-port")


class MetricsStartErrors(unittest.TestCase):
    """A --metrics-port that cannot be served stops the start (posix: the
    port's host is this test's own loopback)."""

    def setUp(self):
        if not harness.is_segcached() or harness.is_native():
            self.skipTest("posix segcached only")

    def start_fails(self, extra):
        srv = harness.Server(seg_extra=extra)
        srv.port = harness.free_port()
        proc = subprocess.run(srv.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, timeout=60)
        return proc.returncode, proc.stdout, srv.port

    def test_the_client_port_is_refused(self):
        port = harness.free_port()
        rc, out, _ = self.start_fails(["--metrics-port", str(port), "-p", str(port)])
        self.assertEqual(rc, 64, out)
        self.assertIn("--metrics-port %d is the client (-p) port" % port, out)

    def test_the_config_file_key(self):
        port = harness.free_port()
        path = os.path.join(harness.tempfile.mkdtemp(prefix="segcached-test-"), "m.ini")
        with open(path, "w") as f:
            f.write("[segcached]\nmetrics-port = %d\n" % port)
        with harness.Server(seg_extra=["--config", path]) as srv:
            fams = scrape(port)
            self.assertEqual(value(fams, "memcached_up"), 1)
            srv.stop_clean("config server")

    def test_a_port_in_use_stops_the_start(self):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        try:
            rc, out, _ = self.start_fails(["--metrics-port", str(port)])
        finally:
            holder.close()
        self.assertEqual(rc, 71, out)
        self.assertIn("--metrics-port: cannot listen on 127.0.0.1:%d" % port, out)
        self.assertIn("give --metrics-port another port", out)


STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S")
EVENT_INTERVAL_S = 10  # UTIL_RATELIMIT_EVENT_S
REFUSALS = 12


def open_served(srv):
    """A connection the server serves (answers `version` on), or None: a
    refused one gets an error line or a reset instead."""
    try:
        c = srv.connect()
        if c.cmd(b"version\r\n").startswith(b"VERSION "):
            return c
        c.close()
    except (OSError, EOFError):
        pass
    return None


def refused(srv):
    """Connects and reads until the server closes: True when it was a
    refusal (an error line, a reset or a close before any answer)."""
    try:
        c = srv.connect()
    except OSError:
        return True
    try:
        c.send(b"version\r\n")
        return not c.line().startswith(b"VERSION ")
    except (OSError, EOFError):
        return True
    finally:
        c.close()


class RuntimeEventLog(unittest.TestCase):
    def setUp(self):
        if not harness.is_segcached():
            self.skipTest("segcached's log")

    def check_stamped(self, log):
        for line in log.splitlines():
            self.assertRegex(line, STAMP)

    def check_refusals_logged(self, srv, hold, words):
        held = []
        try:
            for _ in range(hold):
                held.append(harness.wait_for("a served connection", lambda: open_served(srv),
                                             timeout=60))
            start = time.monotonic()
            n = sum(refused(srv) for _ in range(REFUSALS))
            elapsed = time.monotonic() - start
            self.assertEqual(n, REFUSALS)
            lines = harness.wait_for(
                "the refusal's log line",
                lambda: [l for l in srv.log().splitlines() if words in l], timeout=30)
        finally:
            for c in held:
                c.close()
        # the first refusal logged at once, then one line per interval
        self.assertRegex(lines[0], r"connection from [0-9a-f.:]+ refused: ")
        self.assertLessEqual(len(lines), 1 + math.ceil(elapsed / EVENT_INTERVAL_S))
        counted = len(lines) + sum(int(m) for m in re.findall(
            r"and (\d+) more refused for this", "\n".join(lines)))
        self.assertLessEqual(counted, REFUSALS)
        self.check_stamped(srv.log())

    def test_the_connection_limit_is_logged_rate_limited(self):
        with harness.Server(max_conns=2) as srv:
            self.check_refusals_logged(srv, 2, "2 connections are open, the -c limit")
            srv.stop_clean("-c server")

    def test_per_source_refusals_are_logged_rate_limited(self):
        # one worker: the native stack's per-lcore share is the whole limit
        with harness.Server(threads=1, seg_extra=["--max-conns-per-source", "2"]) as srv:
            self.check_refusals_logged(srv, 2, "--max-conns-per-source")
            srv.stop_clean("per-source server")

    def test_link_down_and_up_are_logged(self):
        # af_packet reports its link up whatever the veth does; a tap port
        # follows its interface's flags (DPDK's tap_link_update), so this
        # server runs on one, in the server namespace, and the test takes
        # the interface down and up again.
        if not harness.is_native():
            self.skipTest("the native stack's port")
        ns = ["ip", "netns", "exec", harness.ARGS.server_netns]
        tap = "sctap%d" % (os.getpid() % 100000)
        prefix = "sctm%d" % os.getpid()
        log_path = os.path.join(harness.tempfile.mkdtemp(prefix="segcached-test-"), "tap.log")
        cmd = ns + [harness.ARGS.segcached, "--lcores=0@0,1@0", "--no-huge", "--no-pci",
                    "--no-shconf", "--file-prefix", prefix, "--vdev=net_tap0,iface=" + tap,
                    "--", "--stack", "native", "--ip", "198.19.0.2/24", "-m", "16",
                    "--metrics-port", str(METRICS_PORT_NATIVE + 1)]
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)

        def text():
            with open(log_path, "rb") as f:
                return f.read().decode(errors="replace")

        def link_up_gauge():
            _, _, body = scrape_raw(METRICS_PORT_NATIVE + 1)
            for fam in text_string_to_metric_families(body):
                if fam.name == "segcached_link_up":
                    return fam.samples[0].value
            raise AssertionError("no segcached_link_up")

        try:
            harness.wait_for("the tap server's ready line",
                             lambda: " ready: " in text() or proc.poll() is not None,
                             timeout=60)
            self.assertIsNone(proc.poll(), text())
            self.assertEqual(link_up_gauge(), 1)
            subprocess.run(ns + ["ip", "link", "set", tap, "down"], check=True)
            harness.wait_for("the link-down line",
                             lambda: "the port's link is down" in text(), timeout=60)
            self.assertEqual(link_up_gauge(), 0)
            subprocess.run(ns + ["ip", "link", "set", tap, "up"], check=True)
            harness.wait_for("the link-up line",
                             lambda: "the port's link is up" in text(), timeout=60)
            self.assertEqual(link_up_gauge(), 1)
            proc.terminate()
            self.assertEqual(proc.wait(timeout=harness.STOP_TIMEOUT), 0, text())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            harness.shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
        down = [l for l in text().splitlines() if "link is down" in l]
        self.assertEqual(len(down), 1, text())
        self.check_stamped(text())

    def test_a_full_heap_is_logged(self):
        failed = 0
        with harness.Server(memory_mb=2, extra=["-M"]) as srv:
            c = srv.connect()
            try:
                value = b"v" * 1000
                for i in range(20000):
                    r = c.cmd(b"set heapfull%d 0 0 %d\r\n%s\r\n" % (i, len(value), value))
                    if r.startswith(b"SERVER_ERROR out of memory"):
                        failed += 1
                        if failed == 50:
                            break
                    else:
                        self.assertEqual(r, b"STORED\r\n")
            finally:
                c.close()
            self.assertEqual(failed, 50, "the 2 MiB heap never filled")
            lines = harness.wait_for(
                "the heap-full line",
                lambda: [l for l in srv.log().splitlines() if "heap full: " in l], timeout=30)
            m = re.search(r"heap full: (\d+) stores refused .*evictions are off.* (\d+) "
                          r"refused since start", lines[0])
            self.assertIsNotNone(m, lines[0])
            self.assertGreaterEqual(int(m.group(1)), 1)
            self.assertLessEqual(int(m.group(2)), failed)
            self.check_stamped(srv.log())
            srv.stop_clean("heap-full server")


if __name__ == "__main__":
    argv = harness.setup()
    unittest.main(argv=argv, verbosity=2)
