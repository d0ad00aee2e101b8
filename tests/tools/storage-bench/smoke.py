#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Smoke test of segcached-storage-bench (meson suite 'tools').

Runs the bench for a small, fixed number of operations on both engines and
checks that its JSON is well-formed and that its numbers agree with each
other and with the engines' own counters: every requested operation was
run and counted once, the per-thread numbers add up, hits and misses match
engine_stats, every pre-loaded key is resident, and a fill reads back
exactly the objects the engine says it holds. No timing thresholds.

usage: smoke.py BENCH [MEMCACHED_FILL_SCRIPT]
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)


def bench(exe, *args):
    cmd = [exe, *args]
    print('$ ' + ' '.join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        raise SystemExit('bench exited with %d' % p.returncode)
    return p.stdout


def check_run(r, cfg, label):
    label = '%s round %d %s' % (label, r['round'], r['engine'])
    c = r['counters']
    check(r['ops'] == r['ops_requested'] == cfg['ops'], label + ': ops == requested')
    check(not r['time_limited'], label + ': not stopped by the time limit')
    check(r['gets'] + r['sets'] + r['deletes'] == r['ops'], label + ': gets+sets+deletes == ops')
    pt = r['per_thread']
    check(len(pt) == cfg['threads'], label + ': one entry per thread')
    for f in ('ops', 'gets', 'get_hits', 'sets', 'deletes'):
        check(sum(t[f] for t in pt) == r[f], label + ': per-thread %s add up' % f)
    # Every thread got its share of the requested operations.
    share = cfg['ops'] // cfg['threads']
    check(all(t['ops'] in (share, share + 1) for t in pt), label + ': even split of ops')
    check(r['errors'] == 0, label + ': no unexpected statuses')
    check(r['set_failed'] == 0, label + ': no failed sets with memory to spare')
    # The bench's own counts against the engine's counters (timed phase).
    check(c['cmd_get'] == r['gets'], label + ': engine cmd_get == gets issued')
    check(c['get_hits'] == r['get_hits'], label + ': engine get_hits == hits seen')
    check(c['get_hits'] + c['get_misses'] == c['cmd_get'], label + ': hits + misses == cmd_get')
    check(c['cmd_set'] == r['sets'], label + ': engine cmd_set == sets issued')
    check(c['set_stored'] == r['sets'] - r['set_failed'], label + ': engine set_stored')
    check(c['delete_hits'] == r['delete_hits'], label + ': engine delete_hits')
    check(c['delete_hits'] + c['delete_misses'] == r['deletes'],
          label + ': delete hits + misses == deletes issued')
    check(r['warmup']['stored'] == cfg['keys'] and r['warmup']['failed'] == 0,
          label + ': every key pre-loaded')
    check(r['warmup']['evictions'] == 0 and r['evictions'] == 0, label + ': no evictions')
    check(r['mops'] is not None and r['mops'] > 0, label + ': throughput reported')
    es = r['engine_stats']
    # lib/seg's table grows with the objects outside --memory (like
    # memcached's); what it started with is inside.
    check(es['heap_bytes'] + es['table_bytes'] - es['table_grown_bytes'] + es['meta_bytes']
          <= cfg['memory'], label + ': heap + starting table + meta within --memory')
    check(r['locks_per_op'] is not None and r['locks_per_op'] >= 0, label + ': locks/op reported')
    check_contention(r, c, cfg, label)
    if cfg['mix']['delete'] == 0:
        check(r['get_hits'] == r['gets'], label + ': every get hits without deletes')
        check(r['memory']['items'] == cfg['keys'], label + ': curr_items == keys')
    else:
        live = cfg['keys'] - (r['delete_hits'])  # lower bound: sets re-add keys
        check(r['memory']['items'] >= live, label + ': curr_items >= keys - deleted')


def check_contention(r, c, cfg, label):
    """The contention block (docs/bench/journal/contention-model.md) is
    the engine's counters over the operations, and lib/seg counts every
    shared-line read-modify-write of a store."""
    k = r['contention']
    shared = (c['lock_bucket'] + c['lock_segment'] + c['rmw_segment'] + c['rmw_open_shared'] +
              c['rmw_bucket'] + c['rmw_global'])
    check(abs(k['shared_rmw_per_op'] - shared / r['ops']) < 1e-4 * max(1, k['shared_rmw_per_op']),
          label + ': shared_rmw_per_op == counted RMWs / ops')
    check(c['evict_passes'] == 0 and c['evict_ns'] == 0 and k['serial_fraction'] == 0,
          label + ': no evict_lock passes without evictions')
    if r['engine'] == 'seg' and cfg['mix']['delete'] == 0:
        # Every store appends and takes the bucket lock. Appends take
        # bytes a chunk of at most 2 KiB at a time, one compare-and-swap
        # of write_off on the segment's header each (lib/seg/seg_chunk.c),
        # so at least one header RMW per 2 KiB stored and fewer than one
        # per store; the live counts of the old and the new item's
        # segments are held back per worker and applied a segment at a
        # time (lib/seg/seg_live.c), so they add little.
        header = c['rmw_segment'] + c['rmw_open_shared']
        check(header >= c['set_bytes'] / 2048, label + ': a segment-header RMW per chunk')
        check(header < c['set_stored'], label + ': < 1 segment-header RMW per store')
        check(c['lock_bucket'] >= c['set_stored'], label + ': a bucket lock per store')


def run_case(exe, engines, args, rounds):
    out = bench(exe, '--engine', engine_arg(engines), *args, '--json')
    d = json.loads(out)  # well-formed, one document
    cfg = d['config']
    check(d['mode'] == 'run', 'mode is run')
    check(len(d['runs']) == len(engines) * rounds, 'one run per engine and round')
    check(sorted({r['engine'] for r in d['runs']}) == engines, 'every engine ran')
    for r in d['runs']:
        check_run(r, cfg, ' '.join(args))
    s = d['summary']
    for e in engines:
        check(s[e]['rounds'] == rounds, 'summary counts the rounds of ' + e)
    if len(engines) == 2:
        check(len(s.get('seg_over_baseline_per_round', [])) == rounds, 'a ratio per round')
        check(s.get('seg_over_baseline_median') is not None, 'median ratio present')


def fill_case(exe, engines):
    out = bench(exe, '--engine', engine_arg(engines), '--fill', '-m', '16M',
                '--value-size', '1', '--json')
    d = json.loads(out)
    check(d['mode'] == 'fill' and len(d['fills']) == len(engines), 'fill ran on every engine')
    for f in d['fills']:
        lb = 'fill ' + f['engine']
        check(f['stop'] == 'eviction', lb + ': stopped at the first eviction')
        check(f['evictions'] > 0, lb + ': engine counted the eviction')
        check(f['stored'] == f['attempted'], lb + ': no set failed before the eviction')
        check(f['items_before_first_eviction'] == f['stored'] - 1,
              lb + ': every earlier key was resident before the evicting set')
        check(f['readback_corrupt'] == 0, lb + ': read-back values intact')
        check(f['readback_hits'] == f['curr_items'], lb + ': read-back hits == curr_items')
        check(0 < f['curr_items'] <= f['stored'], lb + ': curr_items within what was stored')
        check(0 < f['engine_bytes'] - f['table_grown_bytes'] <= d['config']['memory'],
              lb + ': heap + starting table + meta within --memory')


def memcached_case(script):
    if not os.path.exists('/usr/bin/memcached'):
        print('memcached not installed: skipping the memcached fill check')
        return
    cmd = ['/usr/bin/python3', script, '--json', '--timeout', '120', '--', '-m', '8']
    print('$ ' + ' '.join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    check(p.returncode == 0, 'memcached-fill.py exit status: ' + p.stderr.strip())
    if p.returncode == 0:
        d = json.loads(p.stdout)
        check(d['stop'] == 'eviction' and d['evictions'] > 0, 'memcached fill reached an eviction')
        check(d['readback_hits'] == d['curr_items'] and d['readback_corrupt'] == 0,
              'memcached read-back == curr_items')


def ttl_case(exe, engines):
    """A shape with TTLs of 1 and 2 s, run for 2.5 s: items expire while
    it runs (the control thread's sweep and reads that meet them), and
    every key was loaded with its shape's TTL."""
    out = bench(exe, '--engine', engine_arg(engines), '--shape', 'tw-transient', '-k', '3000',
                '-m', '64M', '-d', '2.5', '--json')
    d = json.loads(out)
    check(d['config']['shape'] == 'tw-transient', 'ttl: the shape is in the config')
    for r in d['runs']:
        lb = 'ttl %s' % r['engine']
        check(r['errors'] == 0 and r['set_failed'] == 0, lb + ': no errors, no failed sets')
        check(r['warmup']['stored'] == 3000, lb + ': every key loaded')
        check(r['expired'] > 0, lb + ': items expired while timed')
        check(r['contention']['expired_per_op'] > 0, lb + ': expired_per_op reported')
        check(r['hit_ratio'] < 1, lb + ': gets miss expired keys')


def shapes_agree_case(exe):
    """tw-storage's TTL shares are protocol-bench's TWITTER_TTLS."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, '..', '..', '..'))
    sys.path.insert(0, os.path.join(root, 'tools', 'protocol-bench'))
    import workload  # noqa: E402
    src = open(os.path.join(root, 'tools', 'storage-bench', 'shapes.c')).read()
    block = src[src.index('"tw-storage"'):src.index('"tw-compute"')]
    import re
    pairs = re.findall(r'\{ (\d+), (\d+) \}', block)
    shares = [int(p) for _, p in pairs]
    check(shares == [round(w * 1000) for _, w in workload.TWITTER_TTLS],
          'tw-storage TTL shares == workload.py TWITTER_TTLS')
    check('tw-storage' in bench(exe, '--list-shapes'), '--list-shapes lists tw-storage')


def errors_case(exe):
    for args in (['--mix', '50:40:5'], ['--memory', '12X'], ['--threads', '0'],
                 ['--dist', 'zipf:-1'], ['--bogus'], ['--key-size', '3'], ['stray'],
                 ['--shape', 'nope'], ['--ttl', '0'], ['--shape', 'tw-compute', '--ttl', '5']):
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and p.stderr.startswith('segcached-storage-bench:')
              and p.stdout == '', 'bad option %s is refused cleanly' % args)


def missing_driver_case(exe, engines):
    """Without DPDK's mempool driver the baseline engine cannot start: the
    bench must exit non-zero naming the cause and the fix, never hang. The
    driver directory is hidden by an empty bind mount in a private mount
    namespace (root only)."""
    pmds = sorted(glob.glob('/usr/lib/*/dpdk/pmds-*'))
    if 'baseline' not in engines or os.geteuid() != 0 or not shutil.which('unshare') or not pmds:
        print('NOTE: missing-driver case skipped (needs root, unshare and the baseline engine)')
        return
    with tempfile.TemporaryDirectory() as empty:
        for engine in ('baseline', engine_arg(engines)):
            p = subprocess.run(['unshare', '-m', 'sh', '-c',
                                'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'sh',
                                empty, pmds[-1], exe, '--engine', engine, '-n', '1000',
                                '-k', '100', '-m', '16M'],
                               capture_output=True, text=True, timeout=60)
            check(p.returncode != 0 and 'librte_mempool_ring.so' in p.stderr
                  and '-d DIR' in p.stderr,
                  '--engine %s without the mempool driver fails naming the cause' % engine)


def engine_arg(engines):
    return 'both' if len(engines) == 2 else engines[0]


def main():
    exe = sys.argv[1]
    script = sys.argv[2] if len(sys.argv) > 2 else None
    engines = sorted(bench(exe, '--list-engines').split())
    check(engines and set(engines) <= {'seg', 'baseline'}, 'the build has an engine')
    if engines != ['baseline', 'seg']:
        print('NOTE: this build has only %s; the side-by-side checks are skipped' % engines)
    errors_case(exe)
    missing_driver_case(exe, engines)
    run_case(exe, engines, ['-t', '2', '-n', '40000', '-k', '5000', '-m', '64M',
                            '--mix', '90:10:0', '--dist', 'zipf:0.99', '--repeat', '2'], 2)
    run_case(exe, engines, ['-t', '1', '-n', '20000', '-k', '3000', '-m', '64M',
                            '--mix', '60:25:15', '--dist', 'uniform', '--value-size', '1-300',
                            '--key-format', 'plain'], 1)
    fill_case(exe, engines)
    ttl_case(exe, engines)
    shapes_agree_case(exe)
    text = bench(exe, '--engine', engine_arg(engines), '-n', '10000', '-k', '1000', '-m', '64M')
    check('Mops/s' in text, 'text report')
    if len(engines) == 2:
        check('side by side' in text, 'text report has the comparison')
    if script:
        memcached_case(script)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
