/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The transport-independent half of the generator: per-lcore (or
 * per-thread) workers that own connections, decide when each connection
 * sends what (closed loop: whenever fewer than `depth` requests are
 * outstanding; open loop: at Poisson arrival times; replay: at the trace's
 * times), match responses to requests and record the results. The
 * transports (lib/net TCP and UDP, kernel sockets) only move bytes.
 */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "lg_hist.h"
#include "lg_proto.h"
#include "lg_trace.h"
#include "lg_workload.h"

enum lg_phase {
	LG_PHASE_PRELOAD,  /* every key set once; nothing recorded */
	LG_PHASE_WARMUP,   /* the workload runs; nothing recorded */
	LG_PHASE_MEASURE,  /* recorded */
	LG_PHASE_DRAIN,    /* no new requests; outstanding ones finish */
	LG_PHASE_STOP,     /* close everything and return */
};

/* Everything the workers read and nobody writes during the run. */
struct lg_run {
	struct lg_workload wl;
	unsigned workers;
	unsigned conns;           /* per worker */
	unsigned depth;           /* outstanding requests per connection */
	double rate;              /* open loop, requests/s over all workers; 0 = closed */
	double trace_speed;       /* replay: 0 = as fast as possible */
	unsigned check_every;     /* verify every Nth get's values; 0 = never */
	uint64_t late_ns;         /* a send this much after its time is late */
	uint64_t udp_timeout_ns;  /* a UDP request unanswered this long after its
				   * own send is lost (preload: sent again) */
	bool udp;                 /* answers come by request id, in any order */
	bool preload;
	int phase;                /* enum lg_phase, written by the main thread */
	uint64_t trace_start_ns;  /* replay: when time 0 of the trace is */
	uint64_t drain_ns;        /* when the drain began: the backlog is counted
				   * as of then (written before the phase) */
};

/* Results of one worker; only requests sent while measuring count. */
struct lg_stats {
	uint64_t requests;        /* answered (OK) */
	uint64_t gets, sets;
	uint64_t keys_asked;      /* keys in answered gets */
	uint64_t hits;
	uint64_t errors;          /* error replies */
	uint64_t corrupt;         /* answered with a wrong value */
	uint64_t stale;           /* --verify all: a value that cannot be current */
	uint64_t bad;             /* protocol violations (connection dropped) */
	uint64_t lost;            /* UDP timeouts, or outstanding on a dropped connection
				   * (each also a latency sample: see lg_conn_udp_expire) */
	uint64_t sent;            /* requests sent while measuring */
	uint64_t late;            /* open loop: sent later than late_ns after their
				   * time; generator_late + window_late */
	uint64_t generator_late;  /* ... and later than late_ns after the connection
				   * could send (due, a slot free): the generator
				   * itself fell behind its schedule */
	uint64_t window_late;     /* ... the others: when due, the connection's
				   * `depth` requests were in flight (or the
				   * transport had no room) */
	uint64_t unsent_at_drain; /* open loop and paced replay: due before the
				   * drain began but never sent */
	uint64_t backlog_peak;    /* open loop, measuring: the most requests due
				   * and unsent on the worker at once (max, not
				   * summed, over workers) */
	uint64_t values_checked;
	uint64_t conn_failed;     /* connections that failed or closed early */
	const char *why;          /* the last reason a connection failed, or NULL */
	struct lg_hist hist;      /* latency, ns, from the intended send time */
};

struct lg_worker {
	unsigned id;
	struct lg_run *run;
	uint64_t rng;
	uint32_t seq;             /* versions of this worker's sets */
	uint64_t check_ctr;
	struct lg_stats stats;
	/* Published for the progress line (relaxed atomics). */
	uint64_t done_all;        /* answered requests in any phase */
	uint64_t hits_all, errs_all;
	int preloaded;            /* 1 when this worker's preload share is answered
				   * (or given up on: pre_failed) */
	uint64_t pre_resent;      /* UDP preload sets sent again after a timeout */
	uint64_t pre_failed;      /* UDP preload sets unanswered after LG_PRELOAD_TRIES */
	unsigned outstanding;     /* requests awaiting answers, all connections */
	uint64_t backlog;         /* open loop: due and unsent, all connections (as
				   * of the last look at each) */
	bool trace_drain_counted; /* replay: unsent_at_drain counted */
	/* Preload: key ids [pre_next, pre_end). */
	uint64_t pre_next, pre_end;
	/* Replay: requests id, id + workers, ... of the trace. */
	size_t trace_next;
	int trace_done;
	const char *last_bad;     /* why the last connection was dropped */
};

/* A UDP preload set is sent at most this many times before the preload
 * gives up on it (datagrams are lost; a key never set would make every
 * measured get of it a miss). */
#define LG_PRELOAD_TRIES 10

