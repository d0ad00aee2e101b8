/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Checks the benchmark's Zipf sampler against the exact distribution: for
 * several (n, theta), draw samples with a fixed seed, group the ranks into
 * bins (single ranks at the head, geometric bins in the tail) and compare
 * with a chi-square test. A fixed seed makes the result reproducible; the
 * critical value is far in the tail (p about 1e-6), so only a sampler that
 * is really off fails.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "zipf.h"

#define SAMPLES 2000000
#define BINS_MAX 64

static int
check(uint64_t n, double theta)
{
	uint64_t edge[BINS_MAX + 1], count[BINS_MAX] = {0};
	double expect[BINS_MAX] = {0}, chi2 = 0, norm = 0;
	unsigned bins = 0, df;
	uint64_t rng = 12345;
	struct zipf z;

	if (zipf_init(&z, n, theta) != 0) {
		fprintf(stderr, "zipf_init(%" PRIu64 ", %g) failed\n", n, theta);
		return 1;
	}
	/* Bin lower edges: 1..10 one rank each, then x1.5 each. */
	for (uint64_t lo = 1; lo <= n && bins < BINS_MAX;) {
		edge[bins++] = lo;
		lo = lo < 10 ? lo + 1 : lo + lo / 2;
	}
	edge[bins] = n + 1;
	for (uint64_t k = n; k >= 1; k--)
		norm += pow((double)k, -theta);
	for (unsigned b = 0; b < bins; b++)
		for (uint64_t k = edge[b]; k < edge[b + 1]; k++)
			expect[b] += pow((double)k, -theta) / norm * SAMPLES;

	for (int i = 0; i < SAMPLES; i++) {
		uint64_t k = zipf_sample(&z, &rng);
		unsigned b = 0;

		if (k < 1 || k > n) {
			fprintf(stderr, "rank %" PRIu64 " outside [1, %" PRIu64 "]\n", k, n);
			return 1;
		}
		while (k >= edge[b + 1])
			b++;
		count[b]++;
	}
	for (unsigned b = 0; b < bins; b++) {
		double d = (double)count[b] - expect[b];

		chi2 += d * d / expect[b];
	}
	/* Wilson-Hilferty: the chi-square quantile at p = 1e-6 (z = 4.75). */
	df = bins - 1;
	double crit = df * pow(1 - 2.0 / (9 * df) + 4.75 * sqrt(2.0 / (9 * df)), 3);

	printf("zipf n=%" PRIu64 " theta=%g: %u bins, chi2 %.1f (critical %.1f); "
	       "rank 1 %.4f expected %.4f\n",
	       n, theta, bins, chi2, crit, (double)count[0] / SAMPLES,
	       zipf_pmf(n, theta, 1));
	return chi2 > crit;
}

int
main(void)
{
	int failed = 0;
	uint64_t rng = 1;
	struct zipf z;

	failed |= check(1000, 0.99);
	failed |= check(1000, 1.0);
	failed |= check(100000, 0.99);
	failed |= check(1000, 0.5);
	failed |= check(50, 1.5);
	if (zipf_init(&z, 1, 0.99) != 0 || zipf_sample(&z, &rng) != 1) {
		fprintf(stderr, "n = 1 must always give rank 1\n");
		failed = 1;
	}
	if (zipf_init(&z, 10, 0) == 0 || zipf_init(&z, 0, 1) == 0 ||
	    zipf_init(&z, 10, NAN) == 0) {
		fprintf(stderr, "zipf_init accepted bad parameters\n");
		failed = 1;
	}
	return failed;
}
