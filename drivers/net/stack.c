/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The table of network stacks the server can run.
 */
#include <string.h>

#include "drivers/net/stack.h"

static const struct stack_ops *const stacks[] = {
	&posix_stack_ops,
	&native_stack_ops,
};

#define NSTACKS (sizeof(stacks) / sizeof(stacks[0]))

const struct stack_ops *
stack_find(const char *name)
{
	for (size_t i = 0; i < NSTACKS; i++)
		if (strcmp(stacks[i]->name, name) == 0)
			return stacks[i];
	return NULL;
}

int
stack_telemetry_register(void)
{
	int rc = 0;

	for (size_t i = 0; i < NSTACKS; i++)
		if (stacks[i]->telemetry_register != NULL && stacks[i]->telemetry_register() != 0)
			rc = -1;
	return rc;
}
