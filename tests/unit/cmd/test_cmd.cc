/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd against the real Segcache engine: every command's replies (the
 * expected bytes are memcached 1.6.18's), noreply, pipelining, requests
 * split at every byte, resynchronisation, limits, meta flags, stats,
 * backpressure, and the command table (one row per command, its flags).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cmd/cmd.h"
#include "seg/seg.h"
#include "../fake_clock.h"

#include "cmd_fixture.h"

namespace {

using namespace cmd_test;

TEST_F(Cmd, StorageAndRetrieval)
{
	EXPECT_EQ(run("set a 5 0 3\r\nabc\r\nget a\r\n"),
		  "STORED\r\nVALUE a 5 3\r\nabc\r\nEND\r\n");
	EXPECT_EQ(run("get a b a\r\n"), "VALUE a 5 3\r\nabc\r\nVALUE a 5 3\r\nabc\r\nEND\r\n");
	EXPECT_EQ(run("get nokey\r\n"), "END\r\n");
	EXPECT_EQ(run("add a 0 0 1\r\nx\r\nadd b 0 0 1\r\ny\r\n"), "NOT_STORED\r\nSTORED\r\n");
	EXPECT_EQ(run("replace nokey 0 0 1\r\nx\r\nreplace b 7 0 1\r\nz\r\nget b\r\n"),
		  "NOT_STORED\r\nSTORED\r\nVALUE b 7 1\r\nz\r\nEND\r\n");
	EXPECT_EQ(run("append a 0 0 2\r\n!!\r\nprepend a 0 0 1\r\n<\r\nget a\r\n"),
		  "STORED\r\nSTORED\r\nVALUE a 5 6\r\n<abc!!\r\nEND\r\n");
	EXPECT_EQ(run("append nokey 0 0 1\r\n!\r\nprepend nokey 0 0 1\r\n!\r\n"),
		  "NOT_STORED\r\nNOT_STORED\r\n");
	EXPECT_EQ(run("set e 0 0 0\r\n\r\nget e\r\n"), "STORED\r\nVALUE e 0 0\r\n\r\nEND\r\n");
	EXPECT_EQ(run("set bin 0 0 4\r\n\r\n\0\n\r\nget bin\r\n"s),
		  "STORED\r\nVALUE bin 0 4\r\n\r\n\0\n\r\nEND\r\n"s);
}

TEST_F(Cmd, CasFlow)
{
	std::string r = run("set k 0 0 1\r\nx\r\ngets k\r\n");
	size_t at = r.find("VALUE k 0 1 ");
	ASSERT_NE(at, std::string::npos) << r;
	std::string cas = r.substr(at + 12, r.find("\r\n", at) - at - 12);

	EXPECT_EQ(run("cas k 0 0 1 " + cas + "\r\ny\r\n"), "STORED\r\n");
	EXPECT_EQ(run("cas k 0 0 1 " + cas + "\r\nz\r\n"), "EXISTS\r\n");
	EXPECT_EQ(run("cas nokey 0 0 1 1\r\nz\r\n"), "NOT_FOUND\r\n");
	EXPECT_EQ(run("cas k 0 0 1 0\r\nz\r\n"), "EXISTS\r\n");
	EXPECT_EQ(run("get k\r\n"), "VALUE k 0 1\r\ny\r\nEND\r\n");
	/* gats returns the cas too */
	EXPECT_NE(run("gats 0 k\r\n").find("VALUE k 0 1 "), std::string::npos);
}

TEST_F(Cmd, DeleteIncrDecrTouch)
{
	EXPECT_EQ(run("set n 0 0 3\r\n100\r\ndelete n\r\ndelete n\r\n"),
		  "STORED\r\nDELETED\r\nNOT_FOUND\r\n");
	EXPECT_EQ(run("set n 0 0 1\r\n1\r\nincr n 1\r\ndecr n 5\r\nincr n 18446744073709551615\r\n"
		      "incr n 1\r\nincr nokey 1\r\n"),
		  "STORED\r\n2\r\n0\r\n18446744073709551615\r\n0\r\nNOT_FOUND\r\n");
	EXPECT_EQ(run("set n 0 0 2\r\nab\r\nincr n 1\r\n"),
		  "STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
	EXPECT_EQ(run("set n 5 0 3\r\n999\r\nincr n 1\r\nget n\r\n"),
		  "STORED\r\n1000\r\nVALUE n 5 4\r\n1000\r\nEND\r\n");
	/* difference: memcached pads a shrinking decr result with blanks
	 * ("9   "); the engine stores the digits only */
	EXPECT_EQ(run("decr n 991\r\nget n\r\n"), "9\r\nVALUE n 5 1\r\n9\r\nEND\r\n");
	EXPECT_EQ(run("touch n 10\r\ntouch nokey 10\r\n"), "TOUCHED\r\nNOT_FOUND\r\n");
	clock.now += 11;
	EXPECT_EQ(run("get n\r\n"), "END\r\n");
	EXPECT_EQ(run("set t 0 0 1\r\nx\r\ngat 5 t\r\n"), "STORED\r\nVALUE t 0 1\r\nx\r\nEND\r\n");
	clock.now += 6;
	EXPECT_EQ(run("get t\r\n"), "END\r\n");
}

TEST_F(Cmd, TouchOnAFullHeapWithoutEvictionIsAServerError)
{
	std::string v(1000, 'v');
	unsigned n = 0;

	make(0, false, 64u << 20, ENGINE_EVICT_NONE, 8u << 20);
	ASSERT_EQ(run("set keep 0 0 1\r\nk\r\n"), "STORED\r\n");
	while (n < 100000 && run("set f" + std::to_string(n) + " 0 0 1000\r\n" + v + "\r\n") ==
				     "STORED\r\n")
		n++;
	ASSERT_LT(n, 100000u) << "the heap never filled";
	/* the touched item moves to a segment of its new TTL bucket: with no
	 * room and no eviction the client learns it from the server, as for
	 * a set, and the item is still there */
	EXPECT_EQ(run("touch keep 100\r\n"), "SERVER_ERROR out of memory storing object\r\n");
	EXPECT_EQ(run("get keep\r\n"), "VALUE keep 0 1\r\nk\r\nEND\r\n");
}

TEST_F(Cmd, GatOfALargeValueTouchesOnce)
{
	std::string v(100000, 'g');

	ASSERT_EQ(run("set big 0 0 100000\r\n" + v + "\r\n"), "STORED\r\n");
	/* the value does not fit the room first offered: the copy is
	 * retried, the touch is not */
	EXPECT_EQ(run("gat 10 big\r\n"), "VALUE big 0 100000\r\n" + v + "\r\nEND\r\n");
	EXPECT_EQ(run("mg big T20 v t\r\n"), "VA 100000 t20\r\n" + v + "\r\n");
	EXPECT_EQ(stat("stats\r\n", "cmd_touch"), 2u);
	EXPECT_EQ(stat("stats\r\n", "touch_hits"), 2u);
}

TEST_F(Cmd, Expiry)
{
	EXPECT_EQ(run("set a 0 10 1\r\nx\r\nset b 0 -1 1\r\nx\r\nget a b\r\n"),
		  "STORED\r\nSTORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
	/* an absolute unix time */
	EXPECT_EQ(run("set c 0 " + std::to_string(clock.now + 5) + " 1\r\nx\r\nget c\r\n"),
		  "STORED\r\nVALUE c 0 1\r\nx\r\nEND\r\n");
	clock.now += 11;
	EXPECT_EQ(run("get a c\r\n"), "END\r\n");
}

TEST_F(Cmd, Noreply)
{
	EXPECT_EQ(run("set a 0 0 1 noreply\r\nx\r\nadd a 0 0 1 noreply\r\ny\r\n"
		      "replace a 0 0 1 noreply\r\nz\r\nappend a 0 0 1 noreply\r\n!\r\n"
		      "prepend a 0 0 1 noreply\r\n<\r\ncas a 0 0 1 1 noreply\r\nq\r\n"
		      "incr a 1 noreply\r\ntouch a 10 noreply\r\ndelete nokey noreply\r\n"
		      "flush_all noreply\r\nverbosity 1 noreply\r\nget a\r\n"),
		  "END\r\n");
	/* errors of a noreply line are quiet too, as in memcached */
	EXPECT_EQ(run("set a x 0 1 noreply\r\nincr a x noreply\r\nset " + std::string(251, 'k') +
		      " 0 0 1 noreply\r\nx\r\nmn\r\n"),
		  "ERROR\r\nMN\r\n");
	EXPECT_EQ(run("set a 0 0 1 noreply\r\nabc\r\nmn\r\n"), "ERROR\r\nMN\r\n");
}

TEST_F(Cmd, ErrorsAndResync)
{
	EXPECT_EQ(run("bogus\r\n\r\nGET a\r\nget\r\n"), "ERROR\r\nERROR\r\nERROR\r\nERROR\r\n");
	EXPECT_EQ(run("set a 0 0 1\r\nabc\r\nget a\r\n"),
		  "CLIENT_ERROR bad data chunk\r\nERROR\r\nEND\r\n");
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nset a 0 0 1\r\nyz\r\nget a\r\n"),
		  "STORED\r\nCLIENT_ERROR bad data chunk\r\nERROR\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
	EXPECT_EQ(run("set a 0 0 -1\r\nget a\r\n"),
		  "CLIENT_ERROR bad command line format\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
	EXPECT_EQ(run("get a " + std::string(251, 'k') + "\r\n"),
		  "CLIENT_ERROR bad command line format\r\n");
	EXPECT_EQ(run("delete a 1\r\n"),
		  "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
	EXPECT_EQ(run("incr a -1\r\ntouch a x\r\ngat x a\r\n"),
		  "CLIENT_ERROR invalid numeric delta argument\r\n"
		  "CLIENT_ERROR invalid exptime argument\r\n"
		  "CLIENT_ERROR invalid exptime argument\r\n");
}

TEST_F(Cmd, LongLinesClose)
{
	EXPECT_EQ(run(std::string(3000, 'x')), "");
	EXPECT_TRUE(last_actions & CMD_ACT_CLOSE);
	make(); /* a new connection */
	EXPECT_EQ(run(std::string(2048, 'x')), "");
	EXPECT_EQ(last_actions, 0u);
	EXPECT_EQ(pending.size(), 2048u); /* waits for the rest of the line */
	EXPECT_FALSE(cmd_conn_busy(c));
	make();
	/* a long multi-get is answered, whatever its arrival */
	std::string in = "get";
	for (int i = 0; i < 500; i++)
		in += " k" + std::to_string(i);
	EXPECT_EQ(run("set k7 0 0 1\r\n7\r\n" + in + "\r\n", 1000),
		  "STORED\r\nVALUE k7 0 1\r\n7\r\nEND\r\n");
}

TEST_F(Cmd, TooLargeIsSwallowedAndDropsTheOldValue)
{
	make(2048);
	std::string big(3000, 'v');

	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nset a 0 0 3000\r\n" + big + "\r\nget a\r\n", 100),
		  "STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n");
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nadd a 0 0 3000\r\n" + big + "\r\nget a\r\n"),
		  "STORED\r\nSERVER_ERROR object too large for cache\r\n"
		  "VALUE a 0 1\r\nx\r\nEND\r\n");
	EXPECT_EQ(run("set a 0 0 3000 noreply\r\n" + big + "\r\nmn\r\n"), "MN\r\n");
	/* too large for the engine once its header is counted */
	std::string edge(2048, 'e');
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nset a 0 0 2048\r\n" + edge + "\r\nget a\r\n"),
		  "STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n");
	/* meta set: the old value goes whatever the mode */
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nms a 3000 MA q\r\n" + big + "\r\nget a\r\n"),
		  "STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n");
	EXPECT_GE(stat("stats\r\n", "store_too_large"), 4u);
	EXPECT_EQ(stat("stats\r\n", "delete_hits"), 0u); /* not counted as deletes */
}

/* The stack has no memory for a data block (cmd_conn_refuse_data): the
 * request is refused as memcached refuses an item it cannot allocate, a
 * set's old value goes, the rest of the block is swallowed however it
 * arrives, and the next request is answered. */
TEST_F(Cmd, DataBlockRefusedForMemoryIsSwallowed)
{
	std::string big(5000, 'v');
	std::string head = "set a 0 0 5000 noreply\r\n" + big.substr(0, 1000);
	unsigned actions = 0;

	EXPECT_EQ(run("set a 0 0 1\r\nx\r\n"), "STORED\r\n");
	/* nothing pending: nothing to refuse */
	EXPECT_EQ(cmd_conn_data_need(c), 0u);
	EXPECT_FALSE(cmd_conn_refuse_data(c, "", 0, &out));
	EXPECT_EQ(cmd_process(c, head.data(), head.size(), &out, &actions), 0u);
	EXPECT_EQ(cmd_conn_data_need(c), head.size() - 1000 + 5000 + 2);
	ASSERT_TRUE(cmd_conn_refuse_data(c, head.data(), head.size(), &out));
	EXPECT_EQ(cmd_conn_data_need(c), 0u);
	/* errors are sent whatever noreply says, as memcached's out_errstring */
	EXPECT_EQ(std::string(out.data + out.head, proto_out_pending(&out)),
		  "SERVER_ERROR out of memory storing object\r\n");
	proto_out_consume(&out, proto_out_pending(&out));
	EXPECT_EQ(run(big.substr(1000) + "\r\nget a\r\n", 700), "END\r\n");
	EXPECT_EQ(stats_counter(ENGINE_C_set_no_memory), 1u);
	/* ms with a base64 key: the key decoded, its old value dropped too */
	EXPECT_EQ(run("set b 0 0 1\r\ny\r\n"), "STORED\r\n");
	head = "ms Yg== 5000 b\r\n" + big.substr(0, 10);
	EXPECT_EQ(cmd_process(c, head.data(), head.size(), &out, &actions), 0u);
	ASSERT_TRUE(cmd_conn_refuse_data(c, head.data(), head.size(), &out));
	proto_out_consume(&out, proto_out_pending(&out));
	EXPECT_EQ(run(big.substr(10) + "\r\nget b\r\nmn\r\n"), "END\r\nMN\r\n");
	/* add keeps the old value, as memcached's failed allocation does */
	head = "add a 0 0 5000\r\n";
	EXPECT_EQ(run("set a 0 0 1\r\nz\r\n"), "STORED\r\n");
	EXPECT_EQ(cmd_process(c, head.data(), head.size(), &out, &actions), 0u);
	ASSERT_TRUE(cmd_conn_refuse_data(c, head.data(), head.size(), &out));
	proto_out_consume(&out, proto_out_pending(&out));
	EXPECT_EQ(run(big + "\r\nget a\r\n"), "VALUE a 0 1\r\nz\r\nEND\r\n");
}

TEST_F(Cmd, OtherCommands)
{
	EXPECT_EQ(run("version\r\n"), "VERSION 1.6.18-segcached\r\n");
	EXPECT_EQ(run("verbosity 5\r\n"), "OK\r\n");
	EXPECT_EQ(cmd_verbosity(&s), 2); /* memcached caps it */
	EXPECT_EQ(run("mn\r\n"), "MN\r\n");
	EXPECT_EQ(run("shutdown\r\n"), "ERROR: shutdown not enabled\r\n");
	EXPECT_EQ(run("quit\r\nget a\r\n"), "");
	EXPECT_EQ(last_actions, CMD_ACT_CLOSE);
	EXPECT_EQ(left, 7u); /* the get after quit is not executed */
}

TEST_F(Cmd, Shutdown)
{
	s.shutdown_enabled = true;
	EXPECT_EQ(run("shutdown x\r\n"), "CLIENT_ERROR invalid shutdown mode\r\n");
	EXPECT_EQ(run("shutdown graceful\r\n"), "");
	EXPECT_TRUE(last_actions & CMD_ACT_SHUTDOWN);
	EXPECT_EQ(run("shutdown\r\nversion\r\n"), "");
	EXPECT_TRUE(last_actions & CMD_ACT_SHUTDOWN);
}

TEST_F(Cmd, FlushAll)
{
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nflush_all\r\nget a\r\n"), "STORED\r\nOK\r\nEND\r\n");
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nflush_all 10\r\nget a\r\n"),
		  "STORED\r\nOK\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
	clock.now += 11;
	EXPECT_EQ(run("get a\r\n"), "END\r\n");
	EXPECT_EQ(run("flush_all x\r\n"), "CLIENT_ERROR invalid exptime argument\r\n");
	s.flush_disabled = true;
	EXPECT_EQ(run("set a 0 0 1\r\nx\r\nflush_all\r\nflush_all noreply\r\n"
		      "flush_all x\r\nget a\r\n"),
		  "STORED\r\nCLIENT_ERROR flush_all not allowed\r\n"
		  "CLIENT_ERROR flush_all not allowed\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
	EXPECT_EQ(stat("stats\r\n", "cmd_flush"), 6u);
}

TEST_F(Cmd, MetaGet)
{
	run("ms m 2 T0 F5\r\nhi\r\n");
	EXPECT_EQ(run("mg m\r\nmg m v\r\n"), "HD\r\nVA 2\r\nhi\r\n");
	EXPECT_EQ(run("mg m s v f t k O55 q\r\n"), "VA 2 s2 f5 t-1 km O55\r\nhi\r\n");
	EXPECT_EQ(run("mg nokey\r\nmg nokey q\r\nmg nokey k O1 v s\r\nmn\r\n"),
		  "EN\r\nEN knokey O1\r\nMN\r\n");
	EXPECT_EQ(run("mg m T30 t\r\nmg m t T40\r\nmg m t\r\n"), "HD t30\r\nHD t30\r\nHD t40\r\n");
	clock.now += 10;
	EXPECT_EQ(run("mg m t v\r\n"), "VA 2 t30\r\nhi\r\n");
	/* h: fetched before this request */
	run("ms h 1\r\nx\r\n");
	EXPECT_EQ(run("mg h h v\r\nmg h h v\r\n"), "VA 1 h0\r\nx\r\nVA 1 h1\r\nx\r\n");
	/* binary keys go back base64 encoded */
	EXPECT_EQ(run("ms bWtleQ== 2 b k\r\nhi\r\nmg bWtleQ== b k v\r\nmg mkey v\r\n"),
		  "HD kbWtleQ== b\r\nVA 2 kbWtleQ== b\r\nhi\r\nVA 2\r\nhi\r\n");
	/* l: the engine keeps no last-access time */
	EXPECT_EQ(run("mg m l\r\n"), "CLIENT_ERROR invalid flag\r\n");
	EXPECT_EQ(run("mg m v v\r\nmg m O123456789012345678901234567890123\r\n"),
		  "CLIENT_ERROR duplicate flag\r\nCLIENT_ERROR opaque token too long\r\n");
	/* c returns the cas gets returns */
	std::string g = run("gets m\r\n"), mgc = run("mg m c\r\n");
	std::string cas = g.substr(g.rfind(' ', g.find("\r\n")) + 1);
	cas = cas.substr(0, cas.find("\r\n"));
	EXPECT_EQ(mgc, "HD c" + cas + "\r\n");
}

TEST_F(Cmd, MetaSet)
{
	EXPECT_EQ(run("ms m 2\r\nhi\r\nms m 2 q\r\nhi\r\nmn\r\nms m 2 O123 k\r\nhi\r\n"),
		  "HD\r\nMN\r\nHD O123 km\r\n");
	EXPECT_EQ(run("ms m 2 ME\r\nhi\r\nms new 2 ME\r\nhi\r\nms nokey 2 MR\r\nhi\r\n"
		      "ms m 1 MA\r\n!\r\nms m 1 MP\r\n<\r\nmg m v\r\nms nokey 2 MA\r\nhi\r\n"),
		  "NS\r\nHD\r\nNS\r\nHD\r\nHD\r\nVA 4\r\n<hi!\r\nNS\r\n");
	EXPECT_EQ(run("ms m 1 C1\r\nx\r\nms nokey 1 C1\r\nx\r\nms m 1 C0\r\nx\r\n"
		      "ms m 2 q C1\r\nhi\r\n"),
		  "EX\r\nNF\r\nEX\r\nEX\r\n");
	EXPECT_EQ(run("ms m 1 q ME c\r\nx\r\n"), "NS c0\r\n");
	/* ms c returns the new cas; C with it succeeds once */
	std::string r = run("ms m 1 c\r\nx\r\n");
	ASSERT_EQ(r.substr(0, 4), "HD c");
	std::string cas = r.substr(4, r.size() - 6);
	EXPECT_EQ(run("ms m 1 C" + cas + "\r\ny\r\nms m 1 C" + cas + "\r\nz\r\nmg m v\r\n"),
		  "HD\r\nEX\r\nVA 1\r\ny\r\n");
	/* append with a cas compare */
	r = run("ms m 1 c\r\nx\r\n");
	cas = r.substr(4, r.size() - 6);
	EXPECT_EQ(run("ms m 1 MA C1\r\n!\r\nms m 1 MA C" + cas + "\r\n!\r\nmg m v\r\n"),
		  "EX\r\nHD\r\nVA 2\r\nx!\r\n");
	EXPECT_EQ(run("ms m 2 T10 F7\r\nhi\r\nmg m f t\r\n"), "HD\r\nHD f7 t10\r\n");
	EXPECT_EQ(run("ms m 2 MX\r\nhi\r\nmn\r\nms m 1 q\r\nxyz\r\nmn\r\n"),
		  "CLIENT_ERROR invalid mode for ms M token\r\nMN\r\n"
		  "CLIENT_ERROR bad data chunk\r\nERROR\r\nMN\r\n");
}

TEST_F(Cmd, MetaDeleteAndArithmetic)
{
	run("ms m 1\r\nx\r\n");
	EXPECT_EQ(run("md m q\r\nmd m q\r\nmd m O1 k\r\nmn\r\n"), "NF\r\nNF O1 km\r\nMN\r\n");
	run("ms m 1\r\nx\r\n");
	EXPECT_EQ(run("md m C1\r\nmd m C0\r\nmd nokey C0\r\nmd m\r\n"), "EX\r\nEX\r\nNF\r\nHD\r\n");
	EXPECT_EQ(run("ma cnt\r\nma cnt N0 J10 v\r\nma cnt v\r\nma cnt MD D3 v\r\n"
		      "ma cnt M- D100 v\r\n"
		      "ma cnt q\r\nma cnt q v\r\nmn\r\nma nokey q\r\nma nokey O1 k\r\n"),
		  "NF\r\nVA 2\r\n10\r\nVA 2\r\n11\r\nVA 1\r\n8\r\nVA 1\r\n0\r\nMN\r\nNF\r\n"
		  "NF O1 knokey\r\n");
	/* a created counter is reported even with q */
	EXPECT_EQ(run("ma fresh N0 J5 q v\r\n"), "VA 1\r\n5\r\n");
	EXPECT_EQ(run("ma cnt T100 t v\r\n"), "VA 1 t100\r\n3\r\n");
	clock.now += 40;
	EXPECT_EQ(run("ma cnt t v\r\n"), "VA 1 t60\r\n4\r\n");
	/* C: compare first */
	std::string r = run("mg cnt c\r\n");
	std::string cas = r.substr(4, r.size() - 6);
	EXPECT_EQ(run("ma cnt C1 v\r\nma cnt C" + cas + " v\r\nma cnt C" + cas +
		      " v\r\nma cnt C0 v\r\n"),
		  "EX\r\nVA 1\r\n5\r\nEX\r\nVA 1\r\n6\r\n");
	EXPECT_EQ(run("ms nn 2\r\nab\r\nma nn\r\n"),
		  "HD\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
	EXPECT_EQ(run("me nokey\r\n"), "EN\r\n");
	r = run("ms m 3 T10\r\nabc\r\nme m\r\n");
	EXPECT_EQ(r.substr(0, 20), "HD\r\nME m exp=10 cas=");
	EXPECT_NE(r.find(" fetch=no size=4\r\n"), std::string::npos) << r;
	EXPECT_EQ(stat("stats\r\n", "cmd_meta"), 2u); /* me commands */
}

TEST_F(Cmd, SplitAtEveryByte)
{
	const std::string script =
		"set a 1 2 3\r\nabc\r\nget a b\r\nappend a 0 0 2\r\nde\r\nmg a v k O1 q s\r\n"
		"ms b 4 T9 F2\r\nwxyz\r\ndelete a noreply\r\nset n 0 0 2\r\n10\r\nincr n 5\r\n"
		"touch b 3\r\nset z 0 0 1\r\nabc\r\nmn\r\ngat 1 b\r\nma n MD v\r\nmd b q\r\n"
		"verbosity 1\r\nbogus\r\nversion\r\nget n\0x\r\nmg nokey k\r\n"s;
	std::string want = run(script);

	ASSERT_EQ(want.substr(0, 8), "STORED\r\n");
	for (size_t cut = 1; cut < script.size(); cut++) {
		make();
		std::string got = run(script.substr(0, cut));

		got += run(script.substr(cut));
		ASSERT_EQ(got, want) << "cut at " << cut;
	}
	make();
	EXPECT_EQ(run(script, 1), want);
}

TEST_F(Cmd, PipelineOfManyRequests)
{
	std::string in, want;

	for (int i = 0; i < 1000; i++) {
		std::string k = "key" + std::to_string(i), v = std::to_string(i * 7);

		in += "set " + k + " " + std::to_string(i) + " 0 " + std::to_string(v.size()) +
		      "\r\n" + v + "\r\nget " + k + "\r\n";
		want += "STORED\r\nVALUE " + k + " " + std::to_string(i) + " " +
			std::to_string(v.size()) + "\r\n" + v + "\r\nEND\r\n";
	}
	EXPECT_EQ(run(in), want);
	EXPECT_EQ(run(in, 1400), want);
}

TEST_F(Cmd, ValuesOfEverySizeAndHeaderShape)
{
	/* sizes around the first room offered, header lengths that differ
	 * from the previous value's (the body moves once then) */
	std::vector<std::pair<std::string, std::string>> items;
	std::string get = "get", want;

	for (size_t n : { 0, 1, 9, 10, 99, 100, 4095, 4096, 4097, 60000, 200000, 5, 1000000 }) {
		std::string k = "k" + std::to_string(n), v(n, (char)('a' + n % 26));
		uint32_t flags = n % 2 ? 4294967295u : 0;

		ASSERT_EQ(run("set " + k + " " + std::to_string(flags) + " 0 " + std::to_string(n) +
			      "\r\n" + v + "\r\n"),
			  "STORED\r\n");
		get += " " + k;
		want += "VALUE " + k + " " + std::to_string(flags) + " " + std::to_string(n) +
			"\r\n" + v + "\r\n";
	}
	EXPECT_EQ(run(get + "\r\n"), want + "END\r\n");
}

TEST_F(Cmd, BackpressureStopsAndResumes)
{
	std::string v(10000, 'v'), in = "set a 0 0 10000\r\n" + v + "\r\n", want = "STORED\r\n";

	for (int i = 0; i < 50; i++) {
		in += "get a a a\r\n";
		want += "VALUE a 0 10000\r\n" + v + "\r\n" + "VALUE a 0 10000\r\n" + v + "\r\n" +
			"VALUE a 0 10000\r\n" + v + "\r\nEND\r\n";
	}
	std::string unbounded = run(in);
	EXPECT_EQ(unbounded, want);

	/* with a bound, cmd_process returns early: the output never holds
	 * more than the bound plus one value */
	out.backpressure = 16384;
	std::string got;
	std::string buf = in;
	size_t max_pending = 0, calls = 0;
	while (!buf.empty()) {
		unsigned actions;
		size_t used = cmd_process(c, buf.data(), buf.size(), &out, &actions);

		ASSERT_EQ(actions, 0u);
		max_pending = std::max(max_pending, proto_out_pending(&out));
		got.append(out.data + out.head, proto_out_pending(&out));
		proto_out_consume(&out, proto_out_pending(&out));
		buf.erase(0, used);
		calls++;
		ASSERT_LT(calls, 10000u);
	}
	EXPECT_EQ(got, want);
	EXPECT_LT(max_pending, 16384u + 10100u);
	EXPECT_GT(calls, 10u);
}

/* Issue 8: get and gets keys go to the engine in batches (of one line
 * or of pipelined lines, up to CMD_BATCH_MAX keys). The replies, the
 * counters and the requests counted are those of one key at a time,
 * whatever the batch boundaries, the input's splits and the output bound
 * (a batch that stops early rewinds the loop to its last key answered). */
TEST_F(Cmd, BatchedGetsAnswerAsOneKeyAtATime)
{
	std::string in, want, set;
	uint64_t requests = 0, hits = 0, misses = 0;

	for (int i = 0; i < 120; i += 2) {
		std::string k = "bk" + std::to_string(i), v(i * 97 % 3000, (char)('a' + i % 26));

		set += "set " + k + " " + std::to_string(i) + " 0 " + std::to_string(v.size()) +
		       "\r\n" + v + "\r\n";
	}
	ASSERT_EQ(run(set).size(), 60u * 8);
	/* lines of 1 to 100 keys, get and gets, some other requests between */
	for (int line = 0; line < 40; line++) {
		int nkeys = 1 + line * 37 % 100;
		bool gets = line % 3 == 1;

		in += gets ? "gets" : "get";
		for (int j = 0; j < nkeys; j++) {
			int i = (line * 13 + j * 7) % 120;
			std::string k = "bk" + std::to_string(i);

			in += " " + k;
			requests++;
			if (i % 2) {
				misses++;
				continue;
			}
			hits++;
			std::string v(i * 97 % 3000, (char)('a' + i % 26));
			struct engine_item it;
			ASSERT_EQ(engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, nullptr, 0, &it),
				  ENGINE_BUF_SMALL);
			want += "VALUE " + k + " " + std::to_string(i) + " " +
				std::to_string(v.size()) +
				(gets ? " " + std::to_string(it.cas) : std::string()) + "\r\n" + v +
				"\r\n";
		}
		in += "\r\n";
		want += "END\r\n";
		if (line % 5 == 4) {
			in += "version\r\n";
			want += "VERSION 1.6.18-segcached\r\n";
			requests++;
		}
	}
	uint64_t base_requests = cmd_conn_requests(c);
	uint64_t base_gets = stats_counter(ENGINE_C_cmd_get);
	uint64_t base_hits = stats_counter(ENGINE_C_get_hits);
	EXPECT_EQ(run(in), want);
	EXPECT_EQ(cmd_conn_requests(c) - base_requests, requests);
	EXPECT_EQ(stats_counter(ENGINE_C_cmd_get) - base_gets, hits + misses);
	EXPECT_EQ(stats_counter(ENGINE_C_get_hits) - base_hits, hits);
	for (size_t chunk : {1u, 7u, 1400u, 9000u}) {
		base_requests = cmd_conn_requests(c);
		base_gets = stats_counter(ENGINE_C_cmd_get);
		EXPECT_EQ(run(in, chunk), want) << "chunks of " << chunk;
		EXPECT_EQ(cmd_conn_requests(c) - base_requests, requests) << chunk;
		EXPECT_EQ(stats_counter(ENGINE_C_cmd_get) - base_gets, hits + misses) << chunk;
	}
	/* an output bound that batches hit in their middle */
	for (size_t bound : {1u, 5000u, 16384u}) {
		out.backpressure = bound;
		base_requests = cmd_conn_requests(c);
		base_gets = stats_counter(ENGINE_C_cmd_get);
		EXPECT_EQ(run(in), want) << "bound " << bound;
		EXPECT_EQ(cmd_conn_requests(c) - base_requests, requests) << bound;
		EXPECT_EQ(stats_counter(ENGINE_C_cmd_get) - base_gets, hits + misses) << bound;
	}
}

/* The batched path (TCP) against the one-key-at-a-time path, which UDP
 * connections keep: the same stream of get, gets, mg (batched) and mn,
 * version, mg with l (not) must give the same bytes. Nothing that
 * rewrites an item (gat, mg T: new cas) and no 'h' flag: the first run's
 * reads set it for the second. */
TEST_F(Cmd, BatchedGetsAndMgMatchTheUnbatchedPath)
{
	std::string set, in;
	uint64_t rng = 12345;
	auto next = [&rng]() {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		return rng;
	};
	for (int i = 0; i < 50; i++) {
		std::string v(i * 37 % 200, (char)('a' + i % 26));
		set += "set mk" + std::to_string(i) + " " + std::to_string(i) + " 0 " +
		       std::to_string(v.size()) + "\r\n" + v + "\r\n";
	}
	run(set);
	static const char *const mg_flags[] = {"v", "v f c k O77 s t", "s k q", "", "q v",
					       "k O1 c f", "v t", "v l"};
	for (int r = 0; r < 400; r++) {
		unsigned what = next() % 10;
		std::string k = "mk" + std::to_string(next() % 60); /* some missing */
		if (what < 3) {
			in += what == 0 ? "gets" : "get";
			for (unsigned j = 0, n = 1 + next() % 40; j < n; j++)
				in += " mk" + std::to_string(next() % 60);
			in += "\r\n";
		} else if (what < 8) {
			in += "mg " + k + " " + mg_flags[next() % 8] + "\r\n";
		} else if (what == 8) {
			in += "mn\r\n";
		} else {
			in += "version\r\n";
		}
	}
	/* the reference: a UDP connection (never batched), whole stream at once */
	struct cmd_conn *ref = cmd_conn_create(&s, w, true);
	ASSERT_NE(ref, nullptr);
	std::string want;
	size_t used = 0;
	while (used < in.size()) {
		unsigned actions = 0;
		size_t n = cmd_process(ref, in.data() + used, in.size() - used, &out, &actions);
		ASSERT_EQ(actions, 0u);
		ASSERT_GT(n, 0u);
		used += n;
		want.append(out.data + out.head, proto_out_pending(&out));
		proto_out_consume(&out, proto_out_pending(&out));
	}
	cmd_conn_destroy(ref);
	ASSERT_NE(want.find("VA "), std::string::npos);
	ASSERT_NE(want.find("EN\r\n"), std::string::npos);
	EXPECT_EQ(run(in), want);
	EXPECT_EQ(run(in, 333), want);
	out.backpressure = 3000;
	EXPECT_EQ(run(in), want);
}

TEST_F(Cmd, GetLargerThanTheOutputLimit)
{
	make(0, false, 64 * 1024);
	std::string big(100000, 'b');

	ASSERT_EQ(run("set small 0 0 1\r\ns\r\nset big 0 0 100000\r\n" + big + "\r\n"),
		  "STORED\r\nSTORED\r\n");
	/* memcached answers the failed line with one error and nothing else */
	EXPECT_EQ(run("get small big small\r\nget small\r\n"),
		  "SERVER_ERROR out of memory writing get response\r\n"
		  "VALUE small 0 1\r\ns\r\nEND\r\n");
	EXPECT_EQ(run("mg big v\r\nmg big s\r\n"),
		  "SERVER_ERROR out of memory writing get response\r\nHD s100000\r\n");
}

TEST_F(Cmd, UdpConnectionResetsBetweenDatagrams)
{
	make(0, true);
	unsigned actions;
	std::string d1 = "set a 0 0 5\r\nab";
	size_t used = cmd_process(c, d1.data(), d1.size(), &out, &actions);

	EXPECT_EQ(used, 0u);
	EXPECT_TRUE(cmd_conn_busy(c));
	cmd_conn_reset(c);
	EXPECT_FALSE(cmd_conn_busy(c));
	std::string d2 = "get a\r\n";
	used = cmd_process(c, d2.data(), d2.size(), &out, &actions);
	EXPECT_EQ(used, d2.size());
	EXPECT_EQ(std::string(out.data + out.head, proto_out_pending(&out)), "END\r\n");
}

TEST_F(Cmd, UdpServesReadsOnlyUnlessWritesAreOn)
{
	make(0, true);
	const std::string no = "CLIENT_ERROR only reads are served over UDP\r\n";
	EXPECT_EQ(run("set k 0 0 1\r\nx\r\n"), no);
	/* issue 35: gat, gats and an mg that touches (T), creates (N) or
	 * wins a recache (R) change the item: not over UDP either */
	for (const char *req : { "delete k\r\n", "incr k 1\r\n", "touch k 1\r\n",
				 "flush_all\r\n", "stats\r\n", "verbosity 1\r\n",
				 "ms k 1\r\nx\r\n", "md k\r\n", "gat -1 k\r\n",
				 "gats 0 k\r\n", "mg k T-1 v\r\n", "mg k N30 v\r\n",
				 "mg k R30 v\r\n" }) {
		cmd_conn_reset(c);
		EXPECT_EQ(run(req), no) << req;
	}
	cmd_conn_reset(c);
	EXPECT_EQ(run("set k 0 0 1 noreply\r\nx\r\n"), ""); // noreply is honoured
	cmd_conn_reset(c);
	EXPECT_EQ(run("get k\r\n"), "END\r\n"); // nothing was stored
	EXPECT_EQ(stat("stats\r\n", "udp_refused"), UINT64_MAX); // not a general stat
	s.udp_writes = true;
	cmd_conn_reset(c);
	EXPECT_EQ(run("set k 0 0 1\r\nx\r\nget k\r\n"), "STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n");
	EXPECT_EQ(w->counters[ENGINE_C_udp_refused], 16u); // with the stats above
	s.udp_writes = false;
	cmd_conn_reset(c);
	EXPECT_EQ(run("mg k v t\r\n").substr(0, 6), "VA 1 t"); // a plain mg is a read
}

TEST_F(Cmd, UdpRepliesAreCappedPerDatagram)
{
	make(0, true);
	s.udp_writes = true;
	s.udp_reply_max = 300;
	std::string v(200, 'v');
	ASSERT_EQ(run("set a 0 0 200\r\n" + v + "\r\nset b 0 0 200\r\n" + v + "\r\n"),
		  "STORED\r\nSTORED\r\n");
	cmd_conn_reset(c);
	// One value fits; two in one get do not: the whole get line becomes
	// one error line, and the rest of the datagram is dropped.
	EXPECT_EQ(run("get a\r\n"), "VALUE a 0 200\r\n" + v + "\r\nEND\r\n");
	cmd_conn_reset(c);
	EXPECT_EQ(run("version\r\nget a b\r\nversion\r\n"),
		  "VERSION 1.6.18-segcached\r\nSERVER_ERROR reply over the UDP size limit\r\n");
	EXPECT_TRUE(last_actions & CMD_ACT_CLOSE);
	pending.clear(); // the stack drops the rest of the datagram
	// The limit is per datagram, over several cmd_process calls too.
	cmd_conn_reset(c);
	EXPECT_EQ(run("get a\r\n"), "VALUE a 0 200\r\n" + v + "\r\nEND\r\n");
	EXPECT_EQ(run("get b\r\n"), "SERVER_ERROR reply over the UDP size limit\r\n");
	EXPECT_EQ(w->counters[ENGINE_C_udp_capped], 2u);
	// Issue 35: the error line never takes the datagram's replies past
	// the cap (222 + 26 bytes fit; the next 26 would leave no room for
	// the 44-byte line, so it replaces them).
	cmd_conn_reset(c);
	std::string r = run("get a\r\nversion\r\nversion\r\nversion\r\n");
	EXPECT_EQ(r, "VALUE a 0 200\r\n" + v + "\r\nEND\r\nVERSION 1.6.18-segcached\r\n"
		  "SERVER_ERROR reply over the UDP size limit\r\n");
	EXPECT_LE(r.size(), 300u);
	pending.clear();
	// 0: no limit.
	s.udp_reply_max = 0;
	cmd_conn_reset(c);
	EXPECT_EQ(run("get a b\r\n").size(), 2 * (15 + 200 + 2) + 5);
}

/* Issue 24: UDP get keys go through engine_get_batch too. A datagram's
 * multi-key line answers as one key at a time, and the reply cap is
 * checked after every key of a batch as it was after every request: the
 * line that crosses it (from where its replies start, across pipelined
 * lines in one batch) becomes one error line and the rest is dropped. */
TEST_F(Cmd, UdpGetsBatchedAndCappedPerKey)
{
	make(0, true);
	s.udp_writes = true;
	s.udp_reply_max = 0;
	std::string set, line = "get", want;
	std::vector<size_t> reply_len;

	for (int i = 0; i < 40; i++) {
		std::string k = "uk" + std::to_string(i), v(100, (char)('a' + i % 26));

		set += "set " + k + " 0 0 100\r\n" + v + "\r\n";
		line += " " + k + (i % 10 == 3 ? " nokey" + std::to_string(i) : "");
		std::string r = "VALUE " + k + " 0 100\r\n" + v + "\r\n";
		want += r;
		reply_len.push_back(r.size());
		if (i % 10 == 3)
			reply_len.push_back(0); /* the miss after it */
	}
	ASSERT_EQ(run(set).size(), 40u * 8);
	line += "\r\n";
	cmd_conn_reset(c);
	uint64_t base_requests = cmd_conn_requests(c);
	uint64_t base_gets = stats_counter(ENGINE_C_cmd_get);
	uint64_t base_hits = stats_counter(ENGINE_C_get_hits);
	EXPECT_EQ(run(line), want + "END\r\n");
	EXPECT_EQ(cmd_conn_requests(c) - base_requests, 44u);
	EXPECT_EQ(stats_counter(ENGINE_C_cmd_get) - base_gets, 44u);
	EXPECT_EQ(stats_counter(ENGINE_C_get_hits) - base_hits, 40u);

	/* the cap crossed in the middle of the line: the requests counted are
	 * those up to the key that crossed it, as one at a time */
	s.udp_reply_max = 1000;
	std::string version = "VERSION 1.6.18-segcached\r\n";
	size_t sent = version.size(), upto = 0;
	/* held to the cap less the error line's 44 bytes (issue 35) */
	while (sent <= 1000 - 44)
		sent += reply_len[upto++];
	cmd_conn_reset(c);
	base_requests = cmd_conn_requests(c);
	uint64_t base_capped = w->counters[ENGINE_C_udp_capped];
	EXPECT_EQ(run("version\r\n" + line + "version\r\n"),
		  version + "SERVER_ERROR reply over the UDP size limit\r\n");
	EXPECT_TRUE(last_actions & CMD_ACT_CLOSE);
	pending.clear();
	EXPECT_EQ(cmd_conn_requests(c) - base_requests, 1 + upto);
	EXPECT_EQ(w->counters[ENGINE_C_udp_capped] - base_capped, 1u);

	/* pipelined lines in one batch: the line before keeps its replies */
	cmd_conn_reset(c);
	std::string v0(100, 'a');
	EXPECT_EQ(run("get uk0\r\n" + line),
		  "VALUE uk0 0 100\r\n" + v0 + "\r\nEND\r\n" +
			  "SERVER_ERROR reply over the UDP size limit\r\n");
	EXPECT_TRUE(last_actions & CMD_ACT_CLOSE);
	pending.clear();
}

TEST_F(Cmd, StatsGeneral)
{
	run("set a 0 0 1\r\n1\r\nget a nokey\r\ndelete nokey\r\nincr a 1\r\ntouch a 1\r\n");
	std::string r = run("stats\r\n");
	std::vector<std::string> names;

	for (size_t at = 0; (at = r.find("STAT ", at)) != std::string::npos; at += 5)
		names.push_back(r.substr(at + 5, r.find(' ', at + 5) - at - 5));
	/* memcached's order, for the fields segcached fills */
	const std::vector<std::string> want = {
		"pid", "uptime", "time", "version", "pointer_size", "rusage_user", "rusage_system",
		"max_connections", "curr_connections", "total_connections", "rejected_connections",
		"connection_structures", "reserved_fds", "cmd_get", "cmd_set", "cmd_flush",
		"cmd_touch", "cmd_meta", "get_hits", "get_misses", "get_expired", "get_flushed",
		"delete_misses", "delete_hits", "incr_misses", "incr_hits", "decr_misses",
		"decr_hits", "cas_misses", "cas_hits", "cas_badval", "touch_hits", "touch_misses",
		"store_too_large", "store_no_memory", "store_streamed", "store_stream_lost", "auth_cmds", "auth_errors", "bytes_read",
		"bytes_written", "limit_maxbytes", "accepting_conns", "listen_disabled_num",
		"time_in_listen_disabled_us", "threads", "conn_yields", "hash_power_level",
		"hash_bytes", "hash_is_expanding", "bytes", "curr_items", "total_items",
		"expired_unfetched", "evicted_unfetched", "evictions", "reclaimed",
		/* segcached's own, after memcached's */
		"admin_connections", "conns_refused_per_source", "conns_request_timeouts",
		"conns_write_timeouts", "conn_buffer_in_bytes", "conn_buffer_out_bytes",
		"conn_buffer_in_refused", "conns_slow_readers_closed", "hash_chain_mean",
		"hash_chain_max",
	};
	EXPECT_EQ(names, want);
	EXPECT_EQ(r.substr(r.size() - 5), "END\r\n");
	EXPECT_NE(r.find("STAT pid 4242\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT version 1.6.18-segcached\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT rusage_user 1.500001\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT rusage_system 0.000020\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT pointer_size 64\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT cmd_get 2\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT get_hits 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT get_misses 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT delete_misses 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT incr_hits 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT touch_hits 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT curr_items 1\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT limit_maxbytes 67108864\r\n"), std::string::npos);
	EXPECT_NE(r.find("STAT total_connections 7\r\n"), std::string::npos);
}

/* Issue 10: a connection from the admin port serves the administration
 * commands and nothing that reads or writes items. */
TEST_F(Cmd, AdminConnectionServesAdministrationOnly)
{
	const std::string no = "CLIENT_ERROR only administration commands on the admin port\r\n";

	cmd_conn_set_admin(c);
	for (const char *req : { "set k 0 0 1\r\nx\r\n", "add k 0 0 1 noreply\r\nx\r\n",
				 "get k\r\n", "gets k\r\n", "gat 10 k\r\n", "delete k\r\n",
				 "incr k 1\r\n", "touch k 1\r\n", "flush_all\r\n",
				 "mg k v\r\n", "ms k 1\r\nx\r\n", "md k\r\n", "ma k\r\n",
				 "mn\r\n", "me k\r\n" })
		EXPECT_EQ(run(req), no) << req; /* noreply or not: the refusal is said */
	EXPECT_EQ(run("version\r\n"), "VERSION 1.6.18-segcached\r\n");
	s.admin_all = true; /* --admin-commands all */
	EXPECT_EQ(run("verbosity 1\r\n"), "OK\r\n");
	EXPECT_EQ(stat("stats\r\n", "pid"), 4242u);
	EXPECT_EQ(stat("stats settings\r\n", "maxconns"), 1024u);
	EXPECT_EQ(run("shutdown\r\n"), "ERROR: shutdown not enabled\r\n");
	EXPECT_EQ(run("bogus\r\n"), "ERROR\r\n"); /* unknown: as anywhere */
	/* a data block was swallowed with its refused command, not run */
	EXPECT_EQ(run("set k 0 0 3\r\nabc\r\nversion\r\n"),
		  no + "VERSION 1.6.18-segcached\r\n");
	EXPECT_EQ(stat("stats\r\n", "curr_items"), 0u);
	run("quit\r\n");
	EXPECT_TRUE(last_actions & CMD_ACT_CLOSE);
	/* an ordinary connection on the same engine is served as ever */
	make();
	EXPECT_EQ(run("set k 0 0 1\r\nx\r\nget k\r\n"),
		  "STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n");
}

TEST_F(Cmd, RequestsAreCountedWhenComplete)
{
	EXPECT_EQ(cmd_conn_requests(c), 0u);
	run("version\r\nbogus\r\nset k 0 0 5\r\nab");
	EXPECT_EQ(cmd_conn_requests(c), 2u); /* the set is not complete */
	run("cde\r\n");
	EXPECT_EQ(cmd_conn_requests(c), 3u);
}

TEST_F(Cmd, StatsReset)
{
	run("set a 0 0 1\r\nx\r\nget a\r\nget a\r\nflush_all\r\n");
	EXPECT_EQ(stat("stats\r\n", "cmd_get"), 2u);
	EXPECT_EQ(stat("stats\r\n", "cmd_flush"), 1u);
	EXPECT_EQ(run("stats reset\r\n"), "RESET\r\n");
	EXPECT_EQ(stat("stats\r\n", "cmd_get"), 0u);
	EXPECT_EQ(stat("stats\r\n", "cmd_set"), 0u);
	EXPECT_EQ(stat("stats\r\n", "cmd_flush"), 0u);
	EXPECT_EQ(stat("stats\r\n", "total_connections"), 0u);
	server.total_connections += 2;
	run("get a\r\n");
	EXPECT_EQ(stat("stats\r\n", "cmd_get"), 1u);
	EXPECT_EQ(stat("stats\r\n", "total_connections"), 2u);
	/* gauges are not reset */
	EXPECT_EQ(stat("stats\r\n", "curr_connections"), 3u);
	EXPECT_EQ(stat("stats\r\n", "admin_connections"), 1u);
	/* segcached's own counters are */
	EXPECT_EQ(stat("stats\r\n", "conns_refused_per_source"), 0u);
	server.refused_per_source += 4;
	server.request_timeouts += 1;
	server.write_timeouts += 2;
	EXPECT_EQ(stat("stats\r\n", "conns_refused_per_source"), 4u);
	EXPECT_EQ(stat("stats\r\n", "conns_request_timeouts"), 1u);
	EXPECT_EQ(stat("stats\r\n", "conns_write_timeouts"), 2u);
	EXPECT_EQ(stat("stats settings\r\n", "max_conns_per_source"), 64u);
	EXPECT_EQ(stat("stats settings\r\n", "request_timeout"), 30u);
	EXPECT_EQ(stat("stats settings\r\n", "admin_port"), 11212u);
	EXPECT_EQ(stat("stats settings\r\n", "metrics_port"), 9150u);
	EXPECT_EQ(stat("stats settings\r\n", "tcp_buffer_memory"), 256u << 20);
}

/* memcached's idle_kicks: after auth_errors, only with an idle timeout,
 * and reset by `stats reset`. */
TEST_F(Cmd, StatsIdleKicks)
{
	EXPECT_EQ(run("stats\r\n").find("idle_kicks"), std::string::npos);
	server.idle_timeout = 5;
	server.idle_kicks = 4;
	std::string r = run("stats\r\n");
	EXPECT_NE(r.find("STAT auth_errors 0\r\nSTAT idle_kicks 4\r\nSTAT bytes_read "),
		  std::string::npos) << r;
	EXPECT_EQ(run("stats reset\r\n"), "RESET\r\n");
	EXPECT_EQ(stat("stats\r\n", "idle_kicks"), 0u);
	server.idle_kicks += 3;
	EXPECT_EQ(stat("stats\r\n", "idle_kicks"), 3u);
	EXPECT_EQ(stat("stats settings\r\n", "idle_timeout"), 5u);
}

TEST_F(Cmd, StatsSubcommands)
{
	std::string r = run("stats settings\r\n");
	EXPECT_EQ(r.substr(0, 24), "STAT maxbytes 67108864\r\n");
	for (const char *f : { "STAT maxconns 1024\r\n", "STAT tcpport 11211\r\n",
			       "STAT inter 127.0.0.1\r\n", "STAT evictions on\r\n",
			       "STAT cas_enabled yes\r\n", "STAT item_size_max 1048576\r\n",
			       "STAT flush_enabled yes\r\n", "STAT shutdown_command no\r\n",
			       "STAT engine seg\r\n", "STAT stack posix\r\n",
			       "STAT domain_socket NULL\r\n" })
		EXPECT_NE(r.find(f), std::string::npos) << f << r;
	EXPECT_EQ(run("stats items\r\n"), "END\r\n");
	EXPECT_EQ(run("stats sizes\r\n"), "STAT sizes_status disabled\r\nEND\r\n");
	EXPECT_EQ(run("stats conns\r\n"),
		  "STAT 23:addr tcp:127.0.0.1:11211\r\nSTAT 23:state conn_listening\r\nEND\r\n");
	r = run("stats slabs\r\n");
	EXPECT_EQ(r.substr(0, 20), "STAT active_slabs 0\r");
	/* a class per TTL range that has segments: 1 never expires, 2 short */
	run("set a 0 0 3\r\nabc\r\nset b 0 100 3\r\nabc\r\nset c 0 100 3\r\nabc\r\n");
	r = run("stats items\r\n");
	EXPECT_NE(r.find("STAT items:1:number 1\r\n"), std::string::npos) << r;
	EXPECT_NE(r.find("STAT items:2:number 2\r\n"), std::string::npos) << r;
	EXPECT_EQ(r.find("items:3:"), std::string::npos) << r;
	r = run("stats slabs\r\n");
	EXPECT_NE(r.find("STAT 2:used_chunks 2\r\n"), std::string::npos) << r;
	EXPECT_NE(r.find("STAT 2:total_pages 1\r\n"), std::string::npos) << r;
	EXPECT_NE(r.find("STAT active_slabs 2\r\n"), std::string::npos) << r;
	run("delete a\r\ndelete b\r\ndelete c\r\n");
	r = run("stats segments\r\n");
	EXPECT_NE(r.find("STAT seg_size 1048576\r\n"), std::string::npos) << r;
	EXPECT_NE(r.find("STAT seg_free "), std::string::npos);
	run("get a\r\n");
	r = run("stats workers\r\n");
	EXPECT_NE(r.find("STAT worker:0:cmd_get 1\r\n"), std::string::npos) << r;
	EXPECT_EQ(run("stats bogus\r\n"), "ERROR\r\n");
}

/* ---- the command table (cmd_table.c) ------------------------------------
 * Every command has exactly one row, the parser finds every command word
 * through it, and its flags give what memcached users get today: over UDP
 * only reads (get, gets, gat, gats, mg, mn, version) unless --udp-writes,
 * on the admin port only the administration commands and errors, noreply
 * where memcached takes it. */


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
		  (std::set<proto_cmd>{ PROTO_CMD_GET, PROTO_CMD_GETS, PROTO_CMD_MG,
					PROTO_CMD_MN, PROTO_CMD_VERSION }));
	for (proto_cmd cmd : with_flag(CMD_F_WRITE))
		EXPECT_FALSE(cmd_flags(cmd) & CMD_F_UDP) << cmd_name(cmd);
}

