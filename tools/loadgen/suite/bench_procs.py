# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Process control for bench-suite.py: servers in their own process
groups with a start check and a bounded stop, generator runs with a time
limit, the scheduler priority of both, and the host's description."""
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def set_autogroup_nice(pid, nice):
    """With sched_autogroup (the default on desktop-style kernels) nice
    only ranks threads within their session's group; the group's own nice
    is what weighs against other sessions' work. Returns the old value."""
    try:
        with open("/proc/%s/autogroup" % pid) as f:
            old = int(f.read().split()[-1])
        with open("/proc/%s/autogroup" % pid, "w") as f:
            f.write(str(nice))
        return old
    except (OSError, ValueError, IndexError):
        return None


def wait_port(port, timeout=10):
    """A ready check: the TCP port on loopback accepts."""
    def ready(srv):
        end = time.time() + timeout
        while time.time() < end and srv.alive():
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return True
            except OSError:
                time.sleep(0.1)
        return False
    return ready


def wait_log(text, timeout=30):
    """A ready check: the server's log shows text."""
    def ready(srv):
        end = time.time() + timeout
        while time.time() < end and srv.alive():
            srv.log.flush()
            with open(srv.log.name) as f:
                if text in f.read():
                    return True
            time.sleep(0.2)
        return False
    return ready


class Server:
    """A server process in its own process group, stopped on exit."""

    def __init__(self, name, cmd, logpath, ready, nice, env=None):
        self.name = name
        self.log = open(logpath, "w")
        log("$ " + " ".join(cmd))
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                  start_new_session=True, env=env)
        set_autogroup_nice(self.p.pid, nice)
        if not ready(self):
            self.stop()
            with open(logpath) as f:
                tail = f.read()[-1500:]
            raise RuntimeError("%s did not start (%s):\n%s" % (name, logpath, tail))

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(5)
        self.log.close()


def telemetry(file_prefix, command, timeout=2):
    """One DPDK telemetry command to the process started with
    --file-prefix file_prefix; its reply as a dict, or None."""
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % file_prefix
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(timeout)
            s.connect(path)
            hello = json.loads(s.recv(1 << 16).decode())
            s.send(command.encode())
            reply = json.loads(s.recv(hello.get("max_output_len", 1 << 16)).decode())
            return reply.get(command.split(",")[0])
    except (OSError, ValueError):
        return None


def memcached_stats(port, arg="", timeout=2):
    """`stats ARG` over loopback TCP as a dict, or None."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout) as s:
            s.sendall(("stats %s\r\n" % arg).encode())
            data = b""
            while not data.endswith(b"END\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    out = {}
    for line in data.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "STAT":
            out[parts[1]] = parts[2]
    return out


# What the generator's stderr says when the memif link did not come up.
MEMIF_NOT_CONNECTED = ("memif_connect_client(): Failed", "link still down")


def run_generator(cmd, out_dir, name, timeout, env=None):
    """Runs segcached-loadgen (cmd without --json); returns its JSON result
    with the lib/net loss counters added, or None when it failed."""
    out = os.path.join(out_dir, name + ".json")
    if os.path.exists(out):
        os.remove(out)
    cmd = cmd + ["--json", out, "--quiet"]
    log("$ " + " ".join(cmd))
    p = None
    for _ in range(3):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               env=env)
        except subprocess.TimeoutExpired:
            log("%s: generator timed out after %.0f s" % (name, timeout))
            return None
        # The memif server takes a moment to notice the last client left;
        # on a loaded host (a rehearsal folded onto 2 CPUs) the link can
        # take longer than the generator's 5 s to come up. Both leave the
        # server as it was: try again.
        if not any(s in p.stderr for s in MEMIF_NOT_CONNECTED):
            break
        log("%s: memif not connected, again" % name)
        time.sleep(2)
    with open(os.path.join(out_dir, name + ".log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0 or not os.path.exists(out):
        log("%s: generator exited %d:\n%s" % (name, p.returncode, p.stderr[-2000:]))
        if os.path.exists(out):  # corrupt or bad answers: keep the evidence
            with open(out) as f:
                r = json.load(f)
            r["exit_status"] = p.returncode
            return r
        return None
    with open(out) as f:
        r = json.load(f)
    net = [l for l in p.stderr.splitlines() if l.startswith("loadgen: net:")]
    r["net_counters"] = net[0][len("loadgen: net: "):] if net else ""
    log("  %.0f req/s, hit ratio %.3f, errors %d, lost %d, conn_failed %d, corrupt %d; "
        "net: %s" % (r["throughput"], r["hit_ratio"], r["errors"], r.get("lost", 0),
                     r.get("conn_failed", 0), r["corrupt"], r["net_counters"] or "-"))
    return r


def memif_never_connected(out_dir, name):
    """Whether run_generator's run `name` failed because the memif link
    never came up (its log, written by run_generator, says so)."""
    try:
        with open(os.path.join(out_dir, name + ".log")) as f:
            text = f.read()
    except OSError:
        return False
    return any(s in text for s in MEMIF_NOT_CONNECTED)


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def host_description(cpus, memcached):
    """What the numbers were measured on: CPU model, cores, kernel."""
    model = sockets = threads_per_core = ""
    for line in command_output(["lscpu"]).splitlines():
        k, _, v = line.partition(":")
        v = v.strip()
        if k == "Model name":
            model = v
        elif k == "Socket(s)":
            sockets = v
        elif k == "Thread(s) per core":
            threads_per_core = v
    ver = command_output([memcached, "-V"]).strip()
    return {
        "cpu_model": model, "online_cpus": os.cpu_count(), "cpus_used": cpus,
        "sockets": sockets, "threads_per_core": threads_per_core,
        "kernel": platform.release(),
        "memcached": ver, "loadavg_start": os.getloadavg()[0],
    }
