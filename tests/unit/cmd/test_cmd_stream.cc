/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd's values read straight into their item (cmd_stream.c, issue 35):
 * a large data block that arrives in pieces is answered byte for byte as
 * the same block arriving whole (which is not streamed), for every store
 * command and meta flag; a block refused at its line is answered at once
 * and swallowed; a block that ends wrongly stores nothing; an item taken
 * back (flush, eviction) before its value is complete answers out of
 * memory; a connection that goes mid-value leaves nothing behind.
 */
#include <gtest/gtest.h>

#include <string>

#include "cmd_fixture.h"
#include "engine/engine_stats.h"

namespace {

using namespace cmd_test;
using namespace std::string_literals;

/* A value whose bytes say where they are: a misplaced piece shows. */
std::string
value_of(size_t n, char salt)
{
	std::string v(n, '\0');

	for (size_t i = 0; i < n; i++)
		v[i] = (char)('a' + (i * 31 + (size_t)salt) % 26);
	return v;
}

class CmdStream : public Cmd {
protected:
	/* The replies to `in` fed whole on a fresh engine, then in `chunk`
	 * byte pieces on another: they must be the same. Returns them. */
	std::string same_whole_and_split(const std::string &setup, const std::string &in,
					 size_t chunk)
	{
		make();
		run(setup);
		std::string whole = run(in);
		EXPECT_EQ(stats_counter(ENGINE_C_set_streamed), 0u) << "fed whole: nothing streams";
		make();
		run(setup);
		std::string split = run(in, chunk);
		EXPECT_EQ(split, whole) << "chunk " << chunk;
		return whole;
	}
};

TEST_F(CmdStream, LargeSetsSplitAnyWayAnswerAsWhole)
{
	for (size_t n : { (size_t)CMD_STREAM_MIN - 1, (size_t)CMD_STREAM_MIN, 100000ul,
			  1000000ul }) {
		const std::string v = value_of(n, 1);
		const std::string in = "set big 7 0 " + std::to_string(n) + "\r\n" + v +
				       "\r\nget big\r\nset small 0 0 1\r\nx\r\nget small\r\n";

		for (size_t chunk : { 1000ul, 4096ul, 65536ul, 300001ul }) {
			if (n > 200000 && chunk < 4096)
				continue; /* the same, only slower */
			std::string r = same_whole_and_split("", in, chunk);

			EXPECT_EQ(r, "STORED\r\nVALUE big 7 " + std::to_string(n) + "\r\n" + v +
					     "\r\nEND\r\nSTORED\r\nVALUE small 0 1\r\nx\r\nEND\r\n");
			const bool streams = n >= CMD_STREAM_MIN && chunk < n;
			EXPECT_EQ(stats_counter(ENGINE_C_set_streamed), streams ? 1u : 0u)
				<< n << " in " << chunk;
		}
	}
	/* byte by byte, once: every split of the line, the value and its end */
	const std::string v = value_of(CMD_STREAM_MIN + 3, 2);
	same_whole_and_split("", "set k 0 0 " + std::to_string(v.size()) + "\r\n" + v +
					 "\r\nget k\r\n", 1);
}

TEST_F(CmdStream, EveryStoreModeDecidesAtTheEnd)
{
	const std::string v = value_of(50000, 3), n = std::to_string(v.size());
	const std::string old = "set k 1 0 3\r\nold\r\n";

	/* add, replace, cas, noreply: the same answers as whole */
	same_whole_and_split(old, "add k 0 0 " + n + "\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split("", "add k 0 0 " + n + "\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split("", "replace k 0 0 " + n + "\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split(old, "replace k 9 0 " + n + "\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split(old, "cas k 0 0 " + n + " 12345\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split("", "cas k 0 0 " + n + " 1\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split(old, "set k 0 0 " + n + " noreply\r\n" + v + "\r\nget k\r\n", 4096);
	same_whole_and_split(old, "set k 0 -1 " + n + "\r\n" + v + "\r\nget k\r\n", 4096);
	/* append and prepend join the old value: buffered, not streamed */
	std::string r = same_whole_and_split(old, "append k 0 0 " + n + "\r\n" + v +
							  "\r\nget k\r\n", 4096);
	EXPECT_EQ(r, "STORED\r\nVALUE k 1 " + std::to_string(v.size() + 3) + "\r\nold" + v +
			     "\r\nEND\r\n");
	EXPECT_EQ(stats_counter(ENGINE_C_set_streamed), 0u);

	/* cas with the right unique, found with gets */
	make();
	run(old);
	std::string g = run("gets k\r\n");
	std::string unique = g.substr(g.rfind(' ') + 1, g.find("\r\n") - g.rfind(' ') - 1);
	EXPECT_EQ(run("cas k 2 0 " + n + " " + unique + "\r\n" + v + "\r\nget k\r\n", 4096),
		  "STORED\r\nVALUE k 2 " + n + "\r\n" + v + "\r\nEND\r\n");
	EXPECT_EQ(stats_counter(ENGINE_C_set_streamed), 1u);
}

TEST_F(CmdStream, MetaSetFlagsSurviveTheValue)
{
	const std::string v = value_of(40000, 4), n = std::to_string(v.size());

	/* a base64 key, an opaque, the key and cas returned: the line's bytes
	 * are long gone when the reply is written */
	same_whole_and_split("", "ms Zm9vYmFy " + n + " b O99 k c F5 T0\r\n" + v +
					 "\r\nmg Zm9vYmFy b v f\r\n", 3000);
	same_whole_and_split("set foobar 0 0 1\r\nx\r\n",
			     "ms foobar " + n + " ME O1 q\r\n" + v + "\r\nmn\r\n", 3000);
	same_whole_and_split("", "ms foobar " + n + " MR\r\n" + v + "\r\nmn\r\n", 3000);
	same_whole_and_split("set foobar 0 0 1\r\nx\r\n",
			     "ms foobar " + n + " MA\r\n" + v + "\r\nmg foobar v\r\n", 3000);
	same_whole_and_split("", "ms foobar " + n + " I C77\r\n" + v + "\r\nmn\r\n", 3000);
}

TEST_F(CmdStream, AWrongEndStoresNothing)
{
	const std::string v = value_of(30000, 5), n = std::to_string(v.size());
	std::string r = same_whole_and_split("set k 0 0 3\r\nold\r\n",
					     "set k 0 0 " + n + "\r\n" + v + "XYget k\r\n", 5000);

	EXPECT_EQ(r, "CLIENT_ERROR bad data chunk\r\nVALUE k 0 3\r\nold\r\nEND\r\n");
	same_whole_and_split("", "ms k " + n + "\r\n" + v + "\n\nmg k v\r\n", 5000);
	/* the end split over two calls: "\r" then "\n" */
	make();
	EXPECT_EQ(run("set k 0 0 " + n + "\r\n" + v + "\r"), "");
	EXPECT_EQ(run("\nget k\r\n"), "STORED\r\nVALUE k 0 " + n + "\r\n" + v + "\r\nEND\r\n");
}

TEST_F(CmdStream, RefusedAtTheLineIsAnsweredAtOnceAndSwallowed)
{
	/* the item (key and head besides the value) is over -I: the parser's
	 * value limit passes the block, the engine refuses it */
	make(40000);
	run("set k 0 0 3\r\nold\r\n");
	const std::string v = value_of(40000, 6), n = std::to_string(v.size());
	EXPECT_EQ(run("set k 0 0 " + n + "\r\n" + v.substr(0, 100)),
		  "SERVER_ERROR object too large for cache\r\n");
	EXPECT_EQ(run(v.substr(100) + "\r\nget k\r\n", 7000), "END\r\n")
		<< "the old value goes, as memcached drops it";
	EXPECT_EQ(stats_counter(ENGINE_C_set_too_large), 1u);

	/* the admin port stores nothing: refused, its block swallowed */
	make();
	cmd_conn_set_admin(c);
	const std::string w = value_of(20000, 7);
	EXPECT_EQ(run("set k 0 0 20000\r\n" + w + "\r\nversion\r\n", 1000),
		  "CLIENT_ERROR only administration commands on the admin port\r\n"
		  "VERSION 1.6.18-segcached\r\n");
}

// An item taken back before its value was complete (a flush_all or an
// eviction raced the client's value) completes as a store evicted the
// moment it was linked: the client hears what memcached would say, the
// key's old value is gone, and nothing of the new one is readable.
TEST_F(CmdStream, AnItemTakenBackBeforeItsValueIsAStoreEvictedAtOnce)
{
	const std::string v = value_of(60000, 8), n = std::to_string(v.size());
	struct cmd_conn *second = cmd_conn_create(&s, w, false);
	struct cmd_conn *third = cmd_conn_create(&s, w, false);
	ASSERT_NE(second, nullptr);
	ASSERT_NE(third, nullptr);
	/* another connection's input, given whole */
	auto on = [&](struct cmd_conn *o, const std::string &in) {
		unsigned actions = 0;
		EXPECT_EQ(cmd_process(o, in.data(), in.size(), &out, &actions), in.size());
		std::string got(out.data + out.head, proto_out_pending(&out));
		proto_out_consume(&out, proto_out_pending(&out));
		return got;
	};

	run("set k 0 0 3\r\nold\r\n");
	EXPECT_EQ(run("set k 0 0 " + n + "\r\n" + v.substr(0, 1000)), "");
	engine_flush_all(e, 0); /* another connection's flush_all: every segment back */
	EXPECT_EQ(on(third, "set k 0 0 5\r\nnewer\r\n"), "STORED\r\n");
	EXPECT_EQ(run(v.substr(1000) + "\r\nget k\r\nset j 0 0 1\r\nz\r\nget j\r\n", 9000),
		  "STORED\r\nEND\r\nSTORED\r\nVALUE j 0 1\r\nz\r\nEND\r\n")
		<< "the streamed set came last: 'newer' must not be read after its STORED";
	EXPECT_EQ(stats_counter(ENGINE_C_set_stream_lost), 1u);
	EXPECT_EQ(stats_counter(ENGINE_C_set_no_memory), 0u);
	EXPECT_EQ(stat("stats\r\n", "store_stream_lost"), 1u);
	EXPECT_EQ(stat("stats\r\n", "store_streamed"), 1u);

	/* add and replace decide their condition at the end, as if linked */
	run("set r 0 0 3\r\nold\r\n");
	EXPECT_EQ(run("add r 0 0 " + n + "\r\n" + v.substr(0, 10)), "");
	EXPECT_EQ(on(second, "replace q 0 0 " + n + "\r\n" + v.substr(0, 10)), "");
	engine_flush_all(e, 0);
	EXPECT_EQ(on(third, "set r 0 0 5\r\nagain\r\n"), "STORED\r\n");
	EXPECT_EQ(run(v.substr(10) + "\r\nget r\r\n", 9000),
		  "NOT_STORED\r\nVALUE r 0 5\r\nagain\r\nEND\r\n");
	EXPECT_EQ(on(second, v.substr(10) + "\r\nget q\r\n"), "NOT_STORED\r\nEND\r\n");
	EXPECT_EQ(stats_counter(ENGINE_C_set_stream_lost), 3u);
	cmd_conn_destroy(second);
	cmd_conn_destroy(third);

	/* evicted: the segment it was reserved in fills, is sealed and
	 * reclaimed while the client is still sending */
	make(0, false, 64u << 20, ENGINE_EVICT_FIFO, 16u << 20);
	const std::string big = value_of(100000, 9);
	EXPECT_EQ(run("set parked 0 0 3\r\nold\r\n"), "STORED\r\n");
	EXPECT_EQ(run("set parked 0 0 100000\r\n" + big.substr(0, 10)), "");
	struct cmd_conn *filler_conn = cmd_conn_create(&s, w, false);
	ASSERT_NE(filler_conn, nullptr);
	const std::string filler = value_of(1000, 10);
	for (int i = 0; i < 40000; i++)
		on(filler_conn, "set f" + std::to_string(i) + " 0 0 1000 noreply\r\n" + filler +
					"\r\n");
	cmd_conn_destroy(filler_conn);
	EXPECT_EQ(run(big.substr(10) + "\r\nget parked\r\n", 20000), "STORED\r\nEND\r\n")
		<< "the old value must be gone";
	EXPECT_EQ(stats_counter(ENGINE_C_set_stream_lost), 1u);
}

TEST_F(CmdStream, AConnectionGoneMidValueLeavesNothing)
{
	const std::string v = value_of(70000, 11);

	EXPECT_EQ(run("set k 0 0 70000\r\n" + v.substr(0, 30000)), "");
	cmd_conn_destroy(c); /* the client went: its stream with it */
	c = cmd_conn_create(&s, w, false);
	ASSERT_NE(c, nullptr);
	pending.clear();
	EXPECT_EQ(run("get k\r\n"), "END\r\n");
	EXPECT_EQ(stats_counter(ENGINE_C_set_stored), 0u);
}

TEST_F(CmdStream, UdpNeverStreams)
{
	make(0, true);
	const std::string v = value_of(20000, 12);
	/* storage is refused over UDP whole: nothing reserved */
	run("set k 0 0 20000\r\n" + v.substr(0, 100));
	EXPECT_EQ(stats_counter(ENGINE_C_set_streamed), 0u);
}

} // namespace
