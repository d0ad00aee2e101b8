/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The timed run: create the engine, load every key from all threads
 * (warm-up), then release the threads together for the timed operations.
 * Engine counters are read between the phases, so lock and hit counts
 * cover the timed phase only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "shapes.h"
#include "keys.h"
#include "rng.h"
#include "zipf.h"
#ifdef SB_HAVE_SEG
#include "mrc/mrc.h"
#endif

/* How many operations run between two looks at the clock. */
#define SB_CLOCK_STRIDE 1024
/* Zipf ids are drawn before the timed phase into a per-thread stream of at
 * most this many entries (16 MiB), replayed cyclically: the sampler costs
 * two transcendental functions and a permutation lookup per draw (~60 ns),
 * which would otherwise be counted as engine time. */
#define SB_ZIPF_STREAM_MAX (1U << 22)

static cpu_set_t sb_allowed;
static int sb_cpu_list[CPU_SETSIZE];
static int sb_cpu_count;

/* Must run before rte_eal_init, which narrows the main thread's affinity
 * (and with it that of every thread created later) to the main lcore. */
void
sb_cpus_init(void)
{
	CPU_ZERO(&sb_allowed);
	sb_cpu_count = 0;
	if (sched_getaffinity(0, sizeof(sb_allowed), &sb_allowed) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &sb_allowed))
			sb_cpu_list[sb_cpu_count++] = c;
}

double
sb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
sb_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, resident;
	uint64_t rss = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) == 2)
		rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	fclose(f);
	return rss;
}

struct sb_shared {
	const struct sb_options *o;
	enum sb_engine_kind kind;
	struct engine *engine;
	const struct zipf *zipf;
	const uint32_t *rank_to_id; /* zipf: a fixed shuffle of the ids */
	unsigned round;
	pthread_mutex_t gate_lock; /* threads wait here until all exist */
	pthread_cond_t gate_cond;
	int gate_open;
	pthread_barrier_t warmed; /* every thread has loaded its keys */
	pthread_barrier_t go;     /* the main thread has read the counters */
	double deadline;          /* set by the main thread before "go" */
	volatile int abort_run;   /* a thread failed before the barrier */
	const struct sb_objects *obj; /* each key's size and TTL (--shape) */
	unsigned finished;        /* threads done with the timed phase (__atomic) */
	int not_started;          /* thread creation failed: nobody runs */
};

struct sb_thread {
	pthread_t tid;
	unsigned idx;
	struct sb_shared *sh;
	struct sb_thread_result *res;
	int failed;
};

static void
sb_pin(struct sb_thread *t)
{
	const struct sb_options *o = t->sh->o;

	t->res->cpu = -1;
	if (sb_cpu_count == 0)
		return;
	if (o->pin) {
		cpu_set_t one;
		int cpu = sb_cpu_list[t->idx % (unsigned)sb_cpu_count];

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0)
			t->res->cpu = cpu;
	} else {
		/* Undo the EAL's narrowing: let the scheduler place us. */
		pthread_setaffinity_np(pthread_self(), sizeof(sb_allowed), &sb_allowed);
	}
}

/* Loads this thread's slice of ids [lo, hi). */
static void
sb_warm(struct sb_thread *t, struct engine_worker *w, char *val,
	uint64_t *rng)
{
	const struct sb_options *o = t->sh->o;
	uint64_t n = o->keys, per = n / o->threads, extra = n % o->threads;
	uint64_t lo = t->idx * per + (t->idx < extra ? t->idx : extra);
	uint64_t hi = lo + per + (t->idx < extra ? 1 : 0);
	unsigned width = o->key_format == SB_KEY_PADDED ? o->key_size : 0;
	char key[ENGINE_KEY_MAX + SB_ID_DIGITS_MAX];

	const struct sb_objects *obj = t->sh->obj;

	for (uint64_t id = lo + 1; id <= hi; id++) {
		size_t klen = sb_key_format(id, key, width);
		uint32_t vlen = obj->size ? obj->size[id - 1] : sb_value_size(o, rng);
		int64_t exptime = obj->ttl ? obj->ttl[id - 1] : o->ttl;
		int rc = engine_store(w, ENGINE_SET, key, klen, val, vlen, 0, exptime, 0,
				      NULL);

		if (rc == ENGINE_OK)
			t->res->warm_stored++;
		else
			t->res->warm_failed++;
	}
}

