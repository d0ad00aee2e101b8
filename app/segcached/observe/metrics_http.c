/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * GET /metrics over HTTP (--metrics-port), served by libmicrohttpd: one
 * daemon, with its own thread, per host of --metrics-listen (default
 * 127.0.0.1, whatever -l says), on kernel sockets on both stacks (the native stack's port
 * carries memcached traffic only; monitoring goes over the host's
 * management network). The sockets are ours (bound here, so that a port in
 * use reads as it does for -p); the daemons only accept and answer. They
 * are stopped before the network stack and the engine are torn down.
 * libmicrohttpd is loaded (dlopen) only when --metrics-port asks for it:
 * linked, it brought GnuTLS, p11-kit and libcrypto into every server, and
 * their constructors' pages (3 MiB of RSS at -m 16) with them.
 * Who may take it (issue 35): --allow's clients only (the accept policy),
 * METRICS_CONNS_PER_SOURCE connections from one address, and each
 * connection METRICS_CONN_TIMEOUT_S in all: libmicrohttpd's own timeout
 * counts inactivity, which a client sending a byte every few seconds
 * resets for ever, so the control thread's tick (metrics_http_tick) shuts
 * down every connection older than that. URLs are taken as sent, not
 * unescaped: /metrics%00 is not /metrics.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sysexits.h>
#include <unistd.h>

#include <microhttpd.h>

#include "log/log.h"
#include "observe.h"
#include "server/server.h"
#include "util/util_dl.h"

/* A scraper or two, and an operator's curl: a few connections at once,
 * each given a bounded time (a stalled client cannot keep one for ever). */
#define METRICS_CONNS_MAX 16
#define METRICS_CONNS_PER_SOURCE 4
#define METRICS_CONN_TIMEOUT_S 10
#define METRICS_DAEMONS_MAX 16

/* An open connection, from libmicrohttpd's start notice to its close
 * notice (which comes before it closes the socket, so a shutdown() under
 * the lock never hits a reused descriptor). */
struct metrics_conn {
	struct metrics_conn *next, *prev;
	int fd;
	double start;       /* CLOCK_MONOTONIC seconds */
	bool shut;
};

struct metrics_http {
	struct MHD_Daemon *daemons[METRICS_DAEMONS_MAX];
	unsigned n;
	pthread_mutex_t lock;       /* conns */
	struct metrics_conn *conns;
	uint64_t timed_out;         /* connections shut for taking too long */
};

/* The libmicrohttpd functions used here, found by mhd_load(). */
static struct {
	void *lib;
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_get_daemon_info) get_daemon_info;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_get_connection_info) get_connection_info;
} mhd;

/* Loads libmicrohttpd (Debian's libmicrohttpd12); 0, or -1 with why. */
static int
mhd_load(char *err, size_t errlen)
{
	static const char *const names[] = { "libmicrohttpd.so.12", "libmicrohttpd.so" };
#define MHD_SYM(field, symbol) { #symbol, (void **)&mhd.field }
	static const struct util_dl_sym syms[] = {
		MHD_SYM(start_daemon, MHD_start_daemon),
		MHD_SYM(stop_daemon, MHD_stop_daemon),
		MHD_SYM(get_daemon_info, MHD_get_daemon_info),
		MHD_SYM(create_response_from_buffer, MHD_create_response_from_buffer),
		MHD_SYM(add_response_header, MHD_add_response_header),
		MHD_SYM(queue_response, MHD_queue_response),
		MHD_SYM(destroy_response, MHD_destroy_response),
		MHD_SYM(get_connection_info, MHD_get_connection_info),
	};
#undef MHD_SYM

	if (mhd.lib == NULL)
		mhd.lib = util_dl_open(names, sizeof(names) / sizeof(names[0]), syms,
				       sizeof(syms) / sizeof(syms[0]),
				       "--metrics-port needs libmicrohttpd (Debian: libmicrohttpd12)",
				       err, errlen);
	return mhd.lib != NULL ? 0 : -1;
}

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
      size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (r == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size,
       void **con_cls)
{
	static char not_found[] = "not found: the metrics are at /metrics\n";
	static char not_allowed[] = "only GET and HEAD are served\n";
	struct server *srv = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
			     strlen(not_allowed), MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics") != 0)
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     strlen(not_found), MHD_RESPMEM_PERSISTENT);
	f = open_memstream(&body, &len);
	if (f == NULL)
		return MHD_NO;
	metrics_write(srv, f);
	if (fclose(f) != 0) {
		free(body);
		return MHD_NO;
	}
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len,
		     MHD_RESPMEM_MUST_FREE);
}

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --allow: the clients' networks are /metrics' too (IPv4 only: with a
 * list, an IPv6 peer is refused, as on the stacks). */
