/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The live miss-ratio curve and hot keys of a running server (lib/mrc):
 * started with the seg engine unless --no-mrc, sized from 1% of -m;
 * answers `stats mrc` and `stats hotkeys` (docs/protocol.md) and fills
 * the telemetry command /segcached/mrc (telemetry.c).
 */
#include <stdio.h>
#include <string.h>

#include "log/log.h"
#include "observe.h"
#include "server/server.h"

void
server_mrc_start(struct server *srv)
{
	struct engine_stats st;
	struct mrc_config cfg = { 0 };
	char err[256];

	srv->mrc = NULL;
	if (srv->opt.mrc_disabled || srv->opt.engine != SERVER_ENGINE_SEG)
		return;
	engine_stats(srv->es.engine, &st);
	cfg.memory = srv->opt.memory;
	cfg.seg_size = (uint32_t)st.seg_size;
	cfg.nseg = (uint32_t)st.seg_total;
	cfg.eviction = srv->opt.eviction;
	/* A segment size that options_finalize chose for a small -m (not given) would
	 * be chosen afresh at another size. */
	const bool seg_size_derived = srv->opt.segment_size_derived;
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		/* What `segcached -m <that size>` with the same options would
		 * build: the segment size follows the memory unless given. */
		struct engine_config at = srv->es.cfg;
		size_t heap;

		at.memory = srv->opt.memory / 8 * mrc_size_eighths[i];
		at.heap = NULL;
		at.heap_len = 0;
		if (seg_size_derived || (!srv->opt.segment_size && !srv->opt.item_max_given)) {
			at.segment_size = options_default_segment_size(at.memory);
			at.item_max = 0;
		} else if (!srv->opt.segment_size) {
			continue; /* -I alone: the server's segments, scaled */
		}
		heap = seg_heap_bytes(&at);
		if (heap >= at.segment_size && at.segment_size <= UINT32_MAX) {
			cfg.nseg_at[i] = (uint32_t)(heap / at.segment_size);
			cfg.seg_size_at[i] = (uint32_t)at.segment_size;
		}
	}
	srv->mrc = mrc_create(&cfg, err, sizeof(err));
	if (!srv->mrc) {
		/* The server runs the same without it: say why there is no curve. */
		APP_LOG(NOTICE, "no miss-ratio curve: %s", err);
		return;
	}
	mrc_attach(srv->mrc, srv->es.engine);
}

void
server_mrc_stop(struct server *srv)
{
	if (!srv->mrc)
		return;
	engine_attach_sampler(srv->es.engine, NULL, NULL, 0);
	mrc_destroy(srv->mrc);
	srv->mrc = NULL;
}

void
server_mrc_note_writes(struct server *srv)
{
	struct engine_stats es;

	if (!srv->mrc)
		return;
	engine_stats(srv->es.engine, &es);
	mrc_note_set_bytes(srv->mrc, es.counters[ENGINE_C_set_bytes]);
	/* (and where the recent window's epochs end: lib/mrc's mrc_note_gets) */
	mrc_note_gets(srv->mrc, es.counters[ENGINE_C_cmd_get], es.counters[ENGINE_C_get_misses]);
}

/* The curve as `stats mrc` and telemetry give it: corrected for the
 * sample's share of the server's gets and misses (mrc_curve_corrected). */
unsigned
server_mrc_curve(struct server *srv, struct mrc_point *pts, struct mrc_info *info)
{
	struct engine_stats es;

	engine_stats(srv->es.engine, &es);
	return mrc_curve_corrected(srv->mrc, es.counters[ENGINE_C_cmd_get],
				   es.counters[ENGINE_C_get_misses], pts, info);
}

/* The server's own miss ratio so far, as `stats` counts it. */
double
server_mrc_measured(struct server *srv)
{
	struct engine_stats es;

	engine_stats(srv->es.engine, &es);
	return es.counters[ENGINE_C_cmd_get]
		       ? (double)es.counters[ENGINE_C_get_misses] /
				 (double)es.counters[ENGINE_C_cmd_get]
		       : 0;
}

/* One `STAT <prefix>:<bytes> <miss ratio> <gets>` line per modelled size. */
static void
put_curve(struct proto_out *out, const char *prefix, const struct mrc_point *pts, unsigned n)
{
	char name[64], val[96];

	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%llu", prefix, (unsigned long long)pts[i].bytes);
		snprintf(val, sizeof(val), "%.6f %llu", pts[i].miss_ratio,
			 (unsigned long long)pts[i].gets);
		proto_out_stat(out, name, val);
	}
}

