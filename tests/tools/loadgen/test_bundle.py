#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""meson test bundle-host-dpdk (suite tools): a bundle made by
make-bundle.sh runs on a host that has DPDK installed, with every DPDK
library and driver from the bundle.

The EAL loads the drivers of its compiled-in PMD directory (Debian's
/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0) whenever that exists, beside the
bundle's -d directory; the second copy of a driver panicked ("UIO_RESOURCE_LIST
tailq is already registered"). This host has DPDK installed (the build needs
it), so the bundle's storage-bench with the baseline engine (the EAL and
the ring mempool driver) is started here with -d the bundle's pmds/, and
must run, and map librte_* files from the bundle only.

The EAL loads no driver from under a world-writable folder, so a build
under /tmp puts its bundle in a fresh folder under /run or $HOME instead,
and the test is skipped, saying why, where neither will do.

usage: test_bundle.py MAKE_BUNDLE_SH BUILD_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

MAKE_BUNDLE, BUILD = sys.argv[1], sys.argv[2]


def world_writable_above(path):
    """The first folder at or above path that anyone may write to, or None:
    the EAL refuses a driver directory under one (make-bundle.sh says so)."""
    path = os.path.abspath(path)
    while True:
        if os.path.isdir(path) and os.stat(path).st_mode & 0o002:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def bundle_place():
    """Where the bundle goes: beside the build, or, for a build under /tmp
    (world-writable), in a fresh folder of this user's under the first of
    /run and $HOME that no one else may write to; None when there is none."""
    beside = os.path.join(os.path.abspath(BUILD), "tools", "loadgen", "bundle-test")
    if world_writable_above(beside) is None:
        return beside
    for top in ("/run", os.path.expanduser("~")):
        if os.path.isdir(top) and os.access(top, os.W_OK) and world_writable_above(top) is None:
            return os.path.join(tempfile.mkdtemp(prefix="segcached-bundle-test-", dir=top),
                                "bundle")
    return None


BUNDLE = bundle_place()


def host_pmd_dir():
    p = subprocess.run(["pkg-config", "--variable=pmdadir", "libdpdk"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"


class BundleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if BUNDLE is None:
            raise unittest.SkipTest("the build is under a world-writable folder (%s) and "
                                    "neither /run nor $HOME can hold the bundle: the EAL "
                                    "loads no driver from there" % world_writable_above(BUILD))
        shutil.rmtree(BUNDLE, ignore_errors=True)
        p = subprocess.run(["sh", MAKE_BUNDLE, BUILD, BUNDLE], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            raise AssertionError("make-bundle.sh failed:\n" + p.stdout + p.stderr)

    @classmethod
    def tearDownClass(cls):
        if BUNDLE is None:
            return
        shutil.rmtree(BUNDLE, ignore_errors=True)
        if os.path.basename(os.path.dirname(BUNDLE)).startswith("segcached-bundle-test-"):
            shutil.rmtree(os.path.dirname(BUNDLE), ignore_errors=True)

    def test_host_pmd_dir_is_there(self):
        # What makes the next test mean something: without the host's
        # drivers there is nothing to collide with.
        self.assertTrue(os.path.isdir(host_pmd_dir()), host_pmd_dir())

    def test_bundle_eal_ignores_the_host_pmd_dir(self):
        cmd = [os.path.join(BUNDLE, "bin", "segcached-storage-bench"),
               "--no-huge", "--no-shconf", "--no-pci", "--no-telemetry", "-l", "0",
               "-m", "512", "-d", os.path.join(BUNDLE, "pmds"), "--",
               "--engine", "baseline", "--keys", "20000", "-m", "64M", "--duration", "1.5"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        mapped = set()
        end = time.time() + 60
        while p.poll() is None and time.time() < end:
            try:
                with open("/proc/%d/maps" % p.pid) as f:
                    for line in f:
                        path = line.split()[-1]
                        if "librte_" in path:
                            mapped.add(path)
            except OSError:
                pass
            time.sleep(0.1)
        if p.poll() is None:
            p.kill()
        out = p.communicate()[0]
        self.assertNotIn("PANIC", out)
        self.assertEqual(p.returncode, 0, out[-2000:])
        self.assertIn("librte_mempool_ring", " ".join(mapped), "the bundle's driver loaded")
        foreign = [m for m in mapped if not m.startswith(BUNDLE + "/")]
        self.assertEqual(foreign, [], "DPDK libraries mapped from outside the bundle")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
