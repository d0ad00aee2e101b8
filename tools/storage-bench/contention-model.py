#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Predicts lib/seg's throughput at 1..64 threads from storage-bench's
contention counters (docs/bench/journal/contention-model.md).

Inputs: storage-bench --json files (one or more runs each) of the seg
engine at 1 and 2 threads for a mix and distribution. From the 1-thread
runs: the time of an operation alone (t1), the shared-line atomic
read-modify-writes per operation (the `counters` of the timed phase), and
the serial fraction s (evict_ns / thread time: work under evict_lock,
which one thread at a time does); from the 2-thread runs, where there are
any, the shared-line counts (workers stop sharing an open segment that
they keep losing races on). The model:

  t(N) = t1 + c * ((N-1)/N * (hot + seg) + q(N) * bucket)
  X(N) = N / (t(N) * (1 + s*(N-1)))          (Amdahl for the serial part)

  hot    = rmw_open_shared + rmw_global + lock_segment per op: lines every
           writer writes (a shared open segment's header, the generation
           counter, the pool and chain locks): another core wrote them last
           with probability (N-1)/N.
  seg    = rmw_segment per op (live counts a worker applies from the
           changes it holds back, lib/seg/seg_live.c; the worker's own open
           segment): counted as contended like `hot`, an upper bound.
  bucket = lock_bucket + rmw_bucket per op (hash bucket locks and slot
           frequency bumps): contended only when another core touched the
           key's line while it still sat in that core's cache, q(N) =
           (N-1)/N * sum_k p_k (1 - (1 - p_k)^L) for key popularity p_k
           (zipf or uniform over the keys) and L lines of private cache.
  c      = the cost of moving a written line between cores: fitted from
           the 1 -> 2 thread change (the one measurement of it this host
           has), and given as 100 ns (one socket) and 200 ns (two sockets,
           the usual published core-to-core latencies of x86 servers).

Usage:
  contention-model.py DIR [DIR...]          fit on seg runs in DIR, predict
  contention-model.py DIR --compare OUT     ... and print the prediction
      beside OUT's measurements (tools/loadgen/scripts/scaling-run.sh's output
      directory: OUT/storage/sb-<get>-<set>-<dist>-seg-t<N>.json)
  --json  print the model's inputs and predictions as one JSON document
"""
import argparse
import glob
import json
import os
import statistics
import sys

THREADS = [1, 2, 4, 8, 16, 24, 32, 64]
# Private cache per core in 64-byte lines: 1 MiB of L2 (Skylake-SP and
# later Xeons; EPYC has 512 KiB-1 MiB). A line another core wrote longer
# ago than this has left its cache, and costs a memory access either way.
PRIVATE_LINES = (1 << 20) // 64
TRANSFER_NS = {'one socket': 100.0, 'two sockets': 200.0}
HOT = ('rmw_open_shared', 'rmw_global', 'lock_segment')
SEG = ('rmw_segment',)
BUCKET = ('lock_bucket', 'rmw_bucket')


def load_runs(paths):
    """Every seg run in the JSON files under paths (files or dirs)."""
    files = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, '**', '*.json'), recursive=True)) \
            if os.path.isdir(p) else [p]
    runs = []
    for f in files:
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            continue  # a run that timed out leaves an empty or partial file
        if not isinstance(d, dict) or d.get('mode') != 'run':
            continue
        cfg = d['config']
        for r in d.get('runs', []):
            if r.get('engine') != 'seg' or not r.get('ops') or r.get('errors'):
                continue
            if 'rmw_segment' not in r.get('counters', {}):
                continue  # a build from before the contention counters
            r = dict(r)
            r['mix'] = '%d:%d' % (cfg['mix']['get'], cfg['mix']['set'])
            r['dist'] = cfg.get('dist', '?')
            r['theta'] = cfg.get('theta')
            r['memory'] = cfg.get('memory', 0)
            r['keys'] = cfg.get('keys', 1000000)
            # TTL shapes (issue 34): a group per shape, fixed TTL and policy
            r['shape'] = cfg.get('shape', 'none')
            r['ttl'] = cfg.get('ttl', 0)
            r['eviction'] = cfg.get('eviction', 'default')
            r['file'] = f
            runs.append(r)
    return runs


def median_of(runs, key):
    v = [key(r) for r in runs]
    return statistics.median(v) if v else None


def per_op(runs, names):
    return median_of(runs, lambda r: sum(r['counters'].get(n, 0) for n in names) / r['ops'])


def zipf_q_base(keys, theta):
    """sum_k p_k (1 - (1 - p_k)^L): how often a key's line was touched
    recently enough to still be in some core's private cache."""
    if not theta:
        p = 1.0 / keys
        return 1 - (1 - p) ** PRIVATE_LINES
    w = [k ** -theta for k in range(1, keys + 1)]
    z = sum(w)
    return sum((x / z) * (1 - (1 - x / z) ** PRIVATE_LINES) for x in w)


