#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Smoke test of segcached-loadgen (meson suite 'tools').

Starts segcached --stack posix on loopback (TCP and UDP) and runs the
generator's kernel-socket transport against it: closed loop over TCP with
several threads, zipf keys and multi-gets, UDP, an open-loop run and a
trace replay. Checks that every run exits 0, that its JSON adds up
(requests = gets + sets, hits <= keys asked, quantiles ordered), that no
answer was wrong or lost, that every preloaded key is read back, and that
the server counted at least the gets and sets the generator says it got
answers to. No timing thresholds.

usage: smoke.py LOADGEN SEGCACHED TRACE
"""
import json
import os
import socket
import subprocess
import sys
import selectors
import tempfile
import threading
import time

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what, flush=True)


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stats(port):
    s = socket.create_connection(('127.0.0.1', port), 5)
    s.sendall(b'stats\r\n')
    buf = b''
    while not buf.endswith(b'END\r\n'):
        buf += s.recv(65536)
    s.close()
    out = {}
    for line in buf.decode().splitlines():
        p = line.split()
        if len(p) == 3 and p[0] == 'STAT':
            out[p[1]] = p[2]
    return out


def run(lg, port, tmp, label, *args):
    path = os.path.join(tmp, label + '.json')
    cmd = [lg, '--server', '127.0.0.1:%d' % port, '--quiet', '--json', path, *args]
    print('$ ' + ' '.join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stdout + p.stderr, flush=True)
    check(p.returncode == 0, label + ': exit status 0 (got %d)' % p.returncode)
    if not os.path.exists(path):
        check(False, label + ': JSON written')
        return None
    with open(path) as f:
        r = json.load(f)
    check(r['requests'] > 0, label + ': some requests answered')
    check(r['requests'] == r['gets'] + r['sets'], label + ': requests == gets + sets')
    check(r['hits'] <= r['keys_asked'], label + ': hits <= keys asked')
    for f in ('corrupt', 'stale', 'bad', 'errors', 'conn_failed'):
        check(r[f] == 0, label + ': %s == 0' % f)
    lat = r['latency_us']
    check(lat['p50'] <= lat['p90'] <= lat['p99'] <= lat['p99.9'] <= lat['max'],
          label + ': quantiles ordered')
    return r


class LossyUdpRelay:
    """A UDP relay on loopback in front of the server that drops the
    client datagrams numbered in drop_requests and the server datagrams
    numbered in drop_replies (0-based, counted over all flows): losses at
    known places, so that a lost preload set is seen to be sent again.
    Each client address gets its own upstream socket, so flows stay
    apart. Runs in a thread until stop()."""

    def __init__(self, server_port, drop_requests, drop_replies):
        self.server = ('127.0.0.1', server_port)
        self.drop_requests, self.drop_replies = set(drop_requests), set(drop_replies)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(('127.0.0.1', 0))
        self.port = self.front.getsockname()[1]
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.front, selectors.EVENT_READ, None)
        self.upstream = {}
        self.requests = self.replies = self.dropped = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.done.is_set():
            for key, _ in self.sel.select(0.1):
                sock, client = key.fileobj, key.data
                try:
                    data, addr = sock.recvfrom(65536)
                except OSError:
                    continue
                if client is None:  # from a client
                    n, self.requests = self.requests, self.requests + 1
                    if n in self.drop_requests:
                        self.dropped += 1
                        continue
                    up = self.upstream.get(addr)
                    if up is None:
                        up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        up.connect(self.server)
                        self.upstream[addr] = up
                        self.sel.register(up, selectors.EVENT_READ, addr)
                    up.send(data)
                else:  # from the server, for client
                    n, self.replies = self.replies, self.replies + 1
                    if n in self.drop_replies:
                        self.dropped += 1
                        continue
                    self.front.sendto(data, client)

    def stop(self):
        self.done.set()
        self.thread.join(10)
        for up in self.upstream.values():
            up.close()
        self.front.close()


def rss_steering(lg):
    """--stack net over net_null with two queues, which hashes with RSS
    (a 128-entry table) but carries nothing: the generator takes the
    RSS path (local ports chosen per queue, lg_rss; the math is unit-
    tested in tests/unit/loadgen/test_rss.cc), for TCP and UDP, and more
    connections per worker than local ports reach its queue is refused
    with a message, not a crash."""
    eal = [lg, '--lcores', '0@0,1@1,2@1', '--main-lcore', '0', '--no-huge', '--no-pci',
           '--file-prefix', 'lgrss%d' % os.getpid(), '-m', '256', '--vdev=net_null0', '--',
           '--stack', 'net', '--ip', '198.18.0.2/24', '--server', '198.18.0.1:11211',
           '--duration', '0.3', '--warmup', '0.1', '--no-preload', '--quiet']
    steered = 'local ports are those whose replies come back to its queue'
    for label, args, ok, says in (
            ('rss-tcp', ['--conns', '100'], True, steered),
            ('rss-udp', ['--udp', '--conns', '64'], True, steered),
            ('rss-too-many-conns', ['--conns', '40000'], False,
             'fewer than --conns 40000: use fewer connections per worker')):
        cmd = eal + args
        print('$ ' + ' '.join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        print('\n'.join(l for l in out.splitlines() if l.startswith('loadgen')), flush=True)
        check((p.returncode == 0) == ok, label + ': exit status %s (got %d)'
              % ('0' if ok else 'non-zero', p.returncode))
        check(says in out, label + ': says "%s"' % says)


def main():
    lg, segcached, trace = sys.argv[1:4]
    port = free_port()
    srv = subprocess.Popen([segcached, '--no-huge', '--no-pci', '--no-shconf',
                            '--file-prefix', 'lgsmoke%d' % os.getpid(), '-l', '0', '--',
                            '--stack', 'posix', '-t', '2', '-l', '127.0.0.1', '-p', str(port),
                            '-U', str(port), '-m', '64',
                            # memcached's UDP: sets too, replies of any size
                            '--udp-writes', '--udp-reply-max', '0'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 30
        while time.time() < end:
            try:
                socket.create_connection(('127.0.0.1', port), 0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory() as tmp:
            before = stats(port)
            common = ['--keys', '2000', '--duration', '1', '--warmup', '0.2']
            runs = [
                run(lg, port, tmp, 'tcp', *common, '--threads', '2', '--conns', '4',
                    '--depth', '4', '--zipf', '0.99', '--check-every', '1'),
                # --verify all: every value's version against the sets
                # acknowledged before its get (zipf: hot keys set by both
                # threads at once, which must not read as staleness).
                run(lg, port, tmp, 'multiget', *common, '--multiget', '8',
                    '--value-size', '10-3000', '--conns', '2', '--depth', '2',
                    '--verify', 'all'),
                run(lg, port, tmp, 'udp', *common, '--udp', '--conns', '4', '--depth', '2',
                    '--verify', 'all'),
                run(lg, port, tmp, 'open', *common, '--rate', '2000', '--conns', '4'),
            ]
            for label, r in zip(('tcp', 'multiget', 'udp', 'open'), runs):
                if r:
                    # Every key was preloaded and 64 MiB holds them all.
                    check(r['hits'] == r['keys_asked'], label + ': every preloaded key hit')
                    check(r['values_checked'] > 0, label + ': values were checked')
            if runs[0]:
                check(runs[0]['values_checked'] == runs[0]['hits'],
                      'tcp: --check-every 1 checks every value')
            if runs[2]:
                check(runs[2]['lost'] == 0, 'udp: nothing lost on loopback')
            if runs[3]:
                # Every measured send ends answered or counted; every late
                # send is the generator's or the window's.
                o = runs[3]
                check(o['sent'] == o['requests'] + o['errors'] + o['corrupt'] + o['stale'] +
                      o['bad'] + o['lost'], 'open: every send answered or counted')
                check(o['late'] == o['generator_late'] + o['window_late'],
                      'open: late == generator_late + window_late')
                check(o['unsent_at_drain'] >= 0 and o['backlog_peak'] >= 0 and
                      o['generator_behind'] in (True, False), 'open: backlog reported')
            for label, r in zip(('multiget', 'udp'), runs[1:3]):
                if r:
                    check(r['verify'] == 'all', label + ': --verify all reported')
                    check(r['values_checked'] == r['hits'],
                          label + ': --verify all checks every value')
            v = run(lg, port, tmp, 'verify-zipf', *common, '--threads', '2', '--conns', '4',
                    '--depth', '4', '--zipf', '1.2', '--get-ratio', '0.5', '--verify', 'all')
            if v:
                check(v['sets'] > 0 and v['values_checked'] == v['hits'],
                      'verify-zipf: sets racing on hot keys, every value checked')
            t = run(lg, port, tmp, 'trace', '--trace', trace)
            if t:
                # The fixture: 100 lines, deletes skipped, sets first.
                with open(trace) as f:
                    ops = [l.split(',')[3] for l in f.read().splitlines()[1:]]
                want = sum(1 for o in ops if o in ('get', 'set'))
                check(t['requests'] == want, 'trace: every get and set replayed')
                check(t['sets'] == ops.count('set'), 'trace: sets replayed')
            # UDP loses datagrams: the preload's sets (2000 keys, so the
            # first 2000 datagrams are all sets; the last of them too)
            # are sent again until answered, so every key is there to hit.
            relay = LossyUdpRelay(port, drop_requests=(3, 700, 1999),
                                  drop_replies=(10, 1500))
            try:
                lossy = run(lg, relay.port, tmp, 'udp-lossy-preload', *common, '--udp',
                            '--conns', '4', '--depth', '2', '--udp-timeout-ms', '200')
            finally:
                relay.stop()
            check(relay.dropped == 5, 'udp-lossy-preload: the relay dropped 5 datagrams '
                  '(got %d)' % relay.dropped)
            if lossy:
                check(lossy['hits'] == lossy['keys_asked'],
                      'udp-lossy-preload: every preloaded key hit (lost sets were resent)')
                check(lossy['lost'] == 0, 'udp-lossy-preload: nothing lost while measuring')
            after = stats(port)
            done = [r for r in runs + [t] if r]
            for f, k in (('cmd_get', 'keys_asked'), ('cmd_set', 'sets')):
                check(int(after[f]) - int(before[f]) >= sum(r[k] for r in done),
                      'server %s counts at least what the generator saw answered' % f)
    finally:
        srv.terminate()
        srv.wait(30)
    rss_steering(lg)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
