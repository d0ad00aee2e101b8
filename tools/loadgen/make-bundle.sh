#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
#
# Packs what bench-suite.py needs into one directory that runs on a Linux
# x86-64 host without meson, DPDK or memcached installed (python3, nice and
# taskset are all it asks of the host):
#
#   tools/loadgen/make-bundle.sh BUILD_DIR BUNDLE_DIR
#   BUNDLE_DIR/run-suite.sh --scaling --out BUNDLE_DIR/out   # on the other host
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
	"$memcached" "$out/libexec/"
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
loader=$(cd "$out/lib" && ls ld-linux-*.so.* | head -n 1)

for exe in segcached segcached-loadgen memcached; do
	cat > "$out/bin/$exe" <<EOF
#!/bin/sh
# Runs libexec/$exe with the bundle's own loader and libraries.
d=\$(cd "\$(dirname "\$0")/.." && pwd)
exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/libexec/$exe" "\$@"
EOF
	chmod 755 "$out/bin/$exe"
done

cp "$here/bench-suite.py" "$here/bench_procs.py" "$here/bench_setups.py" \
	"$here/bench_report.py" "$out/tools/"
git -C "$here" describe --always --dirty > "$out/tools/COMMIT" 2>/dev/null ||
	echo unknown > "$out/tools/COMMIT"
cat > "$out/run-suite.sh" <<'EOF'
#!/bin/sh
# bench-suite.py with the bundle's binaries and drivers; other options pass on.
d=$(cd "$(dirname "$0")" && pwd)
exec python3 "$d/tools/bench-suite.py" --segcached "$d/bin/segcached" \
	--loadgen "$d/bin/segcached-loadgen" --memcached "$d/bin/memcached" \
	--pmd-dir "$d/pmds" "$@"
EOF
chmod 755 "$out/run-suite.sh"
chmod -R go-w "$out"
echo "bundle in $out ($(du -sh "$out" | cut -f1)); run: $out/run-suite.sh [--scaling] --out DIR"
