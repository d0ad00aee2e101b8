#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The tree's shape, kept (docs/architecture.md, "The shape of lib/").

Checks every C file under lib/ and drivers/:
  - at most MAX_LINES lines: a file has one job, and one job fits;
  - its first comment says that job: after the SPDX and copyright lines,
    at least one line of words;
  - its includes of the project's own headers run downward only: a
    library includes itself and the libraries below it (ALLOWED), never
    one above, so lib/seg knows nothing of protocols and lib/proto
    nothing of storage.
Prints every violation and exits 1 if there is any.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 800
# What each folder may include besides itself (DESIGN.md's layout table).
ALLOWED = {
    "lib/util": set(),
    "lib/engine": {"util"},
    "lib/seg": {"engine", "util"},
    "lib/seg/restart": {"seg", "engine", "util"},
    "lib/mrc": {"seg", "engine", "util"},
    "lib/baseline": {"engine", "util"},
    "lib/proto": {"util"},
    "lib/cmd": {"proto", "engine", "util"},
    "lib/net": {"util"},
    "drivers/mem": {"util"},
    "drivers/net": {"util", "cmd", "engine"},
    "drivers/net/dpdk": {"util", "drivers/net"},
    "drivers/net/posix": {"util", "cmd", "proto", "engine", "drivers/net"},
    "drivers/net/native": {"util", "cmd", "proto", "engine", "net", "drivers/net",
                           "drivers/net/dpdk"},
}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def own_folder(path):
    return os.path.dirname(path)


def include_target(inc):
    """The folder an include names: "seg/seg.h" -> "seg",
    "drivers/net/dpdk/dpdk_port.h" -> "drivers/net/dpdk"."""
    return os.path.dirname(inc) or "."


def check(path, text):
    problems = []
    lines = text.count("\n")
    if lines > MAX_LINES:
        problems.append("%d lines, over %d: split it by job" % (lines, MAX_LINES))
    m = re.match(r"/\*(.*?)\*/", text, re.S)
    words = []
    if m:
        for ln in m.group(1).splitlines():
            ln = ln.strip().lstrip("*").strip()
            if ln and not ln.startswith("SPDX-License-Identifier") and \
                    not ln.startswith("Copyright"):
                words.append(ln)
    if not words:
        problems.append("its first comment does not say what the file is for")
    folder = own_folder(path)
    allowed = ALLOWED.get(folder)
    mine = folder[len("lib/"):] if folder.startswith("lib/") else folder
    for inc in INCLUDE.findall(text):
        target = include_target(inc)
        if target in (".", mine) or allowed is None:
            continue
        if target not in allowed:
            problems.append('includes "%s": %s may not depend on %s' % (inc, folder, target))
    return problems


def main():
    bad = 0
    seen = 0
    for top in ("lib", "drivers"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if own_folder(path) not in ALLOWED:
                    print("%s: folder %s is not in ALLOWED (tests/shape/check_shape.py)" %
                          (path, own_folder(path)))
                    bad += 1
                    continue
                seen += 1
                with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
                    for p in check(path, fh.read()):
                        print("%s: %s" % (path, p))
                        bad += 1
    print("%d files checked, %d problems" % (seen, bad))
    return 1 if bad or seen == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
