/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd's session loop (cmd_session.h) on the real Segcache engine: it
 * runs pipelined requests, stops at the output high-water mark and counts
 * one stall per stop, resumes once the output drains, acts on quit and
 * shutdown, and applies the close rule. The flush callback stands for a
 * transport that takes a bounded number of bytes per call.
 */
#include <gtest/gtest.h>

#include <string>

#include "cmd/cmd_session.h"
#include "seg/seg.h"

namespace {

class Session : public ::testing::Test {
protected:
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;
	struct cmd_settings s = {};
	struct cmd_session ses = {};
	uint64_t stalls = 0;
	int shutdowns = 0;
	size_t room = SIZE_MAX;   /* what the transport takes per flush */
	std::string sent;         /* what it took */

	static void flush(void *arg)
	{
		auto *t = static_cast<Session *>(arg);
		size_t n = proto_out_pending(&t->ses.out);

		if (n > t->room)
			n = t->room;
		t->sent.append(t->ses.out.data + t->ses.out.head, n);
		proto_out_consume(&t->ses.out, n);
		if (n > 0)
			t->ses.sent = true; /* what the stacks do: the client took bytes */
	}
	static void on_shutdown(void *arg) { static_cast<Session *>(arg)->shutdowns++; }

	void SetUp() override
	{
		struct engine_config cfg = {};
		char err[256] = "";

		cfg.memory = 64u << 20;
		cfg.max_workers = 1;
		e = seg_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		s.engine = e;
		s.item_max = 1024 * 1024;
		s.shutdown_enabled = true;
		s.version = "1.6.18-segcached";
		ASSERT_EQ(cmd_session_init(&ses, s.item_max), 0);
		ASSERT_EQ(cmd_session_open(&ses, &s, w), 0);
		ses.flush = flush;
		ses.flush_arg = this;
		ses.on_shutdown = on_shutdown;
		ses.on_shutdown_arg = this;
		ses.stalls = &stalls;
	}
	void TearDown() override
	{
		cmd_session_close(&ses, s.item_max);
		cmd_session_fini(&ses);
		engine_worker_destroy(w);
		engine_destroy(e);
	}
	size_t run(const std::string &in)
	{
		return cmd_session_execute(&ses, in.data(), in.size());
	}
};

TEST_F(Session, RunsPipelinedRequestsAndKeepsAnIncompleteOne)
{
	std::string in = "set k 0 0 1\r\nv\r\nget k\r\nget";

	EXPECT_EQ(run(in), in.size() - 3);
	EXPECT_EQ(sent, "STORED\r\nVALUE k 0 1\r\nv\r\nEND\r\n");
	EXPECT_FALSE(ses.closing);
	EXPECT_FALSE(cmd_session_finished(&ses));
}

TEST_F(Session, StopsAtTheHighWaterMarkAndCountsOneStall)
{
	std::string value(100000, 'x');
	std::string set = "set big 0 0 100000\r\n" + value + "\r\n";
	std::string gets;

	ASSERT_EQ(run(set), set.size());
	for (int i = 0; i < 10; i++)
		gets += "get big\r\n";
	room = 0; /* a reader that takes nothing */
	size_t used = run(gets);

	/* Three replies of ~100 KB pass the 256 KiB mark: the rest waits. */
	EXPECT_LT(used, gets.size());
	EXPECT_GT(used, 0u);
	EXPECT_TRUE(ses.stalled);
	EXPECT_TRUE(cmd_session_backlogged(&ses));
	EXPECT_EQ(stalls, 1u);
	/* Still blocked: the same stall, not a new one. */
	EXPECT_EQ(run(gets.substr(used)), 0u);
	EXPECT_EQ(stalls, 1u);
	/* The reader drains: the rest runs. */
	room = SIZE_MAX;
	size_t more = run(gets.substr(used));
	EXPECT_EQ(used + more, gets.size());
	EXPECT_FALSE(ses.stalled);
	EXPECT_EQ(stalls, 1u);
	EXPECT_EQ(proto_out_pending(&ses.out), 0u);
}

TEST_F(Session, QuitClosesAfterTheOutputIsSent)
{
	room = 0;
	std::string in = "version\r\nquit\r\nversion\r\n";

	EXPECT_EQ(run(in), in.size() - 9); /* nothing after quit runs */
	EXPECT_TRUE(ses.closing);
	EXPECT_FALSE(cmd_session_finished(&ses)); /* the reply is not out yet */
	room = SIZE_MAX;
	flush(this);
	EXPECT_TRUE(cmd_session_finished(&ses));
	EXPECT_EQ(run("version\r\n"), 0u); /* a closing session runs nothing */
}

/* Issue 10: a line that looks like HTTP closes the session, unanswered,
 * through the same close action as quit (both stacks use this loop). */
TEST_F(Session, HttpRequestLineClosesUnanswered)
{
	std::string in = "GET / HTTP/1.1\r\nversion\r\n";

	EXPECT_EQ(run(in), in.size() - 9); /* nothing after the line runs */
	EXPECT_TRUE(ses.closing);
	EXPECT_EQ(proto_out_pending(&ses.out), 0u);
	EXPECT_TRUE(cmd_session_finished(&ses));
}

TEST_F(Session, EofFinishesOnceAnswered)
{
	ses.eof = true;
	EXPECT_TRUE(cmd_session_finished(&ses));
	ses.eof = false;
	EXPECT_FALSE(cmd_session_finished(&ses));
}

TEST_F(Session, ShutdownCallsBack)
{
	run("shutdown\r\n");
	EXPECT_EQ(shutdowns, 1);
}

TEST_F(Session, CloseKeepsASmallBufferAndReplacesALargeOne)
{
	std::string value(200000, 'y');

	ASSERT_EQ(run("set b 0 0 200000\r\n" + value + "\r\n"), 200020u);
	room = 0;
	run("get b\r\n");
	ASSERT_GT(ses.out.cap, (size_t)CMD_SESSION_OUT_KEEP);
	ASSERT_EQ(cmd_session_close(&ses, s.item_max), 0);
	EXPECT_LE(ses.out.cap, (size_t)CMD_SESSION_OUT_KEEP);
	EXPECT_EQ(proto_out_pending(&ses.out), 0u);
	EXPECT_EQ(ses.cmd, nullptr);
	EXPECT_EQ(ses.out.backpressure, (size_t)CMD_SESSION_OUT_HIGH);
	ASSERT_EQ(cmd_session_open(&ses, &s, w), 0);
	room = SIZE_MAX;
	sent.clear();
	run("get b\r\n");
	EXPECT_EQ(sent.size(), value.size() + 25);
}

} // namespace

