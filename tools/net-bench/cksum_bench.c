/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-net-bench --cksum: the software checksum lib/net uses
 * (net_cksum_add) against DPDK's rte_raw_cksum, on the same bytes in cache,
 * in TSC cycles per byte. Both results are compared on every call.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_ip.h>

#include "net/net_private.h"
#include "cksum_bench.h"

int
cksum_bench(double seconds)
{
	static const size_t lens[] = { 64, 128, 1460, 4096, 16384 };
	static uint8_t buf[16384 + 8];
	uint64_t hz = rte_get_tsc_hz();

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t k = 0; k < RTE_DIM(lens); k++) {
		size_t len = lens[k];
		uint64_t calls = 0, t_dpdk = 0, t_ours = 0;
		uint64_t end = rte_rdtsc() + (uint64_t)(seconds / RTE_DIM(lens) * (double)hz);

		while (rte_rdtsc() < end) {
			uint64_t t0, t1, t2;
			uint16_t a = 0, b = 0;

			t0 = rte_rdtsc();
			for (unsigned r = 0; r < 64; r++)
				a ^= rte_raw_cksum(buf + (r & 3), len);
			t1 = rte_rdtsc();
			for (unsigned r = 0; r < 64; r++)
				b ^= net_cksum_fold(net_cksum_add(buf + (r & 3), len, 0));
			t2 = rte_rdtsc();
			if (a != b) {
				fprintf(stderr, "net-bench: checksums differ at %zu bytes\n", len);
				return 1;
			}
			t_dpdk += t1 - t0;
			t_ours += t2 - t1;
			calls += 64;
		}
		printf("cksum len %zu: rte_raw_cksum %.3f cycles/byte, net_cksum_add %.3f "
		       "cycles/byte, %.2fx\n",
		       len, (double)t_dpdk / (double)(calls * len),
		       (double)t_ours / (double)(calls * len), (double)t_dpdk / (double)t_ours);
	}
	return 0;
}
