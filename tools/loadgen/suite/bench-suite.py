#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""End-to-end benchmark: segcached native (lib/net over net_memif, the Segcache
engine and the rte_hash baseline engine), segcached posix and memcached,
driven by the same generator (segcached-loadgen) with the same workload,
side by side in one run. Starts and stops every process itself; every step
has a time limit.

Every point runs at two pipelining depths (--depths, default 1,4) with
the same requests in flight per generator worker (--in-flight, default
64): depth 1 x 64 connections, the way most clients talk (one request per
connection at a time: the headline), and depth 4 x 16 connections
(pipelined). A server that reads a connection's requests in batches gains
from depth whatever else it does: posix vs memcached -t 1 was 2.5-4.0x at
depth 4 but 0.91-1.28x at depth 1 on the 2-CPU host. Every table gives
both, each compared with memcached at the same depth.

Matrix (default): every server at one core (--cores), TCP and UDP, 90/10
and 50/50 get/set, uniform and zipf 0.99 keys, 64-byte values; then one
open-loop run per server and depth (Poisson arrivals at --latency-load of
its median TCP 90/10 uniform peak at that depth; latency from the intended
send times); then one run per server and depth with --verify all (every
get's value and version checked against the sets acknowledged before it:
a stale value invalidates the run) on the matrix's most write-heavy, most
skewed workload.

    tools/loadgen/suite/bench-suite.py --build build [--duration 3] [--rounds 3]

Scaling (--scaling): server cores 1, 2, 4, ... up to half the CPUs in use
(the generator gets as many cores as the server, see bench_setups.py), for
segcached native (N lcores, one memif queue pair each), segcached posix -t N
and memcached -t N; TCP 90/10 uniform unless told otherwise.

    tools/loadgen/suite/bench-suite.py --build build --scaling

