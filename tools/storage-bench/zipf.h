/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Zipf(theta) ranks 1..n by rejection-inversion (Hoermann and Derflinger,
 * "Rejection-inversion to generate variates from monotone discrete
 * distributions", 1996): O(1) memory and time whatever n is, no table to
 * precompute, and the state is read-only so threads share it.
 */
#ifndef SB_ZIPF_H
#define SB_ZIPF_H

#include <stdint.h>

struct zipf {
	double theta;
	double n;
	double h_integral_x1;
	double h_integral_n;
	double s;
};

/* theta > 0 and n >= 1; returns -1 otherwise. */
int zipf_init(struct zipf *z, uint64_t n, double theta);

/* A rank in [1, n]; rank 1 is the most popular. Draws from *rng. */
uint64_t zipf_sample(const struct zipf *z, uint64_t *rng);

/* The exact probability of rank k (for tests): k^-theta / H(n, theta). */
double zipf_pmf(uint64_t n, double theta, uint64_t k);

#endif /* SB_ZIPF_H */
