/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Results: the progress line printed every second, the summary, and the
 * JSON file (one object; numbers only from the measured phase).
 */
#ifndef LG_REPORT_H
#define LG_REPORT_H

#include <stdio.h>

#include "lg_options.h"
#include "lg_session.h"

/* Every worker's published counters, summed. */
struct lg_progress {
	uint64_t done, hits, errs;
};
void lg_progress_read(struct lg_worker *const *w, unsigned n, struct lg_progress *p);
void lg_report_progress(FILE *f, double t_s, const char *phase,
			const struct lg_progress *now, const struct lg_progress *prev,
			double dt_s);

/* Summary of the merged stats over measure_s seconds. */
void lg_report_text(FILE *f, const struct lg_options *o, const struct lg_stats *s,
		    double measure_s);
/* Returns 0, or -1 when the file cannot be written. */
int lg_report_json(const char *path, const struct lg_options *o,
		   const struct lg_stats *s, double measure_s);

#endif /* LG_REPORT_H */
