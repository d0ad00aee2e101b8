#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The ninja targets the unit suite needs in a configured build directory
(each test's program and what it depends on), one per line, so that CI's
sanitizer builds compile those and not the whole tree (.ci/run).

  tests/unit_targets.py BUILD_DIR
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    return json.loads(subprocess.run(["meson", "introspect", build, what], check=True,
                                     capture_output=True, text=True).stdout)


def main():
    build = os.path.abspath(sys.argv[1])
    targets = {t["id"]: t["filename"] for t in introspect(build, "--targets")}
    need = set()
    for test in introspect(build, "--tests"):
        if "segcached:unit" not in test["suite"]:
            continue
        for dep in test["depends"]:
            need.update(targets.get(dep, []))
        if test["cmd"] and os.path.abspath(test["cmd"][0]).startswith(build + os.sep):
            need.add(test["cmd"][0])
    if not need:
        sys.exit("no unit tests in %s" % build)
    for path in sorted(need):
        print(os.path.relpath(os.path.abspath(path), build))


if __name__ == "__main__":
    main()