static enum MHD_Result
allowed(void *cls, const struct sockaddr *sa, socklen_t len)
{
	const struct server *srv = cls;
	uint32_t addr;

	(void)len;
	if (srv->opt.n_allow == 0)
		return MHD_YES;
	if (sa->sa_family == AF_INET) {
		addr = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	} else if (sa->sa_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr)) {
		const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		addr = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	} else {
		return MHD_NO;
	}
	for (unsigned i = 0; i < srv->opt.n_allow; i++)
		if ((addr & srv->opt.allow[i].mask) == srv->opt.allow[i].addr)
			return MHD_YES;
	return MHD_NO;
}

/* Keeps each connection's start, for metrics_http_tick(). */
static void
notify(void *cls, struct MHD_Connection *conn, void **socket_context,
       enum MHD_ConnectionNotificationCode toe)
{
	struct metrics_http *m = cls;
	struct metrics_conn *mc = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
			mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		mc = calloc(1, sizeof(*mc));
		if (mc == NULL || info == NULL) {
			free(mc);
			return; /* untimed: libmicrohttpd's inactivity timeout still holds */
		}
		mc->fd = info->connect_fd;
		mc->start = mono_now();
		pthread_mutex_lock(&m->lock);
		mc->next = m->conns;
		if (m->conns != NULL)
			m->conns->prev = mc;
		m->conns = mc;
		pthread_mutex_unlock(&m->lock);
		*socket_context = mc;
		return;
	}
	if (mc == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	if (mc->prev != NULL)
		mc->prev->next = mc->next;
	else
		m->conns = mc->next;
	if (mc->next != NULL)
		mc->next->prev = mc->prev;
	pthread_mutex_unlock(&m->lock);
	free(mc);
	*socket_context = NULL;
}

/* URLs as sent: only /metrics is served, so nothing needs decoding, and
 * decoding would make /metrics%00 read as /metrics. */
static size_t
no_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

void
metrics_http_tick(struct server *srv)
{
	struct metrics_http *m = srv->metrics;
	double now = mono_now();
	unsigned shut = 0;

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	for (struct metrics_conn *mc = m->conns; mc != NULL; mc = mc->next) {
		if (mc->shut || now - mc->start < METRICS_CONN_TIMEOUT_S)
			continue;
		/* the daemon sees the end of the stream and closes it */
		shutdown(mc->fd, SHUT_RDWR);
		mc->shut = true;
		shut++;
	}
	m->timed_out += shut;
	pthread_mutex_unlock(&m->lock);
	if (shut > 0)
		APP_LOG(INFO, "metrics: %u connection(s) closed: a request not answered within "
			"%d s of connecting", shut, METRICS_CONN_TIMEOUT_S);
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	APP_LOG(WARNING, "metrics: %s", line);
}

