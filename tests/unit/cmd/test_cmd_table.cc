/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd's command table (cmd_table.c): every command has exactly one row,
 * the parser finds every command word through it, and its flags give what
 * memcached users get today: over UDP only reads (get, gets, gat, gats, mg,
 * mn, version) unless --udp-writes, on the admin port only the
 * administration commands and errors, noreply where memcached takes it.
 */
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "cmd/cmd.h"
#include "proto/proto.h"
#include "seg/seg.h"

namespace {

/* One well-formed line per command (the table test fails for a command
 * without one, so a new command comes with its line here). */
const std::map<proto_cmd, std::string> &samples()
{
	static const std::map<proto_cmd, std::string> m = {
		{ PROTO_CMD_GET, "get k\r\n" },
		{ PROTO_CMD_GETS, "gets k\r\n" },
		{ PROTO_CMD_GAT, "gat 10 k\r\n" },
		{ PROTO_CMD_GATS, "gats 10 k\r\n" },
		{ PROTO_CMD_SET, "set k 0 0 1\r\nx\r\n" },
		{ PROTO_CMD_ADD, "add k 0 0 1\r\nx\r\n" },
		{ PROTO_CMD_REPLACE, "replace k 0 0 1\r\nx\r\n" },
		{ PROTO_CMD_APPEND, "append k 0 0 1\r\nx\r\n" },
		{ PROTO_CMD_PREPEND, "prepend k 0 0 1\r\nx\r\n" },
		{ PROTO_CMD_CAS, "cas k 0 0 1 5\r\nx\r\n" },
		{ PROTO_CMD_DELETE, "delete k\r\n" },
		{ PROTO_CMD_INCR, "incr k 1\r\n" },
		{ PROTO_CMD_DECR, "decr k 1\r\n" },
		{ PROTO_CMD_TOUCH, "touch k 10\r\n" },
		{ PROTO_CMD_FLUSH_ALL, "flush_all\r\n" },
		{ PROTO_CMD_VERSION, "version\r\n" },
		{ PROTO_CMD_VERBOSITY, "verbosity 1\r\n" },
		{ PROTO_CMD_QUIT, "quit\r\n" },
		{ PROTO_CMD_STATS, "stats\r\n" },
		{ PROTO_CMD_SHUTDOWN, "shutdown\r\n" },
		{ PROTO_CMD_CACHE_MEMLIMIT, "cache_memlimit 64\r\n" },
		{ PROTO_CMD_SLABS, "slabs automove 0\r\n" },
		{ PROTO_CMD_LRU_CRAWLER, "lru_crawler disable\r\n" },
		{ PROTO_CMD_MG, "mg k v\r\n" },
		{ PROTO_CMD_MS, "ms k 1\r\nx\r\n" },
		{ PROTO_CMD_MD, "md k\r\n" },
		{ PROTO_CMD_MA, "ma k\r\n" },
		{ PROTO_CMD_MN, "mn\r\n" },
		{ PROTO_CMD_ME, "me k\r\n" },
	};
	return m;
}

std::set<proto_cmd> with_flag(unsigned flag)
{
	std::set<proto_cmd> s;

	for (unsigned i = 0; i < PROTO_CMD_MAX; i++)
		if (cmd_flags(static_cast<proto_cmd>(i)) & flag)
			s.insert(static_cast<proto_cmd>(i));
	return s;
}

/* The first request of line, parsed with the table's words. */
proto_req parse_one(const std::string &line)
{
	proto_parser p;
	proto_req req;
	size_t used;

	proto_parser_init(&p, cmd_grammar(), 1 << 20);
	EXPECT_EQ(proto_parse(&p, line.data(), line.size(), &req, &used), PROTO_REQ) << line;
	return req;
}

TEST(CmdTable, EveryCommandHasOneRowAndTheParserFindsIt)
{
	std::set<std::string> names;

	EXPECT_STREQ(cmd_name(PROTO_CMD_NONE), "none");
	EXPECT_STREQ(cmd_name(PROTO_CMD_ERROR), "error");
	EXPECT_STREQ(cmd_name(PROTO_CMD_MAX), "unknown");
	for (unsigned i = 0; i < PROTO_CMD_MAX; i++) {
		proto_cmd cmd = static_cast<proto_cmd>(i);
		std::string name = cmd_name(cmd);
		const proto_word *w = proto_grammar_find(cmd_grammar(), name.data(), name.size());

		EXPECT_NE(name, "unknown") << i;
		EXPECT_TRUE(names.insert(name).second) << name;
		if (cmd == PROTO_CMD_NONE || cmd == PROTO_CMD_ERROR) {
			EXPECT_EQ(w, nullptr) << name; /* not command words */
			continue;
		}
		ASSERT_NE(w, nullptr) << name;
		EXPECT_EQ(w->cmd, cmd) << name;
		EXPECT_EQ(w->len, name.size()) << name;
		ASSERT_EQ(samples().count(cmd), 1u) << name << ": add its line to samples()";
		EXPECT_EQ(parse_one(samples().at(cmd)).cmd, cmd) << name;
	}
}

TEST(CmdTable, GrammarRefusesBadWords)
{
	proto_grammar g = {};
	proto_word get = { "get", 3, PROTO_CMD_GET, PROTO_SYN_GET, 3, 0 };
	proto_word again = get;
	proto_word upper = { "Get", 3, PROTO_CMD_GET, PROTO_SYN_GET, 3, 0 };
	proto_word short_len = { "get", 2, PROTO_CMD_GET, PROTO_SYN_GET, 3, 0 };
	proto_word none = { "none", 4, PROTO_CMD_NONE, PROTO_SYN_NONE, 0, 0 };

	EXPECT_TRUE(proto_grammar_add(&g, &get));
	EXPECT_FALSE(proto_grammar_add(&g, &again));
	EXPECT_FALSE(proto_grammar_add(&g, &upper));
	EXPECT_FALSE(proto_grammar_add(&g, &short_len));
	EXPECT_FALSE(proto_grammar_add(&g, &none));
	EXPECT_EQ(proto_grammar_find(&g, "get", 3), &get);
	EXPECT_EQ(proto_grammar_find(&g, "gets", 4), nullptr);
	EXPECT_EQ(proto_grammar_find(&g, "ge", 2), nullptr);
}

TEST(CmdTable, UdpServesOnlyReads)
{
	EXPECT_EQ(with_flag(CMD_F_UDP),
		  (std::set<proto_cmd>{ PROTO_CMD_GET, PROTO_CMD_GETS, PROTO_CMD_GAT,
					PROTO_CMD_GATS, PROTO_CMD_MG, PROTO_CMD_MN,
					PROTO_CMD_VERSION }));
	for (proto_cmd cmd : with_flag(CMD_F_WRITE))
		EXPECT_FALSE(cmd_flags(cmd) & CMD_F_UDP) << cmd_name(cmd);
}

TEST(CmdTable, AdminPortServesAdministrationAndErrors)
{
	EXPECT_EQ(with_flag(CMD_F_ADMIN),
		  (std::set<proto_cmd>{ PROTO_CMD_ERROR, PROTO_CMD_STATS, PROTO_CMD_VERSION,
					PROTO_CMD_VERBOSITY, PROTO_CMD_QUIT, PROTO_CMD_SHUTDOWN,
					PROTO_CMD_CACHE_MEMLIMIT, PROTO_CMD_SLABS,
					PROTO_CMD_LRU_CRAWLER }));
	for (proto_cmd cmd : with_flag(CMD_F_WRITE))
		EXPECT_FALSE(cmd_flags(cmd) & CMD_F_ADMIN) << cmd_name(cmd);
}

/* A command takes noreply exactly when its row says so: the sample line
 * with " noreply" at the end of its command line. */
TEST(CmdTable, NoreplyFlagIsWhatTheParserAccepts)
{
	for (const auto &[cmd, line] : samples()) {
		std::string quiet = line;

		quiet.insert(quiet.find("\r\n"), " noreply");
		EXPECT_EQ(parse_one(quiet).noreply, (cmd_flags(cmd) & CMD_F_NOREPLY) != 0)
			<< quiet;
	}
}

/* What a connection answers each command with on UDP and on the admin
 * port: served or refused, as the flags say. */
class CmdTableConn : public ::testing::Test {
protected:
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;
	struct cmd_settings s = {};

