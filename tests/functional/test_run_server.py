# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""README's server command, tools/run-server.sh, as a user runs it.

Without a NIC bound to DPDK (as on every CI machine) the script starts the
native stack on a virtual port: a veth pair between two namespaces it
creates, driven by net_af_xdp where a probe finds it works (expected here
whenever the kernel has AF_XDP sockets and DPDK the driver), else by
net_af_packet, saying why; two worker lcores fall back to af_packet with
two queues, since DPDK 22.11's net_af_xdp has one queue on a veth;
SEGCACHED_VPORT=af_packet skips the probe. The test stores and reads a key from the client
namespace with pymemcache, stops the script with SIGTERM and checks that the
server exited cleanly and both namespaces are gone. --posix starts the posix
stack on loopback. The script runs from any directory (it is started from
/), names the port of -p in its client hint, turns -t into worker lcores on
the native stack, and refuses a second run whose namespaces are those of a
running one (which deleting them would have left without a network). Needs
root (skipped otherwise).
"""

import argparse
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "tools", "run-server.sh")
sys.path.insert(0, HERE)
import harness  # noqa: E402
import netenv  # noqa: E402

SEGCACHED = None
PREFIX = "scrs%d" % os.getpid()
START_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


def netns_list():
    return subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout


CLIENT = """
import sys
from pymemcache.client.base import Client
c = Client((sys.argv[1], int(sys.argv[2])), timeout=2, connect_timeout=2)
c.set('run-server', 'works')
print(c.get('run-server').decode())
"""


def client_in(ns, host, port):
    """Runs a pymemcache client (in namespace ns when given); its output."""
    cmd = ["/usr/bin/python3", "-c", CLIENT, host, str(port)]
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=15)
    return p.stdout.strip() if p.returncode == 0 else None


class RunServer(unittest.TestCase):
    def start(self, *args, cwd="/", env=None):
        env = dict(os.environ, SEGCACHED=SEGCACHED, SEGCACHED_NETNS=PREFIX, **(env or {}))
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                     "run-server-%d.log" % os.getpid()), "w+")
        self.addCleanup(self.log.close)
        p = subprocess.Popen([SCRIPT] + list(args), cwd=cwd, env=env, stdout=self.log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        self.addCleanup(self.kill, p)
        return p

    def kill(self, p):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for ns in (PREFIX + "-server", PREFIX + "-client"):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def wait_answer(self, p, ns, host, port):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self.assertIsNone(p.poll(), "the script exited early:\n" + self.output())
            if client_in(ns, host, port) == "works":
                return
            time.sleep(0.5)
        self.fail("no answer from %s:%d within %.0f s:\n%s" % (host, port, START_TIMEOUT,
                                                            self.output()))

    def stop(self, p):
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("SIGTERM did not stop the script within %.0f s" % STOP_TIMEOUT)
        self.assertEqual(rc, 0, self.output())

    def test_native_on_a_virtual_port(self):
        port = harness.free_port()
        p = self.start("-t", "1", "-p", str(port))
        self.wait_answer(p, PREFIX + "-client", netenv.SERVER_IP, port)
        out = self.output()
        self.assertIn("native stack on a virtual port", out)
        # The port the probe chose, and why.
        why = netenv.af_xdp_static_reason()
        if why is None:
            self.assertIn("run-server: net_af_xdp with 1 queue(s): the probe started segcached "
                          "on it and it answered a ping", out)
            self.assertIn("(net_af_xdp on veth", out)
            self.assertIn("driver net_af_xdp", out)
        else:
            self.assertIn("run-server: net_af_xdp is not usable here (", out)
            self.assertIn("falling back to net_af_packet with 1 queue(s)", out)
        # The hint names the port the server listens on.
        self.assertIn("c = Client(('%s', %d))" % (netenv.SERVER_IP, port), out)
        # -t 1: one worker lcore besides the main one.
        self.assertIn("run-server: -t 1 on the native stack: 1 worker lcore(s), EAL --lcores 0-1",
                      out)
        self.stop(p)
        self.assertIn("shutting down", self.output())
        self.assertNotIn(PREFIX, netns_list(), "the namespaces were left behind")

    def test_second_run_with_the_same_prefix_refused(self):
        first = self.start("-t", "1")
        self.wait_answer(first, PREFIX + "-client", netenv.SERVER_IP, 11211)
        env = dict(os.environ, SEGCACHED=SEGCACHED, SEGCACHED_NETNS=PREFIX)
        second = subprocess.run([SCRIPT, "-t", "1"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual(second.returncode, 1, second.stdout)
        self.assertIn("run-server: namespace %s-server is in use (pids " % PREFIX,
                      second.stdout)
        self.assertIn("another run-server.sh has prefix %s; stop it, or give this one "
                      "another prefix, e.g. SEGCACHED_NETNS=%s2" % (PREFIX, PREFIX),
                      second.stdout)
        # The first server kept its namespaces and still answers.
        self.assertIn(PREFIX + "-server", netns_list())
        self.assertEqual(client_in(PREFIX + "-client", netenv.SERVER_IP, 11211), "works")
        self.stop(first)
        self.assertNotIn(PREFIX, netns_list())

    def test_leftover_namespaces_removed(self):
        # What a killed run leaves (namespaces with nothing in them) is
        # cleaned up, with a line saying so.
        for ns in (PREFIX + "-server", PREFIX + "-client"):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        p = self.start("-t", "1")
        # Clients only once the script made its own client namespace.
        deadline = time.monotonic() + START_TIMEOUT
        while "native stack on a virtual port" not in self.output():
            self.assertIsNone(p.poll(), "the script exited early:\n" + self.output())
            self.assertLess(time.monotonic(), deadline, self.output())
            time.sleep(0.2)
        self.assertIn("run-server: removing namespace %s-server, left by a run that was "
                      "killed" % PREFIX, self.output())
        self.wait_answer(p, PREFIX + "-client", netenv.SERVER_IP, 11211)
        self.stop(p)

    def test_two_workers_fall_back_to_af_packet(self):
        # DPDK 22.11's net_af_xdp sizes itself by the interface's combined
        # channels, which a veth has none of: queue_count=2 is refused by
        # the driver itself, the probe says so, and af_packet serves with
        # two queues (PACKET_FANOUT) instead.
        p = self.start(env={"SEGCACHED_LCORES": "0@0,1@1,2@0"})
        self.wait_answer(p, PREFIX + "-client", netenv.SERVER_IP, 11211)
        out = self.output()
        if netenv.af_xdp_static_reason() is None:
            self.assertIn("run-server: net_af_xdp is not usable here (init_internals(): "
                          "Specified queue count 2 is larger than combined queue count 1.",
                          out)
        self.assertIn("falling back to net_af_packet with 2 queue(s)", out)
        self.assertIn("driver net_af_packet", out)
        self.assertIn("2 worker lcore(s)", out)
        self.stop(p)
        self.assertNotIn(PREFIX, netns_list())

    def test_af_packet_when_asked(self):
        p = self.start("-t", "1", env={"SEGCACHED_VPORT": "af_packet"})
        self.wait_answer(p, PREFIX + "-client", netenv.SERVER_IP, 11211)
        out = self.output()
        self.assertIn("run-server: net_af_packet, as SEGCACHED_VPORT=af_packet asks", out)
        self.assertNotIn("probe", out)
        self.assertIn("driver net_af_packet", out)
        self.stop(p)

    def test_unknown_virtual_port_refused(self):
        env = dict(os.environ, SEGCACHED=SEGCACHED, SEGCACHED_NETNS=PREFIX,
                   SEGCACHED_VPORT="tap")
        p = subprocess.run([SCRIPT], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("SEGCACHED_VPORT=tap: expected auto, af_xdp or af_packet", p.stdout)
        self.assertNotIn(PREFIX, netns_list())

    def test_posix(self):
        port = harness.free_port()
        p = self.start("--posix", "-t", "1", "-p", str(port), "-U", "0")
        self.wait_answer(p, None, "127.0.0.1", port)
        self.assertIn("run-server: the posix stack on 127.0.0.1:%d" % port, self.output())
        self.stop(p)
        self.assertNotIn(PREFIX, netns_list())


def main():
    global SEGCACHED
    ap = argparse.ArgumentParser()
    ap.add_argument("--segcached", required=True)
    args, rest = ap.parse_known_args()
    SEGCACHED = os.path.abspath(args.segcached)
    netenv.need_root_or_skip("tools/run-server.sh")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
