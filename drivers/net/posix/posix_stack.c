/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Set-up, worker threads and the event loop of the posix stack.
 */
#include "posix_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

RTE_LOG_REGISTER(posix_logtype, segcached.net.posix, NOTICE);

const char *const posix_stack_counter_names[POSIX_C_MAX] = {
#define POSIX_COUNTER_NAME(name) #name,
	POSIX_STACK_COUNTERS(POSIX_COUNTER_NAME)
#undef POSIX_COUNTER_NAME
};

/* File descriptors besides client connections: sockets, epoll and
 * eventfd per worker, EAL and logs. */
#define POSIX_FD_HEADROOM 64

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* memcached raises RLIMIT_NOFILE to what -c needs; so do we. */
static int
raise_fd_limit(const struct posix_stack *s, char *err, size_t errlen)
{
	rlim_t need = (rlim_t)s->cfg.max_conns + POSIX_FD_HEADROOM +
		      (rlim_t)s->nworkers * 2 + POSIX_SOCKETS_MAX;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max < need) {
		struct rlimit want = { need, need };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return 0;
		snprintf(err, errlen,
			 "--max-conns %u needs %llu open files but the hard limit is %llu: lower -c or raise the limit (ulimit -Hn)",
			 s->cfg.max_conns, (unsigned long long)need,
			 (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		snprintf(err, errlen, "setrlimit(RLIMIT_NOFILE, %llu): %s",
			 (unsigned long long)need, strerror(errno));
		return -1;
	}
	return 0;
}

static int
epoll_add(int epfd, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
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
		if (epoll_add(w->epfd, ps->fd, EPOLLIN | EPOLLEXCLUSIVE, ps) < 0)
			return -1;
	}
	return 0;
}

/* accept() failing for lack of file descriptors leaves the connection
 * queued, so a level-triggered epoll would report it again at once. Take
 * the listening sockets out of this worker's set for a moment instead. */
void
posix_tcp_accept_pause(struct posix_worker *w)
{
	struct posix_stack *s = w->stack;
	unsigned i;

	if (w->accept_paused)
		return;
	for (i = 0; i < s->nsockets; i++)
		if (s->sockets[i].p.kind == POSIX_POLL_LISTEN)
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, s->sockets[i].fd, NULL);
	__atomic_store_n(&w->accept_paused, true, __ATOMIC_RELAXED);
	w->accept_resume_ms = now_ms() + 100;
	posix_count(w, POSIX_C_listen_disabled, 1);
}

void
posix_tcp_accept_resume(struct posix_worker *w)
{
	struct posix_stack *s = w->stack;
	unsigned i;

	for (i = 0; i < s->nsockets; i++)
		if (s->sockets[i].p.kind == POSIX_POLL_LISTEN)
			epoll_add(w->epfd, s->sockets[i].fd,
				  EPOLLIN | EPOLLEXCLUSIVE, &s->sockets[i]);
	__atomic_store_n(&w->accept_paused, false, __ATOMIC_RELAXED);
}