	void SetUp() override
	{
		struct engine_config cfg = {};
		char err[256] = "";

		cfg.memory = 16u << 20;
		cfg.max_workers = 1;
		e = seg_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		s.engine = e;
		s.item_max = 1024 * 1024;
		s.version = "1.6.18-segcached";
	}
	void TearDown() override
	{
		engine_worker_destroy(w);
		engine_destroy(e);
	}

	std::string run(const std::string &in, bool udp, bool admin)
	{
		struct cmd_conn *c = cmd_conn_create(&s, w, udp);
		struct proto_out out = {};
		unsigned actions = 0;
		std::string got;

		EXPECT_NE(c, nullptr);
		EXPECT_EQ(proto_out_init(&out, 0, 1u << 20), 0);
		if (admin)
			cmd_conn_set_admin(c);
		cmd_process(c, in.data(), in.size(), &out, &actions);
		got.assign(out.data + out.head, proto_out_pending(&out));
		proto_out_fini(&out);
		cmd_conn_destroy(c);
		return got;
	}
};

TEST_F(CmdTableConn, UdpAndAdminPortServeWhatTheFlagsSay)
{
	const std::string udp_no = "CLIENT_ERROR only reads are served over UDP\r\n";
	const std::string admin_no =
		"CLIENT_ERROR only administration commands on the admin port\r\n";

	for (const auto &[cmd, line] : samples()) {
		bool udp = cmd_flags(cmd) & CMD_F_UDP, admin = cmd_flags(cmd) & CMD_F_ADMIN;

		EXPECT_EQ(run(line, true, false) == udp_no, !udp) << line;
		EXPECT_EQ(run(line, false, true) == admin_no, !admin) << line;
	}
	EXPECT_EQ(run("bogus\r\n", true, false), udp_no); /* an error is no read */
	EXPECT_EQ(run("bogus\r\n", false, true), "ERROR\r\n");
	s.udp_writes = true;
	for (const auto &[cmd, line] : samples())
		EXPECT_NE(run(line, true, false), udp_no) << line;
}

} // namespace
