#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The examples of README.md and docs/operations.md, run as written, so that
a documented command cannot rot.

    test_doc_examples.py --segcached build/app/segcached/segcached

The marker: an HTML comment `<!-- runnable -->` (invisible on GitHub) on the
line before a fenced block. A marked block is

* ```sh: its commands run in order (a line ending in a backslash continues
  on the next; `#` lines are comments). A command that starts with
  `segcached` is a server: it must print its `ready` line within
  SERVER_START_S and exit 0 on SIGTERM within SERVER_STOP_S. Any other
  command runs in bash and must exit 0 within COMMAND_S. `segcached` is the
  binary under test (first on PATH). As root each server runs in a network
  namespace of its own (unshare -n), so that 11211 in an example never
  meets another server on this host; otherwise on the host's loopback.
* ```ini whose first line is `# PATH`: the file is written to a temporary
  directory and PATH in the document's later marked commands is replaced by
  it (`--config /etc/segcached.ini` reads the README's own example file).

A sample of output, marked `<!-- output of: COMMAND -->` on the line before
its fenced block, is what COMMAND (a server, run as above) prints by the
time it is ready: each line of the sample, its leading time stamp aside
(`2026-11-27T02:05:14.487Z ` matches any) and `...` standing for a part
that depends on the host, is a line of the real output, in order.

A marked block that fails fails the test. The blocks left unmarked, and why:

* README, quick start and "Run all tests": install packages, build, and
  run the whole suite (this test included);
* README, the client one-liners: they need a server in a namespace that
  tools/run-server.sh creates (tests/functional/test_run_server.py);
* README, the hugepage, PMEM (/mnt/pmem0) and /dev/shm examples (the last
  allocates its 4 GiB file up front), "On a real NIC" and the veth try-out
  (root, fixed namespace names that two runs at once would share, ping;
  tests/functional/test_native.py runs the same set-up under names of its
  own); the functional tests against memcached (they are tests);
* docs/operations.md: hugepage reservation and the hugepage start, NIC
  binding, isolcpus, dpdk-telemetry.py (interactive), PMEM set-up, the
  16 GiB /dev/shm heap, the build and test commands, the systemd unit
  (tools/systemd/, checked by systemd-analyze in test_systemd_units.py).
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["README.md", "docs/operations.md"]
MARKER = "<!-- runnable -->"
OUTPUT_MARKER = re.compile(r"^<!-- output of: (.+) -->$")
SERVER_START_S = 60
SERVER_STOP_S = 60
COMMAND_S = 60



def marked_blocks(path):
    """(language, first line number, text) of each marked fenced block."""
    blocks = []
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == MARKER:
            j = i + 1
            m = re.match(r"^```(\w+)\s*$", lines[j]) if j < len(lines) else None
            if m is None:
                raise AssertionError("%s:%d: %s is not followed by a fenced block"
                                     % (path, i + 1, MARKER))
            k = j + 1
            while k < len(lines) and lines[k].strip() != "```":
                k += 1
            if k == len(lines):
                raise AssertionError("%s:%d: unterminated block" % (path, j + 1))
            blocks.append((m.group(1), j + 2, "\n".join(lines[j + 1:k])))
            i = k
        i += 1
    return blocks


def output_samples(path):
    """(command, first line number, sample lines) of each output sample."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        m = OUTPUT_MARKER.match(line.strip())
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise AssertionError("%s:%d: the output marker is not followed by a fenced block"
                                 % (path, i + 1))
        k = i + 2
        while k < len(lines) and lines[k].strip() != "```":
            k += 1
        out.append((m.group(1), i + 3, [l for l in lines[i + 2:k] if l.strip()]))
    return out


def sample_regex(line):
    """A sample line as a pattern for a real one."""
    line = re.sub(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", "", line)
    return re.compile(r"(\S+Z )?" + ".*".join(re.escape(p) for p in line.split("...")) + "$")


def commands(text):
    """Shell commands of a block: continuation lines joined, comments and
    blank lines dropped."""
    out, cur = [], ""
    for line in text.split("\n"):
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append((cur + line).strip())
        cur = ""
    if cur:
        out.append(cur.strip())
    return out


class DocExamples(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="segcached-doc-")
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(harness.ARGS.segcached), os.path.join(bindir, "segcached"))
        self.env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        self.isolate = os.geteuid() == 0 and shutil.which("unshare") is not None

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_server(self, where, cmd):
        line = cmd
        if self.isolate:
            line = "ip link set lo up && exec " + cmd
            argv = ["unshare", "--net", "bash", "-c", line]
        else:
            argv = ["bash", "-c", "exec " + cmd]
        p = subprocess.Popen(argv, cwd=self.tmp, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + SERVER_START_S
            os.set_blocking(p.stdout.fileno(), False)
            buf = b""
            while time.monotonic() < deadline:
                chunk = p.stdout.read()
                if chunk:
                    buf += chunk
                if re.search(rb"segcached: segcached \S+ ready", buf):
                    break
                if p.poll() is not None:
                    buf += p.stdout.read() or b""
                    self.fail("%s: `%s` exited %d before it was ready:\n%s"
                              % (where, cmd, p.returncode, buf.decode(errors="replace")))
                time.sleep(0.05)
            else:
                self.fail("%s: `%s` not ready after %d s:\n%s"
                          % (where, cmd, SERVER_START_S, buf.decode(errors="replace")))
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(SERVER_STOP_S)
            except subprocess.TimeoutExpired:
                self.fail("%s: `%s` still running %d s after SIGTERM"
                          % (where, cmd, SERVER_STOP_S))
            self.assertEqual(rc, 0, "%s: `%s` exited %d after SIGTERM:\n%s"
                             % (where, cmd, rc, buf.decode(errors="replace")))
            return buf.decode(errors="replace")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()

    def run_command(self, where, cmd):
        try:
            p = subprocess.run(["bash", "-e", "-c", cmd], cwd=self.tmp, env=self.env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=COMMAND_S)
        except subprocess.TimeoutExpired:
            self.fail("%s: `%s` still running after %d s" % (where, cmd, COMMAND_S))
        self.assertEqual(p.returncode, 0, "%s: `%s` exited %d:\n%s"
                         % (where, cmd, p.returncode, p.stdout.decode(errors="replace")))

    def check_doc(self, doc):
        path = os.path.join(ROOT, doc)
        files = {}
        blocks = marked_blocks(path)
        self.assertTrue(blocks, "%s has no %s block" % (doc, MARKER))
        for lang, lineno, text in blocks:
            where = "%s:%d" % (doc, lineno)
            if lang == "ini":
                first = text.split("\n", 1)[0]
                m = re.match(r"^#\s*(/\S+)\s*$", first)
                self.assertIsNotNone(m, "%s: a runnable ini block starts with '# PATH'"
                                     % where)
                local = os.path.join(self.tmp, "%d-%s" % (lineno, os.path.basename(m.group(1))))
                with open(local, "w") as f:
                    f.write(text + "\n")
                files[m.group(1)] = local
                continue
            self.assertEqual(lang, "sh", "%s: runnable blocks are sh or ini" % where)
            for cmd in commands(text):
                for doc_path, local in files.items():
                    cmd = cmd.replace(doc_path, local)
                with self.subTest(where=where, cmd=cmd):
                    if re.match(r"^segcached(\s|$)", cmd):
                        self.run_server(where, cmd)
                    else:
                        self.run_command(where, cmd)

    def check_samples(self, doc):
        samples = output_samples(os.path.join(ROOT, doc))
        for cmd, lineno, sample in samples:
            where = "%s:%d" % (doc, lineno)
            with self.subTest(where=where, cmd=cmd):
                real = self.run_server(where, cmd).splitlines()
                at = 0
                for want in sample:
                    pat = sample_regex(want)
                    while at < len(real) and not pat.match(real[at]):
                        at += 1
                    self.assertLess(at, len(real), "%s: the sample line\n  %s\nis not in the "
                                    "output of `%s` (in order):\n%s"
                                    % (where, want, cmd, "\n".join(real)))
                    at += 1
        return samples

    def test_samples(self):
        self.assertTrue(self.check_samples("docs/operations.md"),
                        "docs/operations.md quotes no start-up output")
        self.check_samples("README.md")

    def test_readme(self):
        self.check_doc("README.md")

    def test_operations(self):
        self.check_doc("docs/operations.md")


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
