#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks tools/storage-bench/contention-model.py against inputs whose
answers are known: storage-bench JSON written here with chosen throughput
and counters, fitted and compared the way docs/bench/journal/contention-model.md runs it."""
import json
import os
import subprocess
import sys
import tempfile

# The model under test, tools/storage-bench/contention-model.py (this file
# is tests/tools/storage-bench/).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODEL = os.path.join(ROOT, 'tools', 'storage-bench', 'contention-model.py')
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print('FAIL: ' + what)


def bench_json(path, threads, mops, counters, mix=(50, 50), memory=1 << 30, keys=1000):
    ops = 1000000
    c = {'lock_bucket': 0, 'lock_segment': 0, 'rmw_segment': 0, 'rmw_open_shared': 0,
         'rmw_bucket': 0, 'rmw_global': 0, 'evict_passes': 0, 'evict_ns': 0}
    c.update({k: int(v * ops) for k, v in counters.items()})
    doc = {'mode': 'run',
           'config': {'keys': keys, 'dist': 'uniform', 'theta': None, 'memory': memory,
                      'mix': {'get': mix[0], 'set': mix[1], 'delete': 0}},
           'runs': [{'engine': 'seg', 'threads': threads, 'ops': ops, 'errors': 0,
                     'mops': mops, 'counters': c}]}
    with open(path, 'w') as f:
        json.dump(doc, f)


def model(*args):
    return subprocess.run([sys.executable, MODEL] + list(args), capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    ins = os.path.join(d, 'in')
    out = os.path.join(d, 'out', 'storage')
    os.makedirs(ins)
    os.makedirs(out)
    # 1 thread: 1 Mops (1000 ns/op), 200 ns/op under evict_lock (s = 0.2).
    bench_json(os.path.join(ins, 't1.json'), 1, 1.0,
               {'rmw_open_shared': 1.0, 'rmw_segment': 2.0, 'lock_bucket': 0.5,
                'evict_ns': 200})
    # 2 threads: hot 0.5, seg 2, bucket 0.5 per op; 1.25 Mops.
    bench_json(os.path.join(ins, 't2.json'), 2, 1.25,
               {'rmw_open_shared': 0.5, 'rmw_segment': 2.0, 'lock_bucket': 0.5})
    # A run from before the counters, and a file a killed run left empty.
    with open(os.path.join(ins, 'old.json'), 'w') as f:
        json.dump({'mode': 'run', 'config': {'keys': 1000, 'dist': 'uniform', 'memory': 1 << 30,
                                             'mix': {'get': 50, 'set': 50, 'delete': 0}},
                   'runs': [{'engine': 'seg', 'threads': 1, 'ops': 10, 'mops': 99.0,
                             'errors': 0, 'counters': {'lock_bucket': 0}}]}, f)
    open(os.path.join(ins, 'empty.json'), 'w').close()
    # scaling-run.sh's names, measured 1 and 16 threads.
    bench_json(os.path.join(out, 'sb-50-50-uniform-seg-t1.json'), 1, 2.0, {})
    bench_json(os.path.join(out, 'sb-50-50-uniform-seg-t16.json'), 16, 16.0, {})

    r = model(ins, '--compare', os.path.dirname(out), '--json')
    check(r.returncode == 0, 'model runs: ' + r.stderr)
    doc = json.loads(r.stdout)
    check(len(doc) == 1, 'one group (the old build and the empty file are skipped)')
    g = doc[0]
    m = g['inputs']
    check(m['runs_1_thread'] == 1 and m['runs_2_threads'] == 1, 'one run of each')
    check(abs(m['t1_ns'] - 1000) < 1e-6, 't1 from the 1-thread Mops')
    check(abs(m['serial_fraction'] - 0.2) < 1e-9, 'serial fraction = evict_ns/op / t1')
    check(abs(m['hot_per_op'] - 0.5) < 1e-9, 'line counts from the 2-thread run')
    q = 1 - (1 - 1 / 1000) ** (1 << 14)
    check(abs(m['q_base'] - q) < 1e-9, 'uniform q = 1 - (1 - 1/K)^L')
    # t(2) = 2e9 / (X2 (1 + s)) = 1333.3 ns; lines = (0.5 + 2)/2 + q/2 * 0.5.
    c = (2e9 / (1.25e6 * 1.2) - 1000) / (1.25 + 0.25 * q)
    check(abs(m['transfer_ns_fitted'] - c) < 1e-6, 'c fitted from the 1 -> 2 thread change')
    p = g['predicted_mops']['fitted here']
    check(abs(p['1'] - 1.0) < 1e-9, 'the model at 1 thread is the measurement')
    check(abs(p['2'] - 1.25) < 1e-9, 'the fitted model reproduces its 2-thread input')
    e = g['predicted_efficiency']['one socket']
    check(all(e[str(a)] >= e[str(b)] for a, b in zip([1, 2, 4, 8, 16], [2, 4, 8, 16, 64])),
          'efficiency does not rise with threads')
    check(g['measured_mops'] == {'1': 2.0, '16': 16.0}, 'compare reads OUT/storage by thread count')

    r = model(ins, '--compare', os.path.dirname(out))
    check(r.returncode == 0 and 'measured (eff.)' in r.stdout and '16.00 (0.50)' in r.stdout,
          'text output shows measurement and its efficiency beside the prediction')
    r = model(os.path.join(d, 'out', 'nothing'))
    check(r.returncode != 0 and 'no seg runs' in r.stderr, 'no inputs: a clear error')

print('%d check(s) failed' % len(failures) if failures else 'all checks passed')
sys.exit(1 if failures else 0)
