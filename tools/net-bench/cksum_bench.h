/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-net-bench --cksum (cksum_bench.c): lib/net's software checksum
 * timed against DPDK's rte_raw_cksum.
 */
#ifndef SEGCACHED_CKSUM_BENCH_H
#define SEGCACHED_CKSUM_BENCH_H

/* Times both checksums for a few lengths over `seconds`; 0, or 1 when
 * they disagree. */
int cksum_bench(double seconds);

#endif
