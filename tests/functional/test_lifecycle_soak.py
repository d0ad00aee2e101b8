#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Segment lifecycle soak through the real server (issue 9).

The operator's scenario that used to hang the engine: posix stack, `-m 8
-t 4`, six clients setting keys with TTLs of 0-30 s and values of 1 B-5 KB,
appending, touching, deleting and reading back, while a seventh client sends
`flush_all` every 20 ms; once per eviction policy (merge, fifo, random,
none). Each client is a process of its own (no shared interpreter lock) and
pipelines a few requests at a time, so the server's four workers really run
at once. The test fails when

  * any request of any client goes unanswered for IO_TIMEOUT seconds (the
    server stopped answering: a hang, not slowness),
  * any reply is not one of the replies memcached's protocol allows for the
    command (an out-of-memory error is allowed for writes and touches),
  * any value read back is not one that could be there: every client owns
    its keys and tracks what each key may hold (after a set, an append, a
    failed write), so a hit must match exactly, flags included; values long
    enough carry their key and a CRC, so a wrong value says whose it is,
  * a value is served after its expiry time has certainly passed (the get
    was sent more than TTL + EXPIRY_SLACK seconds after the reply to the set
    or touch that gave the TTL; the slack covers whole-second server clocks),
  * a fresh connection gets no answer after the load, or the server does not
    exit with status 0 within STOP_BOUND seconds of SIGTERM.

Each policy runs SEGCACHED_SOAK_SECONDS seconds (default 12, so the four
stay about a minute in CI); set it higher for a long local run, e.g.
`SEGCACHED_SOAK_SECONDS=600 test_lifecycle_soak.py --segcached ...`.
SEGCACHED_SOAK_SEED changes the clients' random choices. Two knobs
explore beyond the issue's scenario: SEGCACHED_SOAK_WIDE_TTL=1 gives half
the writes TTLs from 1 s to 30 days (many TTL buckets, each with its open
segments), SEGCACHED_SOAK_FLUSH_EVERY=0 turns the flusher off (the heap
stays full, so eviction and merging run all the time). With --target
memcached the same load runs against Debian's memcached (merge stands for
memcached's LRU, none for -M; fifo and random are skipped).

    test_lifecycle_soak.py --segcached build/app/segcached/segcached

Against a server built with -Db_sanitize=address,undefined it finds more
(a read-modify-write reading a segment that was reused meanwhile aborts
the server at once, which the test reports as a connection failure).
"""

import math
import multiprocessing
import os
import queue
import random
import signal
import socket
import time
import unittest
import zlib

import harness

SOAK_SECONDS = float(os.environ.get("SEGCACHED_SOAK_SECONDS", "12"))
SEED = int(os.environ.get("SEGCACHED_SOAK_SEED", "9"))
CLIENTS = 6
KEYS_PER_CLIENT = 300
PIPELINE_MAX = 8        # requests a client sends before reading the replies
FLUSH_EVERY = float(os.environ.get("SEGCACHED_SOAK_FLUSH_EVERY", "0.020"))
MAX_VALUE = 5 * 1024
MAX_TTL = 30
WIDE_TTL = os.environ.get("SEGCACHED_SOAK_WIDE_TTL") == "1"   # see the docstring
# Whole-second server clocks: an item may live up to ~1 s past its TTL
# (memcached ticks its clock once a second); 2 s is a safe bound for
# "certainly expired". Only items served after their expiry are affected.
EXPIRY_SLACK = 2.0
# The "SIGTERM stops the server within a few seconds": a hang
# detector, not a speed measurement.
STOP_BOUND = 10.0
MAX_ERRORS = 10
OOM = b"SERVER_ERROR out of memory"


class Failure(Exception):
    """The server stopped answering a client (timeout, closed connection)."""


def make_value(rng, key, size):
    """A value of `size` bytes; from len(key)+11 bytes on it starts with
    `key|crc32(rest)|`, so a wrong value found in the cache names its owner."""
    head_len = len(key) + 10
    if size <= head_len:
        return rng.randbytes(size)
    rest = rng.randbytes(size - head_len)
    return key + b"|%08x|" % zlib.crc32(rest) + rest


def describe(value):
    """What a value found in the cache is, from its header."""
    parts = value.split(b"|", 2)
    if len(parts) == 3 and len(parts[1]) == 8:
        try:
            crc_ok = zlib.crc32(parts[2]) == int(parts[1], 16)
        except ValueError:
            crc_ok = False
        return "%d bytes, header names key %r, crc of the rest %s" % (
            len(value), parts[0][:40], "matches" if crc_ok else "does not match (appended or torn)")
    return "%d bytes %r..." % (len(value), value[:24])


def value_size(rng, hi):
    """Half uniform (bulk bytes), half log-uniform (many tiny values)."""
    if rng.random() < 0.5:
        return rng.randint(1, hi)
    return max(1, min(hi, int(math.exp(rng.uniform(0, math.log(hi + 1))))))


class KeyState:
    """What one key may hold: the (flags, value) pairs that could be there
    (absence is always possible: flush_all, expiry and eviction remove
    anything at any time), and the time after which none of them may be
    served any more (None: no TTL)."""
    __slots__ = ("possible", "deadline")

    def __init__(self):
        self.possible = set()
        self.deadline = None


class Client:
    """One client process: owns its keys, pipelines requests, checks every
    reply. Runs until stop_at or until stop_event is set."""

    def __init__(self, srv, cid, stop_at, stop_event):
        self.srv = srv
        self.cid = cid
        self.name = "client-%d" % cid
        self.rng = random.Random(SEED * 1000 + cid)
        self.stop_at = stop_at
        self.stop_event = stop_event
        self.keys = [b"soak%d:%d" % (cid, i) for i in range(KEYS_PER_CLIENT)]
        self.state = {k: KeyState() for k in self.keys}
        self.recent = []
        self.ops = {}
        self.hits = 0
        self.checked_bytes = 0
        self.oom = 0
        self.errors = []
        self.conn = None
        self.batch_sent = 0.0

    def error(self, msg):
        if len(self.errors) < MAX_ERRORS:
            self.errors.append("%s: %s" % (self.name, msg))

    # Socket reads; a timeout (IO_TIMEOUT per read) or a closed connection
    # becomes a Failure.
    def io(self, what, fn, *args):
        try:
            return fn(*args)
        except socket.timeout:
            raise Failure("%s: no reply within %.0f s to %r" % (
                self.name, harness.IO_TIMEOUT, what[:60]))
        except (OSError, EOFError) as e:
            raise Failure("%s: connection failed (%s) on %r" % (self.name, e, what[:60]))

    def line(self, req):
        return self.io(req, self.conn.line)

    def pick_key(self):
        if self.recent and self.rng.random() < 0.6:
            return self.rng.choice(self.recent)
        return self.rng.choice(self.keys)

    def remember(self, key):
        self.recent.append(key)
        if len(self.recent) > 8:
            del self.recent[0]

    def pick_ttl(self):
        if WIDE_TTL and self.rng.random() < 0.5:
            return int(math.exp(self.rng.uniform(0, math.log(30 * 86400))))
        return self.rng.randint(0, MAX_TTL)

    @staticmethod
    def expiry(ttl, answered):
        return None if ttl == 0 else answered + ttl + EXPIRY_SLACK

    # Each op_* builds one request and returns (request, reply handler);
    # the handlers run in request order, so the tracked state follows the
    # order in which the server executes a connection's requests.
    def op_set(self):
        key = self.pick_key()
        value = make_value(self.rng, key, value_size(self.rng, MAX_VALUE))
        flags = self.rng.getrandbits(32)
        ttl = self.pick_ttl()
        req = b"set %s %d %d %d\r\n%s\r\n" % (key, flags, ttl, len(value), value)

        def done():
            r = self.line(req)
            st = self.state[key]
            if r == b"STORED\r\n":
                st.possible = {(flags, value)}
                st.deadline = self.expiry(ttl, time.monotonic())
                self.remember(key)
            elif r.startswith(OOM):
                self.oom += 1   # the old value may stay (segcached) or go (memcached)
            else:
                self.error("set %r: unexpected reply %r" % (key, r))
        return req, done

    def op_append(self):
        key = self.pick_key()
        if any(len(v) > 2 * MAX_VALUE for _, v in self.state[key].possible):
            return self.op_set()
        chunk = make_value(self.rng, key, value_size(self.rng, 512))
        req = b"append %s 0 0 %d\r\n%s\r\n" % (key, len(chunk), chunk)

        def done():
            r = self.line(req)
            st = self.state[key]
            if r == b"STORED\r\n":
                if not st.possible:
                    self.error("append %r: STORED on a key that holds nothing "
                               "this client wrote" % key)
                st.possible = {(f, v + chunk) for f, v in st.possible}
            elif r == b"NOT_STORED\r\n":
                st.possible = set()
            elif r.startswith(OOM):
                self.oom += 1
            else:
                self.error("append %r: unexpected reply %r" % (key, r))
        return req, done

    def op_touch(self):
        key = self.pick_key()
        ttl = self.pick_ttl()
        req = b"touch %s %d\r\n" % (key, ttl)

        def done():
            r = self.line(req)
            st = self.state[key]
            if r == b"TOUCHED\r\n":
                if not st.possible:
                    self.error("touch %r: TOUCHED a key that holds nothing this client wrote" % key)
                st.deadline = self.expiry(ttl, time.monotonic())
            elif r == b"NOT_FOUND\r\n":
                st.possible = set()
            elif r.startswith(OOM):
                # segcached rewrites a touched item into the segment of its
                # new TTL, which can fail when memory is full (--eviction
                # none); the item keeps its old expiry.
                self.oom += 1
            else:
                self.error("touch %r: unexpected reply %r" % (key, r))
        return req, done

    def op_delete(self):
        key = self.pick_key()
        req = b"delete %s\r\n" % key

        def done():
            r = self.line(req)
            st = self.state[key]
            if r == b"DELETED\r\n":
                if not st.possible:
                    self.error("delete %r: DELETED a key that holds nothing "
                               "this client wrote" % key)
            elif r != b"NOT_FOUND\r\n":
                self.error("delete %r: unexpected reply %r" % (key, r))
            st.possible = set()
        return req, done

    def op_get(self):
        keys = list(dict.fromkeys(self.pick_key() for _ in range(self.rng.randint(1, 4))))
        req = b"get " + b" ".join(keys) + b"\r\n"

        def done():
            sent = self.batch_sent
            found = {}
            while True:
                ln = self.line(req)
                if ln == b"END\r\n":
                    break
                parts = ln.split()
                if len(parts) != 4 or parts[0] != b"VALUE" or not parts[3].isdigit():
                    raise Failure("%s: get %r: unexpected line %r" % (self.name, keys, ln))
                data = self.io(req, self.conn.exact, int(parts[3]) + 2)
                if not data.endswith(b"\r\n"):
                    raise Failure("%s: get %r: value not followed by CRLF" % (self.name, parts[1]))
                found[parts[1]] = (int(parts[2]), data[:-2])
            for key in keys:
                st = self.state[key]
                got = found.pop(key, None)
                if got is None:
                    st.possible = set()
                    continue
                self.hits += 1
                self.checked_bytes += len(got[1])
                if got not in st.possible:
                    could = ", ".join("flags %d %s" % (f, describe(v))
                                      for f, v in st.possible) or "nothing"
                    self.error("get %r returned flags %d %s; could hold only: %s" % (
                        key, got[0], describe(got[1]), could))
                elif st.deadline is not None and sent > st.deadline:
                    self.error("get %r: served %.1f s after its TTL had certainly passed" % (
                        key, sent - st.deadline + EXPIRY_SLACK))
                st.possible = {got}
            if found:
                self.error("get %r: values for keys not asked for: %r" % (keys, list(found)))
        return req, done

    def run(self):
        ops = [(self.op_set, 40), (self.op_get, 30), (self.op_append, 10),
               (self.op_touch, 10), (self.op_delete, 10)]
        funcs = [f for f, _ in ops]
        weights = [w for _, w in ops]
        fatal = None
        try:
            self.conn = self.srv.connect()
            while (time.monotonic() < self.stop_at and not self.stop_event.is_set()
                   and len(self.errors) < MAX_ERRORS):
                batch = [f() for f in self.rng.choices(funcs, weights,
                                                       k=self.rng.randint(1, PIPELINE_MAX))]
                data = b"".join(req for req, _ in batch)
                self.batch_sent = time.monotonic()
                self.io(data, self.conn.send, data)
                for req, done in batch:
                    done()
                    name = req.split(b" ", 1)[0].decode()
                    self.ops[name] = self.ops.get(name, 0) + 1
        except Failure as e:
            fatal = str(e)
        except Exception as e:  # any surprise is a failure, with its text
            fatal = "%s: %r" % (self.name, e)
        finally:
            if self.conn is not None:
                self.conn.close()
        return fatal


def client_main(srv, cid, stop_at, stop_event, results):
    c = Client(srv, cid, stop_at, stop_event)
    fatal = c.run()
    if fatal or c.errors:
        stop_event.set()
    results.put({"name": c.name, "fatal": fatal, "errors": c.errors, "ops": c.ops,
                 "hits": c.hits, "checked_bytes": c.checked_bytes, "oom": c.oom})


def flusher_main(srv, stop_at, stop_event, results):
    fatal, flushes, conn = None, 0, None
    try:
        conn = srv.connect()
        while FLUSH_EVERY > 0 and time.monotonic() < stop_at and not stop_event.is_set():
            try:
                r = conn.cmd(b"flush_all\r\n")
            except socket.timeout:
                raise Failure("flusher: no reply to flush_all within %.0f s" % harness.IO_TIMEOUT)
            if r != b"OK\r\n":
                raise Failure("flusher: flush_all answered %r" % r)
            flushes += 1
            time.sleep(FLUSH_EVERY)
    except Failure as e:
        fatal = str(e)
    except Exception as e:
        fatal = "flusher: %r" % e
    finally:
        if conn is not None:
            conn.close()
    if fatal:
        stop_event.set()
    results.put({"name": "flusher", "fatal": fatal, "errors": [], "flushes": flushes})


def thread_cpu(pid):
    """{name/tid: CPU seconds} of each thread of a process, from /proc."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                s = f.read()
            name = s[s.index("(") + 1:s.rindex(")")]
            fields = s[s.rindex(")") + 2:].split()
            out["%s/%s" % (name, tid)] = (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass
    return out


def busy_threads(pid, sample=1.0):
    """The server's threads that used CPU during `sample` seconds."""
    a = thread_cpu(pid)
    time.sleep(sample)
    b = thread_cpu(pid)
    busy = ["%s %.0f%%" % (t, 100 * (b[t] - a.get(t, 0)) / sample)
            for t in sorted(b) if b[t] - a.get(t, 0) > 0.05 * sample]
    return ", ".join(busy) or "none"


class LifecycleSoak(unittest.TestCase):
    def server_args(self, policy):
        if harness.is_segcached():
            return ["--eviction", policy]
        if policy == "merge":
            return []
        if policy == "none":
            return ["-M"]
        self.skipTest("memcached has no %s eviction" % policy)

    def run_load(self, srv):
        """Runs the clients and the flusher; returns (results, stuck names)."""
        ctx = multiprocessing.get_context("fork")
        stop_at = time.monotonic() + SOAK_SECONDS
        stop_event = ctx.Event()
        results = ctx.Queue()
        procs = [ctx.Process(target=client_main, name="client-%d" % i,
                             args=(srv, i, stop_at, stop_event, results))
                 for i in range(CLIENTS)]
        procs.append(ctx.Process(target=flusher_main, name="flusher",
                                 args=(srv, stop_at, stop_event, results)))
        for p in procs:
            p.start()
        # Each process returns within IO_TIMEOUT per read after the end or
        # the first failure; the bound covers a few reads and the exit.
        out = []
        deadline = stop_at + 3 * harness.IO_TIMEOUT + 10
        while len(out) < len(procs):
            try:
                out.append(results.get(timeout=max(0.1, deadline - time.monotonic())))
            except queue.Empty:
                break
        stuck = []
        for p in procs:
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                stuck.append(p.name)
                p.kill()
                p.join()
        return out, stuck

    def soak(self, policy):
        extra = self.server_args(policy)
        with harness.Server(name="soak-" + policy, memory_mb=8, threads=4, extra=extra) as srv:
            t0 = time.monotonic()
            results, stuck = self.run_load(srv)
            elapsed = time.monotonic() - t0
            problems = []
            ops = {}
            for r in results:
                if r["fatal"]:
                    problems.append(r["fatal"])
                problems += r["errors"]
                for k, v in r.get("ops", {}).items():
                    ops[k] = ops.get(k, 0) + v
            if stuck:
                problems.append("client processes still blocked (killed): %s" % ", ".join(stuck))
            clients = [r for r in results if r["name"] != "flusher"]
            summary = ("%s: %.1f s, %d requests (%s), %d hits checked (%d bytes), "
                       "%d out-of-memory replies, %d flush_all" % (
                           policy, elapsed, sum(ops.values()),
                           " ".join("%s %d" % kv for kv in sorted(ops.items())),
                           sum(r["hits"] for r in clients),
                           sum(r["checked_bytes"] for r in clients),
                           sum(r["oom"] for r in clients),
                           sum(r.get("flushes", 0) for r in results)))
            print(summary, flush=True)

            # Still answering a fresh connection?
            try:
                c = srv.connect()
                try:
                    if not c.cmd(b"version\r\n").startswith(b"VERSION "):
                        problems.append("version: unexpected reply after the load")
                    st = c.stats()
                    print("  stats after: curr_items %s evictions %s" % (
                        st.get("curr_items"), st.get("evictions")), flush=True)
                finally:
                    c.close()
            except (OSError, EOFError, AssertionError) as e:
                problems.append("a fresh connection got no answer after the load: %r" % e)
            if problems and srv.proc.poll() is None:
                problems.append("server threads using CPU after the load: %s" %
                                busy_threads(srv.proc.pid))

            srv.signal(signal.SIGTERM)
            t_term = time.monotonic()
            try:
                rc = srv.proc.wait(timeout=STOP_BOUND)
                print("  SIGTERM: exited %d after %.1f s" % (rc, time.monotonic() - t_term),
                      flush=True)
                if rc != 0:
                    problems.append("exit status %d after SIGTERM" % rc)
            except Exception:
                problems.append("still running %.0f s after SIGTERM (killed)" % STOP_BOUND)
                srv.kill()
            if problems:
                self.fail("%s soak failed:\n  %s\n%s\n--- server log (tail) ---\n%s" % (
                    policy, "\n  ".join(problems), summary, srv.log()[-3000:]))

    def test_merge(self):
        self.soak("merge")

    def test_fifo(self):
        self.soak("fifo")

    def test_random(self):
        self.soak("random")

    def test_none(self):
        self.soak("none")


if __name__ == "__main__":
    unittest.main(argv=harness.setup(), verbosity=2)
