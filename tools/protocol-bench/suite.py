#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Runs the protocol-level capacity and miss-ratio suite of issue 9 and
writes its tables into docs/performance.md, between the protocol-bench
markers (appended at the end when they are missing; the rest of the file
is left alone). segcached (posix stack) and Debian's memcached run one
after the other in the same run, at the same -m and -t, and for the
Twitter-shaped points segcached also at the memory memcached used.

  1. steady state: -m 64, keys 1..5,000,000 with 1-byte values, then
     curr_items (steady_fill.py): segcached merge and fifo, memcached;
  2. a Twitter-shaped workload (workload.py twitter) at 16 MB (200,000
     objects, 1.2 M requests) and 256 MB (1,000,000 objects, 3 M requests),
     1 and 4 threads: objects kept and miss ratio (replay.py);
  3. each --trace file (twitter/cache-trace CSV) at the same four points
     (none without --trace);
  4. zipf 0.99, 100-byte values, a working set of 4x the memory (-m 32,
     4 threads, 3 M gets): hit ratio of merge against FIFO (and memcached).

--quick divides the keys and requests by ten (a smoke run; the zipf
point keeps its objects, so its cache is still cold).

Every point is bounded: a server that stops answering for 60 s is recorded
as hung (with its busy threads and whether SIGTERM still stopped it) and
the suite goes on.

usage: tools/protocol-bench/suite.py [--segcached PATH] [--trace FILE]...
           [--note TEXT] [--quick] [--no-write] [--out docs/performance.md]
"""
import argparse
import datetime
import os
import shlex
import sys
import time

import replay
import servers
import steady_fill

BEGIN = '<!-- protocol-bench:begin (written by tools/protocol-bench/suite.py) -->'
END = '<!-- protocol-bench:end -->'
HERE = 'tools/protocol-bench/'
ZIPF_MEMORY = 32
ZIPF_VALUE = 100


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_replay(argv, segcached):
    """Runs replay.py's logic for argv (its command line); returns the rows."""
    ap = argparse.ArgumentParser()
    replay.add_arguments(ap)
    a = ap.parse_args(argv + ['--segcached', segcached])
    total = replay.count_records(a.trace) if a.trace else a.requests
    return replay.replay_all(a, total, lambda msg: log('  ' + msg))


def fmt_ratio(x):
    return '%.4f' % x if x is not None else '-'


