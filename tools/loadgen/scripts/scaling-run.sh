#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
#
# The whole scaling run for a 16-core host that has no DPDK, meson or
# memcached and gives about 9 minutes, as one command over a bundle
# (tools/loadgen/scripts/make-bundle.sh). Every step has its own time limit, cut
# to what is left of --budget, so that a hang in one cannot eat the rest;
# everything lands in OUT: the host's description (lscpu, uname, load
# average before and after), storage-bench JSON, the end-to-end suite's
# JSON and logs, then scaling.json (all of it), scaling.md and the PNGs
# (scaling_report.py; without matplotlib on the host, render the PNGs
# later with tools/loadgen/suite/scaling_report.py OUT).
#
#   tools/loadgen/scripts/scaling-run.sh BUNDLE OUT [--fold-cpus N] [--quick] [--budget S]
#
# Steps, in order of weight (a budget cut short drops the last ones):
#  1. storage-bench, seg and baseline engines, each in a process of its
#     own, threads 1 2 4 8 12 16 24 32 (24 and 32 oversubscribe a 16-CPU
#     host: threads are pinned round-robin, so lock holders get
#     preempted), 90/10 then 50/50 get/set, zipf 0.99 keys, 1 M keys of
#     16 bytes, 64-byte values;
#  2. bench-suite.py --scaling over TCP 90/10 uniform: segcached native
#     over net_memif at 1 2 4 7 server lcores (as many generator lcores;
#     7, not 8: the main lcores share the other side's first CPU),
#     segcached posix and memcached -t 1 2 4 8 over loopback; every point
#     at depth 1 x 64 and depth 4 x 16 connections per generator worker
#     (bench-suite.py's default --depths 1,4: depth 1 is how most clients
#     talk, depth 4 pipelines, and the two gave posix vs memcached 0.9-1.3x
#     and 2.5-4.0x on 2 CPUs);
#  3. storage-bench with TTLs (issue 34): the seg engine on the
#     write-heavy Twitter-shaped mix (--shape tw-compute: 50/50, TTLs of
#     1-8 s, so expiry, merges and evictions run all the time), merge then
#     FIFO eviction, the same thread counts;
#  4. storage-bench as in 1 with uniform keys;
#  5. the suite at the top point over UDP (both depths too).
# Exit status: 0 every step ran and every run is a result; 3 every step
# ran, some runs are invalid (scaling.md lists them); 1 a step failed.
#
# --fold-cpus N: the rehearsal on an N-CPU host: the 16-CPU commands with
# CPU i run on CPU i mod N (numbers mean nothing; the report says so).
# --quick: short durations and 100,000 storage keys (rehearsal).
# --budget S: the whole run's wall clock limit in seconds (default 360, which leaves 3 of a host's 9 minutes
# spare; the report is written within it).
# Needs root and python3 >= 3.7 (as run-suite.sh).
set -u