enum lg_slot_state {
	LG_SLOT_FREE,
	LG_SLOT_PENDING,          /* sent, awaiting an answer */
	LG_SLOT_RESEND,           /* UDP preload set timed out: to be sent again */
};

struct lg_conn {
	struct lg_worker *w;
	struct lg_req *reqs;      /* depth slots: a ring over TCP; any free one over UDP */
	uint8_t *measured;        /* per slot: sent while measuring */
	uint8_t *pending;         /* per slot: enum lg_slot_state */
	unsigned head, count;     /* TCP: oldest slot, slots in use */
	unsigned outstanding;     /* slots not free (pending or to resend) */
	unsigned resend;          /* UDP: slots in LG_SLOT_RESEND */
	unsigned prep_slot;       /* where the prepared request is */
	uint64_t prep_pos;        /* the worker's pre_next or trace_next it took */
	uint64_t udp_expire_ns;   /* UDP: no pending request times out before this */
	uint64_t next_ns;         /* open loop: next arrival to send */
	bool scheduled;           /* open loop: next_ns set (from the warm-up on) */
	/* Open loop: the arrivals come due whether or not they can be sent.
	 * The sends walk the gap sequence from gap_rng; the horizon walks the
	 * same sequence (due_rng starts as a copy) up to now: due_ns is the
	 * first arrival not yet due, backlog those due and not yet sent. */
	uint64_t gap_rng, due_rng;
	uint64_t due_ns;
	uint64_t backlog;
	bool drain_counted;       /* the backlog went into unsent_at_drain */
	uint64_t window_open_ns;  /* when the connection could send again: `depth`
				   * in flight dropped below, or (kernel TCP) a
				   * full send buffer drained */
	bool prep_generator_late; /* the prepared request was prepared more than
				   * late_ns after the connection could send it */
	/* UDP request ids: the bits outside udp_id_mask name the flow among
	 * those sharing a source port (none over kernel sockets, where each
	 * connection has its own), the bits inside count; the next id is
	 * udp_id. 16 bits in all, so a late answer meets a newer request with
	 * its id only after 2^16 / (flows per port) sends on the flow. */
	uint16_t udp_id;
	uint16_t udp_id_mask;
	bool prepared;            /* reqs[prep_slot] holds the next request */
	bool prepared_preload;
	bool prepared_resend;     /* ... which is a UDP preload set sent again */
	struct lg_resp resp;
	bool dead;
};

void lg_worker_init(struct lg_worker *w, struct lg_run *run, unsigned id, uint64_t seed);
/* Allocates the connection's request ring (depth slots); -1 on no memory. */
int lg_conn_init(struct lg_conn *c, struct lg_worker *w, uint64_t now);
void lg_conn_free(struct lg_conn *c);

/* The next request this connection should send now, or NULL. The slot is
 * taken only by lg_conn_commit(); a transport that cannot send it (no
 * space) simply does not commit, and gets the same request next time. */
struct lg_req *lg_conn_next(struct lg_conn *c, uint64_t now);
void lg_conn_commit(struct lg_conn *c, uint64_t now);

/* TCP: bytes from the stream; returns how many were consumed. Sets
 * c->dead on a protocol violation. */
size_t lg_conn_input(struct lg_conn *c, const char *data, size_t len, uint64_t now);
/* UDP: one datagram (with its 8-byte frame header). */
void lg_conn_udp_input(struct lg_conn *c, const uint8_t *data, size_t len, uint64_t now);
/* UDP: give up on requests sent longer than the timeout ago (each on its
 * own clock; a preload set is sent again, up to LG_PRELOAD_TRIES times).
 * A measured one is lost, and a latency sample at its timeout (from its
 * intended send time: the timeout plus any wait before its send). */
void lg_conn_udp_expire(struct lg_conn *c, uint64_t now);
/* The connection is gone at `now`: its outstanding requests are lost, each
 * a latency sample at how long it waited. After the drain began, the
 * connection's backlog is counted too (if lg_conn_next did not yet). */
void lg_conn_lost(struct lg_conn *c, uint64_t now);

static inline int
lg_phase_get(const struct lg_run *r)
{
	return __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE);
}

/* Monotonic nanoseconds. */
uint64_t lg_now_ns(void);

void lg_stats_init(struct lg_stats *s);
void lg_stats_merge(struct lg_stats *dst, const struct lg_stats *src);

/* Open loop: a run whose generator-late sends are more than this share of
 * its sends measured the generator, not the server: it is invalid
 * (bench_report.py's GENERATOR_LATE_MAX_PERCENT says the same). */
#define LG_GENERATOR_LATE_MAX_PERCENT 1
bool lg_stats_generator_behind(const struct lg_stats *s);

#endif /* LG_SESSION_H */
