/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Trace replay input: a CSV read whole into memory before the run. Two
 * layouts are accepted, told apart by the number of columns:
 *   5 columns: time,key,size,op,ttl
 *   7 columns: time,key,key_size,value_size,client_id,op,ttl
 *              (the twitter/cache-trace format of Twitter's published traces)
 * time is in seconds (integers or fractions) from any origin; op is get,
 * gets, set, add, replace, cas, append, prepend, delete, incr or decr:
 * gets are replayed as get, every write as set (size = value size), and
 * the rest are skipped and counted. Keys are interned: each distinct key
 * gets an index, so a request is 16 bytes however long its key.
 */
#ifndef LG_TRACE_H
#define LG_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct lg_trace_key {
	uint32_t len;
	char name[]; /* not NUL terminated */
};

struct lg_trace_req {
	uint64_t time_ns;   /* from the first request */
	uint32_t key;       /* index into the key table */
	uint32_t size;      /* value size of a set; 0 for a get */
	uint32_t ttl;
	uint8_t op;         /* enum lg_op */
};

struct lg_trace {
	struct lg_trace_req *reqs;
	size_t nreqs;
	struct lg_trace_key **keys;
	size_t nkeys;
	size_t skipped;     /* unsupported ops */
	uint32_t max_size;
};

/* Reads path; returns 0, or -1 with a message naming the line in err. */
int lg_trace_load(struct lg_trace *t, const char *path, char *err, size_t errlen);
/* Parses a trace from memory (tests). */
int lg_trace_parse(struct lg_trace *t, const char *text, size_t len, char *err,
		   size_t errlen);
void lg_trace_free(struct lg_trace *t);

static inline const struct lg_trace_key *
lg_trace_key(const struct lg_trace *t,
	     uint64_t i)
{
	return t->keys[i];
}

#endif /* LG_TRACE_H */
