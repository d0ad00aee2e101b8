/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The fixture of lib/cmd's tests: a connection on the real Segcache
 * engine (a fake clock), fed as a stack would feed it, chunk bytes at a
 * time, with the replies it wrote returned.
 */
#ifndef SEGCACHED_TEST_CMD_FIXTURE_H
#define SEGCACHED_TEST_CMD_FIXTURE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cmd/cmd.h"
#include "seg/seg.h"
#include "../fake_clock.h"

namespace cmd_test {

using namespace std::string_literals;

struct ServerStats {
	uint64_t total_connections = 7;
	uint64_t bytes_read = 1000;
	uint64_t refused_per_source = 5, request_timeouts = 3, write_timeouts = 2;
	uint64_t idle_timeout = 0, idle_kicks = 0;
	struct engine_worker *workers[1] = {};

	static void fill(void *arg, struct cmd_server_stats *out)
	{
		auto *s = static_cast<ServerStats *>(arg);

		out->pid = 4242;
		out->uptime = 12;
		out->time = 1700000000;
		out->rusage_user_us = 1500001;
		out->rusage_system_us = 20;
		out->max_connections = 1024;
		out->curr_connections = 3;
		out->total_connections = s->total_connections;
		out->bytes_read = s->bytes_read;
		out->threads = 4;
		out->accepting_conns = true;
		out->maxconns = 1024;
		out->tcpport = 11211;
		out->inter = "127.0.0.1";
		out->stack = "posix";
		out->eviction = "merge";
		out->workers = s->workers;
		out->nworkers = 1;
		out->admin_connections = 1;
		out->conns_refused_per_source = s->refused_per_source;
		out->conns_request_timeouts = s->request_timeouts;
		out->conns_write_timeouts = s->write_timeouts;
		out->max_conns_per_source = 64;
		out->request_timeout = 30;
		out->idle_timeout = s->idle_timeout;
		out->idle_kicks = s->idle_kicks;
		out->admin_port = 11212;
		out->metrics_port = 9150;
		out->tcp_buffer_memory = 256 << 20;
	}
	static void conns(void *, struct proto_out *out)
	{
		proto_out_stat(out, "23:addr", "tcp:127.0.0.1:11211");
		proto_out_stat(out, "23:state", "conn_listening");
	}
};

class Cmd : public ::testing::Test {
protected:
	FakeClock clock;
	ServerStats server;
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;
	struct cmd_settings s = {};
	struct cmd_conn *c = nullptr;
	struct proto_out out = {};
	unsigned last_actions = 0;
	size_t left = 0;
	std::string pending; /* unconsumed input, kept between run() calls */

	void make(size_t item_max = 0, bool udp = false, size_t out_limit = 64u << 20,
		  enum engine_eviction eviction = ENGINE_EVICT_MERGE, size_t memory = 64u << 20)
	{
		struct engine_config cfg = {};
		char err[256] = "";

		destroy();
		cfg.memory = memory;
		cfg.item_max = item_max;
		cfg.eviction = eviction;
		cfg.max_workers = 4;
		cfg.clock = FakeClock::read;
		cfg.clock_arg = &clock;
		e = seg_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		server.workers[0] = w;
		s = {};
		s.engine = e;
		s.item_max = item_max ? item_max : 1024 * 1024;
		s.version = "1.6.18-segcached";
		s.server_stats = ServerStats::fill;
		s.stats_conns = ServerStats::conns;
		s.server_stats_arg = &server;
		s.clock = FakeClock::read;
		s.clock_arg = &clock;
		c = cmd_conn_create(&s, w, udp);
		ASSERT_NE(c, nullptr);
		ASSERT_EQ(proto_out_init(&out, 0, out_limit), 0);
	}
	void destroy()
	{
		if (c)
			cmd_conn_destroy(c);
		if (out.data)
			proto_out_fini(&out);
		engine_worker_destroy(w);
		engine_destroy(e);
		c = nullptr;
		w = nullptr;
		e = nullptr;
		pending.clear();
	}
	void SetUp() override { make(); }
	void TearDown() override { destroy(); }

	/* Feeds the input as a connection would, chunk bytes at a time, and
	 * returns everything written. Stops at a close or shutdown action. */
	std::string run(const std::string &in, size_t chunk = 0)
	{
		std::string &buf = pending, got;
		size_t fed = 0;

		last_actions = 0;
		if (chunk == 0)
			chunk = in.size() ? in.size() : 1;
		while (fed < in.size() || !buf.empty()) {
			size_t take = std::min(chunk, in.size() - fed);

			buf.append(in, fed, take);
			fed += take;
			for (;;) {
				unsigned actions = 0;
				size_t used = cmd_process(c, buf.data(), buf.size(), &out,
							  &actions);

				EXPECT_LE(used, buf.size());
				buf.erase(0, used);
				got.append(out.data + out.head, proto_out_pending(&out));
				proto_out_consume(&out, proto_out_pending(&out));
				last_actions |= actions;
				if (actions) {
					left = buf.size() + in.size() - fed;
					return got;
				}
				/* a stop for backpressure: the output went, go on */
				if (used == 0 || !out.backpressure)
					break;
			}
			if (take == 0)
				break;
		}
		left = buf.size();
		return got;
	}

	uint64_t stats_counter(enum engine_worker_counter k)
	{
		struct engine_stats st;

		engine_stats(e, &st);
		return st.counters[k];
	}

	uint64_t stat(const std::string &cmdline, const std::string &name)
	{
		std::string r = run(cmdline);
		std::string key = "STAT " + name + " ";
		size_t at = r.find(key);

		if (at == std::string::npos)
			return UINT64_MAX;
		return std::stoull(r.substr(at + key.size()));
	}
};

} // namespace cmd_test

#endif /* SEGCACHED_TEST_CMD_FIXTURE_H */