/* What the timed loop generates for one operation. */
enum sb_op { SB_OP_GET, SB_OP_SET, SB_OP_DELETE };

/* One thread's workload generator. */
struct sb_gen {
	const struct sb_options *o;
	const struct sb_objects *obj;
	uint32_t *stream;             /* zipf: pre-drawn ids; NULL: uniform */
	uint64_t stream_len, pos;
	uint64_t get_below, set_below; /* operation thresholds on 32 bits */
	unsigned width;               /* padded key width, 0 = plain */
};

/* For zipf, draws min(ops, SB_ZIPF_STREAM_MAX) ids. Returns -1 when out of
 * memory. */
static int
sb_gen_init(struct sb_gen *g, const struct sb_options *o, const struct sb_objects *obj,
	    const struct zipf *z, const uint32_t *rank_to_id,
	    uint64_t ops, uint64_t *rng)
{
	memset(g, 0, sizeof(*g));
	g->o = o;
	g->obj = obj;
	g->get_below = ((uint64_t)o->pct_get << 32) / 100;
	g->set_below = ((uint64_t)(o->pct_get + o->pct_set) << 32) / 100;
	g->width = o->key_format == SB_KEY_PADDED ? o->key_size : 0;
	if (o->dist != SB_DIST_ZIPF)
		return 0;
	g->stream_len = ops < SB_ZIPF_STREAM_MAX ? ops : SB_ZIPF_STREAM_MAX;
	if (g->stream_len == 0)
		g->stream_len = 1;
	g->stream = malloc(g->stream_len * sizeof(*g->stream));
	if (!g->stream)
		return -1;
	for (uint64_t i = 0; i < g->stream_len; i++)
		g->stream[i] = rank_to_id[zipf_sample(z, rng) - 1];
	return 0;
}

static void
sb_gen_fini(struct sb_gen *g)
{
	free(g->stream);
	g->stream = NULL;
}

static inline enum sb_op
sb_gen_next(struct sb_gen *g, uint64_t *rng,
	    char *key, size_t *klen, uint32_t *vlen, int64_t *exptime)
{
	uint64_t r = rng_next(rng);
	uint32_t op = (uint32_t)r;
	uint64_t id;

	if (g->stream) {
		id = g->stream[g->pos];
		if (++g->pos == g->stream_len)
			g->pos = 0;
	} else {
		id = rng_below32((uint32_t)(r >> 32), g->o->keys) + 1;
	}
	*klen = sb_key_format(id, key, g->width);
	if (op < g->get_below)
		return SB_OP_GET;
	if (op < g->set_below) {
		*vlen = g->obj->size ? g->obj->size[id - 1] : sb_value_size(g->o, rng);
		*exptime = g->obj->ttl ? g->obj->ttl[id - 1] : g->o->ttl;
		return SB_OP_SET;
	}
	return SB_OP_DELETE;
}

static uint64_t
sb_thread_ops(const struct sb_options *o, unsigned idx)
{
	return o->ops / o->threads + (idx < o->ops % o->threads ? 1 : 0);
}

/* Gets queued for one engine_get_batch() (--batch). Every value is copied
 * into the same buffer, as single gets copy theirs. */
struct sb_batch {
	unsigned n;
	struct engine_key keys[SB_BATCH_MAX];
	char key[SB_BATCH_MAX][ENGINE_KEY_MAX + SB_ID_DIGITS_MAX];
	char *buf;
	uint32_t cap;
	uint64_t hits, errors;
};

