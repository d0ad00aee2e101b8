#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
#
# The CI fuzz step (.ci/run): builds the libFuzzer targets with clang into
# build-fuzz and runs each one for a bounded time on the corpus kept in the
# repository (tests/fuzz/seeds for fuzz_proto and fuzz_cmd,
# tests/fuzz/net_seeds for fuzz_net, tests/fuzz/restart_seeds for
# fuzz_restart). A crash, a leak, an input that runs
# longer than FUZZ_INPUT_TIMEOUT or a failed build exits non-zero.
#
# New inputs found go to a temporary directory that is removed afterwards:
# the repository's seeds are only read. Crash inputs are kept under
# build-fuzz/artifacts/ for the log.
#
#   FUZZ_SECONDS=60 tests/fuzz/run_ci.sh     (seconds per target, default 60)
#   FUZZ_SEED=0 tests/fuzz/run_ci.sh         (a random seed; default 1)
#
# CI fuzzes from a fixed seed, so that a run on main repeats what the
# developer ran before landing (a gate, not a search); searching is done
# with FUZZ_SEED=0 and long FUZZ_SECONDS, and what it finds becomes a
# fix, a test and, where useful, a seed in the corpus.
#
# Without clang or libFuzzer it says so and exits 0: the step is skipped.
set -eu
cd "$(dirname "$0")/../.."

seconds=${FUZZ_SECONDS:-60}
input_timeout=${FUZZ_INPUT_TIMEOUT:-30}
seed=${FUZZ_SEED:-1}

probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' \
	>"$probe_dir/probe.c"
if ! command -v clang >/dev/null 2>&1 ||
	! clang -fsanitize=fuzzer "$probe_dir/probe.c" -o "$probe_dir/probe" >/dev/null 2>&1; then
	echo "fuzz: skipped (clang with libFuzzer not found; tools/install-deps.sh installs them)"
	exit 0
fi

if [ -f build-fuzz/build.ninja ]; then
	meson configure build-fuzz -Dfuzz=true -Dtests=false -Dfunctional=false
else
	CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false -Dfunctional=false
fi
ninja -C build-fuzz tests/fuzz/fuzz_proto tests/fuzz/fuzz_cmd tests/fuzz/fuzz_net \
	tests/fuzz/fuzz_restart

mkdir -p build-fuzz/artifacts
# run_target NAME SEEDS MAX_LEN [libFuzzer options...]
run_target() {
	name=$1 seeds=$2 max_len=$3
	shift 3
	corpus="$probe_dir/corpus-$name"
	mkdir -p "$corpus"
	echo "fuzz: $name for ${seconds}s on $seeds"
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	ASAN_OPTIONS=detect_leaks=1 \
		"build-fuzz/tests/fuzz/$name" -max_total_time="$seconds" -timeout="$input_timeout" \
		-seed="$seed" \
		-max_len="$max_len" -print_final_stats=1 \
		-artifact_prefix="build-fuzz/artifacts/$name-" "$@" "$corpus" "$seeds" \
		>"build-fuzz/artifacts/$name.log" 2>&1 || {
		tail -n 60 "build-fuzz/artifacts/$name.log"
		echo "fuzz: $name FAILED (log: build-fuzz/artifacts/$name.log)"
		exit 1
	}
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/artifacts/$name.log")
	echo "fuzz: $name ok, ${execs:-?} executions in ${seconds}s"
}

run_target fuzz_proto tests/fuzz/seeds 8192 -dict=tests/fuzz/memcached.dict
run_target fuzz_cmd tests/fuzz/seeds 8192 -dict=tests/fuzz/memcached.dict
run_target fuzz_net tests/fuzz/net_seeds 4096
run_target fuzz_restart tests/fuzz/restart_seeds 512
