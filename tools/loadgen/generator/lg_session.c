/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The transport-independent workers and connections (lg_session.h): what
 * to send when, answers matched to requests, open-loop lateness, results.
 */
#include "lg_session.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lg_verify.h"

uint64_t
lg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
lg_stats_init(struct lg_stats *s)
{
	memset(s, 0, sizeof(*s));
	lg_hist_init(&s->hist);
}

void
lg_stats_merge(struct lg_stats *d, const struct lg_stats *s)
{
	d->requests += s->requests;
	d->gets += s->gets;
	d->sets += s->sets;
	d->keys_asked += s->keys_asked;
	d->hits += s->hits;
	d->errors += s->errors;
	d->corrupt += s->corrupt;
	d->stale += s->stale;
	d->bad += s->bad;
	d->lost += s->lost;
	d->sent += s->sent;
	d->late += s->late;
	d->generator_late += s->generator_late;
	d->window_late += s->window_late;
	d->unsent_at_drain += s->unsent_at_drain;
	/* Workers fall behind at their own moments: the worst one's peak. */
	if (s->backlog_peak > d->backlog_peak)
		d->backlog_peak = s->backlog_peak;
	d->values_checked += s->values_checked;
	d->conn_failed += s->conn_failed;
	lg_hist_merge(&d->hist, &s->hist);
}

bool
lg_stats_generator_behind(const struct lg_stats *s)
{
	return s->generator_late * 100 > LG_GENERATOR_LATE_MAX_PERCENT * s->sent;
}

void
lg_worker_init(struct lg_worker *w, struct lg_run *run, unsigned id, uint64_t seed)
{
	uint64_t keys = run->wl.trace ? 0 : run->wl.keys;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->run = run;
	w->rng = rng_seed(seed, id);
	lg_stats_init(&w->stats);
	/* Each worker preloads an equal slice of the key space. */
	w->pre_next = keys * id / run->workers;
	w->pre_end = keys * (id + 1) / run->workers;
	w->preloaded = !run->preload || w->pre_next == w->pre_end;
	w->trace_next = id;
}

int
lg_conn_init(struct lg_conn *c, struct lg_worker *w, uint64_t now)
{
	unsigned d = w->run->depth;

	memset(c, 0, sizeof(*c));
	c->w = w;
	c->reqs = calloc(d, sizeof(*c->reqs));
	c->measured = calloc(d, 1);
	c->pending = calloc(d, 1);
	if (!c->reqs || !c->measured || !c->pending) {
		lg_conn_free(c);
		return -1;
	}
	c->udp_id_mask = 0xffff;
	(void)now;
	return 0;
}

void
lg_conn_free(struct lg_conn *c)
{
	free(c->reqs);
	free(c->measured);
	free(c->pending);
	c->reqs = NULL;
	c->measured = c->pending = NULL;
}

static void
prepare_synthetic(struct lg_conn *c, struct lg_req *r, uint64_t now)
{
	struct lg_worker *w = c->w;
	const struct lg_workload *wl = &w->run->wl;

	r->intended_ns = w->run->rate > 0 ? c->next_ns : now;
	r->op = (uint8_t)lg_pick_op(wl, &w->rng);
	r->ttl = wl->ttl;
	if (r->op == LG_OP_GET) {
		r->nkeys = (uint8_t)wl->multiget;
		for (unsigned i = 0; i < wl->multiget; i++)
			r->keys[i] = lg_key_id(wl, &w->rng);
	} else {
		r->nkeys = 1;
		r->keys[0] = lg_key_id(wl, &w->rng);
		r->vlen = lg_value_size(wl, &w->rng);
	}
}

/* A prepared preload set or trace request took the worker's next key or
 * trace request, which only a send (lg_conn_commit) moves on. While its
 * own send waited (lib/net: ARP pending or no TX slot; TCP: no send
 * space), another connection of the worker may have sent that one: sent
 * as prepared, it would go out twice and the next one never (over memif
 * every UDP flow prepared key 0 while ARP resolved, and conns - 1 keys
 * were never stored). */
static bool
prepared_overtaken(const struct lg_conn *c)
{
	const struct lg_worker *w = c->w;

	if (c->prepared_resend)
		return false;
	if (c->prepared_preload)
		return c->prep_pos != w->pre_next;
	return w->run->wl.trace != NULL && c->prep_pos != w->trace_next;
}

