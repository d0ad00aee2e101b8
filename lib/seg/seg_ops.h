/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The operations (seg_ops.c): the engine_ops entries for requests that
 * seg_engine.c installs (get, batched get, prefetch, store, delete,
 * arithmetic, touch), and those of a store whose value arrives in pieces
 * (seg_stream.c).
 */
#ifndef SEGCACHED_SEG_OPS_H
#define SEGCACHED_SEG_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

enum engine_status seg_op_get(struct engine_worker *ew, const void *key, size_t klen,
			      int64_t touch, void *buf, size_t buflen, struct engine_item *it);
void seg_op_get_batch(struct engine_worker *ew, const struct engine_key *keys, unsigned n,
		      const struct engine_get_sink *sink);
void seg_op_prefetch(struct engine_worker *ew, const struct engine_key *keys, unsigned n);
enum engine_status seg_op_store(struct engine_worker *ew, enum engine_store_mode mode,
				const void *key, size_t klen, const void *val, size_t vlen,
				uint32_t flags, int64_t exptime, uint64_t cas, uint64_t *cas_out);
enum engine_status seg_op_store_begin(struct engine_worker *ew, enum engine_store_mode mode,
				      const void *key, size_t klen, size_t vlen, uint32_t flags,
				      int64_t exptime, struct engine_stream *st);
void seg_op_store_write(struct engine_worker *ew, struct engine_stream *st, const void *data,
			size_t len);
enum engine_status seg_op_store_finish(struct engine_worker *ew, struct engine_stream *st,
				       enum engine_store_mode mode, const void *key, size_t klen,
				       uint64_t cas_in, uint64_t *cas_out);
enum engine_status seg_op_delete(struct engine_worker *ew, const void *key, size_t klen,
				 uint64_t cas);
enum engine_status seg_op_arith(struct engine_worker *ew, const void *key, size_t klen,
				bool incr, uint64_t delta, uint64_t *result, uint64_t *cas_out);
enum engine_status seg_op_touch(struct engine_worker *ew, const void *key, size_t klen,
				int64_t exptime);

#endif /* SEGCACHED_SEG_OPS_H */
