#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
#
# Packs what bench-suite.py needs into one directory that runs on a Linux
# x86-64 host without meson, DPDK or memcached installed (python3, nice and
# taskset are all it asks of the host; scaling-run.sh also timeout, nproc
# and lscpu; packing needs python3, ldd and pkg-config here):
#
#   tools/loadgen/scripts/make-bundle.sh BUILD_DIR BUNDLE_DIR
#   BUNDLE_DIR/run-suite.sh --scaling --out BUNDLE_DIR/out   # on the other host
#   BUNDLE_DIR/tools/scaling-run.sh BUNDLE_DIR OUT   # the whole 16-core run (docs/bench/suite.md)
#
# bin/ holds wrappers that start the real binaries (libexec/) through the
# bundled dynamic loader with --library-path lib/, so neither the host's
# libraries nor its glibc version matter. pmds/ holds the DPDK drivers the
# suite uses (vdev bus, ring mempool, memif), loaded with the EAL option -d.
# The EAL refuses a driver directory with a world-writable parent, so the
# bundle must not live under /tmp.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR BUNDLE_DIR" >&2
	exit 2
fi
build=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# The suite's Python (tools/loadgen/suite); the bundle holds it flat in tools/.
suite=$(cd "$here/../suite" && pwd)
pmd_src=$(pkg-config --variable=pmdadir libdpdk 2>/dev/null || true)
[ -n "$pmd_src" ] || pmd_src=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
memcached=$(command -v memcached || echo /usr/bin/memcached)
# The EAL loads from a -d directory only files named *.so or *.so.<ABI>.
pmds="librte_bus_vdev.so.23.0 librte_mempool_ring.so.23.0 librte_net_memif.so.23.0"

case "$out" in
/tmp/*|/var/tmp/*|/dev/shm/*)
	echo "$0: $out: the EAL does not load drivers under a world-writable directory;" \
	     "put the bundle elsewhere" >&2
	exit 1;;
esac

rm -rf "$out/bin" "$out/libexec" "$out/lib" "$out/pmds" "$out/tools"
mkdir -p "$out/bin" "$out/libexec" "$out/lib" "$out/pmds" "$out/tools"
cp "$build/app/segcached/segcached" "$build/tools/loadgen/segcached-loadgen" \
	"$build/tools/storage-bench/segcached-storage-bench" "$memcached" "$out/libexec/"
for p in $pmds; do
	cp -L "$pmd_src/$p" "$out/pmds/$p"
done

# Every shared library the binaries and drivers need, the loader included.
for f in "$out"/libexec/* "$out"/pmds/*; do
	ldd "$f" | awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]*ld-linux/ { print $1 }'
done | sort -u | while read -r lib; do
	cp -L "$lib" "$out/lib/"
done
# A driver that another one links against (the vdev bus) must be one file:
# loaded twice, from lib/ and from pmds/, it would register twice.
for p in $pmds; do
	soname=${p%.0}
	if [ -e "$out/lib/$soname" ]; then
		rm "$out/lib/$soname"
		ln -s "../pmds/$p" "$out/lib/$soname"
	fi
done
# The EAL also loads every driver in the PMD directory compiled into it
# (RTE_EAL_PMD_PATH, Debian's /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0)
# whenever that directory exists: on a host with DPDK installed, the host's
# drivers would load beside the bundle's -d ones and the second copy of a
# driver panics ("UIO_RESOURCE_LIST tailq is already registered"). DPDK
# has no option to turn that off, so the bundle's copy of librte_eal gets
# an empty default directory (its first byte NUL; the EAL skips an empty
# one): only -d loads drivers, all of them from the bundle.
eal=$(cd "$out/lib" && ls librte_eal.so.* | head -n 1)
python3 - "$out/lib/$eal" "$pmd_src" <<'PY'
import sys
path, pmd_dir = sys.argv[1], sys.argv[2].encode()
with open(path, "rb") as f:
    data = bytearray(f.read())
# The path as a string of its own (NUL before and after), not the
# "DPDK_PLUGIN_PATH=..." tag that dpdk-pmdinfo reads.
hits = []
i = data.find(b"\0" + pmd_dir + b"\0")
while i >= 0:
    hits.append(i + 1)
    i = data.find(b"\0" + pmd_dir + b"\0", i + 1)
if len(hits) != 1:
    sys.exit("make-bundle.sh: %s: the PMD path %s found %d times, not once: cannot "
             "turn off the EAL's default driver directory" % (path, pmd_dir.decode(), len(hits)))
data[hits[0]] = 0
with open(path, "wb") as f:
    f.write(data)
PY
loader=$(cd "$out/lib" && ls ld-linux-*.so.* | head -n 1)

for exe in segcached segcached-loadgen segcached-storage-bench memcached; do
	cat > "$out/bin/$exe" <<EOF
#!/bin/sh
# Runs libexec/$exe with the bundle's own loader and libraries.
d=\$(cd "\$(dirname "\$0")/.." && pwd)
exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/libexec/$exe" "\$@"
EOF
	chmod 755 "$out/bin/$exe"
done

cp "$suite/bench-suite.py" "$suite/bench_procs.py" "$suite/bench_setups.py" \
	"$suite/bench_report.py" "$here/scaling-run.sh" "$suite/scaling_report.py" "$out/tools/"
git -C "$here" describe --always --dirty > "$out/tools/COMMIT" 2>/dev/null ||
	echo unknown > "$out/tools/COMMIT"
cat > "$out/run-suite.sh" <<'EOF'
#!/bin/sh
# bench-suite.py with the bundle's binaries and drivers; other options pass on.
# Needs root (the DPDK runtime directory under /var/run/dpdk, the memif
# socket under /run, nice -10) and Python >= 3.7 (subprocess.run's
# capture_output and text): say so rather than fail half-way.
d=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "$0: needs root (DPDK runtime files under /var/run/dpdk, memif socket under /run, nice -10)" >&2
	exit 1
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null; then
	echo "$0: needs python3 >= 3.7 on PATH (found: $(python3 --version 2>&1))" >&2
	exit 1
fi
exec python3 "$d/tools/bench-suite.py" --segcached "$d/bin/segcached" \
	--loadgen "$d/bin/segcached-loadgen" --memcached "$d/bin/memcached" \
	--pmd-dir "$d/pmds" "$@"
EOF
chmod 755 "$out/run-suite.sh"
chmod -R go-w "$out"
echo "bundle in $out ($(du -sh "$out" | cut -f1)); run: $out/run-suite.sh [--scaling] --out DIR"
