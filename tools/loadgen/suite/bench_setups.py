# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""What each server of bench-suite.py looks like at N server cores, and
the generator that drives it: which CPUs each side gets and the exact
command lines.

Cores: of the CPUs in use (sorted; by default one hardware thread of each
physical core, see bench-suite.py), the server gets the last N and the
generator the N below them, so both sides have N cores and the two never
share one. The DPDK main lcores (control loops that sleep) sit on the other
side's first core. segcached native serves one memif port with N queue
pairs, one per worker lcore (lib/net runs one stack per lcore); the lib/net
generator opens the same N queues, one per lcore, and memif connects its
queue q to the server's queue q, so every server lcore gets the same share
of the connections. The kernel-socket generator runs N threads for the
posix stack and memcached.
"""
import os

from bench_procs import Server, memcached_stats, telemetry, wait_log, wait_port

SERVER_IP, CLIENT_IP = "198.18.0.2", "198.18.0.1"
PORT = 22411  # loopback and memif; kept off 11211 so a running memcached is left alone

SERVERS = {
    # key: (title, kind, segcached options)
    "native": ("segcached native", "native", []),
    "native-baseline": ("segcached native, baseline engine", "native",
                        ["--engine", "baseline"]),
    "posix": ("segcached posix", "posix", []),
    "memcached": ("memcached", "memcached", []),
}


def cpulist(cpus):
    return ",".join(str(c) for c in cpus)


def split_cores(cpus, n):
    """(server CPUs, generator CPUs) for n server cores, or None when the
    host has fewer than 2n CPUs."""
    if 2 * n > len(cpus):
        return None
    return cpus[len(cpus) - n:], cpus[len(cpus) - 2 * n:len(cpus) - n]


# The UDP runs set as well as get, as memcached's UDP serves them: lift
# segcached's defaults against reflection (reads only, 4096-byte replies).
UDP_AS_MEMCACHED = ["--udp-writes", "--udp-reply-max", "0"]

class Tools:
    """The binaries and where DPDK finds its drivers; from a build tree or
    from a bundle (tools/loadgen/scripts/make-bundle.sh)."""

    def __init__(self, segcached, loadgen, memcached, pmd_dir, huge, memory_mb, nice,
                 fold=None):
        self.segcached, self.loadgen, self.memcached = segcached, loadgen, memcached
        self.pmd_dir, self.huge, self.memory_mb = pmd_dir, huge, memory_mb
        self.nice = ["nice", "-n", str(nice)]
        self.nice_value = nice
        # A plumbing test of a bigger host's commands on a small one: CPU i
        # runs on CPU i mod fold (the numbers then mean nothing).
        self.fold = fold

    def eal_lcores(self, ids, main):
        """EAL options for lcores ids (main among them)."""
        if self.fold:
            return ["--lcores", ",".join("%d@%d" % (i, i % self.fold) for i in ids),
                    "--main-lcore", str(main)]
        return ["-l", cpulist(ids), "--main-lcore", str(main)]

    def taskset(self, ids):
        if self.fold:
            ids = sorted({i % self.fold for i in ids})
        return ["taskset", "-c", cpulist(ids)]

    def eal_common(self, prefix):
        """EAL options both DPDK processes share."""
        args = ["--no-pci", "--file-prefix", prefix]
        if not self.huge:
            args.insert(0, "--no-huge")
        if self.pmd_dir:
            args += ["-d", self.pmd_dir]
        return args


class Setup:
    """One server at n cores and its generator."""

    def __init__(self, key, n, cpus, tools, out_dir):
        self.key, self.n, self.tools, self.out_dir = key, n, tools, out_dir
        self.title, self.kind, self.extra = SERVERS[key]
        self.srv_cpus, self.gen_cpus = split_cores(cpus, n)
        self.sock = "/run/segcached-bench-%d.sock" % os.getpid()

    def label(self):
        if self.kind == "native":
            return "%s (%d lcore%s, memif)" % (self.title, self.n, "s" if self.n > 1 else "")
        return "%s -t %d (loopback)" % (self.title, self.n)

    def server_cmd(self):
        t, n, srv = self.tools, self.n, self.srv_cpus
        mem = str(t.memory_mb)
        if self.kind == "native":
            main = self.gen_cpus[0]
            return t.nice + [t.segcached] + t.eal_lcores([main] + srv, main) + \
                t.eal_common(self.server_prefix()) + [
                "--vdev=net_memif0,role=server,socket=%s,mac=02:00:00:00:00:02" % self.sock,
                "--", "--stack", "native", "--ip", SERVER_IP + "/24",
                "-p", str(PORT), "-U", str(PORT), "-m", mem, "--link-timeout", "0"
            ] + UDP_AS_MEMCACHED + self.extra
        if self.kind == "posix":
            return t.nice + t.taskset(srv) + [t.segcached] + t.eal_lcores(srv, srv[0]) + \
                t.eal_common("benchposix%d" % os.getpid()) + [
                    "--", "--stack", "posix", "-t", str(n), "-l", "127.0.0.1",
                    "-p", str(PORT), "-U", str(PORT), "-m", mem] + UDP_AS_MEMCACHED + self.extra
        cmd = t.nice + t.taskset(srv) + [t.memcached, "-t", str(n),
                        "-l", "127.0.0.1", "-p", str(PORT), "-U", str(PORT), "-m", mem,
                        "-c", "4096"]
        return cmd + (["-u", "root"] if os.geteuid() == 0 else [])

    def server_prefix(self):
        return "benchsrv%d" % os.getpid()

    def worker_spread(self):
        """How the load fell on the server's lcores or threads, read before
        it stops: segcached native's per-lcore connections and packets
        (telemetry), segcached posix's requests per worker (`stats
        workers`)."""
        if self.kind == "posix":
            st = memcached_stats(PORT, "workers")
            if not st:
                return None
            reqs = {}
            for k, v in st.items():
                w, _, name = k.partition(":")[2].partition(":")
                if name in ("cmd_get", "cmd_set") and w.isdigit():
                    reqs[int(w)] = reqs.get(int(w), 0) + int(v)
            return {"worker_requests": [reqs[w] for w in sorted(reqs)]}
        if self.kind != "native":
            return None
        d = telemetry(self.server_prefix(), "/segcached/net")
        if not d:
            return None
        return {k: d.get(k) for k in ("worker_lcores", "worker_conns_opened",
                                      "worker_rx_packets", "worker_tx_packets")}

    def start_server(self, name):
        if self.kind == "native" and os.path.exists(self.sock):
            os.remove(self.sock)
        ready = wait_log(" ready") if self.kind == "native" else wait_port(PORT)
        return Server(self.label(), self.server_cmd(),
                      os.path.join(self.out_dir, name + ".server.log"), ready,
                      self.tools.nice_value)

    def generator_cmd(self):
        t, n = self.tools, self.n
        if self.kind == "native":
            main = self.srv_cpus[0]
            cmd = t.nice + [t.loadgen] + t.eal_lcores(self.gen_cpus + [main], main) + \
                t.eal_common("benchgen%d" % os.getpid())
            if not t.huge:  # each queue's mbuf pool and stack buffers
                cmd += ["-m", str(128 + 64 * n)]
            return cmd + [
                "--vdev=net_memif0,socket=%s,mac=02:00:00:00:00:01" % self.sock, "--",
                "--stack", "net", "--ip", CLIENT_IP + "/24",
                "--server", "%s:%d" % (SERVER_IP, PORT)]
        # --spin: the lib/net generator polls too; neither pays wake-up latency.
        return t.nice + t.taskset(self.gen_cpus) + [t.loadgen,
                         "--stack", "socket", "--threads", str(n), "--spin",
                         "--server", "127.0.0.1:%d" % PORT]
