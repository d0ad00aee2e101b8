#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Runs the standard storage-engine suite and writes its results into
docs/performance.md (the section between the storage-bench markers; the
rest of the file is left alone).

The suite: lib/seg against the rte_hash baseline on 1 and 2 threads, 64-byte
values, 90% get / 10% set, zipf 0.99 and uniform keys, both engines side by
side in one process with alternating order (ratios are per round, so the
machine's drift cancels); then the fill experiment (64 MiB, keys 1..N,
1-byte values) on seg, baseline and a real memcached (-m 64, and
-m 64 -n 5 -f 1.05 -C).

usage: tools/storage-bench/run-suite.py [--bench PATH] [--out FILE] [--ops N]
                                         [--keys N] [--repeat N] [--memory LIST]
                                         [--mix LIST] [--no-write]
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

BEGIN = '<!-- storage-bench:begin (written by tools/storage-bench/run-suite.py) -->'
END = '<!-- storage-bench:end -->'
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def run_json(cmd, timeout):
    print('$ ' + ' '.join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit('%s exited with %d' % (cmd[0], p.returncode))
    return json.loads(p.stdout)


def build_type(bench):
    """The meson buildtype of the build directory the bench comes from."""
    d = os.path.dirname(os.path.abspath(os.path.join(ROOT, bench)))
    while d != '/' and not os.path.isdir(os.path.join(d, 'meson-info')):
        d = os.path.dirname(d)
    try:
        p = subprocess.run(['meson', 'introspect', '--buildoptions', d],
                           capture_output=True, text=True, timeout=60)
        for o in json.loads(p.stdout):
            if o['name'] == 'buildtype':
                return o['value']
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return '?'


def loadavg():
    try:
        with open('/proc/loadavg') as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine():
    cpu = '?'
    try:
        with open('/proc/cpuinfo') as f:
            m = re.search(r'^model name\s*:\s*(.*)$', f.read(), re.M)
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    try:
        rev = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        rev = (rev or '?') + (' + uncommitted changes' if dirty else '')
    except OSError:
        rev = '?'
    return '%s, %d CPUs, Linux %s; commit %s; %s' % (
        cpu, os.cpu_count(), platform.release(), rev,
        datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))


def fmt(v, spec='.3f'):
    return '—' if v is None else format(v, spec)


