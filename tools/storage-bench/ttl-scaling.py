#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Write scaling on the workloads caches run (issue 34): TTL shapes and
fixed shapes, every eviction policy, 1 and 2 threads, counted; then
timed rounds of 1 and 2 threads alternating, lib/seg and the rte_hash
baseline in the same rounds. Writes a Markdown section into a doc
(between the ttl-scaling markers) and the raw JSON beside it.

Counted part: for each shape x policy x threads, one run per build given
with --build (several builds side by side, e.g. main's and a branch's):
serial_fraction (evict_lock held, by workers and the control thread,
over thread time), wait_fraction (workers waiting for it or for a pass),
items expired and evicted per op, shared-line RMWs per op. Counts, not
speed: they say what 16 or 24 cores would queue on.

Timed part (--rounds N, 0 to skip): for each shape, N rounds of 1 and 2
threads, the order alternating, seg and baseline each round (the bench's
--engine both); the median of the per-round 2-thread/1-thread ratios.
Time nothing else on the host meanwhile.

usage: tools/storage-bench/ttl-scaling.py --build NAME=BENCH [--build ...]
           [--seconds S] [--rounds N] [--shapes LIST] [--policies LIST]
           [--doc FILE] [--json FILE] [--no-write]
"""
import argparse
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BEGIN = '<!-- ttl-scaling:begin (written by tools/storage-bench/ttl-scaling.py) -->'
END = '<!-- ttl-scaling:end -->'

# name: the bench's arguments. The TTL shapes give each key its size and
# TTL (tools/storage-bench/shapes.c); ttl1 is the one-line probe
# (every set a 1 s TTL); the fixed shapes are the no-TTL rows measured
# before (1 M keys, 64-byte values, zipf 0.99).
SHAPES = {
    'tw-storage': ['--shape', 'tw-storage', '-k', '1000000', '-m', '256M'],
    'tw-compute': ['--shape', 'tw-compute', '-k', '1000000', '-m', '256M'],
    'tw-transient': ['--shape', 'tw-transient', '-k', '1000000', '-m', '256M'],
    'tw-counter': ['--shape', 'tw-counter', '-k', '1000000', '-m', '256M'],
    'ttl1-50:50': ['--ttl', '1', '--mix', '50:50:0', '-k', '4000000', '-m', '256M'],
    'fixed-50:50-1G': ['--mix', '50:50:0', '-k', '1000000', '-m', '1G'],
    'fixed-90:10-1G': ['--mix', '90:10:0', '-k', '1000000', '-m', '1G'],
    'fixed-50:50-64M': ['--mix', '50:50:0', '-k', '1000000', '-m', '64M'],
}
POLICIES = ['merge', 'fifo', 'random']


def shown(cmd):
    """A command as stored: the bench named, not where it was built."""
    return ['segcached-storage-bench'] + cmd[1:]


def argv_shown():
    out = []
    for a in sys.argv:
        if '=' in a and os.path.isabs(a.split('=', 1)[1]):
            a = a.split('=', 1)[0] + '=<its build>/tools/storage-bench/segcached-storage-bench'
        out.append(a)
    return ' '.join(shlex.quote(a) for a in out)


def run_json(cmd, timeout=900):
    print('$ ' + ' '.join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit('%s exited with %d' % (cmd[0], p.returncode))
    return json.loads(p.stdout)


def counted(bench, shape, policy, threads, seconds, save=None):
    cmd = [bench, '--engine', 'seg', '--eviction', policy, '-t', str(threads),
           '-d', str(seconds), '--json'] + SHAPES[shape]
    d = run_json(cmd)
    if save:
        d['argv'] = shown(d.get('argv', cmd))
        with open(save, 'w') as fs:
            json.dump(d, fs, indent=1)
    r = d['runs'][0]
    c = r['contention']
    return {'cmd': shown(cmd), 'mops': r['mops'], 'serial_fraction': c['serial_fraction'],
            'wait_fraction': c['wait_fraction'], 'expired_per_op': c['expired_per_op'],
            'evicted_per_op': c['evicted_per_op'], 'shared_rmw_per_op': c['shared_rmw_per_op'],
            'hit_ratio': r['hit_ratio'], 'errors': r['errors'], 'set_failed': r['set_failed']}


def timed(bench, shape, rounds, seconds):
    """Per round: 1 then 2 threads, or 2 then 1 (alternating), each with
    seg and baseline (--engine both, which alternates them too)."""
    mops = {('seg', 1): [], ('seg', 2): [], ('baseline', 1): [], ('baseline', 2): []}
    cmds = []
    for rnd in range(rounds):
        order = (1, 2) if rnd % 2 == 0 else (2, 1)
        for t in order:
            cmd = [bench, '--engine', 'both', '-t', str(t), '-d', str(seconds),
                   '--seed', str(rnd + 1), '--json'] + SHAPES[shape]
            cmds.append(shown(cmd))
            for r in run_json(cmd)['runs']:
                mops[(r['engine'], t)].append(r['mops'])
    out = {'cmds': cmds, 'mops': {'%s-%d' % k: v for k, v in mops.items()}}
    for eng in ('seg', 'baseline'):
        ratios = [b / a for a, b in zip(mops[(eng, 1)], mops[(eng, 2)]) if a]
        out[eng + '_2t_over_1t'] = ratios
        out[eng + '_median'] = statistics.median(ratios) if ratios else None
    return out


def model(runs_dir):
    """contention-model.py on the saved runs: efficiency at 16 and 24
    threads with c = 100 ns (one socket), per shape and policy."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'storage-bench',
                                                     'contention-model.py'),
                        runs_dir, '--json'], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        return []
    out = []
    for g in json.loads(p.stdout):
        eff = g['predicted_efficiency'].get('one socket', {})
        out.append({'shape': g['shape'], 'ttl': g['ttl'], 'mix': g['mix'],
                    'memory': g['memory'], 'eviction': g['eviction'],
                    'serial_fraction': g['inputs']['serial_fraction'],
                    'eff16': eff.get('16'), 'eff24': eff.get('24')})
    return out