static void *
sb_batch_value(void *arg, unsigned i, const struct engine_item *it)
{
	struct sb_batch *b = arg;

	(void)i;
	return it->vlen <= b->cap ? b->buf : NULL;
}

static bool
sb_batch_done(void *arg, unsigned i, enum engine_status st, const struct engine_item *it)
{
	struct sb_batch *b = arg;

	(void)i;
	(void)it;
	if (st == ENGINE_OK)
		b->hits++;
	else if (st != ENGINE_MISS)
		b->errors++;
	return true;
}

static void
sb_batch_run(struct engine_worker *w, struct sb_batch *b)
{
	const struct engine_get_sink sink = {
		.value_buf = sb_batch_value,
		.done = sb_batch_done,
		.arg = b,
	};

	if (b->n > 0)
		engine_get_batch(w, b->keys, b->n, &sink);
	b->n = 0;
}

/* noinline: a profiler can then count the timed phase alone
 * (valgrind --tool=callgrind --toggle-collect=sb_timed), without the
 * warm-up's sets. */
static __attribute__((noinline)) void
sb_timed(struct sb_thread *t, struct sb_gen *g,
	 struct engine_worker *w, char *val, char *buf, uint64_t *rng)
{
	const struct sb_shared *sh = t->sh;
	const struct sb_options *o = sh->o;
	struct sb_thread_result *res = t->res;
	uint64_t n = sb_thread_ops(o, t->idx);
	double deadline = sh->deadline;
	uint64_t gets = 0, sets = 0, dels = 0, hits = 0, set_failed = 0;
	uint64_t del_hits = 0, errors = 0, i;
	char key[ENGINE_KEY_MAX + SB_ID_DIGITS_MAX];
	struct engine_item it;
	/* one per thread, off its stack (17 KiB) */
	static __thread struct sb_batch batch;

	batch.n = 0;
	batch.buf = buf;
	batch.cap = o->vmax;
	batch.hits = batch.errors = 0;
	res->start = sb_now();
	for (i = 0; i < n; i++) {
		size_t klen;
		uint32_t vlen = 0;
		int64_t exptime = 0;
		char *kp = o->batch > 1 ? batch.key[batch.n] : key;
		enum sb_op op;
		int rc;

		if ((i & (SB_CLOCK_STRIDE - 1)) == 0 && i && sb_now() > deadline)
			break;
		op = sb_gen_next(g, rng, kp, &klen, &vlen, &exptime);
		if (o->batch > 1) {
			if (op == SB_OP_GET) {
				gets++;
				batch.keys[batch.n].key = kp;
				batch.keys[batch.n].klen = klen;
				if (++batch.n == o->batch)
					sb_batch_run(w, &batch);
				continue;
			}
			/* the gets before a write happen before it */
			memcpy(key, kp, klen);
			sb_batch_run(w, &batch);
		}
		switch (op) {
		case SB_OP_GET:
			gets++;
			rc = engine_get(w, key, klen, ENGINE_NO_TOUCH, buf, o->vmax, &it);
			if (rc == ENGINE_OK)
				hits++;
			else if (rc != ENGINE_MISS)
				errors++;
			break;
		case SB_OP_SET:
			sets++;
			rc = engine_store(w, ENGINE_SET, key, klen, val, vlen, 0, exptime, 0,
					  NULL);
			if (rc != ENGINE_OK)
				set_failed++;
			break;
		default:
			dels++;
			rc = engine_delete(w, key, klen, 0);
			if (rc == ENGINE_OK)
				del_hits++;
			else if (rc != ENGINE_MISS)
				errors++;
			break;
		}
	}
	sb_batch_run(w, &batch);
	res->end = sb_now();
	hits += batch.hits;
	errors += batch.errors;
	res->ops = i;
	res->gets = gets;
	res->sets = sets;
	res->deletes = dels;
	res->get_hits = hits;
	res->set_failed = set_failed;
	res->delete_hits = del_hits;
	res->errors = errors;
}