def fit(runs):
    """The model's inputs for one mix and distribution."""
    one = [r for r in runs if r['threads'] == 1]
    two = [r for r in runs if r['threads'] == 2]
    if not one:
        return None
    x1 = median_of(one, lambda r: r['mops']) * 1e6
    t1 = 1e9 / x1
    m = {
        'runs_1_thread': len(one), 'runs_2_threads': len(two),
        'mops_1': x1 / 1e6, 't1_ns': t1,
        # The line counts as they are with sharers: a worker that keeps
        # losing races on a shared open segment opens its own, so the
        # 2-thread runs count fewer shared-segment RMWs than 1 thread does.
        'counts_from_threads': 2 if two else 1,
        'hot_per_op': per_op(two or one, HOT), 'seg_per_op': per_op(two or one, SEG),
        'bucket_per_op': per_op(two or one, BUCKET),
        'evict_ns_per_op': per_op(one, ('evict_ns',)),
    }
    m['serial_fraction'] = m['evict_ns_per_op'] / t1
    # Newer builds report the serial fraction themselves, the control
    # thread's holds of evict_lock included (its sweep and reclaim ahead):
    # the larger of the two is the serial part.
    sf = [r['contention']['serial_fraction'] for r in one
          if isinstance(r.get('contention', {}).get('serial_fraction'), (int, float))]
    if sf:
        m['serial_fraction'] = max(m['serial_fraction'], statistics.median(sf))
    r0 = one[0]
    m['q_base'] = zipf_q_base(r0['keys'], r0['theta'] if r0['dist'].startswith('zipf') else None)
    if two:
        x2 = median_of(two, lambda r: r['mops']) * 1e6
        m['mops_2'] = x2 / 1e6
        t2 = 2e9 / (x2 * (1 + m['serial_fraction']))
        lines = 0.5 * (m['hot_per_op'] + m['seg_per_op']) + 0.5 * m['q_base'] * m['bucket_per_op']
        m['transfer_ns_fitted'] = (t2 - t1) / lines if lines > 0 else None
    return m


def predict(m, c, n):
    frac = (n - 1) / n
    t = m['t1_ns'] + c * (frac * (m['hot_per_op'] + m['seg_per_op']) +
                          frac * m['q_base'] * m['bucket_per_op'])
    x = n * 1e9 / (t * (1 + m['serial_fraction'] * (n - 1)))
    return x / 1e6, x / (n * m['mops_1'] * 1e6)


def constants(m):
    cs = []
    c = m.get('transfer_ns_fitted')
    if c is not None and c > 0:
        cs.append(('fitted here', c))
    cs += list(TRANSFER_NS.items())
    return cs


def measured(out, mix, dist, memory):
    """Median Mops per thread count of a scaling-run.sh output directory."""
    res = {}
    for r in load_runs([os.path.join(out, 'storage')] if os.path.isdir(
            os.path.join(out, 'storage')) else [out]):
        if r['mix'] == mix and r['dist'] == dist and r['memory'] == memory:
            res.setdefault(r['threads'], []).append(r['mops'])
    return {t: statistics.median(v) for t, v in res.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('inputs', nargs='+', help='storage-bench JSON files or directories')
    ap.add_argument('--compare', metavar='OUT', help='scaling-run.sh output directory')
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    runs = load_runs(a.inputs)
    groups = {}
    for r in runs:
        groups.setdefault((r['mix'], r['dist'], r['memory'], r['shape'], r['ttl'],
                           r['eviction']), []).append(r)
    if not groups:
        sys.exit('no seg runs with ops in %s' % ' '.join(a.inputs))
    doc = []
    for (mix, dist, memory, shape, ttl, eviction), rs in sorted(groups.items()):
        m = fit(rs)
        if m is None:
            print('%s %s: no 1-thread run, nothing to fit' % (mix, dist), file=sys.stderr)
            continue
        meas = measured(a.compare, mix, dist, memory) if a.compare else {}
        preds = {name: {n: predict(m, c, n) for n in THREADS} for name, c in constants(m)}
        doc.append({'mix': mix, 'dist': dist, 'memory': memory, 'shape': shape, 'ttl': ttl,
                    'eviction': eviction, 'inputs': m,
                    'transfer_ns': dict(constants(m)),
                    'predicted_mops': {k: {n: v[n][0] for n in THREADS} for k, v in preds.items()},
                    'predicted_efficiency': {k: {n: v[n][1] for n in THREADS}
                                             for k, v in preds.items()},
                    'measured_mops': meas})
        if a.json:
            continue
        print('seg, get:set %s, %s, -m %dM%s%s, eviction %s' % (
            mix, dist, memory >> 20, ', shape %s' % shape if shape != 'none' else '',
            ', ttl %d s' % ttl if ttl else '', eviction))
        print('  inputs (median of %d 1-thread, %d 2-thread runs): %.3f Mops/s at 1 thread '
              '(t1 %.0f ns/op)%s' % (m['runs_1_thread'], m['runs_2_threads'], m['mops_1'],
                                     m['t1_ns'], ', %.3f at 2' % m['mops_2'] if 'mops_2' in m else ''))
        print('  shared-line RMWs/op at %d thread(s): hot %.3f, segment %.3f, bucket %.3f '
              '(q(2) %.4f); serial fraction %.5f (%.1f ns/op under evict_lock at 1 thread)'
              % (m['counts_from_threads'], m['hot_per_op'], m['seg_per_op'], m['bucket_per_op'], m['q_base'] / 2,
                 m['serial_fraction'], m['evict_ns_per_op']))
        c = m.get('transfer_ns_fitted')
        print('  line transfer cost fitted from 1 -> 2 threads: %s' %
              ('%.0f ns' % c if c is not None else 'n/a (no 2-thread run)'))
        hdr = '  %-7s' % 'threads' + ''.join('  %-22s' % ('c=%s %.0fns' % (k, v))
                                             for k, v in constants(m))
        if meas:
            hdr += '  measured (eff.)'
        print(hdr)
        for n in THREADS:
            line = '  %-7d' % n + ''.join('  %8.2f Mops (%.2f)   ' % preds[k][n]
                                          for k, _ in constants(m))
            if n in meas:
                line += '  %8.2f (%.2f)' % (meas[n], meas[n] / (n * meas[1]) if 1 in meas else 0)
            print(line)
        print()
    if a.json:
        json.dump(doc, sys.stdout, indent=1)
        print()


if __name__ == '__main__':
    main()