def host():
    """The host line run-suite.py writes (CPU, CPUs, kernel, commit, date)."""
    spec = importlib.util.spec_from_file_location(
        'run_suite', os.path.join(ROOT, 'tools', 'storage-bench', 'run-suite.py'))
    run_suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_suite)
    return run_suite.machine()


def f(v, spec):
    return '—' if v is None else format(v, spec)


def section(res, args):
    names = [b.split('=', 1)[0] for b in args.build]
    out = [BEGIN, '', '### Write scaling with TTLs (issue 34)', '',
           'Host: %s. `%s`.' % (res['host'], argv_shown()), '',
           ] + (['Counted part from an earlier run on %s.' % res['counted_host'], '']
                if res.get('counted_host') else []) + [
           'Counted, %g s a run, one run per cell: `serial_fraction` is evict_lock held '
           '(workers and the control thread) over thread time; `wait` is workers waiting '
           'for it or for a pass; expired and evicted are items per op.' % args.seconds, '',
           '| shape | policy | threads | ' +
           ' | '.join('%s serial / wait' % n for n in names) +
           ' | expired/op | evicted/op | shared RMW/op |',
           '|---|---|---|' + '---|' * len(names) + '---|---|---|']
    for row in res['counted']:
        last = row['by_build'][names[-1]]
        out.append('| %s | %s | %d | %s | %s | %s | %s |' % (
            row['shape'], row['policy'], row['threads'],
            ' | '.join('%s / %s' % (f(row['by_build'][n]['serial_fraction'], '.4f'),
                                    f(row['by_build'][n]['wait_fraction'], '.4f'))
                       for n in names),
            f(last['expired_per_op'], '.4f'), f(last['evicted_per_op'], '.4f'),
            f(last['shared_rmw_per_op'], '.2f')))
    if res.get('model'):
        out += ['', 'The contention model (tools/storage-bench/contention-model.py) on the '
                '%s runs above: predicted efficiency at 16 and 24 threads, c = 100 ns.' %
                names[-1], '',
                '| shape | policy | mix | serial fraction | 16 threads | 24 threads |',
                '|---|---|---|---|---|---|']
        for g in res['model']:
            label = g['shape'] if g['shape'] != 'none' else (
                'ttl %d s' % g['ttl'] if g['ttl'] else 'no TTL') + ', -m %dM' % (
                    g['memory'] >> 20)
            out.append('| %s | %s | %s | %.5f | %s | %s |' % (
                label, g['eviction'], g['mix'], g['serial_fraction'], f(g['eff16'], '.2f'),
                f(g['eff24'], '.2f')))
    if res.get('timed'):
        out += ['', 'Timed (%s, default policy): %d rounds of 1 and 2 threads alternating, '
                '%g s each, seg and the rte_hash baseline in the same rounds; the median of '
                'the per-round 2-thread/1-thread ratios (and their range).' % (
                    names[-1], args.rounds, args.seconds), '',
                '| shape | seg 2t/1t | range | baseline 2t/1t | range |', '|---|---|---|---|---|']
        for shape, t in res['timed'].items():
            out.append('| %s | %s | %s | %s | %s |' % (
                shape, f(t['seg_median'], '.2f'),
                '%.2f–%.2f' % (min(t['seg_2t_over_1t']), max(t['seg_2t_over_1t'])),
                f(t['baseline_median'], '.2f'),
                '%.2f–%.2f' % (min(t['baseline_2t_over_1t']), max(t['baseline_2t_over_1t']))))
    out += ['', END]
    return '\n'.join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', action='append', required=True,
                    help='NAME=BENCH: a bench binary (relative to the repository root); '
                    'the last one is timed')
    ap.add_argument('--seconds', type=float, default=2.0)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--shapes', default=','.join(SHAPES))
    ap.add_argument('--policies', default=','.join(POLICIES))
    ap.add_argument('--threads', default='1,2')
    ap.add_argument('--doc', default='docs/bench/suite.md')
    ap.add_argument('--json', default='docs/bench/ttl-scaling/ttl-scaling.json')
    ap.add_argument('--runs-dir', default='docs/bench/ttl-scaling/runs',
                    help='where the last build\'s bench JSON goes, for contention-model.py')
    ap.add_argument('--counted-from', metavar='JSON',
                    help='take the counted part (and the model) from an earlier run\'s JSON '
                    'and only time')
    ap.add_argument('--no-write', action='store_true')
    a = ap.parse_args()
    builds = [b.split('=', 1) for b in a.build]
    shapes = a.shapes.split(',')
    for s in shapes:
        if s not in SHAPES:
            raise SystemExit('--shapes: %r is not one of %s' % (s, ', '.join(SHAPES)))
    res = {'host': host(), 'counted': [], 'timed': {}}
    runs_dir = None if a.no_write else os.path.join(ROOT, a.runs_dir)
    if runs_dir:
        os.makedirs(runs_dir, exist_ok=True)
    if a.counted_from:
        with open(a.counted_from) as fc:
            prev = json.load(fc)
        res['counted'], res['model'] = prev['counted'], prev.get('model', [])
        res['counted_host'] = prev['host']
        shapes_counted = []
    else:
        shapes_counted = shapes
    for shape in shapes_counted:
        for policy in a.policies.split(','):
            for t in (int(x) for x in a.threads.split(',')):
                row = {'shape': shape, 'policy': policy, 'threads': t, 'by_build': {}}
                for i, (name, bench) in enumerate(builds):
                    save = (os.path.join(runs_dir, '%s-%s-t%d.json' % (shape, policy, t))
                            if runs_dir and i == len(builds) - 1 else None)
                    row['by_build'][name] = counted(bench, shape, policy, t, a.seconds, save)
                res['counted'].append(row)
    if runs_dir and not a.counted_from:
        res['model'] = model(runs_dir)
    if a.rounds > 0:
        for shape in shapes:
            res['timed'][shape] = timed(builds[-1][1], shape, a.rounds, a.seconds)
    text = section(res, a)
    print(text)
    if a.no_write:
        return
    os.makedirs(os.path.dirname(os.path.join(ROOT, a.json)), exist_ok=True)
    with open(os.path.join(ROOT, a.json), 'w') as fj:
        json.dump(res, fj, indent=1)
    doc = os.path.join(ROOT, a.doc)
    old = open(doc).read()
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + text + old[old.index(END) + len(END):]
    else:
        new = old.rstrip('\n') + '\n\n' + text + '\n'
    with open(doc, 'w') as fd:
        fd.write(new)


if __name__ == '__main__':
    main()
