#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The fill experiment against a real memcached.

Starts memcached on a free loopback port with the given arguments (for
example `-m 64`, or `-m 64 -n 5 -f 1.05 -C`), stores keys 1, 2, 3, ... with
values of a fixed size until memcached reports its first eviction, then reads
every stored key back and counts the hits. The same experiment as
`segcached-storage-bench --fill`, with the same keys and value bytes, so the
numbers compare directly.

Loopback only; bounded by --max-keys and --timeout. Standard library only.

usage: tools/memcached-fill.py [--value-size N] [--json] [--] MEMCACHED_ARGS...
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

BATCH = 1000        # pipelined sets between two looks at `stats`
GET_BATCH = 100     # keys per multi-get on read-back


def value_bytes(key_id, size):
    """The bench's value pattern (tools/storage-bench/keys.h)."""
    return bytes(ord('a') + (key_id + i) % 26 for i in range(size))


def free_loopback_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port, timeout):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.buf = b''

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def line(self):
        while True:
            i = self.buf.find(b'\r\n')
            if i >= 0:
                ln, self.buf = self.buf[:i], self.buf[i + 2:]
                return ln
            self._fill()

    def exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError('memcached closed the connection')
        self.buf += chunk

    def stats(self):
        self.send(b'stats\r\n')
        out = {}
        while True:
            ln = self.line()
            if ln == b'END':
                return out
            parts = ln.split(b' ', 2)
            if len(parts) == 3 and parts[0] == b'STAT':
                out[parts[1].decode()] = parts[2].decode()
            else:
                raise ValueError('unexpected stats line %r' % ln)


def start_memcached(binary, args, port):
    cmd = [binary, '-l', '127.0.0.1', '-p', str(port), '-U', '0']
    if os.geteuid() == 0 and '-u' not in args:
        cmd += ['-u', 'root']   # memcached refuses to run as root otherwise
    cmd += args
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return cmd, proc


def connect(port, proc, timeout):
    deadline = time.monotonic() + 10
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors='replace')
            raise RuntimeError('memcached exited with %d: %s' % (proc.returncode, err.strip()))
        try:
            return Conn(port, timeout)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError('memcached did not accept connections on port %d' % port)
            time.sleep(0.05)


def stop_memcached(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fill(conn, value_size, max_keys, deadline):
    """Stores keys 1.. until `stats` shows an eviction; returns counters."""
    key_id = 0
    stored = 0
    before = 0
    stop = 'key limit'
    while key_id < max_keys:
        if time.monotonic() > deadline:
            stop = 'time limit'
            break
        n = min(BATCH, max_keys - key_id)
        req = bytearray()
        for k in range(key_id + 1, key_id + n + 1):
            req += b'set %d 0 0 %d\r\n' % (k, value_size)
            req += value_bytes(k, value_size) + b'\r\n'
        conn.send(bytes(req))
        failed = None
        for _ in range(n):
            ln = conn.line()
            if ln == b'STORED':
                stored += 1
            elif failed is None:
                failed = ln.decode(errors='replace')
        key_id += n
        st = conn.stats()
        if failed is not None:
            stop = 'set failed: ' + failed
            break
        if int(st['evictions']) > 0:
            stop = 'eviction'
            break
        before = int(st['curr_items'])
    return key_id, stored, before, stop


def read_back(conn, attempted, value_size, deadline):
    hits = corrupt = 0
    for first in range(1, attempted + 1, GET_BATCH):
        if time.monotonic() > deadline:
            raise RuntimeError('time limit reached during read-back')
        ids = range(first, min(first + GET_BATCH, attempted + 1))
        conn.send(b'get ' + b' '.join(b'%d' % k for k in ids) + b'\r\n')
        while True:
            ln = conn.line()
            if ln == b'END':
                break
            parts = ln.split()
            if len(parts) < 4 or parts[0] != b'VALUE':
                raise ValueError('unexpected get line %r' % ln)
            k, n = int(parts[1]), int(parts[3])
            data = conn.exact(n + 2)[:n]
            if n == value_size and data == value_bytes(k, value_size):
                hits += 1
            else:
                corrupt += 1
    return hits, corrupt


def main():
    ap = argparse.ArgumentParser(
        description='Fill a real memcached until its first eviction (loopback only).')
    ap.add_argument('--memcached', default='/usr/bin/memcached', help='memcached binary')
    ap.add_argument('--value-size', type=int, default=1, help='value bytes (1)')
    ap.add_argument('--max-keys', type=int, default=50_000_000,
                    help='stop after this many keys at most (50000000)')
    ap.add_argument('--timeout', type=float, default=600, help='seconds, whole run (600)')
    ap.add_argument('--json', action='store_true', help='one JSON object on stdout')
    ap.add_argument('memcached_args', nargs=argparse.REMAINDER,
                    help='arguments for memcached, e.g. -m 64 -n 5 -f 1.05 -C')
    a = ap.parse_args()
    margs = a.memcached_args
    if margs and margs[0] == '--':
        margs = margs[1:]
    if not 0 <= a.value_size <= 1 << 20:
        ap.error('--value-size must be 0..1048576')
    if a.max_keys < 1:
        ap.error('--max-keys must be positive')
    for bad in ('-l', '--listen', '-p', '--port', '-s', '--unix-socket'):
        if bad in margs:
            ap.error('%s is chosen by this script (loopback, a free port)' % bad)

    deadline = time.monotonic() + a.timeout
    port = free_loopback_port()
    cmd, proc = start_memcached(a.memcached, margs, port)
    try:
        conn = connect(port, proc, timeout=30)
        version = conn.stats().get('version', '?')
        t0 = time.monotonic()
        attempted, stored, before, stop = fill(conn, a.value_size, a.max_keys, deadline)
        fill_s = time.monotonic() - t0
        st = conn.stats()
        hits, corrupt = read_back(conn, attempted, a.value_size, deadline)
        conn.close()
    finally:
        stop_memcached(proc)

    res = {
        'server': 'memcached ' + version,
        'command': cmd,
        'value_size': a.value_size,
        'stop': stop,
        'attempted': attempted,
        'stored': stored,
        'curr_items_before_eviction_batch': before,
        'curr_items': int(st['curr_items']),
        'evictions': int(st['evictions']),
        'readback_hits': hits,
        'readback_corrupt': corrupt,
        'limit_maxbytes': int(st['limit_maxbytes']),
        'bytes': int(st['bytes']),
        'fill_seconds': round(fill_s, 3),
    }
    if a.json:
        json.dump(res, sys.stdout, indent=2)
        print()
    else:
        print('%s %s: stopped by %s after %d sets (%.1f s)' %
              (res['server'], ' '.join(margs), stop, attempted, fill_s))
        print('  curr_items %d (before the evicting batch: %d), read back %d (%d corrupt), '
              'evictions %d, limit_maxbytes %d' %
              (res['curr_items'], before, hits, corrupt, res['evictions'], res['limit_maxbytes']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
