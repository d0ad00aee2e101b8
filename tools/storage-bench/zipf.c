/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Rejection-inversion Zipf sampler. h(x) = x^-theta is the (unnormalised)
 * density; H is an integral of h written so that it stays exact near
 * theta = 1 (helper1/helper2 are log1p(x)/x and expm1(x)/x with their
 * Taylor series close to 0).
 */
#include "zipf.h"

#include <math.h>

#include "rng.h"

static double
helper1(double x)
{
	if (fabs(x) > 1e-8)
		return log1p(x) / x;
	return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double
helper2(double x)
{
	if (fabs(x) > 1e-8)
		return expm1(x) / x;
	return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

static double
h(const struct zipf *z, double x)
{
	return exp(-z->theta * log(x));
}

static double
h_integral(const struct zipf *z, double x)
{
	double lx = log(x);

	return helper2((1.0 - z->theta) * lx) * lx;
}

static double
h_integral_inverse(const struct zipf *z, double x)
{
	double t = x * (1.0 - z->theta);

	if (t < -1.0)
		t = -1.0; /* rounding can take t just below -1 */
	return exp(helper1(t) * x);
}

int
zipf_init(struct zipf *z, uint64_t n, double theta)
{
	if (n < 1 || !(theta > 0) || !isfinite(theta))
		return -1;
	z->theta = theta;
	z->n = (double)n;
	z->h_integral_x1 = h_integral(z, 1.5) - 1.0;
	z->h_integral_n = h_integral(z, z->n + 0.5);
	z->s = 2.0 - h_integral_inverse(z, h_integral(z, 2.5) - h(z, 2.0));
	return 0;
}

uint64_t
zipf_sample(const struct zipf *z, uint64_t *rng)
{
	for (;;) {
		double u = z->h_integral_n +
			   rng_unit(rng_next(rng)) * (z->h_integral_x1 - z->h_integral_n);
		double x = h_integral_inverse(z, u);
		double kd = floor(x + 0.5);

		if (kd < 1.0)
			kd = 1.0;
		else if (kd > z->n)
			kd = z->n;
		/* Most draws are accepted by the first, cheap test. */
		if (kd - x <= z->s || u >= h_integral(z, kd + 0.5) - h(z, kd))
			return (uint64_t)kd;
	}
}

double
zipf_pmf(uint64_t n, double theta, uint64_t k)
{
	double norm = 0;

	for (uint64_t i = n; i >= 1; i--) /* smallest terms first */
		norm += pow((double)i, -theta);
	return pow((double)k, -theta) / norm;
}
