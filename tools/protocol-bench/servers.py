# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Starts segcached (posix stack) or Debian's memcached on loopback for the
protocol benchmarks, and a minimal text-protocol connection to talk to them.

Every server listens on 127.0.0.1 only, on a port found free, and is killed
when the script exits, even on an error. Standard library only.
"""
import atexit
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
DEFAULT_SEGCACHED = os.path.join(ROOT, 'build', 'app', 'segcached', 'segcached')
DEFAULT_MEMCACHED = '/usr/bin/memcached'
START_TIMEOUT = 60.0
IO_TIMEOUT = 60.0   # a bound against a hung server, not a speed check

_live = []


@atexit.register
def _kill_all():
    for s in list(_live):
        s.stop()


# SIGTERM (e.g. from timeout(1)) runs the atexit handler too.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Conn:
    """A text-protocol connection with buffered, exact reads."""

    def __init__(self, port, timeout=IO_TIMEOUT):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError('the server closed the connection')
        self.buf += chunk

    def line(self):
        """One reply line, without its CRLF."""
        while True:
            i = self.buf.find(b'\r\n', self.pos)
            if i >= 0:
                ln = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return ln
            self._fill()

    def exact(self, n):
        """The next n bytes."""
        while len(self.buf) - self.pos < n:
            self._fill()
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def skip(self, n):
        """Drops n bytes (a value and its CRLF)."""
        while len(self.buf) - self.pos < n:
            self._fill()
        self.pos += n

    def stats(self, arg=b''):
        self.send(b'stats' + (b' ' + arg if arg else b'') + b'\r\n')
        out = {}
        while True:
            ln = self.line()
            if ln == b'END':
                return out
            parts = ln.split(b' ', 2)
            if len(parts) != 3 or parts[0] != b'STAT':
                raise ValueError('unexpected stats line %r' % ln)
            out[parts[1].decode()] = parts[2].decode()


class Server:
    """One server process: kind 'segcached' or 'memcached', memory in MiB,
    worker threads, and extra arguments (e.g. ['--eviction', 'fifo']).
    eal=False starts segcached with no EAL option, so that the posix stack
    runs without DPDK's EAL, as a memcached command line starts it."""

    def __init__(self, kind, memory_mb, threads, extra=(), segcached=DEFAULT_SEGCACHED,
                 memcached=DEFAULT_MEMCACHED, eal=True):
        self.kind = kind
        self.eal = eal
        self.memory_mb = memory_mb
        self.threads = threads
        self.extra = list(extra)
        self.binary = segcached if kind == 'segcached' else memcached
        self.port = None
        self.proc = None
        self.cmd = None

    def label(self):
        return ' '.join([self.kind, '-m', str(self.memory_mb),
                         '-t', str(self.threads)] + self.extra)

    def command(self, port):
        a = ['-l', '127.0.0.1', '-p', str(port), '-U', '0',
             '-m', str(self.memory_mb), '-t', str(self.threads)] + self.extra
        if self.kind == 'segcached':
            return [self.binary] + (['--no-huge', '--'] if self.eal else []) + \
                ['--stack', 'posix'] + a
        if os.geteuid() == 0:
            a += ['-u', 'root']   # memcached refuses to run as root otherwise
        return [self.binary] + a

    def start(self):
        for _ in range(5):
            self.port = free_port()
            self.cmd = self.command(self.port)
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            _live.append(self)
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = Conn(self.port, timeout=5)
                    c.send(b'version\r\n')
                    ok = c.line().startswith(b'VERSION ')
                    c.close()
                    if ok:
                        return self
                except OSError:
                    time.sleep(0.05)
            err = b''
            if self.proc.poll() is not None:
                err = self.proc.stderr.read()
            self.stop()
            if b'in use' not in err and self.proc.returncode != 71:
                raise RuntimeError('%s did not start: %s' % (' '.join(self.cmd),
                                                              err.decode(errors='replace')))
        raise RuntimeError('%s did not start (port conflicts)' % ' '.join(self.cmd))

    def connect(self):
        return Conn(self.port)

    def stats(self, arg=b''):
        c = self.connect()
        try:
            return c.stats(arg)
        finally:
            c.close()

    def memory_used(self):
        """Bytes the server holds for items and their index: memcached's
        slab pages (total_malloced: one page per slab class in use even
        beyond -m) plus its hash table (hash_bytes, outside -m); segcached's
        heap, table and segment headers (all inside -m)."""
        if self.kind == 'memcached':
            return (int(self.stats(b'slabs').get('total_malloced', 0)) +
                    int(self.stats().get('hash_bytes', 0)))
        st = self.stats(b'segments')
        return int(st['heap_bytes']) + int(st['table_bytes']) + int(st['meta_bytes'])

    def rss(self):
        """The process's resident memory in bytes (smaps_rollup's Rss: what
        an operator's top and free see), and its anonymous and file-backed
        parts; zeros when it has exited."""
        out = {'rss': 0, 'anon': 0, 'file': 0}
        try:
            with open('/proc/%d/smaps_rollup' % self.proc.pid) as f:
                for ln in f:
                    w = ln.split()
                    if w[0] == 'Rss:':
                        out['rss'] = int(w[1]) << 10
                    elif w[0] == 'Anonymous:':
                        out['anon'] = int(w[1]) << 10
            out['file'] = out['rss'] - out['anon']
        except (OSError, AttributeError):
            pass
        return out

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; returns True when SIGTERM
        stopped it (or it had exited already)."""
        clean = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                clean = False
                self.proc.kill()
                self.proc.wait()
        if self in _live:
            _live.remove(self)
        return clean

    def busy_threads(self, sample=1.0):
        """The server's threads using CPU now, e.g. 'posix-w1 99%'."""
        def cpu():
            out = {}
            tick = os.sysconf('SC_CLK_TCK')
            try:
                for tid in os.listdir('/proc/%d/task' % self.proc.pid):
                    with open('/proc/%d/task/%s/stat' % (self.proc.pid, tid)) as f:
                        st = f.read()
                    name = st[st.index('(') + 1:st.rindex(')')]
                    fields = st[st.rindex(')') + 2:].split()
                    out[name + '/' + tid] = (int(fields[11]) + int(fields[12])) / tick
            except OSError:
                pass
            return out
        a = cpu()
        time.sleep(sample)
        b = cpu()
        busy = ['%s %.0f%%' % (t.split('/')[0], 100 * (b[t] - a.get(t, 0)) / sample)
                for t in sorted(b) if b[t] - a.get(t, 0) > 0.05 * sample]
        return ', '.join(busy) or 'none'

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def host_description():
    """'N CPUs, <lscpu model name>' for the reports."""
    model = '?'
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True, timeout=10).stdout
        for ln in out.splitlines():
            if ln.startswith('Model name:'):
                model = ln.split(':', 1)[1].strip()
                break
    except (OSError, subprocess.TimeoutExpired):
        pass
    return '%d CPUs, %s' % (os.cpu_count() or 0, model)


def loadavg():
    """The 1-minute load average, as the reports print it ('?' without /proc)."""
    try:
        with open('/proc/loadavg') as f:
            return f.read().split()[0]
    except OSError:
        return '?'


def tree_commit():
    """The checkout's short commit, saying when tracked files had changes
    (the numbers then come from a tree no commit has)."""
    try:
        out = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(['git', '-C', ROOT, 'status', '--porcelain',
                                '--untracked-files=no'],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (out or '?') + (' (with uncommitted changes)' if dirty else '')
    except (OSError, subprocess.TimeoutExpired):
        return '?'


def version_of(binary, kind):
    try:
        out = subprocess.run([binary, '-V'] if kind == 'memcached' else [binary, '--version'],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        return out or '?'
    except (OSError, subprocess.TimeoutExpired):
        return '?'