static void *
sb_thread_main(void *arg)
{
	struct sb_thread *t = arg;
	struct sb_shared *sh = t->sh;
	const struct sb_options *o = sh->o;
	struct engine_worker *w = NULL;
	struct sb_gen g = {0};
	uint64_t rng = rng_seed(o->seed, (uint64_t)sh->round * 1000 + t->idx);
	size_t vcap = o->vmax ? o->vmax : 1;
	char *val = malloc(vcap), *buf = malloc(vcap);
	bool entered = false;

	pthread_mutex_lock(&sh->gate_lock);
	while (!sh->gate_open)
		pthread_cond_wait(&sh->gate_cond, &sh->gate_lock);
	pthread_mutex_unlock(&sh->gate_lock);
	if (sh->not_started) {
		free(val);
		free(buf);
		return NULL;
	}
	sb_pin(t);
	if (!val || !buf) {
		fprintf(stderr, "segcached-storage-bench: out of memory\n");
		goto failed;
	}
	sb_value_fill(val, o->vmax, 0);
	if (sb_thread_enter(sh->kind) != 0)
		goto failed;
	entered = true;
	w = engine_worker_create(sh->engine);
	if (!w) {
		fprintf(stderr, "segcached-storage-bench: %s: worker_create failed\n",
			sb_engine_name(sh->kind));
		goto failed;
	}
	t->res->warm_seconds = sb_now();
	sb_warm(t, w, val, &rng);
	t->res->warm_seconds = sb_now() - t->res->warm_seconds;
	if (sb_gen_init(&g, o, sh->obj, sh->zipf, sh->rank_to_id, sb_thread_ops(o, t->idx),
			&rng) != 0) {
		fprintf(stderr, "segcached-storage-bench: out of memory for the key stream\n");
		engine_worker_destroy(w);
		goto failed;
	}
	pthread_barrier_wait(&sh->warmed);
	pthread_barrier_wait(&sh->go);
	if (!sh->abort_run)
		sb_timed(t, &g, w, val, buf, &rng);
	__atomic_add_fetch(&sh->finished, 1, __ATOMIC_RELEASE);
	sb_gen_fini(&g);
	engine_worker_destroy(w);
	sb_thread_leave(sh->kind);
	free(val);
	free(buf);
	return NULL;

failed:
	/* Still meet the others at both barriers, so nobody waits forever. */
	t->failed = 1;
	sh->abort_run = 1;
	pthread_barrier_wait(&sh->warmed);
	pthread_barrier_wait(&sh->go);
	__atomic_add_fetch(&sh->finished, 1, __ATOMIC_RELEASE);
	if (entered)
		sb_thread_leave(sh->kind);
	free(val);
	free(buf);
	return NULL;
}

/* The server's control thread while the timed phase runs: the engine's
 * expiry (proactive expiration, then reclaim ahead) once a second, as
 * app/segcached/control.c calls it, until every thread is done. */
static void
sb_control(struct sb_shared *sh, unsigned threads)
{
	double next = sb_now() + 1.0;

	while (__atomic_load_n(&sh->finished, __ATOMIC_ACQUIRE) < threads) {
		const struct timespec tick = { 0, 20 * 1000 * 1000 };

		nanosleep(&tick, NULL);
		if (sb_now() >= next) {
			engine_expire(sh->engine);
			next += 1.0;
		}
	}
}

/* A fixed random permutation of 1..n, so that popular zipf ranks land on
 * ids spread over the whole key space (and over the warm-up order). */
static uint32_t *
sb_shuffle_ids(uint64_t n, uint64_t seed)
{
	uint32_t *p = malloc(n * sizeof(*p));
	uint64_t rng = rng_seed(seed, 0xfeed);

	if (!p)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		p[i] = (uint32_t)(i + 1);
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = rng_next(&rng) % (i + 1);
		uint32_t tmp = p[i];

		p[i] = p[j];
		p[j] = tmp;
	}
	return p;
}