TEST(CmdTable, AdminPortServesAdministrationAndErrors)
{
	/* counters by default; what changes the server or lists keys only
	 * with --admin-commands all (issue 35) */
	EXPECT_EQ(with_flag(CMD_F_ADMIN),
		  (std::set<proto_cmd>{ PROTO_CMD_ERROR, PROTO_CMD_STATS, PROTO_CMD_VERSION,
					PROTO_CMD_QUIT }));
	EXPECT_EQ(with_flag(CMD_F_ADMIN_ALL),
		  (std::set<proto_cmd>{ PROTO_CMD_VERBOSITY, PROTO_CMD_SHUTDOWN,
					PROTO_CMD_CACHE_MEMLIMIT, PROTO_CMD_SLABS,
					PROTO_CMD_LRU_CRAWLER }));
	for (proto_cmd cmd : with_flag(CMD_F_WRITE))
		EXPECT_FALSE(cmd_flags(cmd) & (CMD_F_ADMIN | CMD_F_ADMIN_ALL)) << cmd_name(cmd);
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
 * port: served or refused, as the table's flags say. */
TEST_F(Cmd, TableFlagsAreWhatUdpAndTheAdminPortServe)
{
	const std::string udp_no = "CLIENT_ERROR only reads are served over UDP\r\n";
	const std::string admin_no =
		"CLIENT_ERROR only administration commands on the admin port\r\n";
	auto run_on = [&](const std::string &in, bool udp, bool admin) {
		struct cmd_conn *conn = cmd_conn_create(&s, w, udp);
		unsigned actions = 0;
		std::string got;

		EXPECT_NE(conn, nullptr);
		if (admin)
			cmd_conn_set_admin(conn);
		cmd_process(conn, in.data(), in.size(), &out, &actions);
		got.assign(out.data + out.head, proto_out_pending(&out));
		proto_out_consume(&out, proto_out_pending(&out));
		cmd_conn_destroy(conn);
		return got;
	};

	const std::string counters_no = "CLIENT_ERROR the admin port serves counters only "
					"(this command needs --admin-commands all)\r\n";

	s.admin_all = true;
	for (const auto &[cmd, line] : samples()) {
		bool udp = cmd_flags(cmd) & CMD_F_UDP;
		bool admin = cmd_flags(cmd) & (CMD_F_ADMIN | CMD_F_ADMIN_ALL);

		EXPECT_EQ(run_on(line, true, false) == udp_no, !udp) << line;
		EXPECT_EQ(run_on(line, false, true) == admin_no, !admin) << line;
	}
	/* issue 35: by default the admin port serves counters only; what
	 * lists keys or clients, resets counters or changes the server is
	 * refused with a line that says how to allow it */
	s.admin_all = false;
	for (const auto &[cmd, line] : samples()) {
		bool all = cmd_flags(cmd) & CMD_F_ADMIN_ALL;

		EXPECT_EQ(run_on(line, false, true) == counters_no, all) << line;
	}
	for (const char *line : { "stats cachedump 1 0\r\n", "stats hotkeys\r\n", "stats conns\r\n",
				  "stats reset\r\n", "lru_crawler metadump all\r\n",
				  "cache_memlimit 13\r\n", "verbosity 1\r\n" })
		EXPECT_EQ(run_on(line, false, true), counters_no) << line;
	for (const char *line : { "stats\r\n", "stats settings\r\n", "stats items\r\n",
				  "stats slabs\r\n", "stats workers\r\n", "version\r\n" })
		EXPECT_NE(run_on(line, false, true).substr(0, 12), "CLIENT_ERROR") << line;
	s.admin_all = true;
	EXPECT_EQ(run_on("bogus\r\n", true, false), udp_no); /* an error is no read */
	EXPECT_EQ(run_on("bogus\r\n", false, true), "ERROR\r\n");
	s.udp_writes = true;
	for (const auto &[cmd, line] : samples())
		EXPECT_NE(run_on(line, true, false), udp_no) << line;
}

} /* namespace */