From a bundle (tools/loadgen/scripts/make-bundle.sh) on a host without meson or
DPDK: --segcached, --loadgen, --memcached and --pmd-dir instead of --build
(the bundle's run-suite.sh passes them).

Every round runs every server (the order rotating from round to round) and
every run gets a freshly started server; the report gives medians over
rounds and the per-round ratio to memcached: on a shared host the
background load drifts, and only ratios taken close together in time mean
anything. Every server and generator runs at the same --nice (default -10),
also set as their scheduler autogroup's nice, so that other sessions' work
on the host weighs less.

Needs root (DPDK runtime files, the memif socket under /run, negative nice)
and Python >= 3.7. Exits 0 when every run is a result, 3 when the suite
ran through but some runs are invalid through losses (bench_report.problems;
0 with --allow-lossy), 1 when a run has no result or a wrong answer.

Writes OUT/results.json (rewritten after every run, so a cut-off run keeps
what it measured) and prints the Markdown report (bench_report.py renders
the same JSON into tables and a PNG, also for results measured elsewhere).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from bench_procs import (host_description, log, memif_never_connected, run_generator,
                         set_autogroup_nice)
from bench_setups import SERVERS, Setup, Tools, split_cores
import bench_report

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository (HERE is tools/loadgen/suite; a bundle's tools/ gives its
# binaries and COMMIT, so this is not used there)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DISTS = {"uniform": [], "zipf": ["--zipf", "0.99"]}
# Per run, besides warm-up and measurement: server start, preload, stop.
RUN_OVERHEAD_S = 1.5


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scaling", action="store_true",
                    help="server cores 1, 2, 4, ... instead of the one-core matrix")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="meson build directory with segcached and segcached-loadgen")
    ap.add_argument("--no-build", action="store_true",
                    help="use --build as it is (default: meson setup when it is missing, "
                         "then ninja for segcached and segcached-loadgen)")
    ap.add_argument("--segcached", help="segcached binary (default: from --build)")
    ap.add_argument("--loadgen", help="segcached-loadgen binary (default: from --build)")
    ap.add_argument("--memcached", default=shutil.which("memcached") or "/usr/bin/memcached")
    ap.add_argument("--pmd-dir", help="directory of DPDK driver .so files, passed as EAL -d "
                    "(for a bundle; not under /tmp: the EAL refuses world-writable paths)")
    ap.add_argument("--out", default="/tmp/segcached-bench")
    ap.add_argument("--duration", type=float, default=3, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=1, help="warm-up seconds per run")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds, each running every server and workload once")
    ap.add_argument("--servers", help="comma-separated subset of %s (default: all in the "
                    "matrix; native,posix,memcached with --scaling)" % ",".join(SERVERS))
    ap.add_argument("--cores", help="server core counts, e.g. 1,2,4 (default: 1; with "
                    "--scaling 1, 2, 4, ... up to half the CPUs)")
    ap.add_argument("--native-cores", help="server core counts of the native servers, "
                    "when they differ from --cores (e.g. 1,2,4,7 beside --cores 1,2,4,8)")
    ap.add_argument("--cpus", help="CPUs to use, e.g. 0-15 (default: of this process's "
                    "affinity, one hardware thread per physical core)")
    ap.add_argument("--transports", help="tcp,udp (default: both; tcp with --scaling)")
    ap.add_argument("--mixes", help="get ratios, e.g. 0.9,0.5 (default: both; 0.9 with "
                    "--scaling)")
    ap.add_argument("--dists", help="uniform,zipf (zipf 0.99) (default: both; uniform "
                    "with --scaling)")
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--depths", default="1,4",
                    help="pipelining depths (requests in flight per connection), each "
                         "point run at every one (default 1,4: depth 1 is how most clients "
                         "talk, 4 pipelines)")
    ap.add_argument("--in-flight", type=int, default=64,
                    help="requests in flight per generator worker (one worker per server "
                         "core) at every depth: --in-flight / depth connections each")
    ap.add_argument("--memory", type=int, default=256, help="server memory in MiB (-m)")
    ap.add_argument("--huge", choices=("auto", "yes", "no"), default="auto",
                    help="EAL hugepages: auto = when 1 GiB of free hugepages is there")
    ap.add_argument("--latency", dest="latency", action="store_true", default=None,
                    help="open-loop latency runs (default: on in the matrix, off with "
                         "--scaling)")
    ap.add_argument("--no-latency", dest="latency", action="store_false")
    ap.add_argument("--verify", dest="verify", action="store_true", default=None,
                    help="one --verify all run per server (default: on in the matrix, "
                         "off with --scaling)")
    ap.add_argument("--no-verify", dest="verify", action="store_false")
    ap.add_argument("--latency-load", type=float, default=0.5,
                    help="open-loop rate as a fraction of the median closed-loop peak")
    ap.add_argument("--nice", type=int, default=-10,
                    help="nice value of every server and generator (the same for all): "
                         "on a shared host it keeps other work from deciding the result")
    ap.add_argument("--fold-cpus", type=int, metavar="N",
                    help="plumbing test of a bigger host's commands on a small one: with "
                         "--cpus 0-15 --fold-cpus 2, CPU i runs on CPU i mod 2 (the numbers "
                         "mean nothing, and the report says so)")
    ap.add_argument("--allow-lossy", action="store_true",
                    help="exit 0 when runs are invalid only through losses (retransmissions, "
                         "lost requests, misses): for plumbing tests; the report still marks "
                         "them")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and every command, run nothing")
    args = ap.parse_args()
    scaling = args.scaling

    def pick(value, matrix, scale):
        return (value or (scale if scaling else matrix)).split(",")

    args.server_keys = pick(args.servers, ",".join(SERVERS), "native,posix,memcached")
    for k in args.server_keys:
        if k not in SERVERS:
            ap.error("unknown server %r (known: %s)" % (k, ",".join(SERVERS)))
    args.transport_list = pick(args.transports, "tcp,udp", "tcp")
    args.mix_list = [float(x) for x in pick(args.mixes, "0.9,0.5", "0.9")]
    args.dist_list = pick(args.dists, "uniform,zipf", "uniform")
    for d in args.dist_list:
        if d not in DISTS:
            ap.error("unknown key distribution %r" % d)
    if args.latency is None:
        args.latency = not scaling
    if args.verify is None:
        args.verify = not scaling
    args.cpu_list = parse_cpus(args.cpus) if args.cpus else one_thread_per_core()
    half = len(args.cpu_list) // 2
    if args.cores:
        args.core_list = [int(x) for x in args.cores.split(",")]
    elif scaling:
        args.core_list = [n for n in (1 << i for i in range(12)) if n <= half]
        if half and half not in args.core_list:
            args.core_list.append(half)
    else:
        args.core_list = [1]
    try:
        args.settings = depth_settings(args.depths, args.in_flight)
    except ValueError as e:
        ap.error(str(e))
    args.native_core_list = [int(x) for x in args.native_cores.split(",")] \
        if args.native_cores else args.core_list
    if not args.core_list or any(split_cores(args.cpu_list, n) is None
                                 for n in args.core_list + args.native_core_list):
        ap.error("%d CPUs in use: server and generator need n cores each, so n <= %d"
                 % (len(args.cpu_list), half))
    # Build only what comes from --build; a bundle gives its binaries.
    args.build_needed = not args.no_build and not args.dry_run and \
        not (args.segcached and args.loadgen)
    args.segcached = args.segcached or os.path.join(args.build, "app/segcached/segcached")
    args.loadgen = args.loadgen or os.path.join(args.build, "tools/loadgen/segcached-loadgen")
    return args