/* --verify all: a set is over, acknowledged or not (sent or never). */
static void
verify_set_done(struct lg_conn *c, const struct lg_req *r, bool acked)
{
	struct lg_verify *v = c->w->run->wl.verify;

	if (!v || r->op != LG_OP_SET)
		return;
	if (acked)
		lg_verify_set_acked(v, r->keys[0], r->vraise);
	else
		lg_verify_set_dropped(v, r->keys[0]);
}

static double
conn_rate(const struct lg_run *run)
{
	return run->rate / (double)(run->workers * run->conns);
}

/* Open loop: every arrival due by t joins the backlog. */
static void
arrivals_until(struct lg_conn *c, uint64_t t)
{
	struct lg_worker *w = c->w;

	while (c->due_ns <= t) {
		c->backlog++;
		w->backlog++;
		c->due_ns += lg_poisson_gap_ns(conn_rate(w->run), &c->due_rng);
	}
}

/* Open loop, from the warm-up on: the schedule starts with the workload,
 * not at connection set-up (a schedule already behind would make every
 * send late), and the backlog follows it whether or not a slot is free. */
static void
arrivals_now(struct lg_conn *c, uint64_t now, int phase)
{
	struct lg_worker *w = c->w;

	if (!c->scheduled) {
		c->gap_rng = rng_next(&w->rng);
		c->next_ns = now + lg_poisson_gap_ns(conn_rate(w->run), &c->gap_rng);
		c->due_ns = c->next_ns;
		c->due_rng = c->gap_rng;
		c->scheduled = true;
	}
	arrivals_until(c, now);
	if (phase == LG_PHASE_MEASURE && w->backlog > w->stats.backlog_peak)
		w->stats.backlog_peak = w->backlog;
}

/* The drain began: what was due by then and not sent never will be. Once
 * per connection (and per replaying worker), whenever it is first seen. */
static void
count_unsent_at_drain(struct lg_conn *c)
{
	struct lg_worker *w = c->w;
	const struct lg_run *run = w->run;
	uint64_t drain_ns = __atomic_load_n(&run->drain_ns, __ATOMIC_ACQUIRE);
	const struct lg_trace *t = run->wl.trace;

	if (!c->drain_counted) {
		c->drain_counted = true;
		if (c->scheduled) {
			arrivals_until(c, drain_ns);
			w->stats.unsent_at_drain += c->backlog;
		}
	}
	if (t && run->trace_speed > 0 && !w->trace_drain_counted) {
		/* This worker's requests trace_next, + workers, ... go out
		 * in that order, each at its time. */
		w->trace_drain_counted = true;
		for (size_t i = w->trace_next; i < t->nreqs; i += run->workers) {
			if (run->trace_start_ns +
			    (uint64_t)((double)t->reqs[i].time_ns / run->trace_speed) > drain_ns)
				break;
			w->stats.unsent_at_drain++;
		}
	}
}

/* The connection could send r from its time or from when a slot freed,
 * whichever is later: a worker that got to it later than late_ns after
 * that fell behind by itself. */
static bool
generator_late_at(const struct lg_conn *c, const struct lg_req *r, uint64_t now)
{
	uint64_t could = r->intended_ns > c->window_open_ns ?
			 r->intended_ns : c->window_open_ns;

	return now > could && now - could > c->w->run->late_ns;
}

