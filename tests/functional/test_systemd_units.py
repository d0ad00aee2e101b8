#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The install step and the systemd units: `meson install --destdir` puts the
server, segcached-stat, the units and the docs in place (class Install).
The systemd units shipped in tools/systemd pass `systemd-analyze verify`
with nothing to say about them (an unknown key is only a warning there, so
any line naming the unit fails the test). ExecStart's /usr/local/bin/segcached
is replaced by the binary under test, which verify requires to exist.
Those are skipped without systemd-analyze (Debian package systemd).

    test_systemd_units.py --segcached build/app/segcached/segcached
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNITS = sorted(glob.glob(os.path.join(ROOT, "tools", "systemd", "*.service")))
INSTALLED = "/usr/local/bin/segcached"


def verify(text, name):
    """systemd-analyze verify on a copy of a unit: (exit status, lines about it)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text.replace(INSTALLED, os.path.abspath(harness.ARGS.segcached)))
        p = subprocess.run(["systemd-analyze", "verify", "--man=no", path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=120)
        out = p.stdout.decode(errors="replace")
        return p.returncode, [line for line in out.splitlines() if name in line]


class Units(unittest.TestCase):
    def test_both_stacks_shipped(self):
        names = [os.path.basename(u) for u in UNITS]
        self.assertEqual(names, ["segcached-native.service", "segcached.service"])
        for u in UNITS:
            with open(u) as f:
                text = f.read()
            self.assertIn("ExecStart=%s " % INSTALLED, text)
            self.assertIn("LimitNOFILE=", text)
        with open(os.path.join(ROOT, "tools", "systemd", "segcached-native.service")) as f:
            native = f.read()
        for key in ("--stack native", "LimitMEMLOCK=infinity", "CPUAffinity=0 2-5",
                    "-l 0,2-5", "dev-hugepages.mount", "User=root"):
            self.assertIn(key, native)

    def test_verify(self):
        for u in UNITS:
            with self.subTest(unit=os.path.basename(u)):
                with open(u) as f:
                    rc, about = verify(f.read(), os.path.basename(u))
                self.assertEqual(rc, 0, about)
                self.assertEqual(about, [])

    def test_verify_sees_a_broken_unit(self):
        # The check itself: a misspelt key must not pass.
        with open(UNITS[0]) as f:
            text = f.read().replace("LimitNOFILE=", "LimitNOFILES=")
        rc, about = verify(text, "broken.service")
        self.assertTrue(rc != 0 or about, "systemd-analyze said nothing about LimitNOFILES=")


class Install(unittest.TestCase):
    """`meson install --destdir` from the build directory of the binary
    under test: the server, segcached-stat, both units and the docs land
    where the units and docs/operations.md say."""

    def test_meson_install(self):
        meson = shutil.which("meson")
        if meson is None:
            self.skipTest("meson not on PATH")
        builddir = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(harness.ARGS.segcached))))
        with tempfile.TemporaryDirectory() as dest:
            p = subprocess.run([meson, "install", "-C", builddir, "--no-rebuild", "--quiet",
                                "--destdir", dest],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout.decode(errors="replace"))
            prefix = dest + "/usr/local"
            # The units' ExecStart names the installed binary.
            self.assertEqual(os.path.dirname(INSTALLED), "/usr/local/bin")
            for f in ("bin/segcached", "bin/segcached-stat", "bin/nic-qualify"):
                path = os.path.join(prefix, f)
                self.assertTrue(os.path.isfile(path), f)
                self.assertTrue(os.access(path, os.X_OK), f)
            for u in UNITS:
                name = os.path.basename(u)
                with open(u) as a, open(os.path.join(prefix, "lib/systemd/system", name)) as b:
                    self.assertEqual(a.read(), b.read(), name)
            doc = os.path.join(prefix, "share/doc/segcached")
            self.assertEqual(sorted(os.listdir(doc)),
                             ["README.md", "architecture.md", "net.md", "operations.md",
                              "performance.md", "protocol.md"])
            # What was installed runs.
            out = subprocess.run([os.path.join(prefix, "bin/segcached"), "--version"],
                                 stdout=subprocess.PIPE, timeout=60)
            self.assertEqual(out.returncode, 0)
            self.assertRegex(out.stdout.decode(), r"^segcached \S+\n$")
            out = subprocess.run(["/usr/bin/python3", os.path.join(prefix, "bin/segcached-stat"),
                                  "--help"], stdout=subprocess.PIPE, timeout=60)
            self.assertEqual(out.returncode, 0)
            self.assertIn("--file-prefix", out.stdout.decode())


if __name__ == "__main__":
    argv = harness.setup()
    if shutil.which("systemd-analyze") is None:
        print("systemd-analyze not found (Debian package systemd): the units' checks skipped")
        del Units
    unittest.main(argv=argv, verbosity=2)
