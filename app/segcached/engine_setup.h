/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Creates the storage engine the options ask for, on the heap backing
 * they ask for.
 */
#ifndef SEGCACHED_ENGINE_SETUP_H
#define SEGCACHED_ENGINE_SETUP_H

#include <stddef.h>

#include "engine/engine.h"
#include "drivers/mem/mem_region.h"
#include "options.h"

struct engine_setup {
	struct engine *engine;
	struct mem_region heap; /* lib/seg's segments; unused by baseline */
	struct engine_config cfg;
};

/* Call after rte_eal_init(). Returns 0 or -1 with a message. */
int engine_setup_create(struct engine_setup *es, const struct options *o,
			char *err, size_t errlen);

/* Destroys the engine, then its heap. */
void engine_setup_destroy(struct engine_setup *es);

#endif /* SEGCACHED_ENGINE_SETUP_H */
