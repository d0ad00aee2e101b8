#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Replays a twitter/cache-trace CSV trace (or a generated workload, see
workload.py) against real servers, one after the other in one run, and
reports the miss ratio and the objects kept (curr_items at the end).

Trace semantics (look-aside cache):
  * get/gets: a get; a miss counts, then the client sets the key (the miss
    fill) with the record's value_size, or when that is 0 (a get that missed
    in production) the key's last known size; its TTL is the key's TTL from
    its last write in the trace (--default-ttl when none was seen). A key
    whose size is unknown is not filled (the trace's own set follows).
  * set/cas: a set with the record's value_size and ttl; add, replace,
    append, prepend: the same command; delete: delete; incr/decr: by 1.
  * --ttl-scale F divides every TTL by F (at least 1 s), to compress trace
    time; then TTLs above 30 days are capped to 30 days (the protocol reads
    larger values as absolute times).
  * Values are filler bytes; sizes above --max-value are clipped (counted).

Requests are pipelined without changing what any key sees: a round takes
the next records up to --window or up to the first key seen again in the
round, spreads them over --conns connections by a hash of the key (so
different server workers serve them), sends every connection's share, then
reads every reply. A miss fill goes first on the key's connection in the
next round, before any later request for that key. Misses and gets are
counted over the whole trace and over its second half (warm cache).

Memory: memcached's -m bounds its slab pages, but it takes one page per
slab class in use even beyond -m, and its hash table is outside -m;
segcached's -m covers everything. Each row says the memory the server
held at the end (memory_used); --equal-memory runs every segcached target
once more at the memory memcached used, rounded up to MiB.

usage: tools/protocol-bench/replay.py (--trace FILE | --workload twitter|zipf|shift
           [--objects N --requests N --alpha A --seed S --value-size N])
           [-m MB] [-t THREADS] [--target 'segcached [ARGS]']...
           [--target 'memcached [ARGS]']... [--equal-memory] [--json]
"""
import argparse
import gzip
import json
import shlex
import socket
import subprocess
import sys
import time
import zlib

import servers
import workload

MAX_RELATIVE_TTL = 30 * 86400
READS = {b'get', b'gets'}
STORES = {b'set': b'set', b'cas': b'set', b'add': b'add', b'replace': b'replace',
          b'append': b'append', b'prepend': b'prepend'}
FILLER = b'v' * (1 << 20)


def read_trace(path):
    """Yields the records of a trace file (.csv, .csv.gz or .csv.zst)."""
    proc = None
    if path.endswith('.zst'):
        proc = subprocess.Popen(['zstd', '-dc', path], stdout=subprocess.PIPE)
        f = proc.stdout
    elif path.endswith('.gz'):
        f = gzip.open(path, 'rb')
    else:
        f = open(path, 'rb')
    try:
        for ln in f:
            p = ln.rstrip(b'\r\n').split(b',')
            if len(p) < 7:
                continue
            yield int(p[0]), p[1], int(p[2]), int(p[3]), int(p[4]), p[5], int(p[6])
    finally:
        f.close()
        if proc:
            proc.wait()


class Replay:
    def __init__(self, srv, conns, window, ttl_scale, default_ttl, max_value, total):
        self.srv = srv
        self.nconn = conns
        self.window = window
        self.ttl_scale = ttl_scale
        self.default_ttl = default_ttl
        self.max_value = max_value
        self.half = total // 2 if total else None
        self.size_of = {}
        self.ttl_of = {}
        self.c = dict(requests=0, gets=0, misses=0, gets2=0, misses2=0, fills=0,
                      unfillable=0, writes=0, write_errors=0, deletes=0, arith=0,
                      clipped=0, rounds=0)

    def ttl(self, t):
        if t <= 0:
            return 0
        # Scale first, then cap: capped first, a TTL scaled up past 30 days
        # went out as an absolute time in 1970, and every set deleted its key.
        if self.ttl_scale != 1:
            t = max(1, int(round(t / self.ttl_scale)))
        return min(t, MAX_RELATIVE_TTL)

    def value(self, n):
        if n > self.max_value:
            self.c['clipped'] += 1
            n = self.max_value
        return FILLER[:n]

    def store_req(self, cmd, key, size, ttl):
        v = self.value(size)
        if cmd == b'cas':
            cmd = b'set'
        return b'%s %s 0 %d %d\r\n%s\r\n' % (cmd, key, ttl, len(v), v)

    def run(self, records):
        conns = [self.srv.connect() for _ in range(self.nconn)]
        fills = [[] for _ in conns]     # requests for the next round
        fill_keys = [[] for _ in conns]
        it = iter(records)
        carry = None
        idx = 0
        c = self.c
        t0 = time.monotonic()
        done = False
        while not done or any(fills):
            reqs = [fills[i] for i in range(self.nconn)]
            # What each connection must read, in order:
            # ('fill'|'get'|'line', key, size, second half)
            expect = [[('fill', k, 0, False) for k in fill_keys[i]] for i in range(self.nconn)]
            fills = [[] for _ in conns]
            fill_keys = [[] for _ in conns]
            seen = set()
            while not done and len(seen) < self.window:
                rec = carry if carry is not None else next(it, None)
                carry = None
                if rec is None:
                    done = True
                    break
                key = rec[1]
                if key in seen:
                    carry = rec
                    break
                seen.add(key)
                _, key, _, vsize, _, op, ttl = rec
                ci = zlib.crc32(key) % self.nconn
                second = self.half is not None and idx >= self.half
                idx += 1
                c['requests'] += 1
                if op in READS:
                    reqs[ci].append(b'get %s\r\n' % key)
                    expect[ci].append(('get', key, vsize, second))
                elif op in STORES:
                    t = self.ttl(ttl)
                    self.ttl_of[key] = t
                    if op in (b'append', b'prepend'):
                        self.size_of[key] = self.size_of.get(key, 0) + vsize
                    else:
                        self.size_of[key] = vsize
                    reqs[ci].append(self.store_req(STORES[op], key, vsize, t))
                    expect[ci].append(('line', key, 0, second))
                    c['writes'] += 1
                elif op == b'delete':
                    reqs[ci].append(b'delete %s\r\n' % key)
                    expect[ci].append(('line', key, 0, second))
                    c['deletes'] += 1
                elif op in (b'incr', b'decr'):
                    reqs[ci].append(b'%s %s 1\r\n' % (op, key))
                    expect[ci].append(('line', key, 0, second))
                    c['arith'] += 1
            if not any(reqs):
                break
            c['rounds'] += 1
            for i, conn in enumerate(conns):
                if reqs[i]:
                    conn.send(b''.join(reqs[i]))
            for i, conn in enumerate(conns):
                for kind, key, vsize, second in expect[i]:
                    if kind == 'get':
                        hit = False
                        while True:
                            ln = conn.line()
                            if ln == b'END':
                                break
                            if not ln.startswith(b'VALUE '):
                                raise RuntimeError('%s: get %r: %r' % (self.srv.label(), key, ln))
                            conn.skip(int(ln.rsplit(b' ', 1)[1]) + 2)
                            hit = True
                        c['gets'] += 1
                        if second:
                            c['gets2'] += 1
                        if hit:
                            continue
                        c['misses'] += 1
                        if second:
                            c['misses2'] += 1
                        size = vsize if vsize > 0 else self.size_of.get(key)
                        if size is None:
                            c['unfillable'] += 1
                            continue
                        t = self.ttl_of.get(key, self.default_ttl)
                        fills[i].append(self.store_req(b'set', key, size, t))
                        fill_keys[i].append(key)
                        c['fills'] += 1
                    else:
                        ln = conn.line()
                        if kind == 'fill' and ln != b'STORED':
                            c['write_errors'] += 1
                        elif kind == 'line' and ln.startswith((b'SERVER_ERROR', b'CLIENT_ERROR',
                                                               b'ERROR')):
                            c['write_errors'] += 1
        secs = time.monotonic() - t0
        for conn in conns:
            conn.close()
        return secs


def records_for(a):
    if a.trace:
        return read_trace(a.trace), None
    n = a.requests
    return workload.requests(a.workload, a.objects, n, a.alpha, a.seed, a.value_size,
                             value_size_max=a.value_size_max,
                             shift_value_size=a.shift_value_size), n


def count_records(path):
    n = 0
    for _ in read_trace(path):
        n += 1
    return n


def replay_one(srv, a, total, records=None):
    """Starts srv, replays (records, an iterable of trace records, or the
    trace or workload a names), returns the result row."""
    with srv:
        r = Replay(srv, a.conns or max(2, 2 * srv.threads), a.window, a.ttl_scale,
                   a.default_ttl, a.max_value, total)
        recs = records if records is not None else records_for(a)[0]
        try:
            secs = r.run(recs)
        except (socket.timeout, TimeoutError):
            # A hung server: say what it was doing, and whether SIGTERM
            # still stops it.
            busy = srv.busy_threads()
            stopped = srv.stop()
            return {'server': srv.label(), 'command': srv.cmd,
                    'error': 'no reply for %.0f s after %d of the requests (threads busy: %s); '
                             'SIGTERM %s' % (servers.IO_TIMEOUT, r.c['requests'], busy,
                                             'stopped it' if stopped else
                                             'did not stop it within 10 s (killed)'),
                    'counters': dict(r.c)}
        st = srv.stats()
        rss = srv.rss()
        c = r.c
        return {
            'server': srv.label(),
            'command': srv.cmd,
            'memory_mb': srv.memory_mb,
            'memory_used': srv.memory_used(),
            'rss': rss['rss'],
            'rss_anon': rss['anon'],
            'version': st.get('version', '?'),
            'seconds': round(secs, 2),
            'requests_per_s': round(c['requests'] / secs) if secs else 0,
            'miss_ratio': c['misses'] / c['gets'] if c['gets'] else None,
            'miss_ratio_2nd_half': c['misses2'] / c['gets2'] if c['gets2'] else None,
            'curr_items': int(st['curr_items']),
            'bytes': int(st.get('bytes', 0)),
            'evictions': int(st.get('evictions', 0)),
            'limit_maxbytes': int(st.get('limit_maxbytes', 0)),
            'counters': dict(c),
        }


def targets_of(a):
    out = []
    for t in a.target or ['segcached', 'memcached']:
        words = shlex.split(t)
        if words[0] not in ('segcached', 'memcached'):
            raise SystemExit('--target must start with segcached or memcached: %r' % t)
        out.append(servers.Server(words[0], a.memory, a.threads, words[1:],
                                  segcached=a.segcached, memcached=a.memcached))
    if getattr(a, 'equal_memory', False):
        # memcached first: its measured footprint sizes the extra runs.
        out.sort(key=lambda s: s.kind != 'memcached')
        out += [servers.Server('segcached', None, a.threads, s.extra, segcached=a.segcached)
                for s in out if s.kind == 'segcached']
    return out


def replay_all(a, total, log=lambda msg: None):
    """Replays on every target in turn; with --equal-memory, the segcached
    targets run once more with -m set to the most memory a memcached run
    used (memory_used, rounded up to MiB), as memcached's -m bounds only
    its slab pages, not all of them (one per slab class in use) nor its
    hash table."""
    rows = []
    for srv in targets_of(a):
        if srv.memory_mb is None:
            used = [r['memory_used'] for r in rows
                    if r['server'].startswith('memcached') and 'error' not in r]
            if not used:
                continue
            srv.memory_mb = -(-max(used) // (1 << 20))
        log('%s ...' % srv.label())
        rows.append(replay_one(srv, a, total))
    return rows


def add_arguments(ap):
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument('--trace', help='a twitter/cache-trace CSV (.csv, .gz, .zst)')
    src.add_argument('--workload', choices=['twitter', 'zipf', 'shift'],
                     help='generate it (workload.py)')
    workload.add_arguments(ap)
    ap.add_argument('-m', '--memory', type=int, default=16, help='-m for every server (MiB)')
    ap.add_argument('-t', '--threads', type=int, default=4, help='-t for every server')
    ap.add_argument('--target', action='append',
                    help="a server and its extra arguments, e.g. 'segcached --eviction fifo' "
                         "(repeat; default: segcached and memcached)")
    ap.add_argument('--segcached', default=servers.DEFAULT_SEGCACHED)
    ap.add_argument('--memcached', default=servers.DEFAULT_MEMCACHED)
    ap.add_argument('--conns', type=int, default=0, help='connections (default 2 x threads)')
    ap.add_argument('--window', type=int, default=256, help='most records per round')
    ap.add_argument('--ttl-scale', type=float, default=1.0)
    ap.add_argument('--default-ttl', type=int, default=0)
    ap.add_argument('--max-value', type=int, default=1000 * 1000 - 512)
    ap.add_argument('--equal-memory', action='store_true',
                    help='run each segcached target again at the memory memcached used')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    add_arguments(ap)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    total = count_records(a.trace) if a.trace else a.requests
    rows = replay_all(a, total, lambda msg: print('replaying on ' + msg, file=sys.stderr,
                                                  flush=True))
    if a.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return 0
    print('| server | memory used MiB | RSS MiB | objects kept | miss ratio | '
          'miss ratio, 2nd half | gets | evictions | s |')
    print('|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        if 'error' in r:
            print('| %s | %s |' % (r['server'], r['error']))
            continue
        print('| %s | %.1f | %.1f | %d | %.4f | %.4f | %d | %d | %.1f |' % (
            r['server'], r['memory_used'] / (1 << 20), r['rss'] / (1 << 20), r['curr_items'], r['miss_ratio'] or 0,
            r['miss_ratio_2nd_half'] or 0, r['counters']['gets'], r['evictions'],
            r['seconds']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
