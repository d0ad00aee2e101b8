/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The posix stack behind posix_stack_ops: set-up, the worker threads and
 * their event loop, stats.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_memory.h>

#include "engine/engine.h"

RTE_LOG_REGISTER(posix_logtype, segcached.net.posix, NOTICE);

/* File descriptors besides client connections: sockets, epoll and the
 * inbox pipe per worker, EAL and logs. */
#define POSIX_FD_HEADROOM 64

/* memcached raises RLIMIT_NOFILE to what -c needs; so do we. */
static int
raise_fd_limit(const struct posix_stack *s, char *err, size_t errlen)
{
	rlim_t need = (rlim_t)s->cfg.max_conns + STACK_ADMIN_CONNS + POSIX_FD_HEADROOM +
		      (rlim_t)s->nworkers * 3 + POSIX_SOCKETS_MAX;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max < need) {
		struct rlimit want = { need, need };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return 0;
		util_fail(err, errlen,
			   "--max-conns %u needs %llu open files but the hard limit is %llu: "
			   "lower -c or raise the limit (ulimit -Hn, or LimitNOFILE= in a "
			   "systemd unit)",
			   s->cfg.max_conns, (unsigned long long)need,
			   (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		util_fail(err, errlen, "setrlimit(RLIMIT_NOFILE, %llu): %s",
			   (unsigned long long)need, strerror(errno));
		return -1;
	}
	return 0;
}

/* Adds the shared listening sockets to a worker's epoll set. EPOLLEXCLUSIVE:
 * a new connection or datagram wakes one worker, not all of them. */
static int
add_shared_sockets(struct posix_worker *w, bool udp_too)
{
	struct posix_stack *s = w->stack;
	unsigned i;

	for (i = 0; i < s->nsockets; i++) {
		struct posix_socket *ps = &s->sockets[i];

		if (ps->p.kind == POSIX_POLL_UDP && !udp_too)
			continue;
		if (posix_epoll_add(w->epfd, ps->fd, EPOLLIN | EPOLLEXCLUSIVE, ps) < 0)
			return -1;
	}
	return 0;
}

static void *
worker_main(void *arg)
{
	struct posix_worker *w = arg;
	struct posix_stack *s = w->stack;
	struct epoll_event evs[POSIX_EVENTS_BURST];

	/* Named before it serves anything, so that whoever sees a reply from
	 * it finds it by name in /proc. */
	pthread_setname_np(pthread_self(), w->name);
	while (!atomic_load_explicit(&s->stopping, memory_order_acquire)) {
		/* --request-timeout and --idle-timeout deadlines first:
		 * resets and closes, and the wait */
		int timeout = posix_timeout_min(posix_tcp_expire(w),
						posix_tcp_idle_expire(w));

		/* -R: connections that yielded have their turn, and the wait
		 * does not wait while some yielded again */
		timeout = posix_timeout_min(timeout, posix_yield_run(w));
		int n, i;

		if (w->accept_paused) {
			uint64_t now = posix_now_ms();

			if (now >= w->accept_resume_ms) {
				posix_accept_resume(w);
			} else if (timeout < 0 || (int)(w->accept_resume_ms - now) < timeout) {
				timeout = (int)(w->accept_resume_ms - now);
			}
		}
		n = epoll_wait(w->epfd, evs, POSIX_EVENTS_BURST, timeout);
		/* --idle-timeout: one clock read for every connection this
		 * pass gives bytes to */
		if (s->idle_timeout_ms != 0 || s->admin_idle_timeout_ms != 0)
			w->now_ms = posix_now_ms();
		if (n < 0) {
			if (errno == EINTR)
				continue;
			POSIX_LOG(ERR, "worker %u: epoll_wait: %s", w->id,
				  strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			struct posix_pollable *p = evs[i].data.ptr;

			switch (p->kind) {
			case POSIX_POLL_INBOX:
				posix_handoff_receive(w);
				break;
			case POSIX_POLL_LISTEN:
				posix_accept(w, (struct posix_socket *)p);
				break;
			case POSIX_POLL_UDP:
				posix_udp_readable(w, (struct posix_socket *)p);
				break;
			case POSIX_POLL_CONN:
				posix_tcp_event((struct posix_conn *)p,
						evs[i].events);
				break;
			}
		}
	}
	posix_tcp_close_all(w);
	return NULL;
}

static int
worker_init(struct posix_stack *s, struct posix_worker *w, unsigned id,
	    char *err, size_t errlen)
{
	w->stack = s;
	w->id = id;
	snprintf(w->name, sizeof(w->name), "posix-w%u", id);
	w->epfd = -1;
	w->inbox_rd = w->inbox_wr = -1;
	pthread_mutex_init(&w->open_lock, NULL);
	TAILQ_INIT(&w->timed);
	TAILQ_INIT(&w->idle);
	TAILQ_INIT(&w->admin_idle);
	TAILQ_INIT(&w->yielded);

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0 || posix_inbox_open(w) < 0) {
		util_fail(err, errlen, "epoll/pipe: %s", strerror(errno));
		return -1;
	}
	if (add_shared_sockets(w, s->cfg.udp_port != 0) < 0) {
		util_fail(err, errlen, "epoll_ctl: %s", strerror(errno));
		return -1;
	}
	w->ew = engine_worker_create(s->cfg.engine);
	if (w->ew == NULL) {
		util_fail(err, errlen,
			   "the engine refused worker %u (too many workers?)", id);
		return -1;
	}
	w->in = malloc(POSIX_IN_WORKER);
	if (w->in == NULL) {
		util_fail(err, errlen, "out of memory for worker %u", id);
		return -1;
	}
	if (s->cfg.udp_port != 0) {
		w->udp_buf = malloc(POSIX_UDP_MAX);
		w->udp_cmd = cmd_conn_create(s->cfg.cmd, w->ew, true);
		if (w->udp_buf == NULL || w->udp_cmd == NULL ||
		    proto_out_init(&w->out, 0, s->out_limit) < 0) {
			util_fail(err, errlen, "out of memory for UDP");
			return -1;
		}
	}
	return 0;
}

static void
worker_fini(struct posix_worker *w)
{
	posix_tcp_free_all(w);
	if (w->udp_cmd)
		cmd_conn_destroy(w->udp_cmd);
	free(w->udp_buf);
	free(w->in);
	if (w->out.data)
		proto_out_fini(&w->out);
	if (w->stack != NULL)
		posix_inbox_close(w);
	engine_worker_destroy(w->ew);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->stack != NULL)
		pthread_mutex_destroy(&w->open_lock);
	memset(w, 0, sizeof(*w));
	w->epfd = w->inbox_rd = w->inbox_wr = -1;
}