static void
sb_sum(struct sb_run_result *r)
{
	double first = 0, last = 0;

	for (unsigned i = 0; i < r->threads; i++) {
		const struct sb_thread_result *t = &r->thread[i];

		r->ops += t->ops;
		r->gets += t->gets;
		r->sets += t->sets;
		r->deletes += t->deletes;
		r->get_hits += t->get_hits;
		r->set_failed += t->set_failed;
		r->delete_hits += t->delete_hits;
		r->errors += t->errors;
		r->warm_stored += t->warm_stored;
		r->warm_failed += t->warm_failed;
		if (t->warm_seconds > r->warm_seconds)
			r->warm_seconds = t->warm_seconds;
		if (i == 0 || t->start < first)
			first = t->start;
		if (i == 0 || t->end > last)
			last = t->end;
	}
	r->seconds = last - first;
}

int
sb_run(const struct sb_options *o, enum sb_engine_kind kind,
       unsigned round, struct sb_run_result *r)
{
	struct sb_shared sh;
	struct sb_thread *threads = NULL;
	struct zipf z;
	uint32_t *perm = NULL;
	struct sb_objects obj = { NULL, NULL };
	char err[512] = "";
	unsigned started = 0;
	int rc = -1;
#ifdef SB_HAVE_SEG
	struct mrc *mrc = NULL;
#endif

	memset(r, 0, sizeof(*r));
	memset(&sh, 0, sizeof(sh));
	r->kind = kind;
	r->round = round;
	r->threads = o->threads;
	r->ops_requested = o->ops;
	r->thread = calloc(o->threads, sizeof(*r->thread));
	threads = calloc(o->threads, sizeof(*threads));
	if (!r->thread || !threads) {
		fprintf(stderr, "segcached-storage-bench: out of memory\n");
		goto out;
	}
	if (o->dist == SB_DIST_ZIPF) {
		if (zipf_init(&z, o->keys, o->theta) != 0) {
			fprintf(stderr, "segcached-storage-bench: bad zipf parameters\n");
			goto out;
		}
		perm = sb_shuffle_ids(o->keys, o->seed);
		if (!perm) {
			fprintf(stderr, "segcached-storage-bench: out of memory for %" PRIu64
				" key ids\n", o->keys);
			goto out;
		}
	}
	if (sb_objects_init(&obj, o) != 0) {
		fprintf(stderr, "segcached-storage-bench: out of memory for the shape's keys\n");
		goto out;
	}
	sh.obj = &obj;
	sh.o = o;
	sh.kind = kind;
	sh.zipf = &z;
	sh.rank_to_id = perm;
	sh.round = round;

	r->rss_created = sb_rss_bytes();
	sh.engine = sb_engine_create(kind, &o->ecfg, err, sizeof(err));
	if (!sh.engine) {
		fprintf(stderr, "segcached-storage-bench: %s: %s\n",
			sb_engine_name(kind), err[0] ? err : "create failed");
		goto out;
	}
	engine_stats(sh.engine, &r->created);
#ifdef SB_HAVE_SEG
	if (o->mrc && kind == SB_ENGINE_SEG) {
		struct mrc_config mc = { .memory = o->ecfg.memory,
					 .seg_size = (uint32_t)r->created.seg_size,
					 .nseg = (uint32_t)r->created.seg_total,
					 .eviction = o->ecfg.eviction };

		mrc = mrc_create(&mc, err, sizeof(err));
		if (!mrc) {
			fprintf(stderr, "segcached-storage-bench: --mrc: %s\n", err);
			engine_destroy(sh.engine);
			goto out;
		}
		mrc_attach(mrc, sh.engine);
	}
#endif

	pthread_mutex_init(&sh.gate_lock, NULL);
	pthread_cond_init(&sh.gate_cond, NULL);
	pthread_barrier_init(&sh.warmed, NULL, o->threads + 1);
	pthread_barrier_init(&sh.go, NULL, o->threads + 1);
	for (unsigned i = 0; i < o->threads; i++) {
		threads[i].idx = i;
		threads[i].sh = &sh;
		threads[i].res = &r->thread[i];
		errno = pthread_create(&threads[i].tid, NULL, sb_thread_main,
				       &threads[i]);
		if (errno) {
			perror("segcached-storage-bench: pthread_create");
			sh.not_started = 1;
			break;
		}
		started++;
	}
	/* The barriers count every thread, so they are used only when all
	 * threads exist; otherwise the gate sends the started ones home. */
	pthread_mutex_lock(&sh.gate_lock);
	sh.gate_open = 1;
	pthread_cond_broadcast(&sh.gate_cond);
	pthread_mutex_unlock(&sh.gate_lock);
	if (!sh.not_started) {
		pthread_barrier_wait(&sh.warmed);
		engine_stats(sh.engine, &r->warmed);
		r->rss_warmed = sb_rss_bytes();
		sh.deadline = sb_now() + o->duration;
		pthread_barrier_wait(&sh.go);
		sb_control(&sh, started);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i].tid, NULL);
	pthread_barrier_destroy(&sh.warmed);
	pthread_barrier_destroy(&sh.go);
	pthread_cond_destroy(&sh.gate_cond);
	pthread_mutex_destroy(&sh.gate_lock);
	engine_stats(sh.engine, &r->done);
