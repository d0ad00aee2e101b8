#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs everything segcached needs to build and to run its whole test
# suite on a fresh Debian 12 machine. Run as root (CI does).
set -eu
export DEBIAN_FRONTEND=noninteractive

PACKAGES="
  build-essential pkg-config meson ninja-build
  dpdk libdpdk-dev libnuma-dev libpmem2-dev
  libmicrohttpd-dev python3-prometheus-client
  dpdk-dev
  librte-net-af-xdp23 libxdp1 libbpf1
  googletest libgtest-dev
  clang libfuzzer-14-dev libclang-rt-14-dev
  memcached libmemcached-tools nutcracker
  python3 python3-pymemcache python3-matplotlib python3-pytest socat
  iproute2 nftables ethtool procps iputils-ping systemd
"

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing"
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
else
	echo "install-deps: all packages present"
fi

# Debian's memcached package ships memcached.service enabled, listening on
# 127.0.0.1:11211: segcached's own port, which the quick start and
# segcached.service then cannot bind. The tests need only the memcached
# binary (they start their own on free ports), so the daemon is stopped
# and disabled, and said so.
if command -v systemctl >/dev/null 2>&1 &&
   systemctl is-enabled memcached.service >/dev/null 2>&1; then
	echo "install-deps: disabling Debian's memcached.service (it holds 127.0.0.1:11211," \
	     "segcached's port; the tests use only the memcached binary;" \
	     "'systemctl enable --now memcached' brings it back)"
	systemctl disable memcached.service >/dev/null 2>&1 || true
	# stop fails harmlessly where systemd does not run (a container)
	systemctl stop memcached.service >/dev/null 2>&1 || true
fi