static struct posix_stack *
posix_of(struct stack *s)
{
	return (struct posix_stack *)s;
}

static const struct posix_stack *
posix_of_const(const struct stack *s)
{
	return (const struct posix_stack *)s;
}

static void posix_stop(struct stack *st);
static void posix_destroy(struct stack *st);

/* Binds the sockets and prepares the workers (epoll instances, engine
 * workers, per-worker buffers); no thread runs yet. Raises the open file
 * limit to what max_conns needs. Its part of cfg: the shared settings and
 * cfg->posix; the listen string, --allow and the CPU sets are copied. */
static struct stack *
posix_create(const struct stack_config *cfg, char *err, size_t errlen, bool *bind_failed)
{
	const struct stack_posix_config *pc = &cfg->posix;
	struct posix_stack *s;
	unsigned i;

	*bind_failed = false;
	if (pc->threads == 0 || cfg->engine == NULL || cfg->cmd == NULL ||
	    pc->listen == NULL ||
	    (cfg->tcp_port == 0 && cfg->udp_port == 0 && pc->unix_path == NULL)) {
		util_fail(err, errlen, "posix stack: incomplete configuration");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		util_fail(err, errlen, "out of memory");
		return NULL;
	}
	s->base.ops = &posix_stack_ops;
	s->cfg = *cfg;
	pthread_mutex_init(&s->sources_lock, NULL);
	s->request_timeout_ms = (uint64_t)cfg->request_timeout_s * 1000;
	s->idle_timeout_ms = (uint64_t)cfg->idle_timeout_s * 1000;
	s->admin_idle_timeout_ms = (uint64_t)cfg->admin_idle_timeout_s * 1000;
	if (cfg->n_allow > STACK_ALLOW_MAX) {
		util_fail(err, errlen, "--allow: at most %d networks", STACK_ALLOW_MAX);
		free(s);
		return NULL;
	}
	for (i = 0; i < cfg->n_allow; i++)
		s->allow[i] = cfg->allow[i];
	s->cfg.allow = NULL; /* the caller's array may go; s->allow is the copy */
	snprintf(s->listen, sizeof(s->listen), "%s", pc->listen);
	s->cfg.posix.listen = s->listen;
	if (pc->unix_path != NULL) {
		snprintf(s->unix_path, sizeof(s->unix_path), "%s", pc->unix_path);
		s->cfg.posix.unix_path = s->unix_path;
	}
	if (s->cfg.posix.backlog <= 0)
		s->cfg.posix.backlog = 1024;
	s->nworkers = pc->threads;
	/* The largest request: a storage command line and an item's data. */
	s->in_max = cmd_session_in_max(cfg->cmd->item_max);
	/* Output: the backpressure bound plus the largest single reply. */
	s->out_limit = cmd_session_out_limit(cfg->cmd->item_max);
	/* What all connections may hold beyond that, together: a quarter
	 * for output, the rest for input (posix_buffers.c). */
	s->buffer_memory = pc->buffer_memory == STACK_BUFFER_MEMORY_DEFAULT ?
				   posix_buffer_memory_default(cfg->max_conns, cfg->cmd->item_max) :
				   pc->buffer_memory;
	if (s->buffer_memory != 0) {
		s->out_budget.max = RTE_MAX(s->buffer_memory / POSIX_BUDGET_OUT_SHARE, (size_t)1);
		s->in_budget.max = RTE_MAX(s->buffer_memory - s->out_budget.max, (size_t)1);
	}

	if (raise_fd_limit(s, err, errlen) < 0)
		goto fail;
	if (cfg->max_conns_per_source != 0) {
		/* never more sources than connections */
		s->sources = stack_sources_create(cfg->max_conns, err, errlen);
		if (s->sources == NULL)
			goto fail;
	}
	if (posix_sockets_open(s, err, errlen, bind_failed) < 0)
		goto fail;
	s->workers = calloc(s->nworkers, sizeof(*s->workers));
	s->engine_workers = calloc(s->nworkers, sizeof(*s->engine_workers));
	if (s->workers == NULL || s->engine_workers == NULL) {
		util_fail(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < s->nworkers; i++)
		s->workers[i].epfd = s->workers[i].inbox_rd = s->workers[i].inbox_wr = -1;
	if (pc->ncpus > 0) {
		s->cpus = malloc(sizeof(*s->cpus) * pc->ncpus);
		if (s->cpus == NULL) {
			util_fail(err, errlen, "out of memory");
			goto fail;
		}
		memcpy(s->cpus, pc->cpus, sizeof(*s->cpus) * pc->ncpus);
		s->ncpus = pc->ncpus;
	}
	s->cfg.posix.cpus = NULL; /* s->cpus is the copy */
	for (i = 0; i < s->nworkers; i++) {
		if (worker_init(s, &s->workers[i], i, err, errlen) < 0)
			goto fail;
		s->engine_workers[i] = s->workers[i].ew;
	}
	return &s->base;
fail:
	posix_destroy(&s->base);
	return NULL;
}

/* "0-3,8" style list of a CPU set, for the log. */
static void
cpus_string(const cpu_set_t *set, char *out, size_t len)
{
	size_t used = 0;
	int cpu = 0;

	out[0] = '\0';
	while (cpu < CPU_SETSIZE && used < len) {
		int last;

		if (!CPU_ISSET(cpu, set)) {
			cpu++;
			continue;
		}
		for (last = cpu; last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set); last++)
			;
		used += (size_t)snprintf(out + used, len - used, last > cpu ? "%s%d-%d" : "%s%d",
					 used > 0 ? "," : "", cpu, last);
		cpu = last + 1;
	}
}