/* Issue 10, item 10: memcached 1.6.18 hangs up at once, without a reply, on
 * a line that looks like an HTTP request, so that a browser cannot be turned
 * into a client of the cache. */
TEST_F(Cmd, HttpRequestLineCloses)
{
	for (const char *line : { "GET / HTTP/1.0\r\n", "PUT /x HTTP/1.1\r\n",
				  "DELETE HTTP/1.1\r\n",
				  "POST / HTTP/1.1\r\nHost: x\r\n\r\nset a 0 0 1\r\nx\r\n" }) {
		make();
		EXPECT_EQ(run(line), "") << line;
		EXPECT_EQ(last_actions, CMD_ACT_CLOSE) << line;
	}
	/* nothing after the line ran: the set in the body above stored nothing */
	make();
	EXPECT_EQ(run("get a\r\n"), "END\r\n");
	/* memcached's own commands with such an argument, and words it
	 * dispatches by their first letter, are not closed */
	EXPECT_EQ(run("get / HTTP/1.0\r\ndelete HTTP/1.1\r\nsxx / HTTP/1.1\r\n"),
		  "END\r\nNOT_FOUND\r\nERROR\r\n");
	EXPECT_EQ(last_actions, 0u);
}

/* Issue 10, item 11: memcached's administration commands get memcached's
 * answers for a server whose feature is off, never a bare ERROR. */