def cmdline(cmd):
    return ' '.join(shlex.quote(c) for c in cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--bench', default='build/tools/storage-bench/segcached-storage-bench',
                    help='the bench binary, relative to the repository root')
    ap.add_argument('--out', default='docs/performance.md')
    ap.add_argument('--ops', type=int, default=10_000_000, help='timed ops per run (10000000)')
    ap.add_argument('--keys', type=int, default=1_000_000, help='keys (1000000)')
    ap.add_argument('--repeat', type=int, default=5, help='rounds per configuration (5)')
    ap.add_argument('--memory', default='256M,1G',
                    help='memory budgets of the throughput runs, comma-separated (256M,1G)')
    ap.add_argument('--mix', default='90:10:0',
                    help='get:set:delete mixes of the throughput runs, comma-separated '
                    '(90:10:0; e.g. 90:10:0,50:50:0 adds the write-heavy rows)')
    ap.add_argument('--no-write', action='store_true', help='print the section, write nothing')
    a = ap.parse_args()
    bench = a.bench
    if not os.path.exists(os.path.join(ROOT, bench)):
        raise SystemExit('%s not found: build first (meson setup build && ninja -C build)' % bench)

    load_start = loadavg()
    rows = []
    notes = []
    mixes = a.mix.split(',')
    for mix in mixes:
        if not re.fullmatch(r'\d+:\d+:\d+', mix):
            raise SystemExit('--mix: %r is not GET:SET:DELETE' % mix)
    configs = [(mix, memory, threads, dist) for mix in mixes
               for memory in a.memory.split(',') for threads in (1, 2)
               for dist in ('zipf:0.99', 'uniform')]
    for mix, memory, threads, dist in configs:
        cmd = [bench, '--engine', 'both', '--threads', str(threads), '--dist', dist,
               '--keys', str(a.keys), '--value-size', '64', '--mix', mix,
               '-m', memory, '--ops', str(a.ops), '--repeat', str(a.repeat), '--json']
        d = run_json(cmd, timeout=1800)
        rows.append((memory, threads, dist, cmd, d, mix))
        # A comparison is only fair if every key was resident in both.
        for r in d['runs']:
            if (r['warmup']['evictions'] or r['warmup']['failed'] or r['set_failed']
                    or r['errors'] or r['time_limited']):
                notes.append('%s, %d thread(s), %s, mix %s, -m %s, round %d: warm-up '
                             'evictions %d, failed warm-up sets %d, failed sets %d, '
                             'errors %d%s' % (
                                 r['engine'], threads, dist, mix, memory, r['round'],
                                 r['warmup']['evictions'], r['warmup']['failed'],
                                 r['set_failed'], r['errors'],
                                 ', stopped by the time limit'
                                 if r['time_limited'] else ''))

    fill_cmd = [bench, '--engine', 'both', '--fill', '-m', '64M', '--value-size', '1', '--json']
    fill = run_json(fill_cmd, timeout=1800)
    mc = []
    for margs in (['-m', '64'], ['-m', '64', '-n', '5', '-f', '1.05', '-C']):
        cmd = ['tools/memcached-fill.py', '--value-size', '1', '--json', '--'] + margs
        mc.append((margs, cmd, run_json(['/usr/bin/python3'] + cmd, timeout=900)))

    load_end = loadavg()
    out = []
    w = out.append
    w(BEGIN)
    w('## Storage engine')
    w('')
    w('lib/seg (Segcache) against lib/baseline (DPDK rte_hash), storage only, no network. '
      'Measured with `segcached-storage-bench` (tools/storage-bench/README.md); this section '
      'is written by `tools/storage-bench/run-suite.py` — rerun it to refresh the numbers.')
    w('')
    w('Machine: %s. Build: meson buildtype `%s`. Load average (1 min) at the start and the '
      'end of the suite: %s and %s — with %d CPUs, anything above 0 is other work competing '
      'with the bench, which depresses the absolute numbers (the 2-thread rows most) but '
      'hits both engines of a round alike.' % (
          machine(), build_type(bench), fmt(load_start, '.1f'), fmt(load_end, '.1f'),
          os.cpu_count()))
    w('')
    w('### Throughput')
    w('')
    w('%d keys (16-byte zero-padded decimal), 64-byte values, get:set:delete mix as in the '
      'first column (%%), all keys '
      'loaded before timing, memory budget `-m` as given (the same for both engines; each '
      'sizes its hash table from it); %d timed operations per run; %d rounds per row, both '
      'engines in each round, alternating which goes first. **seg/baseline** is the median of the '
      'per-round throughput ratios (min–max in brackets): the machine is shared and noisy, so '
      'only ratios measured side by side mean anything. Locks/op = (lock_bucket + '
      'lock_segment) acquisitions in the timed phase / operations. RSS growth = resident '
      'memory added by engine creation and warm-up, per item (first round of each engine).'
      % (a.keys, a.ops, a.repeat))
    w('')
    w('| mix | memory | threads | key popularity | seg Mops/s | baseline Mops/s | **seg/baseline** | '
      'seg locks/op | baseline locks/op | hit ratio seg / baseline | '
      'RSS growth B/item seg / baseline |')
    w('|---|---|---|---|---|---|---|---|---|---|---|')
    for memory, threads, dist, cmd, d, mix in rows:
        s = d['summary']
        rr = s.get('seg_over_baseline_per_round', [])
        w('| %s | %s | %d | %s | %s | %s | **%s** (%s–%s) | %s | %s | %s / %s | %s / %s |' % (
            mix, memory, threads, dist, fmt(s['seg']['mops_median']), fmt(s['baseline']['mops_median']),
            fmt(s.get('seg_over_baseline_median')), fmt(min(rr) if rr else None),
            fmt(max(rr) if rr else None), fmt(s['seg']['locks_per_op'], '.4f'),
            fmt(s['baseline']['locks_per_op'], '.4f'), fmt(s['seg']['hit_ratio'], '.4f'),
            fmt(s['baseline']['hit_ratio'], '.4f'), fmt(s['seg']['rss_bytes_per_item'], '.0f'),
            fmt(s['baseline']['rss_bytes_per_item'], '.0f')))
    w('')
    if notes:
        w('**Not every key stayed resident** — these rows do not compare like with like:')
        w('')
        for n in notes:
            w('- ' + n)
        w('')
    gen = [r[4].get('generator_ns_per_op') for r in rows]
    w('Every operation above includes the workload generator (random numbers, the key\'s '
      'decimal form; zipf ids are drawn before timing): %s–%s ns/op measured alone, the same '
      'for both engines.' % (fmt(min(gen), '.1f'), fmt(max(gen), '.1f')))
    w('')
    w('### Objects in 64 MiB')
    w('')
    w('The "memcached for small objects" experiment: keys 1, 2, 3, ... as decimal strings, '
      '1-byte values, stored until the first eviction. *Before first eviction* counts the '
      'objects resident just before the set that caused it; *read back* reads every stored '
      'key afterwards and counts correct values (it equals the engine\'s curr_items). '
      'For memcached the `-m` budget covers items only, not its hash table; for seg and '
      'baseline `-m` bounds everything (heap, hash table, metadata).')
    w('')
    w('| store | before first eviction | read back after | budget bytes/object '
      '| vs memcached -m 64 |')
    w('|---|---|---|---|---|')
    mc_ref = mc[0][2]['curr_items'] if mc else None
    for f in fill['fills']:
        n = f['items_before_first_eviction']
        w('| %s (segcached-storage-bench) | %d | %d | %.1f | %s |' % (
            f['engine'], n, f['readback_hits'], 64 * 2**20 / n if n else float('nan'),
            fmt(n / mc_ref if mc_ref else None, '.2f') + '×'))
    for margs, _, r in mc:
        n = r['curr_items']
        w('| %s `%s` | %d | %d | %.1f | %s |' % (
            r['server'], ' '.join(margs), n, r['readback_hits'], 64 * 2**20 / n,
            fmt(n / mc_ref if mc_ref else None, '.2f') + '×'))
    w('')
    w('### Commands')
    w('')
    w('Run from the repository root, with the bench built by meson (buildtype `%s`: '
      '`meson setup <dir> --buildtype=%s && ninja -C <dir>`):'
      % (build_type(bench), build_type(bench)))
    w('')
    w('```sh')
    for r in rows:
        w(cmdline(r[3]))
    w(cmdline(fill_cmd))
    for _, cmd, _ in mc:
        w(cmdline(cmd))
    w('```')
    w('')
    w('or all of it, rewriting this section: `tools/storage-bench/run-suite.py` '
      '(`--ops`, `--keys`, `--repeat`, `--memory`, `--mix` to change the defaults; this '
      'table: `%s`).' % cmdline(['tools/storage-bench/run-suite.py'] + sys.argv[1:]))
    w(END)
    section = '\n'.join(out) + '\n'

    if a.no_write:
        print(section)
        return 0
    path = os.path.join(ROOT, a.out)
    if os.path.exists(path):
        text = open(path).read()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1].lstrip('\n')
            text = head + section + ('\n' + tail if tail else '')
        else:
            text = text.rstrip('\n') + '\n\n' + section
    else:
        text = '# Performance\n\n' + section
    with open(path, 'w') as f:
        f.write(text)
    print('wrote %s' % a.out, file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