/* A listening socket on one address; -1 with a message. */
static int
listen_on(const struct addrinfo *ai, const char *name, char *err, size_t errlen)
{
	int one = 1;
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

	if (fd < 0) {
		snprintf(err, errlen, "--metrics-port: socket for %s: %s", name, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, METRICS_CONNS_MAX) < 0) {
		snprintf(err, errlen, "--metrics-port: cannot listen on %s: %s%s", name,
			 strerror(errno),
			 errno == EADDRINUSE ? " (another process has it: give --metrics-port "
					       "another port)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

/* Daemons on every address `host` resolves to; 0 or -1 with a message. */
static int
serve_host(struct server *srv, struct metrics_http *m, const char *host, char *err,
	   size_t errlen)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char port[8], name[300];
	int rc;

	snprintf(port, sizeof(port), "%u", srv->opt.metrics_port);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "--metrics-port: cannot resolve %s: %s", host,
			 gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		struct MHD_Daemon *d;
		int fd;

		snprintf(name, sizeof(name), "%s%s%s:%s", ai->ai_family == AF_INET6 ? "[" : "",
			 host, ai->ai_family == AF_INET6 ? "]" : "", port);
		if (m->n == METRICS_DAEMONS_MAX) {
			snprintf(err, errlen, "--metrics-port: more than %d addresses",
				 METRICS_DAEMONS_MAX);
			goto fail;
		}
		fd = listen_on(ai, name, err, errlen);
		if (fd < 0)
			goto fail;
		d = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
					     MHD_USE_ERROR_LOG |
					     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     0, allowed, srv, answer, srv,
				     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNS_MAX,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				     (unsigned)METRICS_CONNS_PER_SOURCE,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_CONN_TIMEOUT_S,
				     MHD_OPTION_NOTIFY_CONNECTION, notify, m,
				     MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
				     MHD_OPTION_END);
		if (d == NULL) {
			close(fd);
			snprintf(err, errlen, "--metrics-port: libmicrohttpd could not start on %s",
				 name);
			goto fail;
		}
		m->daemons[m->n++] = d;
		APP_LOG(NOTICE, "metrics at http://%s/metrics", name);
	}
	freeaddrinfo(res);
	return 0;
fail:
	freeaddrinfo(res);
	return -1;
}

static void
stop_all(struct metrics_http *m)
{
	for (unsigned i = 0; i < m->n; i++) {
		/* the daemon leaves a socket it was given open */
		const union MHD_DaemonInfo *info =
			mhd.get_daemon_info(m->daemons[i], MHD_DAEMON_INFO_LISTEN_FD);
		int fd = info != NULL ? info->listen_fd : -1;

		mhd.stop_daemon(m->daemons[i]);
		if (fd >= 0)
			close(fd);
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int
metrics_http_start(struct server *srv)
{
	char *list, *save = NULL, *entry;
	char err[512] = "", seen[OPTIONS_LISTEN_MAX + 2] = ",";
	struct metrics_http *m;

	if (srv->opt.metrics_port == 0)
		return 0;
	if (mhd_load(err, sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		return EX_UNAVAILABLE;
	}
	m = calloc(1, sizeof(*m));
	list = strdup(srv->opt.metrics_listen);
	if (m == NULL || list == NULL) {
		free(m);
		free(list);
		APP_LOG(ERR, "--metrics-port: out of memory");
		return EXIT_FAILURE;
	}
	pthread_mutex_init(&m->lock, NULL);
	for (entry = strtok_r(list, ",", &save); entry != NULL;
	     entry = strtok_r(NULL, ",", &save)) {
		char host[256], port[8], key[260];

		if (stack_split_hostport(entry, host, sizeof(host), port, sizeof(port), err,
					 sizeof(err)) < 0)
			goto fail;
		/* -l 127.0.0.1:11211,127.0.0.1:11212: one host, one daemon */
		snprintf(key, sizeof(key), ",%s,", host);
		if (strstr(seen, key) != NULL)
			continue;
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s,", host);
		if (serve_host(srv, m, host, err, sizeof(err)) < 0)
			goto fail;
	}
	free(list);
	srv->metrics = m;
	return 0;
fail:
	free(list);
	stop_all(m);
	APP_LOG(ERR, "%s", err);
	return EX_OSERR;
}

void
metrics_http_stop(struct server *srv)
{
	if (srv->metrics != NULL)
		stop_all(srv->metrics);
	srv->metrics = NULL;
}
