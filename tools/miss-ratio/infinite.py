# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The misses an infinite cache would have on the requests a replay sent:
what no amount of memory removes, so that a server's *avoidable* misses
are its misses minus these.

The model follows replay.py's look-aside semantics request by request: a
get of a key that is absent or expired misses and is then filled (with
the key's known size and the TTL of its last write, --default-ttl when
none) unless its size is unknown; set/cas store, add stores only when
absent, replace/append/prepend only when present (append and prepend keep
the expiry), delete removes, incr/decr change nothing it tracks. TTLs go
through the replay's own scaling and 30-day cap (Replay.ttl).

Expiry is wall-clock time on the servers, and the replay does not pace by
the trace's timestamps, so the model's clock is the replay's own: Paced
notes when each block of records was handed to the replayer, and an item
set at t with TTL T is alive while now < t + T. A second replay of the
same requests at another pace sees other expiries; each row gets its own
count.
"""
import math
import time

import replay

STEP = 256   # records per clock reading


class Paced:
    """Wraps a list of records; notes the elapsed time every STEP records
    as the replayer takes them."""

    def __init__(self, records):
        self.records = records
        self.times = []

    def __iter__(self):
        t0 = time.monotonic()
        times = self.times
        for i, rec in enumerate(self.records):
            if i % STEP == 0:
                times.append(time.monotonic() - t0)
            yield rec

    def clock(self, i):
        """Seconds into the replay when record i was sent."""
        if not self.times:
            return 0.0
        return self.times[min(i // STEP, len(self.times) - 1)]


def misses(records, clock, ttl_of_record, default_ttl=0):
    """(misses, gets, misses in the second half, gets in the second half)
    of an infinite cache. clock(i): seconds when record i was sent;
    ttl_of_record(t): the TTL the replay sent for a trace TTL t."""
    half = len(records) // 2
    expiry = {}      # key -> the time it expires (inf: never), while stored
    size_of = {}
    ttl_of = {}
    n_miss = n_get = n_miss2 = n_get2 = 0
    inf = math.inf
    for i, rec in enumerate(records):
        _, key, _, vsize, _, op, ttl = rec
        now = clock(i)
        e = expiry.get(key)
        present = e is not None and now < e
        if op in replay.READS:
            second = i >= half
            n_get += 1
            n_get2 += second
            if present:
                continue
            n_miss += 1
            n_miss2 += second
            size = vsize if vsize > 0 else size_of.get(key)
            if size is None:
                expiry.pop(key, None)
                continue
            t = ttl_of.get(key, default_ttl)
            expiry[key] = now + t if t else inf
        elif op in replay.STORES:
            t = ttl_of_record(ttl)
            ttl_of[key] = t
            if op in (b'append', b'prepend'):
                size_of[key] = size_of.get(key, 0) + vsize
            else:
                size_of[key] = vsize
            cmd = replay.STORES[op]
            if cmd == b'set' or (cmd == b'add' and not present) or \
                    (cmd == b'replace' and present):
                expiry[key] = now + t if t else inf
            elif not present:
                expiry.pop(key, None)
        elif op == b'delete':
            expiry.pop(key, None)
    return n_miss, n_get, n_miss2, n_get2
