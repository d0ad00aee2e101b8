/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 */
#ifndef SEGCACHED_CKSUM_BENCH_H
#define SEGCACHED_CKSUM_BENCH_H

/* Times both checksums for a few lengths over `seconds`; 0, or 1 when
 * they disagree. */
int cksum_bench(double seconds);

#endif