usage() {
	echo "usage: $0 BUNDLE OUT [--fold-cpus N] [--quick] [--budget SECONDS]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
bundle=$(cd "$1" && pwd) || exit 1
mkdir -p "$2" || exit 1
out=$(cd "$2" && pwd)
shift 2
fold="" quick=0 budget=360
while [ $# -gt 0 ]; do
	case "$1" in
	--fold-cpus) [ $# -ge 2 ] || usage; fold=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--budget) [ $# -ge 2 ] || usage; budget=$2; shift 2 ;;
	*) usage ;;
	esac
done
for f in bin/segcached bin/segcached-loadgen bin/segcached-storage-bench bin/memcached \
	run-suite.sh pmds tools/scaling_report.py; do
	[ -e "$bundle/$f" ] || { echo "$0: $bundle/$f missing: make the bundle with" \
		"tools/loadgen/scripts/make-bundle.sh BUILD $bundle" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (as run-suite.sh)" >&2; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null ||
	{ echo "$0: needs python3 >= 3.7" >&2; exit 1; }
# The EAL loads no driver from under a world-writable directory (/tmp, or
# wherever a copied working tree landed): such a bundle is copied out first.
if python3 - "$bundle" <<'EOF'
import os, sys
p = sys.argv[1]
while not os.stat(p).st_mode & 0o002:
    if p == "/":
        sys.exit(1)
    p = os.path.dirname(p)
EOF
then
	safe=/var/lib/segcached-bundle-$$
	echo "$0: $bundle is under a world-writable directory; using a copy in $safe" >&2
	rm -rf "$safe" && cp -a "$bundle" "$safe" && chmod -R go-w "$safe" || exit 1
	bundle=$safe
fi

# Durations: the real run's, or the rehearsal's (--quick).
if [ $quick = 1 ]; then
	sb_seconds=0.2 sb_keys=100000 e2e_seconds=0.5 e2e_warmup=0.3 e2e_rounds=1
else
	# Sized to at most 335 s on an idle 16-CPU host (docs/bench/suite.md):
	# 60 storage steps of 0.5 s measured plus ~2 s of set-up each, 30
	# suite runs (15 points at two depths) of 1.5 s plus ~3 s each, 48 s
	# for a collapsing baseline. The second depth doubled the suite's
	# runs: each got shorter (was 1 s + 2 s) rather than any point dropped.
	sb_seconds=${SB_SECONDS:-0.5} sb_keys=1000000 e2e_seconds=${E2E_SECONDS:-1}
	e2e_warmup=${E2E_WARMUP:-0.5} e2e_rounds=${E2E_ROUNDS:-1}
fi
sb_threads="1 2 4 8 12 16 24 32"
# The CPUs: all of this process's (a 16-CPU host: 0-15), or a 16-CPU
# host's folded onto N.
if [ -n "$fold" ]; then
	cpus=0-15 ncpus=16
	fold_args="--fold-cpus $fold"
else
	# The CPUs this process may use, by id (a container's cpuset need not
	# start at 0).
	cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
	ncpus=$(nproc)
	fold_args=""
fi
half=$((ncpus / 2))
cores="" native_cores=""
for n in 1 2 4 8; do
	[ $n -le $half ] && cores="$cores${cores:+,}$n"
	m=$n
	[ $n = 8 ] && m=7
	[ $n -le $half ] && native_cores="$native_cores${native_cores:+,}$m"
done
top=${cores##*,} native_top=${native_cores##*,}

started=$(date +%s)
deadline=$((started + budget))
report_reserve=25
mkdir -p "$out/host" "$out/storage" "$out/logs"
steps="$out/steps.tsv"
printf 'step\tstatus\tseconds\tlimit\n' > "$steps"
# Progress goes to the script's own stderr (fd 3), also from steps whose
# stderr goes to their log file.
exec 3>&2
log() { echo "[scaling-run $(date -u +%H:%M:%S) +$(($(date +%s) - started))s] $*" >&3; }

# run NAME CAP CMD...: CMD with its own time limit, CAP seconds or what is
# left of the budget (less the report's reserve), whichever is less;
# skipped when too little is left. Its status goes to steps.tsv.
run() {
	name=$1 cap=$2
	shift 2
	left=$((deadline - report_reserve - $(date +%s)))
	limit=$cap
	[ $left -lt $limit ] && limit=$left
	if [ $limit -lt 5 ]; then
		log "$name: skipped, ${left}s of the budget left"
		printf '%s\tskipped\t0\t%s\n' "$name" "$limit" >> "$steps"
		return 1
	fi
	t0=$(date +%s)
	timeout -k 10 "$limit" "$@"
	rc=$?
	status=ok
	[ $rc = 124 ] || [ $rc = 137 ] && status=timeout
	# bench-suite.py ran through, but some runs lost something (invalid).
	case "$name" in e2e-*) [ $rc = 3 ] && status="invalid runs" ;; esac
	[ $rc != 0 ] && [ "$status" = ok ] && status="exit $rc"
	printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$(($(date +%s) - t0))" "$limit" >> "$steps"
	log "$name: $status in $(($(date +%s) - t0))s (limit ${limit}s)"
	return $rc
}

host() {
	{ lscpu || cat /proc/cpuinfo; } > "$out/host/lscpu.txt" 2>&1
	lscpu -e > "$out/host/lscpu-e.txt" 2>&1
	uname -a > "$out/host/uname.txt"
	cat /proc/loadavg > "$out/host/loadavg-$1.txt"
	[ "$1" = before ] || return 0
	{ nproc; free -m; python3 --version; cat /sys/kernel/mm/transparent_hugepage/enabled
	  grep -i huge /proc/meminfo; } > "$out/host/misc.txt" 2>&1
	printf '%s\n' "$budget" > "$out/host/budget.txt"
	printf 'fold=%s quick=%s sb_keys=%s sb_seconds=%s e2e_seconds=%s e2e_warmup=%s e2e_rounds=%s\n' \
		"$fold" "$quick" "$sb_keys" "$sb_seconds" "$e2e_seconds" "$e2e_warmup" "$e2e_rounds" \
		> "$out/host/plan.txt"
}
host before
log "bundle $bundle, out $out, CPUs $cpus${fold:+ folded onto $fold}, budget ${budget}s"

# 1. The storage engines, each in a process of its own (so that one that
# collapses cannot take the other's result with it). The baseline engine
# needs the EAL and its ring mempool driver: the bundle's, through -d (the
# defaults otherwise, see tools/storage-bench/README.md "EAL").
# Oversubscribed (more threads than CPUs), rte_hash's writer lock spins
# while its holder waits for a CPU: on 2 CPUs its 1 M-key warm-up at 4 or
# more threads did not finish in 60 s. So past the CPU count the baseline
# runs the zipf workloads only, with a short limit; a timeout there is the
# result ("collapsed"), not a failure of the run. In a rehearsal
# (--fold-cpus) it does not run past the real CPUs at all: the plumbing is
# the same, and its timeouts would only eat the rehearsal.
# The EAL's main lcore (a control thread here): the first CPU we may use.
first_cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
sb_eal="--no-huge --no-shconf --no-pci --no-telemetry --log-level=error -l $first_cpu -m 1536"
sb_eal="$sb_eal -d $bundle/pmds"
real_cpus=$(nproc)
storage() {
	mix=$1 dist=$2
	for t in $sb_threads; do
		for engine in seg baseline; do
			name=sb-$(echo "$mix" | cut -d: -f1-2 | tr : -)-${dist%%:*}-$engine-t$t
			cap=40
			if [ "$engine" = baseline ] && [ "$t" -gt "$real_cpus" ]; then
				if [ -n "$fold" ] || [ "$dist" = uniform ]; then
					printf '%s\tnot run\t0\t0\n' "$name" >> "$steps"
					continue
				fi
				cap=15
			fi
			# The keys are loaded before the timed phase.
			run "$name" $cap "$bundle/bin/segcached-storage-bench" $sb_eal -- \
				--engine "$engine" --threads "$t" --keys "$sb_keys" --value-size 64 \
				--mix "$mix" --dist "$dist" --duration "$sb_seconds" --json \
				> "$out/storage/$name.json" 2> "$out/logs/$name.log"
		done
	done
}

# The TTL shapes (issue 34): seg only (the baseline has no expiry to
# speak of), each eviction policy given.
storage_shape() {
	shape=$1 policy=$2
	for t in $sb_threads; do
		name=sb-ttl-$shape-$policy-seg-t$t
		run "$name" 40 "$bundle/bin/segcached-storage-bench" $sb_eal -- \
			--engine seg --threads "$t" --keys "$sb_keys" --shape "$shape" \
			--eviction "$policy" -m 256M --duration "$sb_seconds" --json \
			> "$out/storage/$name.json" 2> "$out/logs/$name.log"
	done
}

# In order of weight, so that a budget cut short takes the least: the zipf
# storage runs (the write-scaling question), the TCP scaling suite, the
# TTL-shaped storage runs, the uniform storage runs, UDP at the top point. bench-suite.py stops its
# servers on SIGTERM.
storage 90:10:0 zipf:0.99
storage 50:50:0 zipf:0.99
suite="$bundle/run-suite.sh --scaling --cpus $cpus $fold_args --duration $e2e_seconds \
	--warmup $e2e_warmup --rounds $e2e_rounds"
# shellcheck disable=SC2086
run e2e-tcp 300 $suite --cores "$cores" --native-cores "$native_cores" \
	--servers native,posix,memcached --transports tcp --out "$out/e2e-tcp" \
	> "$out/logs/e2e-tcp.md" 2> "$out/logs/e2e-tcp.log"
storage_shape tw-compute merge
storage_shape tw-compute fifo
storage 90:10:0 uniform
storage 50:50:0 uniform
# shellcheck disable=SC2086
run e2e-udp 120 $suite --cores "$top" --native-cores "$native_top" \
	--servers native,posix,memcached --transports udp --rounds 1 --out "$out/e2e-udp" \
	> "$out/logs/e2e-udp.md" 2> "$out/logs/e2e-udp.log"

host after
log "steps done; report"
timeout -k 5 $((report_reserve - 5)) python3 "$bundle/tools/scaling_report.py" "$out" \
	> "$out/logs/report.log" 2>&1 || log "report: failed, see $out/logs/report.log"
[ -n "${safe:-}" ] && rm -rf "$safe"
# A baseline run past the CPU count that timed out collapsed: a result.
bad=$(awk -F'\t' 'NR > 1 && $2 != "ok" && $2 != "not run" && $2 != "invalid runs" &&
	!($1 ~ /-baseline-/ && $4 <= 15 && $2 == "timeout")' "$steps" | wc -l)
invalid=$(awk -F'\t' '$2 == "invalid runs"' "$steps" | wc -l)
log "finished in $(($(date +%s) - started))s; $bad of $(($(wc -l < "$steps") - 1))" \
	"steps failed, $invalid with invalid runs (steps.tsv, scaling.md); results in $out"
# 0: all clean; 3: every step ran, some runs are invalid; 1: a step failed.
[ "$bad" = 0 ] || exit 1
[ "$invalid" = 0 ] || exit 3
