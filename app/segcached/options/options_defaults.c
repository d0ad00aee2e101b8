/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The options before any is read (options_defaults) and once all are
 * (options_finalize): the checks across options and the values they
 * derive.
 */
#include "options_private.h"

#include <stdio.h>
#include <string.h>

#include "seg/seg.h"
#include "util/util_err.h"

void
options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->tcp_port = 11211;
	o->udp_port = 0;
	strcpy(o->listen, "127.0.0.1");
	o->memory = 64 * MIB;
	o->max_conns = 1024;
	o->item_max = MIB;
	o->threads = 4;
	o->backlog = 1024;
	o->stack = STACK_POSIX;
	o->eviction = ENGINE_EVICT_MERGE;
	o->engine = SERVER_ENGINE_SEG;
	o->heap = HEAP_AUTO;
	o->port_id = -1;
	o->link_timeout = 10;
	o->udp_reply_max = 4096;
	o->request_timeout = 30;
	options_admin_defaults(o);
	o->unix_mask = 0700;
}


size_t
options_default_segment_size(size_t memory)
{
	return seg_segment_size_for(memory);
}

int
options_finalize(struct options *o, char *err, size_t errlen)
{
	/* memcached's -s: the unix socket instead of the network */
	if (o->unix_path[0] != '\0') {
		if (o->stack != STACK_POSIX)
			return util_fail(err, errlen,
				    "--unix-socket needs --stack posix (the native stack "
				    "serves a NIC, not kernel sockets)");
		o->tcp_port = 0;
		o->udp_port = 0;
	} else if (o->tcp_port == 0 && o->udp_port == 0)
		return util_fail(err, errlen,
			    "--port 0 and --udp-port 0: nothing to listen on");
	if (o->stack == STACK_NATIVE && o->ip_addr == 0)
		return util_fail(err, errlen,
			    "--stack native needs --ip ADDR/PREFIX "
			    "(the server's address on the port)");
	if (o->stack != STACK_POSIX && o->reqs_per_event != 0)
		return util_fail(err, errlen,
			    "--max-reqs-per-event applies to --stack posix only (the native "
			    "stack serves each connection's burst of packets in turn already)");
	if (o->stack == STACK_POSIX && o->ip_addr != 0)
		return util_fail(err, errlen,
			    "--ip applies to --stack native only (the posix stack listens on -l)");
	if (o->admin_port != 0 && o->admin_port == o->tcp_port)
		return util_fail(err, errlen,
			    "--admin-port %u is the client port (-p): give it a port of its own",
			    o->admin_port);
	if (o->metrics_port != 0 && o->stack == STACK_POSIX &&
	    (o->metrics_port == o->tcp_port || o->metrics_port == o->admin_port))
		return util_fail(err, errlen,
			    "--metrics-port %u is the %s port: give it a port of its own",
			    o->metrics_port, o->metrics_port == o->tcp_port ? "client (-p)" : "admin");
	if (options_admin_finalize(o, err, errlen) < 0)
		return -1;
	if (o->evictions_disabled)
		o->eviction = ENGINE_EVICT_NONE;
	if (o->heap == HEAP_FILE && o->heap_file[0] == '\0')
		return util_fail(err, errlen, "--heap file needs --heap-file PATH");
	if (o->heap_file[0] != '\0' && o->heap != HEAP_FILE)
		return util_fail(err, errlen, "--heap-file and --heap %s contradict each other",
			    o->heap == HEAP_ANON ? "anon" :
			    o->heap == HEAP_HUGEPAGE ? "hugepage" : "auto");
	/* lib/seg's largest item (a 22-bit value length, seg_item.h): a bad
	 * value like any other, refused before anything starts. */
	if (o->engine == SERVER_ENGINE_SEG && o->item_max > OPTIONS_SEG_ITEM_MAX)
		return util_fail(err, errlen,
			    "--max-item-size %zu is above the seg engine's largest, 4m (%u)",
			    o->item_max, OPTIONS_SEG_ITEM_MAX);
	/* A heap below 256 MiB gets smaller segments (256 of them at least,
	 * down to lib/seg's smallest default: seg_segment_size_for), which
	 * keep more objects than 1 MiB ones (issue 36), and -I keeps its
	 * meaning: an item larger than a segment spans several (lib/seg's
	 * seg_append.c), so memcached's 1 MiB items (or -I's) are stored at
	 * every -m (issue 37). A larger heap keeps 1 MiB segments, and -I
	 * above that grows them, as memcached's -I grows its slab page. */
	if (o->engine == SERVER_ENGINE_SEG && o->segment_size == 0 &&
	    options_default_segment_size(o->memory) < MIB) {
		o->segment_size = options_default_segment_size(o->memory);
		o->segment_size_derived = true;
	}
	/* An item spans at most OPTIONS_SEG_SPAN_MAX segments: an explicit
	 * segment size that is too small for -I is an error. */
	if (o->engine == SERVER_ENGINE_SEG && o->segment_size != 0 &&
	    o->item_max > o->segment_size * OPTIONS_SEG_SPAN_MAX)
		return util_fail(err, errlen,
			    "--max-item-size %zu is more than %u segments of --segment-size %zu",
			    o->item_max, OPTIONS_SEG_SPAN_MAX, o->segment_size);
	if (o->item_max > o->memory / 2)
		return util_fail(err, errlen,
			    "--max-item-size %zu is more than half of --memory %zu",
			    o->item_max, o->memory);
	return 0;
}