void
server_stats_mrc(void *arg, struct proto_out *out)
{
	struct server *srv = arg;
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;
	char val[96];
	unsigned n;

	if (!srv->mrc) {
		proto_out_stat(out, "mrc_status", "disabled");
		return;
	}
	n = server_mrc_curve(srv, pts, &info);
	proto_out_stat(out, "mrc_status", "enabled");
	struct engine_stats es;
	struct mrc_point recent[MRC_SIZES];
	struct mrc_info rinfo;

	engine_stats(srv->es.engine, &es);
	mrc_curve_recent(srv->mrc, es.counters[ENGINE_C_cmd_get],
			 es.counters[ENGINE_C_get_misses], recent, &rinfo);
	snprintf(val, sizeof(val), "%.9f", info.rate);
	proto_out_stat(out, "mrc_sample_rate", val);
	proto_out_stat_u64(out, "mrc_sample_keys", info.keys);
	proto_out_stat_u64(out, "mrc_sample_max_keys", info.max_keys);
	proto_out_stat_u64(out, "mrc_sample_requests", info.requests);
	proto_out_stat_u64(out, "mrc_memory", info.memory);
	proto_out_stat_u64(out, "mrc_memory_used", info.memory_used);
	proto_out_stat_u64(out, "mrc_current_bytes", srv->opt.memory);
	snprintf(val, sizeof(val), "%.6f", server_mrc_measured(srv));
	proto_out_stat(out, "mrc_measured_miss_ratio", val);
	/* The points lib/mrc knows to be rough (mrc.h): "none", or their
	 * bytes, comma-separated. */
	{
		char rough[MRC_SIZES * 24] = "none";
		size_t len = 0;

		for (unsigned i = 0; i < n; i++)
			if (pts[i].rough)
				len += (size_t)snprintf(rough + len, sizeof(rough) - len, "%s%llu",
							len ? "," : "",
							(unsigned long long)pts[i].bytes);
		proto_out_stat(out, "mrc_rough_sizes", rough);
	}
	put_curve(out, "mrc", pts, n);
	/* The recent window: the same curve over the last 32,768 to 65,536
	 * sampled gets (lib/mrc, mrc_curve_recent), beside the server's own
	 * miss ratio over the same gets. */
	proto_out_stat_u64(out, "mrc_recent_epochs", rinfo.epochs);
	proto_out_stat_u64(out, "mrc_recent_gets", rinfo.recent_gets);
	snprintf(val, sizeof(val), "%.6f",
		 rinfo.recent_gets ? (double)rinfo.recent_misses / (double)rinfo.recent_gets : 0);
	proto_out_stat(out, "mrc_recent_measured_miss_ratio", val);
	put_curve(out, "mrc_recent", recent, n);
}

/* A key as one protocol word: bytes that are not printable ASCII (a meta
 * command's base64 key decoded) become '?'; a key longer than what the
 * sample keeps ends in "...". */
static void
key_word(const struct mrc_hotkey *h, char *buf, size_t len)
{
	size_t n = 0;

	for (const char *p = h->key; *p && n + 4 < len; p++)
		buf[n++] = *p > ' ' && *p < 127 ? *p : '?';
	if (h->klen > MRC_KEY_PREFIX && n + 4 < len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
}

void
server_stats_hotkeys(void *arg, struct proto_out *out)
{
	struct server *srv = arg;
	struct mrc_hotkey hot[MRC_HOTKEYS];
	char name[32], key[MRC_KEY_PREFIX + 8], val[MRC_KEY_PREFIX + 96];
	unsigned n;

	if (!srv->mrc) {
		proto_out_stat(out, "hotkeys_status", "disabled");
		return;
	}
	n = mrc_hotkeys(srv->mrc, hot, MRC_HOTKEYS,
			srv->es.cfg.clock ? srv->es.cfg.clock(srv->es.cfg.clock_arg)
					  : engine_clock_default(NULL));
	for (unsigned i = 0; i < n; i++) {
		key_word(&hot[i], key, sizeof(key));
		snprintf(name, sizeof(name), "hotkey:%u", i + 1);
		snprintf(val, sizeof(val), "%s %.3f %u %llu %u", key, hot[i].rate, hot[i].size,
			 (unsigned long long)hot[i].requests, hot[i].klen);
		proto_out_stat(out, name, val);
	}
}