TEST_F(Cmd, CacheMemlimit)
{
	/* the engine's budget is 64 MB (make()): asking for it changes nothing */
	EXPECT_EQ(run("cache_memlimit 64\r\n"), "OK\r\n");
	EXPECT_EQ(run("cache_memlimit 128\r\ncache_memlimit 8\r\n"),
		  "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n"
		  "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n");
	EXPECT_EQ(run("cache_memlimit 7\r\ncache_memlimit 0\r\ncache_memlimit 4294967296\r\n"),
		  "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n"
		  "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n"
		  "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n");
	EXPECT_EQ(run("cache_memlimit 4294967295\r\n"),
		  "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n");
	EXPECT_EQ(run("cache_memlimit 128 noreply\r\ncache_memlimit x noreply\r\nmn\r\n"),
		  "MN\r\n");
	EXPECT_EQ(run("cache_memlimit\r\ncache_memlimit x\r\ncache_memlimit 1 2 3\r\n"),
		  "CLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR bad command line format\r\n");
	/* the limit stayed */
	EXPECT_EQ(stat("stats\r\n", "limit_maxbytes"), 64u << 20);
	/* lib/seg shrinks (segments parked by engine_expire) and grows back
	 * up to its budget at start; both limits follow */
	EXPECT_EQ(run("cache_memlimit 32\r\n"), "OK\r\n");
	EXPECT_EQ(stat("stats\r\n", "limit_maxbytes"), 32u << 20);
	EXPECT_EQ(stat("stats settings\r\n", "maxbytes"), 32u << 20);
	EXPECT_EQ(run("cache_memlimit 64\r\n"), "OK\r\n");
	EXPECT_EQ(stat("stats\r\n", "limit_maxbytes"), 64u << 20);
}