static void *
worker_main(void *arg)
{
	struct posix_worker *w = arg;
	struct posix_stack *s = w->stack;
	struct epoll_event evs[POSIX_EVENTS_BURST];

	while (!atomic_load_explicit(&s->stopping, memory_order_acquire)) {
		int timeout = -1, n, i;

		if (w->accept_paused) {
			uint64_t now = now_ms();

			if (now >= w->accept_resume_ms) {
				posix_tcp_accept_resume(w);
			} else {
				timeout = (int)(w->accept_resume_ms - now);
			}
		}
		n = epoll_wait(w->epfd, evs, POSIX_EVENTS_BURST, timeout);
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
			case POSIX_POLL_WAKE:
				break; /* the loop condition sees the flag */
			case POSIX_POLL_LISTEN:
				posix_tcp_accept(w, (struct posix_socket *)p);
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
	w->wakefd = -1;
	w->wake.kind = POSIX_POLL_WAKE;
	pthread_mutex_init(&w->open_lock, NULL);

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->wakefd < 0) {
		snprintf(err, errlen, "epoll/eventfd: %s", strerror(errno));
		return -1;
	}
	if (epoll_add(w->epfd, w->wakefd, EPOLLIN, &w->wake) < 0 ||
	    add_shared_sockets(w, s->cfg.udp_port != 0) < 0) {
		snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
		return -1;
	}
	w->ew = engine_worker_create(s->cfg.engine);
	if (w->ew == NULL) {
		snprintf(err, errlen,
			 "the engine refused worker %u (too many workers?)", id);
		return -1;
	}
	if (s->cfg.udp_port != 0) {
		w->udp_buf = malloc(POSIX_UDP_MAX);
		w->udp_cmd = cmd_conn_create(s->cfg.cmd, w->ew, true);
		if (w->udp_buf == NULL || w->udp_cmd == NULL ||
		    proto_out_init(&w->udp_out, 0, s->out_limit) < 0) {
			snprintf(err, errlen, "out of memory for UDP");
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
	if (w->udp_out.data)
		proto_out_fini(&w->udp_out);
	engine_worker_destroy(w->ew);
	if (w->wakefd >= 0)
		close(w->wakefd);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->stack != NULL)
		pthread_mutex_destroy(&w->open_lock);
	memset(w, 0, sizeof(*w));
	w->epfd = w->wakefd = -1;
}

struct posix_stack *
posix_stack_create(const struct posix_stack_config *cfg, char *err,
		   size_t errlen, bool *bind_failed)
{
	struct posix_stack *s;
	unsigned i;

	*bind_failed = false;
	if (cfg->threads == 0 || cfg->engine == NULL || cfg->cmd == NULL ||
	    cfg->listen == NULL || (cfg->tcp_port == 0 && cfg->udp_port == 0)) {
		snprintf(err, errlen, "posix stack: incomplete configuration");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	snprintf(s->listen, sizeof(s->listen), "%s", cfg->listen);
	s->cfg.listen = s->listen;
	if (s->cfg.backlog <= 0)
		s->cfg.backlog = 1024;
	s->nworkers = cfg->threads;
	/* The largest request: a storage command line and an item's data. */
	s->in_max = cfg->cmd->item_max + POSIX_IN_SLACK;
	/* Output: the backpressure bound plus the largest single reply. */
	s->out_limit = POSIX_OUT_HIGH + cfg->cmd->item_max + POSIX_IN_SLACK;

	if (raise_fd_limit(s, err, errlen) < 0)
		goto fail;
	if (posix_sockets_open(s, err, errlen, bind_failed) < 0)
		goto fail;
	s->workers = calloc(s->nworkers, sizeof(*s->workers));
	s->engine_workers = calloc(s->nworkers, sizeof(*s->engine_workers));
	if (s->workers == NULL || s->engine_workers == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < s->nworkers; i++)
		s->workers[i].epfd = s->workers[i].wakefd = -1;
	for (i = 0; i < s->nworkers; i++) {
		if (worker_init(s, &s->workers[i], i, err, errlen) < 0)
			goto fail;
		s->engine_workers[i] = s->workers[i].ew;
	}
	return s;
fail:
	posix_stack_destroy(s);
	return NULL;
}

int
posix_stack_start(struct posix_stack *s, char *err, size_t errlen)
{
	sigset_t all, old;
	unsigned i;
	int rc;

	/* Workers take no signals: the control thread handles them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < s->nworkers; i++) {
		struct posix_worker *w = &s->workers[i];

		rc = pthread_create(&w->thread, NULL, worker_main, w);
		if (rc != 0) {
			snprintf(err, errlen, "cannot start worker thread %u: %s",
				 i, strerror(rc));
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			posix_stack_stop(s);
			return -1;
		}
		w->started = true;
		pthread_setname_np(w->thread, w->name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->running = true;
	return 0;
}

void
posix_stack_stop(struct posix_stack *s)
{
	unsigned i;

	if (s == NULL || s->workers == NULL)
		return;
	atomic_store_explicit(&s->stopping, true, memory_order_release);
	for (i = 0; i < s->nworkers; i++) {
		uint64_t one = 1;

		if (s->workers[i].wakefd >= 0 &&
		    write(s->workers[i].wakefd, &one, sizeof(one)) < 0)
			POSIX_LOG(WARNING, "cannot wake worker %u: %s", i,
				  strerror(errno));
	}
	for (i = 0; i < s->nworkers; i++)
		if (s->workers[i].started) {
			pthread_join(s->workers[i].thread, NULL);
			s->workers[i].started = false;
		}
	s->running = false;
}

void
posix_stack_destroy(struct posix_stack *s)
{
	unsigned i;

	if (s == NULL)
		return;
	posix_stack_stop(s);
	if (s->workers) {
		for (i = 0; i < s->nworkers; i++)
			worker_fini(&s->workers[i]);
		free(s->workers);
	}
	free(s->engine_workers);
	posix_sockets_close(s);
	free(s);
}

unsigned
posix_stack_threads(const struct posix_stack *s)
{
	return s->nworkers;
}

void
posix_stack_counters(const struct posix_stack *s, int thread,
		     uint64_t out[POSIX_C_MAX])
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

uint64_t
posix_stack_curr_conns(const struct posix_stack *s)
{
	return atomic_load_explicit(&s->curr_conns, memory_order_relaxed);
}

struct engine_worker *const *
posix_stack_engine_workers(const struct posix_stack *s, unsigned *n)
{
	*n = s->nworkers;
	return s->engine_workers;
}

bool
posix_stack_accepting(const struct posix_stack *s)
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

void
posix_stack_stats_conns(struct posix_stack *s, struct proto_out *out)
{
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

const char *
posix_stack_socket_name(const struct posix_stack *s, unsigned i)
{
	return i < s->nsockets ? s->sockets[i].name : NULL;
}
