/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * util_dl.h: dlopen of the first soname that loads, dlsym of each function.
 */
#include "util/util_dl.h"

#include <dlfcn.h>

#include "util/util_err.h"

void *
util_dl_open(const char *const *sonames, size_t n_sonames, const struct util_dl_sym *syms,
	     size_t n_syms, const char *need, char *err, size_t errlen)
{
	void *h = NULL;
	size_t i;

	for (i = 0; h == NULL && i < n_sonames; i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h == NULL) {
		util_fail(err, errlen, "%s: %s", need, dlerror());
		return NULL;
	}
	for (size_t k = 0; k < n_syms; k++) {
		if ((*syms[k].slot = dlsym(h, syms[k].name)) == NULL) {
			util_fail(err, errlen, "%s has no %s", sonames[i - 1], syms[k].name);
			dlclose(h);
			return NULL;
		}
	}
	return h;
}
