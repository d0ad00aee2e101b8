#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Steady state through the protocol (issue 9): a server with `-m 64` gets
keys 1..5,000,000 with 1-byte values, all written, then `stats curr_items`
says how many it kept. Runs segcached with each eviction policy asked for
and Debian's memcached side by side in one run, and prints a table.

The writer is one connection sending pipelined `set K 0 0 1 noreply` in
batches of --batch keys (a reader thread drains anything the server sends
back, so an unexpected reply can never block the writer); a `version`
round trip after every batch marks when the server has executed it: the
fill's sets a second over its first and its last tenth come from those
marks (the table must keep up: the end as fast as the start). --read-back then gets every key again (multi-gets of 100) and counts
correct values, which must agree with curr_items.

usage: tools/protocol-bench/steady_fill.py [--segcached PATH] [--keys N]
           [--memory MB] [--policies merge,fifo] [--no-memcached]
           [--read-back] [--json]
"""
import argparse
import json
import sys
import threading
import time

import servers


def value_byte(k):
    """The storage bench's 1-byte value pattern (tools/storage-bench/keys.h)."""
    return b'%c' % (ord('a') + k % 26)


class Drain(threading.Thread):
    """Reads and counts whatever the server sends while the writer writes;
    notes when each `version` answer (one after every batch) came back."""

    def __init__(self, conn, versions):
        super().__init__(daemon=True)
        self.conn = conn
        self.versions = versions
        self.marks = []
        self.lines = []
        self.done = threading.Event()
        self.error = None

    def run(self):
        try:
            while len(self.marks) < self.versions:
                ln = self.conn.line()
                if ln.startswith(b'VERSION '):
                    self.marks.append(time.monotonic())
                    continue
                if len(self.lines) < 10:
                    self.lines.append(ln)
        except Exception as e:  # reported by the writer
            self.error = e
        self.done.set()


def window_rates(marks, t0, keys, batch, share=10):
    """Sets a second over the first and over the last `share` per cent of
    the keys, from the times the servers answered the `version` after each
    batch (so what the server ran, not what the client queued)."""
    m = len(marks)
    n = min(max(1, m * share // 100), m - 1) if m > 1 else 1
    first = min(keys, n * batch) / (marks[n - 1] - t0)
    last_keys = keys - (m - n) * batch
    last = last_keys / (marks[-1] - (marks[-1 - n] if m > n else t0))
    return round(first), round(last)


def fill(srv, keys, batch):
    """Writes keys 1..keys, a `version` after every batch; returns seconds
    spent and the sets a second over the first and last tenth of the keys."""
    conn = srv.connect()
    batches = range(1, keys + 1, batch)
    drain = Drain(conn, len(batches))
    drain.start()
    t0 = time.monotonic()
    for first in batches:
        last = min(keys, first + batch - 1)
        conn.send(b''.join(b'set %d 0 0 1 noreply\r\n%s\r\n' % (k, value_byte(k))
                           for k in range(first, last + 1)) + b'version\r\n')
    if not drain.done.wait(servers.IO_TIMEOUT * 10):
        raise RuntimeError('%s: no answer to version after the fill' % srv.label())
    secs = time.monotonic() - t0
    conn.close()
    if drain.error:
        raise RuntimeError('%s: %r' % (srv.label(), drain.error))
    if drain.lines:
        raise RuntimeError('%s: unexpected replies to noreply sets: %r'
                           % (srv.label(), drain.lines))
    return secs, window_rates(drain.marks, t0, keys, batch)


def read_back(srv, keys):
    """Gets every key; returns (correct values, wrong values)."""
    conn = srv.connect()
    hits = wrong = 0
    step = 100
    window = 50   # multi-gets in flight
    firsts = list(range(1, keys + 1, step))
    for w in range(0, len(firsts), window):
        group = firsts[w:w + window]
        conn.send(b''.join(
            b'get ' + b' '.join(b'%d' % k for k in range(f, min(keys, f + step - 1) + 1))
            + b'\r\n' for f in group))
        for _ in group:
            while True:
                ln = conn.line()
                if ln == b'END':
                    break
                parts = ln.split()
                k, n = int(parts[1]), int(parts[3])
                v = conn.exact(n + 2)[:n]
                if v == value_byte(k):
                    hits += 1
                else:
                    wrong += 1
    conn.close()
    return hits, wrong


def run_one(srv, keys, batch, do_read_back):
    with srv:
        secs, (first_rate, last_rate) = fill(srv, keys, batch)
        st = srv.stats()
        row = {
            'server': srv.label(),
            'command': srv.cmd,
            'version': st.get('version', '?'),
            'keys_written': keys,
            'curr_items': int(st['curr_items']),
            'evictions': int(st.get('evictions', 0)),
            'limit_maxbytes': int(st.get('limit_maxbytes', 0)),
            'fill_seconds': round(secs, 2),
            'first_tenth_sets_per_s': first_rate,
            'last_tenth_sets_per_s': last_rate,
            'hash_chain_max': int(st.get('hash_chain_max', 0)),
        }
        if do_read_back:
            row['read_back'], row['read_back_wrong'] = read_back(srv, keys)
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--segcached', default=servers.DEFAULT_SEGCACHED)
    ap.add_argument('--memcached', default=servers.DEFAULT_MEMCACHED)
    ap.add_argument('--keys', type=int, default=5_000_000)
    ap.add_argument('--memory', type=int, default=64, help='-m for every server (MiB)')
    ap.add_argument('--threads', type=int, default=4, help='-t for every server')
    ap.add_argument('--policies', default='merge,fifo',
                    help='segcached --eviction values, comma-separated (merge,fifo)')
    ap.add_argument('--no-memcached', action='store_true')
    ap.add_argument('--batch', type=int, default=20000, help='keys per pipelined batch')
    ap.add_argument('--read-back', action='store_true', help='get every key back and count')
    ap.add_argument('--json', action='store_true', help='the rows as JSON on stdout')
    a = ap.parse_args()

    runs = [servers.Server('segcached', a.memory, a.threads, ['--eviction', p],
                           segcached=a.segcached)
            for p in a.policies.split(',') if p]
    if not a.no_memcached:
        runs.append(servers.Server('memcached', a.memory, a.threads, memcached=a.memcached))
    rows = []
    for srv in runs:
        print('filling %s ...' % srv.label(), file=sys.stderr, flush=True)
        rows.append(run_one(srv, a.keys, a.batch, a.read_back))
    if a.json:
        json.dump({'host': servers.host_description(), 'rows': rows}, sys.stdout, indent=2)
        print()
        return 0
    mc = next((r['curr_items'] for r in rows if r['server'].startswith('memcached')), None)
    print('%d keys (1-byte values) written to each server; %s'
          % (a.keys, servers.host_description()))
    print('| server | curr_items | resident share | vs memcached | evictions | fill s '
          '| sets/s first 10%% | sets/s last 10%% |%s' % (' read back |' if a.read_back else ''))
    print('|---|---|---|---|---|---|---|---|%s' % ('---|' if a.read_back else ''))
    for r in rows:
        print('| %s (%s) | %d | %.3f | %s | %d | %.1f | %d | %d |%s' % (
            r['server'], r['version'], r['curr_items'], r['curr_items'] / a.keys,
            '%.2f×' % (r['curr_items'] / mc) if mc else '-', r['evictions'], r['fill_seconds'],
            r['first_tenth_sets_per_s'], r['last_tenth_sets_per_s'],
            ' %d (%d wrong) |' % (r['read_back'], r['read_back_wrong']) if a.read_back else ''))
    for r in rows:
        print('$ ' + ' '.join(r['command']), file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
