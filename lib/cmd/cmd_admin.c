/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's administration commands for the parts segcached does not
 * have or has otherwise: cache_memlimit (its memory limit at run time,
 * engine_set_memory), slabs (its slab allocator) and lru_crawler (its
 * expiry crawler; its metadump is cmd_dump.c's). Where segcached cannot
 * act, each answers with the line memcached gives when the feature is off
 * or cannot act, so a client sees why nothing changed instead of an
 * unknown-command ERROR.
 * docs/protocol.md, "Administration commands", lists every answer.
 */
#include "cmd/cmd_private.h"

void
cmd_exec_cache_memlimit(struct cmd_conn *c, const struct proto_req *req)
{
	uint32_t mb = req->num[0];
	struct engine_stats es;

	/* memcached's bounds and lines, in its order */
	if (mb < 8) {
		cmd_reply(c, req->noreply,
			  "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m");
		return;
	}
	if (mb > 1000000000) {
		cmd_reply(c, req->noreply,
			  "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes");
		return;
	}
	/* Asking for the limit already in force changes nothing, on either
	 * engine. lib/seg shrinks by parking segments (in steps, on the
	 * control thread) and grows back up to its budget at start, which
	 * sized the heap and hash table; lib/baseline's rte_hash is sized
	 * once (-ENOTSUP). Both refusals are memcached's one line for a
	 * limit it cannot set (its preallocated heap, -L). */
	engine_stats(c->s->engine, &es);
	if ((uint64_t)mb << 20 == es.limit_maxbytes ||
	    engine_set_memory(c->s->engine, (size_t)mb << 20) == 0) {
		cmd_reply(c, req->noreply, "OK");
		return;
	}
	cmd_reply(c, req->noreply, "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust");
}

void
cmd_exec_slabs(struct cmd_conn *c, const struct proto_req *req)
{
	switch (req->sub) {
	case PROTO_SUB_SLABS_AUTOMOVE:
		/* level 0 is what there is: nothing ever moves between classes */
		if (req->num[0] == 0) {
			cmd_reply(c, req->noreply, "OK");
			return;
		}
		break;
	case PROTO_SUB_SLABS_AUTOMOVE_RATIO:
		/* a parameter of automove only: accepted, used by nothing */
		cmd_reply(c, req->noreply, "OK");
		return;
	default:
		break;
	}
	/* memcached's line when started with slab_reassign off: segments
	 * are not divided into slab classes, so there is nothing to move */
	cmd_reply(c, req->noreply, "CLIENT_ERROR slab reassignment disabled");
}

void
cmd_exec_lru_crawler(struct cmd_conn *c, const struct proto_req *req)
{
	if (req->sub == PROTO_SUB_LRU_SLEEP && req->num[0] > 1000000) {
		cmd_reply(c, false, "CLIENT_ERROR sleep must be one second or less");
		return;
	}
	switch (req->sub) {
	case PROTO_SUB_LRU_METADUMP:
		cmd_dump_metadump(c, req);
		return;
	case PROTO_SUB_LRU_SLEEP:
	case PROTO_SUB_LRU_TOCRAWL:
		/* crawler settings: accepted, as memcached does with its
		 * crawler off */
	case PROTO_SUB_LRU_DISABLE:
		cmd_reply(c, false, "OK");
		return;
	default:
		/* enable, crawl: Segcache frees expired segments
		 * itself and has no crawler to start (memcached's line with
		 * its crawler off) */
		cmd_reply(c, false, "CLIENT_ERROR lru crawler disabled");
		return;
	}
}
