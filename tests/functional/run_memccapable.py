#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""libmemcached's memccapable, ASCII tests, against a real server.

    run_memccapable.py --segcached build/app/segcached/segcached
    run_memccapable.py --target memcached

Passes when memccapable exits 0, reports "All tests passed" and no test
line says anything but [pass].
"""

import shutil
import subprocess
import sys

import harness


def main():
    harness.setup()
    tool = shutil.which("memccapable") or shutil.which("memcapable")
    if tool is None:
        print("memccapable not found: install libmemcached-tools (tools/install-deps.sh)")
        return 1
    with harness.Server(name="memccapable", memory_mb=64) as srv:
        try:
            p = subprocess.run([tool, "-a", "-t", "10", "-h", harness.HOST,
                                "-p", str(srv.port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=600)
        except subprocess.TimeoutExpired:
            print("memccapable did not finish in 600 s")
            print(srv.log())
            return 1
        out = p.stdout.decode(errors="replace")
        print(out)
        tests = [ln for ln in out.splitlines() if ln.startswith("ascii ")]
        failed = [ln for ln in tests if not ln.rstrip().endswith("[pass]")]
        ok = p.returncode == 0 and "All tests passed" in out and tests and not failed
        if not ok:
            print("FAILED: exit %d, %d tests, failing: %s" % (p.returncode, len(tests), failed))
            print("--- server log ---")
            print(srv.log())
            return 1
        print("%d ASCII tests passed" % len(tests))
        rc = srv.stop()
        if rc != 0:
            print("server exited with %s after SIGTERM" % rc)
            print(srv.log())
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