def replay_table(points):
    """points: [(memory, threads, workload label, rows)]."""
    out = ['| -m | -t | workload | server | memory used MiB | objects kept | miss ratio '
           '| miss ratio, 2nd half | kept vs memcached | miss ratio vs memcached | requests/s |',
           '|---|---|---|---|---|---|---|---|---|---|---|']
    for mem, thr, label, rows in points:
        mc = next((r for r in rows
                   if r['server'].startswith('memcached') and 'error' not in r), None)
        for r in rows:
            name = r['server'].split(' -m ')[0] + ''.join(
                ' ' + x for x in r['command'][r['command'].index('-t') + 2:]
                if x not in ('-u', 'root'))
            if 'error' in r:
                out.append('| %d | %d | %s | %s | | **hung**: %s | | | | | |' % (
                    mem, thr, label, name, r['error']))
                continue
            kept = ('%.2f×' % (r['curr_items'] / mc['curr_items'])
                    if mc and mc['curr_items'] else '-')
            miss = ('%.3f×' % (r['miss_ratio'] / mc['miss_ratio'])
                    if mc and mc['miss_ratio'] else '-')
            out.append('| %d | %d | %s | %s | %.1f | %d | %s | %s | %s | %s | %d |' % (
                r['memory_mb'], thr, label, name, r['memory_used'] / (1 << 20),
                r['curr_items'], fmt_ratio(r['miss_ratio']),
                fmt_ratio(r['miss_ratio_2nd_half']), kept, miss, r['requests_per_s']))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--segcached', default=servers.DEFAULT_SEGCACHED)
    ap.add_argument('--trace', action='append',
                    help='a twitter/cache-trace CSV to replay (repeat; none by default: '
                         'e.g. twitter_sample.csv, the first 100 requests of a Twitter '
                         'production trace as published in a CacheLib example)')
    ap.add_argument('--note', default='', help='a line put under the heading (e.g. pre-fix)')
    ap.add_argument('--quick', action='store_true', help='a tenth of the requests (smoke run)')
    ap.add_argument('--out', default=os.path.join(servers.ROOT, 'docs', 'performance.md'))
    ap.add_argument('--no-write', action='store_true', help='print the section only')
    a = ap.parse_args()
    scale = 10 if a.quick else 1
    traces = a.trace or []
    if not traces:
        log('no --trace: the suite replays no trace file (step 3 left out)')
    seg = os.path.relpath(a.segcached, servers.ROOT) if a.segcached.startswith(servers.ROOT) \
        else a.segcached
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = servers.loadavg()
    t0 = time.monotonic()
    cmds = []
    md = []

    # 1. Steady state.
    keys = 5_000_000 // scale
    log('steady state fill (%d keys)' % keys)
    fill_rows = []
    for srv in [servers.Server('segcached', 64, 4, ['--eviction', p], segcached=a.segcached)
                for p in ('merge', 'fifo')] + [servers.Server('memcached', 64, 4)]:
        log('  %s' % srv.label())
        fill_rows.append(steady_fill.run_one(srv, keys, 20000, True))
    cmds.append(HERE + 'steady_fill.py --segcached %s --keys %d --read-back' % (seg, keys))
    mc = fill_rows[-1]['curr_items']
    md += ['### Steady state: keys 1..%s, 1-byte values, `-m 64 -t 4`' % format(keys, ','), '',
           '| server | curr_items | of the keys | vs memcached | read back correct |',
           '|---|---|---|---|---|']
    for r in fill_rows:
        md.append('| %s | %d | %.1f%% | %.2f× | %d (%d wrong) |' % (
            r['server'].replace(' -m 64 -t 4', ''), r['curr_items'], 100 * r['curr_items'] / keys,
            r['curr_items'] / mc, r['read_back'], r['read_back_wrong']))
    md.append('')

    # 2. Twitter-shaped workload, 3. trace files.
    twitter_points = [(16, 200_000, 1_200_000), (256, 1_000_000, 3_000_000)]
    points = []
    for mem, objects, requests in twitter_points:
        for thr in (1, 4):
            argv = ['--workload', 'twitter', '--objects', str(objects // scale),
                    '--requests', str(requests // scale), '-m', str(mem), '-t', str(thr),
                    '--equal-memory']
            log('twitter workload %s' % ' '.join(argv))
            label = 'twitter %dk obj, %.1fM req' % (objects // scale // 1000,
                                                    requests / scale / 1e6)
            points.append((mem, thr, label, run_replay(argv, a.segcached)))
            cmds.append(HERE + 'replay.py --segcached %s %s' % (seg, ' '.join(argv)))
    md += ['### Twitter-shaped workload at equal memory', '',
           'memcached\'s `-m` bounds its slab pages only: it takes one 1 MiB page per slab '
           'class in use even beyond `-m` (30 classes here), and its hash table is outside '
           '`-m`; segcached\'s `-m` covers its heap, table and segment headers. *Memory used* '
           'is what each held at the end (memcached: `total_malloced` + `hash_bytes`; '
           'segcached: heap + table + headers). Each point runs memcached, segcached at the '
           'same `-m`, and segcached at the memory memcached used (`--equal-memory`, '
           'rounded up to MiB): that row is the equal-memory comparison.', '',
           'Generated by `workload.py twitter` (seed 1): zipf 1.0 popularity, '
           'eleven TTL classes from 10 s to 7 days, log-normal value sizes '
           '(median 230 B, 1 B to 64 KiB), every object created by a set, then 90% get, '
           '9% set, 1% delete; a get miss is followed by a set (look-aside). '
           '*Objects kept* is curr_items at the end; the miss ratio counts '
           'get misses / gets over the whole run and over its second half.', '']
    md += replay_table(points) + ['']
    for tr in traces:
        tpoints = []
        for mem in (16, 256):
            for thr in (1, 4):
                argv = ['--trace', tr, '-m', str(mem), '-t', str(thr)]
                log('trace %s' % ' '.join(argv))
                tpoints.append((mem, thr, os.path.basename(tr), run_replay(argv, a.segcached)))
                cmds.append(HERE + 'replay.py --segcached %s %s' % (seg, ' '.join(argv)))
        n = replay.count_records(tr)
        md += ['### Trace replay: `%s` (%d requests)' % (os.path.basename(tr), n), '']
        if n < 100_000:
            md += ['A format check only: %d requests are far too few to measure a miss ratio '
                   '(nothing is evicted; both servers must agree).' % n, '']
        md += replay_table(tpoints) + ['']

    # 4. Zipf, working set 4x memory: merge vs FIFO.
    key_len = len(b'zipf:1000000')
    objects = 4 * ZIPF_MEMORY * (1 << 20) // (key_len + ZIPF_VALUE)
    requests = 3_000_000 // scale
    argv = ['--workload', 'zipf', '--alpha', '0.99', '--value-size', str(ZIPF_VALUE),
            '--objects', str(objects), '--requests', str(requests),
            '-m', str(ZIPF_MEMORY), '-t', '4',
            '--target', 'segcached --eviction merge', '--target', 'segcached --eviction fifo',
            '--target', 'memcached']
    log('zipf %s' % ' '.join(argv))
    zrows = run_replay(argv, a.segcached)
    cmds.append(HERE + 'replay.py --segcached %s %s'
                % (seg, ' '.join(shlex.quote(x) for x in argv)))
    fifo = next((r for r in zrows if r['command'][-1] == 'fifo' and 'error' not in r), None)
    md += ['### Hit ratio at a working set of 4× the memory: merge vs FIFO', '',
           'zipf 0.99 over %s objects of %d-byte values (keys `zipf:N`), %d bytes of keys and '
           'values in all = 4 × `-m %d`; %s gets, each miss followed by a set of the object. '
           'Hit ratio over the second half (warm cache) and over the whole run.' % (
               format(objects, ','), ZIPF_VALUE, objects * (key_len + ZIPF_VALUE),
               ZIPF_MEMORY, format(requests, ',')), '',
           '| server | hit ratio, 2nd half | hit ratio, whole run | vs FIFO (2nd half) '
           '| objects kept | requests/s |', '|---|---|---|---|---|---|']
    for r in zrows:
        name = ' '.join(x for x in r['command'][r['command'].index('-t') + 2:]
                        if x not in ('-u', 'root'))
        name = (r['server'].split(' ')[0] + ' ' + name).strip()
        if 'error' in r:
            md.append('| %s | **hung**: %s | | | | |' % (name, r['error']))
            continue
        h2 = 1 - r['miss_ratio_2nd_half']
        md.append('| %s | %.4f | %.4f | %s | %d | %d |' % (
            name, h2, 1 - r['miss_ratio'],
            '%.3f×' % (h2 / (1 - fifo['miss_ratio_2nd_half'])) if fifo else '-',
            r['curr_items'], r['requests_per_s']))
    md.append('')

    secs = time.monotonic() - t0
    head = [BEGIN, '## Through the protocol: objects kept and miss ratio (issue 9)', '',
            'segcached (posix stack, `--no-huge`) and Debian\'s memcached %s on loopback, '
            'one after the other in the same run, at the same `-m` and `-t` '
            '(memcached\'s `-m` covers item memory only; segcached\'s covers heap, hash table '
            'and segment headers). Written by `tools/protocol-bench/suite.py` '
            '(tools/protocol-bench/README.md); rerun it to refresh the tables.' % (
                servers.version_of(servers.DEFAULT_MEMCACHED, 'memcached').split()[-1]), '']
    if a.note:
        head += ['**%s**' % a.note, '']
    head += ['Host: %s; commit %s; %s; the suite took %.0f s. Load average (1 min) at the '
             'start and the end: %s and %s (other work on this shared machine slows the '
             'client and the servers alike; requests/s are not comparable across rows, the '
             'counts and ratios are).' % (
                 servers.host_description(), servers.tree_commit(), started.strftime('%Y-%m-%d %H:%M UTC'),
                 secs, load0, servers.loadavg()), '']
    tail = ['### Commands (protocol suite)', '',
            'From the repository root, segcached built by meson:', '',
            '```sh', HERE + 'suite.py --segcached %s%s' % (
                seg, ''.join(' --trace ' + t for t in (a.trace or []))),
            '```', '', 'which runs, point by point:', '', '```sh'] + cmds + ['```', END]
    section = '\n'.join(head + md + tail) + '\n'
    if a.no_write:
        print(section)
        return 0
    with open(a.out) as f:
        doc = f.read()
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END) + 1:]
    else:
        doc = doc.rstrip('\n') + '\n\n' + section
    with open(a.out, 'w') as f:
        f.write(doc)
    print(section)
    log('wrote %s' % a.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
