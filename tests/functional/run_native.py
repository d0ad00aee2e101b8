#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Runs a functional test script against segcached's native (DPDK) stack.

    run_native.py [--port af_xdp] --segcached build/app/segcached/segcached \
        test_protocol.py [args]

Creates the private network of netenv.py (two namespaces and a veth pair),
runs the script inside the client namespace with harness options that start
every server on the DPDK stack in the server namespace, and removes the
network again. Skips (exit 77) when not run as root. --port af_xdp puts the
servers on net_af_xdp instead of net_af_packet, after a probe (netenv.py:
segcached starts on it and answers a ping); where the kernel or the DPDK
build cannot, the script skips (77) and prints the reason.
"""

import os
import subprocess
import sys

import netenv

# Bound for one whole script (a hang guard, not a timing check).
SCRIPT_TIMEOUT = 1500


def main():
    args = sys.argv[1:]
    if "--segcached" not in args or len(args) < 3:
        print(__doc__)
        return 2
    i = args.index("--segcached")
    segcached = os.path.abspath(args[i + 1])
    rest = args[:i] + args[i + 2:]
    port = "af_packet"
    if rest[:1] == ["--port"]:
        port, rest = rest[1], rest[2:]
    script, script_args = rest[0], rest[1:]
    netenv.need_root_or_skip(os.path.basename(script))
    here = os.path.dirname(os.path.abspath(__file__))
    with netenv.NetEnv(port=port) as net:
        if port == "af_xdp":
            why = net.af_xdp_unsupported(segcached)
            if why:
                print("SKIP %s on net_af_xdp: %s" % (os.path.basename(script), why))
                return netenv.SKIP
            print("net_af_xdp works here (probe: segcached started on it and answered a "
                  "ping); %d queue pair(s) on this veth" % net.max_queues(), flush=True)
        cmd = ["ip", "netns", "exec", net.client_ns, sys.executable,
               os.path.join(here, script), "--segcached", segcached] + \
            net.harness_args() + script_args
        print("+ " + " ".join(cmd), flush=True)
        try:
            return subprocess.run(cmd, stdin=subprocess.DEVNULL,
                                  timeout=SCRIPT_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            print("%s did not finish in %d s" % (script, SCRIPT_TIMEOUT))
            return 1


if __name__ == "__main__":
    sys.exit(main())
