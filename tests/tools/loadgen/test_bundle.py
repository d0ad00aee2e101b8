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

usage: test_bundle.py MAKE_BUNDLE_SH BUILD_DIR
"""
import os
import shutil
import subprocess
import sys
import time
import unittest

MAKE_BUNDLE, BUILD = sys.argv[1], sys.argv[2]
BUNDLE = os.path.join(os.path.abspath(BUILD), "tools", "loadgen", "bundle-test")


def host_pmd_dir():
    p = subprocess.run(["pkg-config", "--variable=pmdadir", "libdpdk"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"


class BundleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(BUNDLE, ignore_errors=True)
        p = subprocess.run(["sh", MAKE_BUNDLE, BUILD, BUNDLE], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            raise AssertionError("make-bundle.sh failed:\n" + p.stdout + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(BUNDLE, ignore_errors=True)

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
