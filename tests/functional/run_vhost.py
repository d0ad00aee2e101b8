#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Runs a functional test script against segcached's native stack on
net_virtio_user, behind a net_vhost bridge (vhostenv.py).

    run_vhost.py --bridge csum --offloads cksum,tso --segcached SEGCACHED test_protocol.py

--offloads goes to every server (segcached's option: cksum,tso, cksum or
none); --bridge io or csum picks the bridge's mode (vhost_server.py).
The script runs inside the client namespace; everything is removed after.
Skips (exit 77), saying why, where the host lacks root, dpdk-testpmd or
the DPDK drivers.
"""

import argparse
import os
import subprocess
import sys

import vhostenv

SCRIPT_TIMEOUT = 1500  # a hang guard for one whole script


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bridge", choices=["io", "csum"], default="csum")
    p.add_argument("--offloads", default="cksum,tso")
    p.add_argument("--segcached", required=True)
    p.add_argument("script")
    a, script_args = p.parse_known_args()
    vhostenv.need_or_skip(os.path.basename(a.script))
    here = os.path.dirname(os.path.abspath(__file__))
    with vhostenv.VhostEnv() as env:
        cmd = ["ip", "netns", "exec", env.client_ns, sys.executable,
               os.path.join(here, a.script), "--segcached", os.path.abspath(a.segcached)] + \
            env.harness_args(a.bridge, a.offloads) + script_args
        print("+ " + " ".join(cmd), flush=True)
        try:
            return subprocess.run(cmd, stdin=subprocess.DEVNULL,
                                  timeout=SCRIPT_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            print("%s did not finish in %d s" % (a.script, SCRIPT_TIMEOUT))
            return 1


if __name__ == "__main__":
    sys.exit(main())