/* Issue 10: the request timeout's rule (cmd_session_wait), the same on
 * both stacks. `left` is what the stack has not been able to consume. */
TEST_F(Session, WaitRuleForTheRequestTimeout)
{
	bool restart = true;

	/* Idle, nothing begun: never timed. */
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
	EXPECT_FALSE(restart);

	/* A request begun: the deadline starts ... */
	std::string part = "get some";
	EXPECT_EQ(run(part), 0u);
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_REQUEST);
	EXPECT_TRUE(restart);
	/* ... and more bytes of the same request do not push it back. */
	part += "ke";
	EXPECT_EQ(run(part), 0u);
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_REQUEST);
	EXPECT_FALSE(restart);

	/* A pipelining client: the request completes, the next one is begun
	 * in the same read. A new request, a new deadline. */
	std::string in = part + "y\r\nget ot";
	EXPECT_EQ(run(in), part.size() + 3);
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_REQUEST);
	EXPECT_TRUE(restart);

	/* Completed, nothing begun: back to idle. */
	EXPECT_EQ(run("get other\r\n"), 11u);
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
	EXPECT_FALSE(restart);

	/* A value being swallowed (over -I): the parser holds the request,
	 * no byte is left over, and it is still a request begun. */
	std::string huge = "set h 0 0 2000000\r\n" + std::string(1000, 'z');
	EXPECT_EQ(run(huge), huge.size());
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_REQUEST);
	EXPECT_TRUE(restart);
	EXPECT_EQ(run(std::string(5000, 'z')), 5000u);
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_REQUEST);
	EXPECT_FALSE(restart); /* swallowed bytes are no completed request */
}

TEST_F(Session, WaitRuleForRepliesNotTaken)
{
	bool restart = false;
	std::string set = "set big 0 0 100000\r\n" + std::string(100000, 'x') + "\r\n";

	ASSERT_EQ(run(set), set.size());
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
	room = 1000; /* a reader that takes a little */
	run("get big\r\n");
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_WRITE);
	EXPECT_TRUE(restart);
	/* It took something since: the deadline starts over. */
	flush(this);
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_WRITE);
	EXPECT_TRUE(restart);
	/* It takes nothing any more: the deadline stands, however much the
	 * client sends meanwhile. */
	room = 0;
	flush(this);
	run("get big\r\nget big\r\n");
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_WRITE);
	EXPECT_FALSE(restart);
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_WRITE);
	EXPECT_FALSE(restart);
	/* Everything taken: idle again, whatever the client had begun is for
	 * the next call to see. */
	room = SIZE_MAX;
	flush(this);
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
	/* The client's FIN: nothing more can come; no request is waited for. */
	run("get bi");
	ses.eof = true;
	EXPECT_EQ(cmd_session_wait(&ses, true, false, &restart), CMD_WAIT_NONE);
}

/* Replies the transport took but the client has not acknowledged (the
 * native stack's send ring, memory of ours) are owed output like unsent
 * ones: the deadline runs, and restarts only when the client takes some. */
TEST_F(Session, WaitRuleForRepliesHeldUnacknowledged)
{
	bool restart = false;

	run("get nothing\r\n");
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
	EXPECT_EQ(cmd_session_wait(&ses, false, true, &restart), CMD_WAIT_WRITE);
	EXPECT_TRUE(restart);
	EXPECT_EQ(cmd_session_wait(&ses, false, true, &restart), CMD_WAIT_WRITE);
	EXPECT_FALSE(restart); /* nothing acknowledged since */
	ses.sent = true;       /* the stack saw the client acknowledge bytes */
	EXPECT_EQ(cmd_session_wait(&ses, false, true, &restart), CMD_WAIT_WRITE);
	EXPECT_TRUE(restart);
	EXPECT_EQ(cmd_session_wait(&ses, false, false, &restart), CMD_WAIT_NONE);
}
