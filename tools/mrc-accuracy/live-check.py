#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Checks the live curve from outside: replays one workload over the
protocol (tools/protocol-bench/replay.py's Replay, posix stack, loopback)
on a segcached at -m M and reads `stats mrc` at the end, then replays the
same requests on servers at the other sizes and measures their get miss
ratio, since start and over the same last gets as the curve's recent
window (mrc_recent_gets: the -m M server's window; the other runs are cut
there, at the same get of the trace, and counted from it). Prints a
Markdown table: for each size, the curve's prediction and the measured
ratio, since start and recent.

usage: tools/mrc-accuracy/live-check.py [--workload twitter|zipf] [workload.py options]
           [-m 16] [--sizes 8,16,32] [-t 1] [--segcached PATH] [--json]

Miss ratios do not depend on timing, except TTL expiry: the replay runs in
wall-clock time, faster or slower than the trace's timestamps.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'protocol-bench'))
import replay   # noqa: E402
import servers  # noqa: E402
import workload  # noqa: E402


def run(a, mb, records, cut=None):
    """Replays records on segcached -m mb; returns the server's `stats mrc`
    (at -m a.memory) and the client's counts, total and from get `cut` on."""
    srv = servers.Server('segcached', mb, a.threads, [], segcached=a.segcached)
    with srv:
        r = replay.Replay(srv, max(2, 2 * a.threads), 256, 1.0, 0, 1000 * 1000 - 512, None)
        at = None
        if cut is not None:
            r.run(records[:cut])
            at = dict(r.c)
            r.run(records[cut:])
        else:
            r.run(records)
        mrc = srv.stats(b'mrc') if mb == a.memory else None
    c = r.c
    recent = None
    if at is not None:
        g = c['gets'] - at['gets']
        recent = (c['misses'] - at['misses']) / g if g else None
    return mrc, c['misses'] / c['gets'], recent


def curve(st, prefix):
    out = {}
    for k, v in st.items():
        if k.startswith(prefix):
            out[int(k[len(prefix):])] = float(v.split()[0])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--workload', choices=['twitter', 'zipf'], default='twitter')
    workload.add_arguments(ap)
    ap.add_argument('-m', '--memory', type=int, default=16)
    ap.add_argument('--sizes', default='8,16,32', help='MiB, the -m one among them')
    ap.add_argument('-t', '--threads', type=int, default=1)
    ap.add_argument('--segcached', default=servers.DEFAULT_SEGCACHED)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(',')]
    records = list(workload.requests(a.workload, a.objects, a.requests, a.alpha, a.seed,
                                     a.value_size))
    st, here, here_recent = run(a, a.memory, records)
    since, recent = curve(st, 'mrc:'), curve(st, 'mrc_recent:')
    gets = sum(1 for rec in records if rec[5] in replay.READS)
    cut = None
    if 'mrc_recent_gets' in st:
        # (a build before the recent window has none: since start alone)
        window = int(st['mrc_recent_gets'])
        here_recent = float(st['mrc_recent_measured_miss_ratio'])
        # The window's first get, as an index into the records.
        cut, seen = len(records), 0
        for i, rec in enumerate(records):
            if seen == gets - window:
                cut = i
                break
            seen += rec[5] in replay.READS
    rows = []
    for mb in sizes:
        if mb == a.memory:
            m, mr = here, here_recent
        else:
            _, m, mr = run(a, mb, records, cut)
        b = mb << 20
        rows.append(dict(mib=mb, predicted=since.get(b), measured=m,
                         predicted_recent=recent.get(b), measured_recent=mr))
    info = {k: st[k] for k in ('mrc_sample_rate', 'mrc_sample_keys', 'mrc_sample_max_keys',
                               'mrc_memory', 'mrc_memory_used', 'mrc_recent_epochs',
                               'mrc_recent_gets') if k in st}
    if a.json:
        print(json.dumps(dict(info=info, gets=gets, rows=rows), indent=1))
        return
    print('segcached -m %d -t %d, %s workload (%d objects, %d requests, %d gets); %s\n' %
          (a.memory, a.threads, a.workload, a.objects, a.requests, gets,
           ', '.join('%s %s' % kv for kv in info.items())))
    print('| -m | predicted | measured | error | recent: predicted | measured | error |')
    print('|---:|---:|---:|---:|---:|---:|---:|')

    def f(x):
        return '%.4f' % x if x is not None else '-'

    for r in rows:
        e = (abs(r['predicted'] - r['measured']) if r['predicted'] is not None else None)
        er = (abs(r['predicted_recent'] - r['measured_recent'])
              if r['predicted_recent'] is not None and r['measured_recent'] is not None
              else None)
        print('| %d | %s | %s | %s | %s | %s | %s |' % (
            r['mib'], f(r['predicted']), f(r['measured']), f(e), f(r['predicted_recent']),
            f(r['measured_recent']), f(er)))


if __name__ == '__main__':
    main()