#ifdef SB_HAVE_SEG
	if (mrc) {
		struct mrc_point pts[MRC_SIZES];
		struct mrc_info info;

		mrc_curve(mrc, pts, &info);
		fprintf(stderr, "mrc: sample rate %.5f, %u keys, %llu requests sampled\n",
			info.rate, info.keys, (unsigned long long)info.requests);
		engine_attach_sampler(sh.engine, NULL, NULL, 0);
		mrc_destroy(mrc);
	}
#endif
	engine_destroy(sh.engine);

	rc = sh.not_started ? -1 : 0;
	for (unsigned i = 0; i < started; i++)
		if (threads[i].failed)
			rc = -1;
	sb_sum(r);
	r->time_limited = r->ops < r->ops_requested;
out:
	sb_objects_fini(&obj);
	free(perm);
	free(threads);
	return rc;
}

void
sb_run_free(struct sb_run_result *r)
{
	free(r->thread);
	r->thread = NULL;
}

double
sb_generator_ns(const struct sb_options *o, uint64_t ops)
{
	struct zipf z;
	uint32_t *perm = NULL;
	struct sb_gen g;
	uint64_t rng = rng_seed(o->seed, 0xca1);
	uint64_t sink = 0;
	char key[ENGINE_KEY_MAX + SB_ID_DIGITS_MAX];
	double t0, t1;

	if (o->dist == SB_DIST_ZIPF) {
		if (zipf_init(&z, o->keys, o->theta) != 0)
			return -1;
		perm = sb_shuffle_ids(o->keys, o->seed);
		if (!perm)
			return -1;
	}
	struct sb_objects obj;

	if (sb_objects_init(&obj, o) != 0) {
		free(perm);
		return -1;
	}
	if (sb_gen_init(&g, o, &obj, &z, perm, ops, &rng) != 0) {
		sb_objects_fini(&obj);
		free(perm);
		return -1;
	}
	t0 = sb_now();
	for (uint64_t i = 0; i < ops; i++) {
		size_t klen;
		uint32_t vlen = 0;
		int64_t exptime = 0;
		enum sb_op op = sb_gen_next(&g, &rng, key, &klen, &vlen, &exptime);

		/* Consume what was generated, as an engine would. */
		sink += (uint64_t)op + klen + vlen + (uint64_t)exptime +
			(unsigned char)key[klen - 1];
	}
	t1 = sb_now();
	sb_gen_fini(&g);
	sb_objects_fini(&obj);
	free(perm);
	__asm__ volatile("" : : "r"(sink));
	return (t1 - t0) * 1e9 / (double)ops;
}