/* Worker i runs on cpus[i % ncpus]: with the EAL lcores as the sets, more
 * workers than lcores share them in turn (said once in the log). */
static void
set_worker_cpus(struct posix_stack *s, unsigned i, pthread_attr_t *attr)
{
	const cpu_set_t *set = &s->cpus[i % s->ncpus];
	char list[128];

	pthread_attr_setaffinity_np(attr, sizeof(*set), set);
	cpus_string(set, list, sizeof(list));
	POSIX_LOG(INFO, "worker %u runs on CPUs %s", i, list);
}

/* Starts the worker threads. */
static int
posix_start(struct stack *st, char *err, size_t errlen)
{
	struct posix_stack *s = posix_of(st);
	sigset_t all, old;
	unsigned i;
	int rc;

	if (s->ncpus > 0) {
		cpu_set_t all;
		char list[128];

		/* One set is every CPU the process may use (no lcores given):
		 * the kernel places the threads there, as memcached's, said at
		 * -v. Lcores chosen (a set each) that are fewer CPUs than
		 * threads, all together, are worth a warning. */
		CPU_ZERO(&all);
		for (i = 0; i < s->ncpus; i++)
			CPU_OR(&all, &all, &s->cpus[i]);
		cpus_string(&all, list, sizeof(list));
		if (s->ncpus == 1)
			POSIX_LOG(INFO, "%u posix threads on CPUs %s, placed by the kernel",
				  s->nworkers, list);
		else if ((unsigned)CPU_COUNT(&all) < s->nworkers)
			POSIX_LOG(WARNING,
				  "%u posix threads on %d CPUs (%s): threads share CPUs; give "
				  "as many lcores as threads (-l, --lcores) or fewer threads (-t) "
				  "to give each its own", s->nworkers, CPU_COUNT(&all), list);
	}
	/* Workers take no signals: the control thread handles them. A fault
	 * the worker itself causes is its own: blocked, a SIGBUS in the heap
	 * file's mapping would kill the process before its handler could say
	 * why (drivers/mem/mem_file.h). */
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < s->nworkers; i++) {
		struct posix_worker *w = &s->workers[i];
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		if (s->ncpus > 0)
			set_worker_cpus(s, i, &attr);
		rc = pthread_create(&w->thread, &attr, worker_main, w);
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			util_fail(err, errlen, "cannot start worker thread %u: %s",
				   i, strerror(rc));
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			posix_stop(st);
			return -1;
		}
		w->started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->running = true;
	return 0;
}