TEST_F(Cmd, SlabsLruCrawlerCachedump)
{
	EXPECT_EQ(run("slabs automove 0\r\nslabs automove ratio 0.5\r\n"), "OK\r\nOK\r\n");
	EXPECT_EQ(run("slabs automove 1\r\nslabs automove 2\r\nslabs reassign 1 2\r\n"),
		  "CLIENT_ERROR slab reassignment disabled\r\n"
		  "CLIENT_ERROR slab reassignment disabled\r\n"
		  "CLIENT_ERROR slab reassignment disabled\r\n");
	EXPECT_EQ(run("slabs automove 1 noreply\r\nslabs automove 0 noreply\r\nmn\r\n"), "MN\r\n");
	EXPECT_EQ(run("slabs\r\nslabs automove 3\r\nslabs reassign x y\r\n"),
		  "CLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR bad command line format\r\n");

	/* an empty cache's dump is its END */
	EXPECT_EQ(run("lru_crawler crawl all\r\nlru_crawler metadump all\r\n"
		      "lru_crawler enable\r\n"),
		  "CLIENT_ERROR lru crawler disabled\r\n"
		  "END\r\n"
		  "CLIENT_ERROR lru crawler disabled\r\n");
	EXPECT_EQ(run("lru_crawler metadump 1,x\r\nlru_crawler metadump 64\r\n"),
		  "CLIENT_ERROR bad class id\r\nCLIENT_ERROR bad class id\r\n");
	EXPECT_EQ(run("lru_crawler disable\r\nlru_crawler tocrawl 10\r\n"
		      "lru_crawler sleep 1000000\r\n"),
		  "OK\r\nOK\r\nOK\r\n");
	EXPECT_EQ(run("lru_crawler sleep 1000001\r\nlru_crawler sleep x\r\nlru_crawler\r\n"),
		  "CLIENT_ERROR sleep must be one second or less\r\n"
		  "CLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR bad command line format\r\n");

	EXPECT_EQ(run("stats cachedump 1 10\r\n"), "END\r\n");
	EXPECT_EQ(run("stats cachedump 1\r\nstats cachedump 1 x\r\nstats cachedump 64 1\r\n"),
		  "CLIENT_ERROR bad command line\r\nCLIENT_ERROR bad command line format\r\n"
		  "CLIENT_ERROR Illegal slab id\r\n");

	/* verbosity: memcached's answers, already CLIENT_ERROR for a bad level */
	EXPECT_EQ(run("verbosity x\r\nverbosity -1\r\nverbosity 1 x\r\n"
		      "verbosity x noreply\r\nmn\r\n"),
		  "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n"
		  "OK\r\nMN\r\n");
	EXPECT_EQ(last_actions, 0u);
}

