#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What textbook eviction policies would miss on a shape's requests when
they keep a given number of objects (issue 36): FIFO, LRU, CLOCK (a
FIFO whose read items go round again, their count halved, as merge halves
a survivor's) and S3-FIFO (SOSP'23: a small probationary FIFO, a main
one, and a ghost of keys evicted unread). The same look-aside fills as
replay.py (a get miss is followed by a set of the key), sets and deletes
as sent; no TTLs and no sizes: a cache of N objects, so that a server's
"objects kept" reads against what a policy does with as many. Prints the
avoidable misses (beyond the infinite cache's, which misses first touches
and deleted keys) per policy and size.

It bounds a target before code chases it: on Twitter-shaped B, at the
44,000 objects segcached keeps at -m 32, no policy here gets below the
avoidable misses that a share of 0.3 of memcached's asks for (docs/bench/
journal/protocol-replay.md, "Policies at equal objects").

    tools/miss-ratio/policies.py --shape twitter-b --objects 42000,44000,48000
    tools/miss-ratio/policies.py --quick        # the tiny shapes, a smoke run
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'protocol-bench'))
sys.path.insert(0, HERE)

import shapes    # noqa: E402
import workload  # noqa: E402


class Fifo:
    """Evicts in insertion order; a read changes nothing."""

    def __init__(self, cap):
        self.cap = cap
        self.q = collections.OrderedDict()

    def read(self, k):
        return k in self.q

    def store(self, k):
        self.q.pop(k, None)
        self.q[k] = 0
        while len(self.q) > self.cap:
            self.evict()

    def evict(self):
        self.q.popitem(last=False)

    def delete(self, k):
        self.q.pop(k, None)


class Lru(Fifo):
    def read(self, k):
        if k not in self.q:
            return False
        self.q.move_to_end(k)
        return True


class Clock(Fifo):
    """A read counts (up to 3); the oldest item goes round again while it
    has a count, halved each time."""

    def read(self, k):
        if k not in self.q:
            return False
        self.q[k] = min(self.q[k] + 1, 3)
        return True

    def evict(self):
        while True:
            k, f = self.q.popitem(last=False)
            if f == 0:
                return
            self.q[k] = f // 2


class S3Fifo:
    """S3-FIFO: new keys into a small FIFO (a tenth); read there, they move
    to the main FIFO (a CLOCK) when they reach its end, else their key goes
    to a ghost FIFO as long as the cache; a key stored while in the ghost
    goes straight to main."""

    def __init__(self, cap, small=0.1):
        self.cap = cap
        self.small_cap = max(1, int(cap * small))
        self.s = collections.OrderedDict()
        self.m = collections.OrderedDict()
        self.ghost = collections.OrderedDict()

    def read(self, k):
        for q in (self.s, self.m):
            if k in q:
                q[k] = min(q[k] + 1, 3)
                return True
        return False

    def delete(self, k):
        self.s.pop(k, None)
        self.m.pop(k, None)

    def store(self, k):
        self.delete(k)
        if self.ghost.pop(k, None) is not None:
            self.m[k] = 0
        else:
            self.s[k] = 0
        while len(self.s) + len(self.m) > self.cap:
            if len(self.s) > self.small_cap or not self.m:
                k2, f = self.s.popitem(last=False)
                if f > 0:
                    self.m[k2] = 0
                else:
                    self.ghost[k2] = 0
                    while len(self.ghost) > self.cap:
                        self.ghost.popitem(last=False)
            else:
                k2, f = self.m.popitem(last=False)
                if f > 0:
                    self.m[k2] = f - 1


POLICIES = {'fifo': Fifo, 'lru': Lru, 'clock': Clock, 's3fifo': S3Fifo}


def get_misses(records, cache):
    """Get misses of `cache` (None: an infinite one) on the records."""
    have = set()
    misses = 0
    for rec in records:
        key, op = rec[1], rec[5]
        if op == b'get':
            hit = cache.read(key) if cache is not None else key in have
            if not hit:
                misses += 1
                if cache is not None:
                    cache.store(key)
                have.add(key)
        elif op == b'delete':
            have.discard(key)
            if cache is not None:
                cache.delete(key)
        else:
            have.add(key)
            if cache is not None:
                cache.store(key)
    return misses


def run(shape, sizes, names):
    records = list(workload.requests(shape.kind, **shape.params))
    infinite = get_misses(records, None)
    rows = []
    for n in sizes:
        for name in names:
            rows.append({'shape': shape.name, 'objects': n, 'policy': name,
                         'avoidable': get_misses(records, POLICIES[name](n)) - infinite,
                         'infinite': infinite})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--shape', action='append', help='a shape of shapes.py (repeat)')
    ap.add_argument('--objects', default='42000,44000,48000',
                    help='cache sizes in objects, comma-separated')
    ap.add_argument('--policies', default=','.join(POLICIES))
    ap.add_argument('--quick', action='store_true', help="shapes.py's tiny shapes")
    ap.add_argument('--json', help='write the rows here too')
    a = ap.parse_args()
    pick = [s for s in shapes.SHAPES if not a.shape or s.name in a.shape]
    if a.shape and len(pick) != len(a.shape):
        ap.error('unknown shape in %s; known: %s' % (
            a.shape, ', '.join(s.name for s in shapes.SHAPES)))
    if a.quick:
        pick = [s.quick() for s in pick]
    names = a.policies.split(',')
    for name in names:
        if name not in POLICIES:
            ap.error('unknown policy %r; known: %s' % (name, ', '.join(POLICIES)))
    sizes = [int(x) for x in a.objects.split(',')]
    rows = []
    print('| shape | objects | %s | infinite cache |' % ' | '.join(names))
    print('|---|---:|%s---:|' % ('---:|' * len(names)))
    for s in pick:
        got = run(s, sizes, names)
        rows += got
        for n in sizes:
            cells = [str(r['avoidable']) for r in got if r['objects'] == n]
            print('| %s | %d | %s | %d |' % (s.name, n, ' | '.join(cells), got[0]['infinite']))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