/* Stops and joins the workers; connections are closed. Idempotent. */
static void
posix_stop(struct stack *st)
{
	struct posix_stack *s = posix_of(st);
	unsigned i;

	if (s->workers == NULL)
		return;
	atomic_store_explicit(&s->stopping, true, memory_order_release);
	for (i = 0; i < s->nworkers; i++)
		posix_inbox_wake(&s->workers[i]);
	for (i = 0; i < s->nworkers; i++)
		if (s->workers[i].started) {
			pthread_join(s->workers[i].thread, NULL);
			s->workers[i].started = false;
		}
	s->running = false;
}

static void
posix_destroy(struct stack *st)
{
	struct posix_stack *s = posix_of(st);
	unsigned i;

	posix_stop(st);
	if (s->workers) {
		for (i = 0; i < s->nworkers; i++)
			worker_fini(&s->workers[i]);
		free(s->workers);
	}
	free(s->engine_workers);
	free(s->cpus);
	posix_sockets_close(s);
	stack_sources_destroy(s->sources);
	pthread_mutex_destroy(&s->sources_lock);
	free(s);
}

/* Sums the counters of all workers (thread < 0) or reads one worker's.
 * Any thread while the stack runs. */
static void
posix_counters(const struct posix_stack *s, int thread, uint64_t out[POSIX_C_MAX])
{
	unsigned i, c, first = 0, last = s->nworkers;

	memset(out, 0, sizeof(uint64_t) * POSIX_C_MAX);
	if (thread >= 0) {
		if ((unsigned)thread >= s->nworkers)
			return;
		first = (unsigned)thread;
		last = first + 1;
	}
	for (i = first; i < last; i++)
		for (c = 0; c < POSIX_C_MAX; c++)
			out[c] += atomic_load_explicit(&s->workers[i].counters[c],
						       memory_order_relaxed);
}

/* One worker's connections: open now and served since start
 * (cmd_server_stats.worker_conns). Any thread. */
static void
posix_worker_conns(const void *arg, unsigned worker, uint64_t *curr, uint64_t *total)
{
	uint64_t c[POSIX_C_MAX];

	posix_counters(arg, (int)worker, c);
	/* Both counted by the worker that served the connection. */
	*total = c[POSIX_C_conns_opened];
	*curr = c[POSIX_C_conns_opened] - c[POSIX_C_conns_closed];
}