struct lg_req *
lg_conn_next(struct lg_conn *c, uint64_t now)
{
	struct lg_worker *w = c->w;
	struct lg_run *run = w->run;
	unsigned slot;
	struct lg_req *r;
	int phase;

	if (c->dead)
		return NULL;
	phase = lg_phase_get(run);
	if (phase >= LG_PHASE_DRAIN) {
		count_unsent_at_drain(c);
		return NULL;
	}
	if (run->rate > 0 && !run->wl.trace && phase != LG_PHASE_PRELOAD)
		arrivals_now(c, now, phase);
	if (c->prepared) {
		/* The phase may have moved on from preload since, or another
		 * connection sent what it took. */
		if ((phase == LG_PHASE_PRELOAD) == c->prepared_preload &&
		    !prepared_overtaken(c))
			return &c->reqs[c->prep_slot];
		if (!c->prepared_resend)
			verify_set_done(c, &c->reqs[c->prep_slot], false);
		c->prepared = false;
	}
	if (c->resend && phase == LG_PHASE_PRELOAD) {
		/* A preload set whose datagram (or answer) was lost: the same
		 * set again, under a new id so a late answer to the old one
		 * cannot be taken for it. */
		for (slot = 0; c->pending[slot] != LG_SLOT_RESEND; slot++)
			;
		r = &c->reqs[slot];
		r->udp_id = c->udp_id;
		c->prep_slot = slot;
		c->prepared = c->prepared_preload = c->prepared_resend = true;
		return r;
	}
	if (c->outstanding == run->depth)
		return NULL;
	if (run->udp) {
		/* Answers come in any order: any free slot, so one lost
		 * datagram holds one slot until its timeout, not the flow. */
		for (slot = 0; c->pending[slot] != LG_SLOT_FREE; slot++)
			;
	} else {
		slot = (c->head + c->count) % run->depth;
	}
	r = &c->reqs[slot];
	memset(r, 0, offsetof(struct lg_req, keys) + sizeof(r->keys[0]));
	if (phase == LG_PHASE_PRELOAD) {
		if (w->pre_next >= w->pre_end)
			return NULL;
		r->intended_ns = now;
		r->op = LG_OP_SET;
		r->preload = true;
		r->nkeys = 1;
		r->keys[0] = w->pre_next;
		c->prep_pos = w->pre_next;
		r->vlen = lg_value_size(&run->wl, &w->rng);
		r->ttl = run->wl.ttl;
	} else if (run->wl.trace) {
		const struct lg_trace *t = run->wl.trace;
		const struct lg_trace_req *tr;

		if (w->trace_next >= t->nreqs) {
			__atomic_store_n(&w->trace_done, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		tr = &t->reqs[w->trace_next];
		c->prep_pos = w->trace_next;
		if (run->trace_speed > 0) {
			r->intended_ns = run->trace_start_ns +
				(uint64_t)((double)tr->time_ns / run->trace_speed);
			if (now < r->intended_ns)
				return NULL;
		} else {
			r->intended_ns = now;
		}
		r->op = tr->op;
		r->nkeys = 1;
		r->keys[0] = tr->key;
		r->vlen = tr->size;
		r->ttl = tr->ttl;
	} else {
		if (run->rate > 0 && now < c->next_ns)
			return NULL;
		prepare_synthetic(c, r, now);
	}
	c->prep_generator_late = generator_late_at(c, r, now);
	if (r->op == LG_OP_SET && run->wl.verify)
		r->version = lg_verify_set_prepared(run->wl.verify, r->keys[0],
						    &r->vraise);
	else if (r->op == LG_OP_SET)
		r->version = (w->id << 24) | (++w->seq & 0xffffff);
	else
		r->check = run->check_every && ++w->check_ctr % run->check_every == 0;
	r->udp_id = c->udp_id;
	c->prep_slot = slot;
	c->prepared = true;
	c->prepared_preload = phase == LG_PHASE_PRELOAD;
	c->prepared_resend = false;
	return r;
}

void
lg_conn_commit(struct lg_conn *c, uint64_t now)
{
	struct lg_worker *w = c->w;
	struct lg_run *run = w->run;
	unsigned slot = c->prep_slot;
	struct lg_req *r = &c->reqs[slot];
	int phase = lg_phase_get(run);

	c->prepared = false;
	r->sent_ns = now;
	r->tries++;
	/* Only the counter bits of the id move: the others name the flow. */
	c->udp_id = (uint16_t)((c->udp_id & ~c->udp_id_mask) |
			       ((c->udp_id + 1) & c->udp_id_mask));
	if (run->udp && now + run->udp_timeout_ns < c->udp_expire_ns)
		c->udp_expire_ns = now + run->udp_timeout_ns;
	if (c->prepared_resend) {
		/* Already counted outstanding when first sent. */
		c->pending[slot] = LG_SLOT_PENDING;
		c->resend--;
		w->pre_resent++;
		return;
	}
	if (!run->udp)
		c->count++;
	c->outstanding++;
	w->outstanding++;
	c->pending[slot] = LG_SLOT_PENDING;
	c->measured[slot] = phase == LG_PHASE_MEASURE && !c->prepared_preload;
	if (run->wl.verify && r->op == LG_OP_GET)
		for (unsigned i = 0; i < r->nkeys; i++)
			r->vfloor[i] = lg_verify_floor(run->wl.verify, r->keys[i]);
	if (c->prepared_preload) {
		w->pre_next++;
	} else if (run->wl.trace) {
		w->trace_next += run->workers;
	} else if (run->rate > 0) {
		c->next_ns += lg_poisson_gap_ns(conn_rate(run), &c->gap_rng);
		c->backlog--;
		w->backlog--;
	}
	if (!c->measured[slot])
		return;
	w->stats.sent++;
	if (now > r->intended_ns && now - r->intended_ns > run->late_ns) {
		w->stats.late++;
		if (c->prep_generator_late)
			w->stats.generator_late++;
		else
			w->stats.window_late++;
	}
}

/* The slot is answered or given up on at `now`. */
static void
slot_free(struct lg_conn *c, unsigned slot, uint64_t now)
{
	struct lg_worker *w = c->w;

	if (c->outstanding == w->run->depth)
		c->window_open_ns = now;
	c->pending[slot] = LG_SLOT_FREE;
	c->outstanding--;
	w->outstanding--;
	if (!w->preloaded && w->pre_next >= w->pre_end && w->outstanding == 0)
		__atomic_store_n(&w->preloaded, 1, __ATOMIC_RELEASE);
	while (c->count && !c->pending[c->head]) {
		c->head = (c->head + 1) % w->run->depth;
		c->count--;
	}
}

static void
complete(struct lg_conn *c, unsigned slot, enum lg_resp_status st,
	 uint64_t now)
{
	struct lg_worker *w = c->w;
	const struct lg_req *r = &c->reqs[slot];
	struct lg_stats *s = &w->stats;

	if (c->measured[slot]) {
		switch (st) {
		case LG_RESP_OK:
			s->requests++;
			if (r->op == LG_OP_GET) {
				s->gets++;
				s->keys_asked += r->nkeys;
				s->hits += c->resp.hits;
			} else {
				s->sets++;
			}
			lg_hist_record(&s->hist, now > r->intended_ns ?
				       now - r->intended_ns : 0);
			break;
		case LG_RESP_ERROR:
			s->errors++;
			break;
		case LG_RESP_CORRUPT:
			s->corrupt++;
			break;
		case LG_RESP_STALE:
			s->stale++;
			break;
		default:
			s->bad++;
			break;
		}
	}
	if (st == LG_RESP_OK) {
		__atomic_store_n(&w->done_all, w->done_all + 1, __ATOMIC_RELAXED);
		if (r->op == LG_OP_GET)
			__atomic_store_n(&w->hits_all, w->hits_all + c->resp.hits,
					 __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&w->errs_all, w->errs_all + 1, __ATOMIC_RELAXED);
		if (st != LG_RESP_ERROR)
			w->last_bad = c->resp.why;
	}
	verify_set_done(c, r, st == LG_RESP_OK);
	slot_free(c, slot, now);
	lg_resp_reset(&c->resp);
}

size_t
lg_conn_input(struct lg_conn *c, const char *data, size_t len, uint64_t now)
{
	size_t used = 0;

	while (used < len) {
		size_t n = 0;
		enum lg_resp_status st;
		uint64_t checked;

		if (c->outstanding == 0) {
			c->resp.why = "bytes with no request outstanding";
			c->w->last_bad = c->resp.why;
			c->w->stats.bad++;
			c->dead = true;
			return len;
		}
		checked = c->resp.values_checked;
		st = lg_resp_feed(&c->resp, &c->w->run->wl, &c->reqs[c->head],
				  data + used, len - used, &n);
		if (c->measured[c->head])
			c->w->stats.values_checked += c->resp.values_checked - checked;
		used += n;
		if (st == LG_RESP_MORE)
			break;
		complete(c, c->head, st, now);
		if (st == LG_RESP_BAD) {
			c->dead = true;
			return len;
		}
	}
	return used;
}

void
lg_conn_udp_input(struct lg_conn *c, const uint8_t *data, size_t len, uint64_t now)
{
	struct lg_udp_hdr h;
	unsigned depth = c->w->run->depth;

	if (lg_udp_hdr_read(data, len, &h) < 0)
		goto bad;
	for (unsigned slot = 0; slot < depth && c->outstanding; slot++) {
		size_t n = 0;
		enum lg_resp_status st;
		uint64_t checked;

		if (c->pending[slot] != LG_SLOT_PENDING ||
		    c->reqs[slot].udp_id != h.req_id)
			continue;
		if (h.seq != 0 || h.total != 1) {
			/* Multi-datagram answers are not reassembled: the
			 * options keep values small enough for one. */
			c->resp.why = "UDP answer spans several datagrams";
			complete(c, slot, LG_RESP_BAD, now);
			return;
		}
		lg_resp_reset(&c->resp);
		checked = c->resp.values_checked;
		st = lg_resp_feed(&c->resp, &c->w->run->wl, &c->reqs[slot],
				  (const char *)data + 8, len - 8, &n);
		if (c->measured[slot])
			c->w->stats.values_checked += c->resp.values_checked - checked;
		if (st == LG_RESP_MORE || n != len - 8) {
			c->resp.why = "UDP datagram is not one whole answer";
			st = LG_RESP_BAD;
		}
		complete(c, slot, st, now);
		return;
	}
	return; /* an answer to a request already given up on */
bad:
	c->w->stats.bad++;
}

void
lg_conn_udp_expire(struct lg_conn *c, uint64_t now)
{
	struct lg_worker *w = c->w;
	const struct lg_run *run = w->run;
	uint64_t next = UINT64_MAX;

	if (now < c->udp_expire_ns || c->outstanding == 0)
		return;
	for (unsigned slot = 0; slot < run->depth; slot++) {
		struct lg_req *r = &c->reqs[slot];

		if (c->pending[slot] != LG_SLOT_PENDING)
			continue;
		if (now - r->sent_ns <= run->udp_timeout_ns || now < r->sent_ns) {
			if (r->sent_ns + run->udp_timeout_ns < next)
				next = r->sent_ns + run->udp_timeout_ns;
			continue;
		}
		if (r->preload) {
			if (r->tries < LG_PRELOAD_TRIES) {
				c->pending[slot] = LG_SLOT_RESEND;
				c->resend++;
				continue;
			}
			w->pre_failed++;
			w->last_bad = "a UDP preload set was never answered";
			verify_set_done(c, r, false);
			slot_free(c, slot, now);
			continue;
		}
		if (c->measured[slot]) {
			/* Unanswered is not faster than answered late: the
			 * percentiles see it at its timeout. */
			w->stats.lost++;
			lg_hist_record(&w->stats.hist, r->sent_ns + run->udp_timeout_ns -
				       (r->intended_ns < r->sent_ns ? r->intended_ns :
					r->sent_ns));
		}
		verify_set_done(c, r, false);
		slot_free(c, slot, now);
	}
	c->udp_expire_ns = next;
}

void
lg_conn_lost(struct lg_conn *c, uint64_t now)
{
	struct lg_worker *w = c->w;
	unsigned depth = w->run->depth;

	if (lg_phase_get(w->run) >= LG_PHASE_DRAIN) {
		count_unsent_at_drain(c);
	} else {
		/* Lost while running: its arrivals stop here (it counts in
		 * conn_failed), and leave the worker's backlog. */
		c->drain_counted = true;
		w->backlog -= c->backlog;
		c->backlog = 0;
	}
	if (c->prepared && !c->prepared_resend)
		verify_set_done(c, &c->reqs[c->prep_slot], false);
	for (unsigned slot = 0; slot < depth; slot++) {
		const struct lg_req *r = &c->reqs[slot];

		if (c->pending[slot] && c->measured[slot]) {
			w->stats.lost++;
			lg_hist_record(&w->stats.hist, now > r->intended_ns ?
				       now - r->intended_ns : 0);
		}
		if (c->pending[slot]) {
			verify_set_done(c, &c->reqs[slot], false);
			c->w->outstanding--;
		}
		c->pending[slot] = LG_SLOT_FREE;
	}
	c->count = 0;
	c->outstanding = 0;
	c->resend = 0;
	c->prepared = false;
	c->dead = true;
}
