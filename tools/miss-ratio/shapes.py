# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The shapes the miss-ratio suite replays: each a seeded workload of
tools/protocol-bench/workload.py and the -m values it runs at.

Sized so the whole suite stays a few minutes of the Python replayer
(about 40 k requests/s on a quiet host), with every -m well below the
bytes the requests touch except the largest, where the curve flattens
towards what an infinite cache misses. --quick: a twentieth of the
objects and requests at two sizes, a functional smoke run.
"""


class Shape:
    def __init__(self, name, title, kind, sizes, twitter=False, **params):
        self.name = name          # a short id: JSON rows, --shape
        self.title = title        # the doc's heading
        self.kind = kind          # workload.py's kind
        self.sizes = sizes        # -m values, MiB
        self.twitter = twitter    # TTLs and a write mix: avoidable misses matter
        self.params = params      # workload.requests() keyword arguments

    def quick(self):
        p = dict(self.params)
        p['objects'] = max(1000, p['objects'] // 20)
        p['requests'] = max(2000, p['requests'] // 20)
        return Shape(self.name, self.title, self.kind, [8, 16], self.twitter, **p)

    def describe(self):
        p = self.params
        if self.kind == 'twitter':
            return ('`workload.py twitter`, zipf %.1f over %s objects, %s requests (seed %d): '
                    'TTLs from 10 s to 7 days, log-normal value sizes (median 230 B), every '
                    'object created by a set, then 90%% get, 9%% set, 1%% delete' % (
                        p['alpha'], format(p['objects'], ','), format(p['requests'], ','),
                        p['seed']))
        sizes = ('%d-byte values' % p['value_size'] if not p.get('value_size_max') else
                 'values of %d to %d bytes' % (p['value_size'], p['value_size_max']))
        if self.kind == 'zipf':
            return ('`workload.py zipf`, zipf %.1f over %s keys, %s, no TTL, %s gets '
                    '(seed %d)' % (p['alpha'], format(p['objects'], ','), sizes,
                                   format(p['requests'], ','), p['seed']))
        return ('`workload.py shift`, %s gets (seed %d): the first half zipf %.1f over %s '
                'keys `small:N` with %s, the second half zipf %.1f over %s new keys `large:N` '
                'of %d bytes, no TTL' % (
                    format(p['requests'], ','), p['seed'], p['alpha'],
                    format(p['objects'], ','), sizes, p['alpha'], format(p['objects'], ','),
                    p['shift_value_size']))

    def argv(self):
        """workload.py's command line for the shape."""
        p = self.params
        out = [self.kind, '--objects', str(p['objects']), '--requests', str(p['requests']),
               '--alpha', str(p['alpha']), '--seed', str(p['seed'])]
        if self.kind != 'twitter':
            out += ['--value-size', str(p['value_size'])]
        if p.get('value_size_max'):
            out += ['--value-size-max', str(p['value_size_max'])]
        if self.kind == 'shift':
            out += ['--shift-value-size', str(p['shift_value_size'])]
        return out


SHAPES = [
    Shape('twitter-a', 'Twitter-shaped A: zipf 1.0', 'twitter', [4, 8, 16, 24, 32, 48], True,
          objects=1_000_000, requests=150_000, alpha=1.0, seed=1),
    Shape('twitter-b', 'Twitter-shaped B: zipf 0.8 (lower locality)', 'twitter',
          [8, 16, 24, 32, 48], True,
          objects=1_000_000, requests=120_000, alpha=0.8, seed=2),
    Shape('1k', '~1 KB values, no TTL: 900 bytes, zipf 0.9', 'zipf', [8, 16, 24, 32, 48],
          objects=400_000, requests=100_000, alpha=0.9, seed=3, value_size=900),
    Shape('small', 'Small values, no TTL: 50 to 100 bytes, zipf 0.9', 'zipf',
          [3, 4, 6, 8, 12, 16],
          objects=1_000_000, requests=150_000, alpha=0.9, seed=4, value_size=50,
          value_size_max=100),
    Shape('shift', 'A size shift: 50 to 100 bytes, then 900 bytes on new keys', 'shift',
          [4, 6, 8, 12, 16, 24],
          objects=400_000, requests=120_000, alpha=0.8, seed=5, value_size=50,
          value_size_max=100, shift_value_size=900),
]


def by_name(names):
    if not names:
        return list(SHAPES)
    known = {s.name: s for s in SHAPES}
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit('unknown shape %s (known: %s)' % (', '.join(bad), ', '.join(known)))
    return [known[n] for n in names]
