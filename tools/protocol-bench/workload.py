#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Seeded synthetic workloads in the twitter/cache-trace CSV format
(`timestamp,key,key_size,value_size,client_id,op,ttl`, the layout of
Twitter's published production cache traces), so one replayer handles them
and real traces.

twitter: the shape of Twitter's production clusters (Yang et al., OSDI '20):
  * zipf popularity (--alpha, default 1.0) over --objects objects, ranks
    shuffled so popularity is independent of size and TTL;
  * many TTLs, from seconds to days: each object draws one TTL class
    (TWITTER_TTLS) and keeps it, as a keyspace's TTL is fixed;
  * value sizes from a few bytes to KBs: log-normal, median 230 B, sigma 1.3,
    clipped to 1 B..64 KiB; keys 12 to 60 bytes, namespace-prefixed;
  * every object is created by a set (carrying its TTL) on its first request;
    after that 90% gets, 9% sets (updates, new size), 1% deletes.

zipf: fixed-size values, zipf popularity (ranks shuffled), gets only: the
replayer's look-aside loop sets each object after its miss, so the first
request of an object is a (compulsory) miss; for the hit ratio at a
working set several times the memory. With --value-size-max each object
draws its size once, uniform in --value-size..--value-size-max.

shift: value sizes that shift (the case of memcached's slab calcification):
the first half of the requests is the zipf workload on keys `small:N`
(sizes as zipf's), the second half zipf on new keys `large:N` of
--shift-value-size bytes (each phase its own ranks, both --alpha).

Timestamps advance at --rate requests per trace second; the replayer does
not pace by them (it replays as fast as it can).

usage: tools/protocol-bench/workload.py twitter|zipf|shift [--objects N]
           [--requests N] [--alpha A] [--seed S] [--value-size N]
           [--value-size-max N] [--shift-value-size N] > trace.csv
"""
import argparse
import bisect
import itertools
import math
import random
import sys

# (TTL seconds, share of objects): seconds to days.
TWITTER_TTLS = [(10, 0.03), (30, 0.05), (60, 0.07), (300, 0.10), (900, 0.10),
                (1800, 0.10), (3600, 0.15), (4 * 3600, 0.10), (86400, 0.15),
                (3 * 86400, 0.10), (7 * 86400, 0.05)]
MAX_VALUE = 64 * 1024
SIZE_STEP_LOG = math.log(1.25)
B62 = b'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
TO_B62 = bytes(B62[i % 62] for i in range(256))


class Zipf:
    """Ranks 0..n-1 with P(r) proportional to 1/(r+1)^alpha."""

    def __init__(self, n, alpha, rng):
        acc = 0.0
        self.cdf = []
        for r in range(n):
            acc += 1.0 / math.pow(r + 1, alpha)
            self.cdf.append(acc)
        self.total = acc
        self.rng = rng

    def draw(self):
        return bisect.bisect_left(self.cdf, self.rng.random() * self.total)


def twitter_key(rng, i):
    """A namespace-prefixed key like the trace's `q:q:1:8WTwl7huJeQ`."""
    ns = b'ns%d:' % (i % 7)
    body = bytearray()
    x = i
    while True:
        body.append(B62[x % 62])
        x //= 62
        if not x:
            break
    pad = rng.randint(6, 50)
    return ns + bytes(body) + b':' + rng.randbytes(pad).translate(TO_B62)


class Objects:
    """The objects of a workload: key, value size, TTL."""

    def __init__(self, n, rng, key_fn, size_fn, ttl_fn):
        self.keys = [key_fn(i) for i in range(n)]
        self.sizes = [size_fn() for _ in range(n)]
        self.ttls = [ttl_fn() for _ in range(n)]


def twitter_objects(n, rng):
    ttls, weights = zip(*TWITTER_TTLS)
    return Objects(n, rng,
                   key_fn=lambda i: twitter_key(rng, i),
                   size_fn=lambda: max(1, min(MAX_VALUE,
                                              int(rng.lognormvariate(math.log(230), 1.3)))),
                   ttl_fn=lambda: rng.choices(ttls, weights)[0])


def zipf_objects(n, rng, value_size, value_size_max=None, prefix=b'zipf:'):
    if value_size_max is None or value_size_max <= value_size:
        size_fn = lambda: value_size
    else:
        size_fn = lambda: rng.randint(value_size, value_size_max)
    return Objects(n, rng, key_fn=lambda i: prefix + b'%d' % i,
                   size_fn=size_fn, ttl_fn=lambda: 0)


def shift_requests(objects, requests, alpha, rng, value_size, value_size_max,
                   shift_value_size, rate):
    """The shift workload: zipf gets on small values, then on new keys with
    larger values (see the module's comment)."""
    first = requests // 2
    i = 0
    for phase, prefix, lo, hi, n in ((0, b'small:', value_size, value_size_max, first),
                                     (1, b'large:', shift_value_size, None, requests - first)):
        objs = zipf_objects(objects, rng, lo, hi, prefix)
        perm = list(range(objects))
        rng.shuffle(perm)
        z = Zipf(objects, alpha, rng)
        for _ in range(n):
            o = perm[z.draw()]
            key = objs.keys[o]
            yield i // rate, key, len(key), objs.sizes[o], 1 + o % 1000, b'get', 0
            i += 1


def requests(kind, objects=200_000, requests=1_200_000, alpha=1.0, seed=1, value_size=100,
             rate=20_000, value_size_max=None, shift_value_size=900):
    """Yields (ts, key, key_size, value_size, client, op, ttl) records."""
    rng = random.Random(seed)
    if kind == 'shift':
        yield from shift_requests(objects, requests, alpha, rng, value_size, value_size_max,
                                  shift_value_size, rate)
        return
    if kind == 'twitter':
        objs = twitter_objects(objects, rng)
        mix = (b'get', b'set', b'delete'), (90, 9, 1)
    elif kind == 'zipf':
        objs = zipf_objects(objects, rng, value_size, value_size_max)
        mix = (b'get',), (1,)
    else:
        raise ValueError('unknown workload %r' % kind)
    perm = list(range(objects))
    rng.shuffle(perm)
    z = Zipf(objects, alpha, rng)
    seen = bytearray(objects)
    ops, weights = mix
    cum = list(itertools.accumulate(weights))
    for i in range(requests):
        o = perm[z.draw()]
        key = objs.keys[o]
        if not seen[o] and kind == 'twitter':
            seen[o] = 1
            op = b'set'
        else:
            op = ops[bisect.bisect_right(cum, rng.random() * cum[-1])]
            if op == b'set' and kind == 'twitter':
                # A new size within a factor of 1.25 either way, uniform
                # in log space: a factor uniform in [0.8, 1.25] has a
                # positive mean log (+0.016), so the most rewritten
                # objects used to drift to the 64 KiB clip (the hottest
                # key reached 46 KB; 89% of the bytes set were rewrites of
                # hot keys), far from the log-normal the sizes stand for.
                step = math.exp(rng.uniform(-SIZE_STEP_LOG, SIZE_STEP_LOG))
                objs.sizes[o] = max(1, min(MAX_VALUE, int(objs.sizes[o] * step)))
        ttl = objs.ttls[o] if op == b'set' else 0
        vsize = 0 if op == b'delete' else objs.sizes[o]
        yield i // rate, key, len(key), vsize, 1 + o % 1000, op, ttl


def write_csv(recs, out):
    for ts, key, ksz, vsz, client, op, ttl in recs:
        out.write(b'%d,%s,%d,%d,%d,%s,%d\n' % (ts, key, ksz, vsz, client, op, ttl))


def add_arguments(ap):
    ap.add_argument('--objects', type=int, default=200_000)
    ap.add_argument('--requests', type=int, default=1_200_000)
    ap.add_argument('--alpha', type=float, default=1.0, help='zipf exponent (1.0)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--value-size', type=int, default=100, help='zipf workload: value bytes')
    ap.add_argument('--value-size-max', type=int, default=None,
                    help='zipf, shift: sizes uniform in --value-size..this (default: fixed)')
    ap.add_argument('--shift-value-size', type=int, default=900,
                    help='shift: value bytes of the second half\'s keys')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('kind', choices=['twitter', 'zipf', 'shift'])
    add_arguments(ap)
    a = ap.parse_args()
    write_csv(requests(a.kind, a.objects, a.requests, a.alpha, a.seed, a.value_size,
                       value_size_max=a.value_size_max, shift_value_size=a.shift_value_size),
              sys.stdout.buffer)
    return 0


if __name__ == '__main__':
    sys.exit(main())
