#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The tree's shape, kept (docs/architecture.md, "The shape of lib/").

Checks every C file under lib/, drivers/, app/ and tools/:
  - at most MAX_LINES lines, and a header under lib/ at most
    MAX_LIB_HEADER_LINES: a file has one job, and one job fits;
  - its first comment says that job: after the SPDX and copyright lines,
    at least one line of words;
  - its includes of the project's own headers run downward only: a
    library includes itself and the libraries below it (ALLOWED), never
    one above, so lib/seg knows nothing of protocols and lib/proto
    nothing of storage; app/ and tools/ sit above every library and
    driver, and nothing under lib/ or drivers/ includes them;
  - no include circle: no header includes itself, directly or through
    others, and no two folders include each other, directly or through
    others (folder A's files include folder B's and B's include A's); the
    first circle of each kind is printed.
Prints every violation and exits 1 if there is any.
"""
import graphlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPS = ("lib", "drivers", "app", "tools")
MAX_LINES = 800
MAX_LIB_HEADER_LINES = 400
# What each folder may include besides itself, by the layout rule: a
# library includes itself and those below it. A name is an include's
# folder as written, lib/ left out ("seg" is lib/seg). A rule covers its
# folder and every folder under it that has no rule of its own, and those
# folders are one: each may include the others.
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


def rule_name(rule):
    """How ALLOWED names a rule's folder: "lib/seg" -> "seg"."""
    return rule[len("lib/"):] if rule.startswith("lib/") else rule


# The server and the tools may include every library and driver; a tool
# also its own folder, and loadgen storage-bench's zipf sampler and RNG.
EVERY_LIBRARY = {rule_name(r) for r in ALLOWED}
ALLOWED.update({
    "app/segcached": EVERY_LIBRARY,
    "tools/storage-bench": EVERY_LIBRARY,
    "tools/mrc-accuracy": EVERY_LIBRARY,
    "tools/net-bench": EVERY_LIBRARY,
    "tools/loadgen": EVERY_LIBRARY | {"tools/storage-bench"},
})
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def rule_of(folder):
    """The ALLOWED rule that covers a folder: its own, or the nearest
    folder above it that has one; None when none does."""
    while folder:
        if folder in ALLOWED:
            return folder
        folder = os.path.dirname(folder)
    return None


def resolve(path, inc, files):
    """The project file an include of `path` names, or None (a system or
    dependency header). Tried as the compiler's -I would find it: from
    the including file's folder and each folder above it (the project
    root, app/segcached/, ... are include folders), then lib/; an include
    found nowhere there is the one file under the includer's rule whose
    path ends in it (a subfolder given to the compiler with
    include_directories)."""
    folder = os.path.dirname(path)
    while True:
        cand = os.path.normpath(os.path.join(folder, inc))
        if cand in files:
            return cand
        if not folder:
            break
        folder = os.path.dirname(folder)
    cand = os.path.normpath(os.path.join("lib", inc))
    if cand in files:
        return cand
    rule = rule_of(os.path.dirname(path))
    ends = [f for f in files if f.endswith("/" + inc) and rule is not None and
            f.startswith(rule + "/")]
    return ends[0] if len(ends) == 1 else None


def check_text(path, text):
    problems = []
    lines = text.count("\n")
    if lines > MAX_LINES:
        problems.append("%d lines, over %d: split it by job" % (lines, MAX_LINES))
    elif path.startswith("lib/") and path.endswith(".h") and lines > MAX_LIB_HEADER_LINES:
        problems.append("%d lines, over %d for a header under lib/: split it by job" %
                        (lines, MAX_LIB_HEADER_LINES))
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
    return problems


def check_includes(path, includes):
    """includes: (as written, the file it names). The downward rule."""
    problems = []
    rule = rule_of(os.path.dirname(path))
    for inc, target in includes:
        trule = rule_of(os.path.dirname(target))
        if trule == rule:
            continue
        if trule is None or rule_name(trule) not in ALLOWED[rule]:
            problems.append('includes "%s": %s may not depend on %s' %
                            (inc, rule, trule or os.path.dirname(target)))
    return problems


def circle(graph):
    """A circle of `graph` (node -> the nodes it includes) as a list of
    nodes, the first repeated at the end (a includes b includes ... a), or
    None. One at a time: the next shows once this one is cut."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        # CycleError lists each node before the one that includes it.
        return list(reversed(e.args[1]))
    return None


def main():
    files = set()
    for top in TOPS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for f in names:
                if f.endswith((".c", ".h")):
                    files.add(os.path.relpath(os.path.join(dirpath, f), ROOT))
    bad = 0
    headers = {}  # file -> the project's headers it includes
    folders = {}  # folder -> the other folders its files include
    for path in sorted(files):
        folder = os.path.dirname(path)
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            text = fh.read()
        includes = []
        for inc in INCLUDE.findall(text):
            target = resolve(path, inc, files)
            if target is not None:
                includes.append((inc, target))
        headers[path] = {t for _, t in includes}
        folders.setdefault(folder, set()).update(
            os.path.dirname(t) for _, t in includes if os.path.dirname(t) != folder)
        problems = check_text(path, text)
        if rule_of(folder) is None:
            problems.append("folder %s has no rule in ALLOWED (tests/shape/check_shape.py)" %
                            folder)
        else:
            problems += check_includes(path, includes)
        for p in problems:
            print("%s: %s" % (path, p))
            bad += 1
    for kind, graph in (("include", headers), ("folder", folders)):
        way = circle(graph)
        if way is not None:
            print("%s circle: %s" % (kind, " -> ".join(way)))
            bad += 1
    print("%d files checked, %d problems" % (len(files), bad))
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(main())