/* True while every worker accepts connections (none paused for lack of
 * file descriptors). */
static bool
posix_accepting(const struct posix_stack *s)
{
	unsigned i;

	for (i = 0; i < s->nworkers; i++)
		if (__atomic_load_n(&s->workers[i].accept_paused, __ATOMIC_RELAXED))
			return false;
	return true;
}

static void
conn_stat(struct proto_out *out, int fd, const char *field, const char *value)
{
	char name[48];

	snprintf(name, sizeof(name), "%d:%s", fd, field);
	proto_out_stat(out, name, value);
}

/* `stats conns`: memcached-style lines for every socket and open
 * connection ("<fd>:addr", "<fd>:listen_addr", "<fd>:state"). */
static void
posix_stats_conns(struct stack *st, struct proto_out *out)
{
	struct posix_stack *s = posix_of(st);
	unsigned i;

	for (i = 0; i < s->nsockets; i++) {
		const struct posix_socket *ps = &s->sockets[i];

		conn_stat(out, ps->fd, "addr", ps->addr);
		conn_stat(out, ps->fd, "state",
			  ps->p.kind == POSIX_POLL_LISTEN ? "conn_listening" : "conn_read");
	}
	for (i = 0; i < s->nworkers; i++) {
		struct posix_worker *w = &s->workers[i];
		const struct posix_conn *c;

		pthread_mutex_lock(&w->open_lock);
		for (c = w->open; c != NULL; c = c->next) {
			conn_stat(out, c->fd, "addr", c->peer);
			conn_stat(out, c->fd, "listen_addr", c->listen->addr);
			conn_stat(out, c->fd, "state", "conn_parse_cmd");
			conn_stat(out, c->fd, "thread", w->name);
		}
		pthread_mutex_unlock(&w->open_lock);
	}
}

/* "listening on 127.0.0.1:11211 (tcp)" for bound socket i, or NULL past
 * the last one; for the start-up log. */
static const char *
posix_describe(const struct stack *st, unsigned i, char *buf, size_t len)
{
	const struct posix_stack *s = posix_of_const(st);

	if (i >= s->nsockets)
		return NULL;
	snprintf(buf, len, "listening on %s", s->sockets[i].name);
	return buf;
}

static unsigned
posix_workers(const struct stack *s)
{
	return posix_of_const(s)->nworkers;
}

/* The most the workers' own buffers take: each reads into one, composes
 * into one (up to a connection's output limit) and receives datagrams
 * into one. */
static size_t
posix_worker_buffers(const struct posix_stack *s)
{
	return (size_t)s->nworkers *
	       (POSIX_IN_WORKER + s->out_limit + (s->cfg.udp_port != 0 ? POSIX_UDP_MAX : 0));
}

static void
posix_stats(const struct stack *st, struct cmd_server_stats *out)
{
	const struct posix_stack *s = posix_of_const(st);
	uint64_t c[POSIX_C_MAX];

	posix_counters(s, -1, c);
	out->threads = s->nworkers;
	out->curr_connections = atomic_load_explicit(&s->curr_conns, memory_order_relaxed);
	out->total_connections = c[POSIX_C_conns_opened];
	out->rejected_connections = c[POSIX_C_conns_rejected];
	out->connection_structures = c[POSIX_C_conn_structures];
	out->bytes_read = c[POSIX_C_bytes_read];
	out->bytes_written = c[POSIX_C_bytes_written];
	out->listen_disabled_num = c[POSIX_C_listen_disabled];
	out->accepting_conns = posix_accepting(s);
	out->workers = s->engine_workers;
	out->nworkers = s->nworkers;
	out->worker_conns = posix_worker_conns;
	out->worker_conns_arg = s;
	out->admin_connections = atomic_load_explicit(&s->admin_conns, memory_order_relaxed);
	out->conns_refused_per_source = c[POSIX_C_conns_refused_per_source];
	out->conns_request_timeouts = c[POSIX_C_conns_request_timeouts];
	out->conns_write_timeouts = c[POSIX_C_conns_write_timeouts];
	out->idle_kicks = c[POSIX_C_idle_kicks];
	out->conn_yields = c[POSIX_C_conn_yields];
	out->tcp_buffer_memory = s->buffer_memory;
	out->conn_buffer_in_bytes = atomic_load_explicit(&s->in_budget.used, memory_order_relaxed);
	out->conn_buffer_out_bytes = atomic_load_explicit(&s->out_budget.used,
							  memory_order_relaxed);
	out->conn_buffer_in_refused = c[POSIX_C_conn_buffer_in_refused];
	out->conns_slow_readers_closed = c[POSIX_C_conns_slow_readers_closed];
	out->conn_buffer_uncharged = 2 * POSIX_BUF_UNCOUNTED;
	out->worker_buffer_bytes = posix_worker_buffers(s);
	out->conn_struct_bytes = sizeof(struct posix_conn) + cmd_conn_size();
}

