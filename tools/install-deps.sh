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
  googletest libgtest-dev
  clang libfuzzer-14-dev libclang-rt-14-dev
  memcached libmemcached-tools nutcracker
  python3 python3-pymemcache python3-matplotlib
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
