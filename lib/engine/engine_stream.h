/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A store whose value is written as it arrives (engine.h's optional
 * store_begin, store_write and store_finish): lib/cmd's cmd_stream.c and
 * the engines that have them (lib/seg's seg_stream.c).
 */
#ifndef SEGCACHED_ENGINE_STREAM_H
#define SEGCACHED_ENGINE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A store whose value is written as it arrives (engine_store_begin): the
 * value goes straight into the item reserved for it, so a large value in
 * flight is heap memory that -m bounds, not a copy beside it (issue 35).
 * Owned by one worker; `priv` is the engine's. */
struct engine_stream {
	size_t vlen;      /* the value's length */
	size_t written;   /* value bytes handed over so far */
	/* the engine took the reserved item back (it was evicted or flushed
	 * before its value was complete): the rest is discarded and
	 * engine_store_finish() completes the store as one evicted at once */
	bool lost;
	uint64_t priv[6];
};

/* Does the engine take values as they arrive (engine_store_begin)? */
static inline bool engine_streams(const struct engine *e)
{ return e->ops->store_begin != NULL; }

/* A set, add, replace or cas (not append or prepend) of a vlen-byte value
 * still arriving: reserves its item (which may evict) with its key, flags
 * and expiry, to be filled by engine_store_write() and linked, with the
 * mode's condition decided then, by engine_store_finish(); a stream never
 * finished (the connection went) leaves nothing behind but dead bytes.
 * Returns ENGINE_OK (*st is ready), ENGINE_TOO_LARGE (the item is over the
 * limit: a set's old value is dropped, as engine_store does),
 * ENGINE_NO_MEMORY or ENGINE_INVALID. Counts the request. */
static inline enum engine_status engine_store_begin(struct engine_worker *w,
						    enum engine_store_mode mode,
						    const void *key, size_t klen, size_t vlen,
						    uint32_t flags, int64_t exptime,
						    struct engine_stream *st)
{ return w->engine->ops->store_begin(w, mode, key, klen, vlen, flags, exptime, st); }

/* The next len bytes of the value (written + len <= vlen). */
static inline void engine_store_write(struct engine_worker *w, struct engine_stream *st,
				      const void *data, size_t len)
{ w->engine->ops->store_write(w, st, data, len); }

/* The whole value was written: links the item if the mode's condition
 * holds (mode, key and cas_in as given to engine_store). Returns what
 * engine_store() would. An item taken back meanwhile (st->lost) is a
 * store whose item was evicted the moment it was linked: the condition
 * decided, the key's old value dropped, nothing new readable. */
static inline enum engine_status engine_store_finish(struct engine_worker *w,
						     struct engine_stream *st,
						     enum engine_store_mode mode,
						     const void *key, size_t klen,
						     uint64_t cas_in, uint64_t *cas_out)
{ return w->engine->ops->store_finish(w, st, mode, key, klen, cas_in, cas_out); }

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_STREAM_H */