/* The start-up sizing line's words for the stack (stack_ops.sizing). */
static const char *
posix_sizing(const struct stack *st, char *buf, size_t len)
{
	const struct posix_stack *s = posix_of_const(st);
	size_t each = sizeof(struct posix_conn) + cmd_conn_size();
	char budget[64];

	if (s->buffer_memory != 0)
		snprintf(budget, sizeof(budget), "up to %zu MiB", s->buffer_memory >> 20);
	else
		snprintf(budget, sizeof(budget), "no limit");
	snprintf(buf, len,
		 "connection buffers %s (--tcp-buffer-memory: %zu MiB input, %zu MiB output) + "
		 "%u KiB per connection uncharged (%zu MiB) + worker buffers up to %zu MiB + "
		 "connection objects of %zu bytes (%zu MiB); socket buffers are the kernel's",
		 budget, (size_t)(s->in_budget.max >> 20), (size_t)(s->out_budget.max >> 20),
		 2 * POSIX_BUF_UNCOUNTED >> 10,
		 ((size_t)s->cfg.max_conns * 2 * POSIX_BUF_UNCOUNTED) >> 20,
		 posix_worker_buffers(s) >> 20, each, ((size_t)s->cfg.max_conns * each) >> 20);
	return buf;
}

static const char *const posix_counter_names[POSIX_C_MAX] = {
#define POSIX_COUNTER_NAME(name, desc) #name,
	POSIX_STACK_COUNTERS(POSIX_COUNTER_NAME)
#undef POSIX_COUNTER_NAME
};

static const char *const posix_counter_descs[POSIX_C_MAX] = {
#define POSIX_COUNTER_DESC(name, desc) desc,
	POSIX_STACK_COUNTERS(POSIX_COUNTER_DESC)
#undef POSIX_COUNTER_DESC
};

static void
posix_stack_counters(const struct stack *st, stack_counter_fn *fn, void *arg)
{
	const struct posix_stack *s = posix_of_const(st);
	uint64_t c[POSIX_C_MAX];

	posix_counters(s, -1, c);
	for (unsigned i = 0; i < POSIX_C_MAX; i++) {
		struct stack_counter sc = { posix_counter_names[i], posix_counter_descs[i], c[i],
					    false };

		fn(arg, &sc);
	}
}

/* EAL memory for --no-huge: the posix stack allocates nothing from the
 * EAL (its buffers are the C heap's), so only the EAL's own structures,
 * about 150 KiB resident. Without -m the EAL reserves 64 MiB, and its
 * table of 4 KiB pages for them costs 0.7 MiB of RSS at every -m
 * (docs/bench/journal/memory.md, "Memory a user sees"); 8 MiB leaves room. */
#define POSIX_EAL_MEMORY_MB 8

static unsigned
posix_eal_memory_mb(unsigned max_conns, size_t tcp_buffer_memory, unsigned lcores)
{
	(void)max_conns;
	(void)tcp_buffer_memory;
	(void)lcores;
	return POSIX_EAL_MEMORY_MB;
}

const struct stack_ops posix_stack_ops = {
	.name = "posix",
	.workers_noun = "posix threads",
	.eal_memory_mb = posix_eal_memory_mb,
	.create = posix_create,
	.start = posix_start,
	.stop = posix_stop,
	.destroy = posix_destroy,
	.describe = posix_describe,
	.sizing = posix_sizing,
	.workers = posix_workers,
	.stats = posix_stats,
	.stats_conns = posix_stats_conns,
	.counters = posix_stack_counters,
};