// The first phase of an RX burst: the keys of pipelined get, gets and mg
// lines, up to the first other line and within the bytes given.
TEST(CmdHint, KeysOfPipelinedGetLines)
{
	struct engine_key k[8];
	auto keys = [&](const std::string &in, unsigned max = 8) {
		std::vector<std::string> out;
		unsigned n = cmd_hint_keys(in.data(), in.size(), k, max);
		for (unsigned i = 0; i < n; i++)
			out.emplace_back((const char *)k[i].key, k[i].klen);
		return out;
	};
	using V = std::vector<std::string>;
	EXPECT_EQ(keys("get a\r\ngets b c\r\nmg d v t\r\nget e"), (V{"a", "b", "c", "d", "e"}));
	EXPECT_EQ(keys("get a b c d\r\n", 2), (V{"a", "b"}));
	EXPECT_EQ(keys("get a  b\n"), (V{"a", "b"})); // empty tokens are skipped
	EXPECT_EQ(keys("set a 0 0 5\r\nget x\r\n"), V{});       // a data block may follow
	EXPECT_EQ(keys("get a\r\nset b 0 0 3\r\nget c\r\n"), V{"a"});
	EXPECT_EQ(keys("get " + std::string(ENGINE_KEY_MAX + 1, 'k') + " z\r\n"), V{"z"});
	EXPECT_EQ(keys("getx a\r\n"), V{});
	EXPECT_EQ(keys("get "), V{});
	EXPECT_EQ(keys(""), V{});
	EXPECT_EQ(keys(std::string("\x80\x00\x00\x01", 4)), V{}); // binary protocol
}
