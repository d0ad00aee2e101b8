/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The run's clock, on the main thread while the workers run: preload,
 * warm-up, the measured phase, drain, stop; a progress line every second.
 */
#ifndef LG_CONTROL_H
#define LG_CONTROL_H

#include "lg_options.h"
#include "lg_session.h"

/* Drives the phases of o->run over workers w[0..n). Returns 0 with the
 * merged measured stats in *out and the measured seconds in *measure_s
 * (call after the workers returned: lg_control_collect), or -1 when the
 * preload did not finish in time. */
int lg_control_run(struct lg_options *o, struct lg_worker *const *w, unsigned n,
		   double *measure_s);
void lg_control_collect(struct lg_worker *const *w, unsigned n, struct lg_stats *out);

#endif /* LG_CONTROL_H */