def depth_settings(depths, in_flight):
    """[(depth, connections per worker)] for --depths and --in-flight: every
    depth with the same requests in flight, so that only the pipelining
    differs between them."""
    out = []
    for text in depths.split(","):
        try:
            depth = int(text)
        except ValueError:
            raise ValueError("--depths %s: %r is not a number" % (depths, text))
        if depth < 1 or in_flight % depth:
            raise ValueError("--depths %s --in-flight %d: every depth must be at least 1 "
                             "and divide the requests in flight (%d does not)" %
                             (depths, in_flight, depth))
        if depth not in [d for d, _ in out]:
            out.append((depth, in_flight // depth))
    return sorted(out)


def build(args):
    """meson setup (when the directory has no build yet) and ninja for the
    two binaries the suite runs."""
    steps = []
    if not os.path.exists(os.path.join(args.build, "build.ninja")):
        steps.append(["meson", "setup", args.build, ROOT])
    steps.append(["ninja", "-C", args.build, "app/segcached/segcached",
                  "tools/loadgen/segcached-loadgen"])
    for cmd in steps:
        log("$ " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as e:
            sys.exit("build failed: %s" % e)
        if p.returncode != 0:
            sys.exit("build failed:\n%s" % (p.stdout + p.stderr)[-3000:])


def one_thread_per_core():
    """The CPUs this process may use, the first hardware thread of each
    physical core only: two SMT siblings would share one core between
    server and generator, or count one core twice."""
    seen, cpus = set(), []
    for cpu in sorted(os.sched_getaffinity(0)):
        topo = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        try:
            with open(topo + "physical_package_id") as f:
                pkg = f.read().strip()
            with open(topo + "core_id") as f:
                core = f.read().strip()
        except OSError:
            pkg, core = "?", str(cpu)
        if (pkg, core) not in seen:
            seen.add((pkg, core))
            cpus.append(cpu)
    return cpus


def parse_cpus(text):
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def free_hugepages_mb():
    total = 0
    base = "/sys/kernel/mm/hugepages"
    try:
        for d in os.listdir(base):
            with open(os.path.join(base, d, "free_hugepages")) as f:
                total += int(f.read()) * int(d.split("-")[1].rstrip("kB")) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return total


def commit_id():
    try:  # a bundle records the commit it was made from
        with open(os.path.join(HERE, "COMMIT")) as f:
            return f.read().strip()
    except OSError:
        pass
    try:
        # --dirty refreshes the index: on a fresh clone beside a build on a
        # busy host that took over 10 s once (CI), and the label is not
        # worth a failed suite
        p = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=60)
        return p.stdout.strip() if p.returncode == 0 else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def world_writable_parent(path):
    """The EAL loads no driver from a directory with a world-writable
    parent (such as /tmp); say so before it does, with the fix."""
    path = os.path.abspath(path)
    while True:
        if os.stat(path).st_mode & 0o002:
            return path
        if path == "/":
            return None
        path = os.path.dirname(path)


def cores_of(args, key):
    """The server core counts that server key runs at."""
    return args.native_core_list if SERVERS[key][1] == "native" else args.core_list


def all_cores(args):
    return sorted(set(args.core_list) | set(args.native_core_list))


def workload(args, transport, mix, dist, depth, conns):
    return ["--keys", str(args.keys), "--key-size", "16", "--value-size", "64",
            "--get-ratio", str(mix), "--conns", str(conns), "--depth", str(depth),
            "--duration", str(args.duration), "--warmup", str(args.warmup)] + \
        DISTS[dist] + (["--udp"] if transport == "udp" else [])


def main():
    # subprocess.run(capture_output=, text=) is Python 3.7's.
    if sys.version_info < (3, 7):
        sys.exit("bench-suite.py needs Python >= 3.7 (this is %s)" % sys.version.split()[0])
    args = parse_args()
    if os.geteuid() != 0 and not args.dry_run:
        sys.exit("bench-suite.py needs root: the DPDK processes keep their runtime files "
                 "under /var/run/dpdk and the memif socket under /run, and every process "
                 "runs at nice %d" % args.nice)
    if args.build_needed:
        build(args)
    for exe in (args.segcached, args.loadgen, args.memcached):
        if not os.access(exe, os.X_OK):
            sys.exit("missing %s (build with: meson setup build && ninja -C build, or give "
                     "--segcached/--loadgen/--memcached)" % exe)
    if args.pmd_dir and not os.path.isdir(args.pmd_dir):
        sys.exit("--pmd-dir %s: not a directory" % args.pmd_dir)
    if args.pmd_dir and world_writable_parent(args.pmd_dir):
        sys.exit("--pmd-dir %s: %s is world-writable, and the EAL loads no driver from "
                 "under it; move the directory elsewhere" %
                 (args.pmd_dir, world_writable_parent(args.pmd_dir)))
    huge = args.huge == "yes" or (args.huge == "auto" and free_hugepages_mb() >= 1024)
    tools = Tools(args.segcached, args.loadgen, args.memcached, args.pmd_dir, huge,
                  args.memory, args.nice, args.fold_cpus)
    os.makedirs(args.out, exist_ok=True)
    configs = [(t, m, d) for t in args.transport_list for m in args.mix_list
               for d in args.dist_list]
    points = [(n, key) for n in all_cores(args) for key in args.server_keys
              if n in cores_of(args, key)]
    nset = len(args.settings)
    nruns = args.rounds * len(points) * len(configs) * nset
    nlat = len(points) * nset if args.latency else 0
    nver = len(args.server_keys) * nset if args.verify else 0
    log("%s: %d closed-loop runs, %d open-loop runs and %d --verify all runs at %s on CPUs "
        "%s, about %.0f s" %
        ("scaling" if args.scaling else "matrix", nruns, nlat, nver,
         " and ".join("depth %d x %d connections" % s for s in args.settings),
         ",".join(map(str, args.cpu_list)),
         (nruns + nlat + nver) * (args.duration + args.warmup + RUN_OVERHEAD_S)))
    if args.dry_run:
        for n, key in points:
            s = Setup(key, n, args.cpu_list, tools, args.out)
            print(" ".join(s.server_cmd()))
            for depth, conns in args.settings:
                print(" ".join(s.generator_cmd() + workload(args, *configs[0], depth, conns)))
        return 0
    results = {
        "meta": {
            "mode": "scaling" if args.scaling else "matrix",
            "command": " ".join([sys.executable] + sys.argv),
            "commit": commit_id(),
            "host": host_description(args.cpu_list, args.memcached),
            "hugepages": huge, "keys": args.keys, "key_size": 16, "value_size": 64,
            "in_flight_per_worker": args.in_flight,
            "settings": [{"depth": d, "conns": c} for d, c in args.settings],
            "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
            "nice": args.nice, "latency_load": args.latency_load,
            "fold_cpus": args.fold_cpus,
            "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        },
        "runs": [],
    }
    # The generators run in this process's session: raise its group for the
    # run and put it back afterwards (it is the caller's shell's group too).
    old_group_nice = set_autogroup_nice("self", args.nice)
    # A time limit around the suite (timeout(1), scaling-run.sh) sends
    # SIGTERM: leave through the finally clauses, which stop the server of
    # the run under way (it is in a session of its own and would outlive us).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run_all(args, tools, configs, results)
    finally:
        if old_group_nice is not None:
            set_autogroup_nice("self", old_group_nice)
        # The EAL leaves a runtime directory per --file-prefix behind.
        for kind in ("benchsrv", "benchgen", "benchposix"):
            shutil.rmtree("/var/run/dpdk/%s%d" % (kind, os.getpid()), ignore_errors=True)
    print(bench_report.render(results))
    runs = results["runs"]
    # A run that lost, refused or resent anything is not a result
    # (bench_report.problems). No result, or a wrong answer, is a broken
    # suite: 1. Only losses (retransmissions, lost requests, misses): 3,
    # so that scaling-run.sh tells the two apart, or 0 with --allow-lossy
    # (the plumbing tests on a shared host, where a descheduled poller
    # means an RTO now and then; the report still marks those runs).
    invalid = [r for r in runs if bench_report.problems(r)]
    broken = [r for r in runs if not r["result"] or r["result"].get("corrupt") or
              r["result"].get("bad")]
    log("suite finished in %.0f s; %d of %d runs invalid (%d without a result or with "
        "wrong answers); JSON: %s" % (results["meta"]["elapsed_s"], len(invalid), len(runs),
                                      len(broken), os.path.join(args.out, "results.json")))
    if broken:
        return 1
    return 3 if invalid and not args.allow_lossy else 0


# memcached and segcached --stack posix read UDP from one kernel socket, whose
# buffer (net.core.rmem_default, 212992 bytes) held 192 requests in flight
# but not 256 on the 2-CPU host: beyond that the kernel drops datagrams,
# every run counts them lost and is invalid. UDP runs against them keep at
# most this many in flight, by fewer flows per generator thread.
UDP_SOCKET_IN_FLIGHT = 128


def udp_socket_conns(setup, transport, depth, conns):
    """--conns for a UDP run against a kernel-socket server, when
    UDP_SOCKET_IN_FLIGHT needs fewer than conns; else nothing."""
    if transport != "udp" or setup.kind == "native":
        return []
    fewer = max(1, UDP_SOCKET_IN_FLIGHT // (setup.n * depth))
    return ["--conns", str(fewer)] if fewer < conns else []


def run_all(args, tools, configs, results):
    started = time.time()
    out_json = os.path.join(args.out, "results.json")
    step_timeout = args.duration + args.warmup + 90

    def save():
        results["meta"]["elapsed_s"] = round(time.time() - started, 1)
        results["meta"]["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        results["meta"]["host"]["loadavg_end"] = os.getloadavg()[0]
        with open(out_json + ".new", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(out_json + ".new", out_json)

    def one_run(setup, rnd, transport, mix, dist, depth, conns, extra, mode):
        name = "%s-c%d-%s-get%g-%s-d%d-%s" % (setup.key, setup.n, transport, mix, dist, depth,
                                             "r%d" % rnd if mode == "closed" else mode)
        gen = setup.generator_cmd() + workload(args, transport, mix, dist, depth, conns) + \
            extra + udp_socket_conns(setup, transport, depth, conns)
        result = spread = None
        # A memif link that never came up in three tries of the generator
        # (a rehearsal folded onto 2 loaded CPUs saw one) gets a new server
        # once: the run is lost only when that fails too.
        for attempt in range(2):
            try:
                srv = setup.start_server(name)
            except RuntimeError as e:
                log(str(e))
                break
            try:
                result = run_generator(gen, args.out, name, step_timeout)
                spread = setup.worker_spread()
            finally:
                srv.stop()
            if result is not None or not memif_never_connected(args.out, name):
                break
            log("%s: memif never connected; the server again" % name)
        results["runs"].append({
            "mode": mode, "server": setup.key, "label": setup.label(), "cores": setup.n,
            "transport": transport, "get_ratio": mix, "dist": dist, "round": rnd,
            "depth": depth, "conns": conns,
            "server_cmd": " ".join(setup.server_cmd()), "generator_cmd": " ".join(gen),
            "result": result, "server_workers": spread})
        save()
        return result

    keys = args.server_keys
    peaks = {}  # (server, cores, depth) -> closed-loop peaks of the first workload
    for rnd in range(args.rounds):
        for n in all_cores(args):
            # Rotate the order each round so that no server always runs first
            # (or last) while the host's background load drifts.
            order = keys[rnd % len(keys):] + keys[:rnd % len(keys)]
            for key in [k for k in order if n in cores_of(args, k)]:
                setup = Setup(key, n, args.cpu_list, tools, args.out)
                # Each workload's depths one after the other, so that the
                # two are measured close together in time.
                for i, cfg in enumerate(configs):
                    for depth, conns in args.settings:
                        r = one_run(setup, rnd, *cfg, depth, conns, [], "closed")
                        if i == 0 and r and r["throughput"] > 0:
                            peaks.setdefault((key, n, depth), []).append(r["throughput"])
    if args.latency:
        for n in all_cores(args):
            for key in [k for k in keys if n in cores_of(args, k)]:
                setup = Setup(key, n, args.cpu_list, tools, args.out)
                for depth, conns in args.settings:
                    got = sorted(peaks.get((key, n, depth), []))
                    if not got:
                        continue
                    rate = int(got[len(got) // 2] * args.latency_load)
                    one_run(setup, 0, *configs[0], depth, conns, ["--rate", str(rate)], "open")
    if args.verify:
        for key in keys:
            n = min(cores_of(args, key))
            setup = Setup(key, n, args.cpu_list, tools, args.out)
            for depth, conns in args.settings:
                one_run(setup, 0, *verify_config(args), depth, conns, ["--verify", "all"],
                        "verify")
    save()


def verify_config(args):
    """The --verify all row's workload: the most sets and the hottest keys
    the matrix has (sets racing on one key are what could go stale)."""
    dist = "zipf" if "zipf" in args.dist_list else args.dist_list[0]
    return (args.transport_list[0], min(args.mix_list), dist)


if __name__ == "__main__":
    sys.exit(main())
