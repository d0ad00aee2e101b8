// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// Trace replay input: both CSV layouts, op mapping, key interning, errors.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "lg_trace.h"
#include "lg_workload.h"
}

namespace {

std::string key(const struct lg_trace &t, uint32_t i)
{
	return std::string(lg_trace_key(&t, i)->name, lg_trace_key(&t, i)->len);
}

TEST(LoadgenTrace, FiveColumns)
{
	const std::string csv = "time,key,size,op,ttl\n"
				"10,alpha,0,get,0\n"
				"10.5,beta,100,set,60\r\n"
				"12,alpha,0,gets,0\n"
				"13,alpha,0,delete,0\n";
	struct lg_trace t;
	char err[256];

	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0) << err;
	ASSERT_EQ(t.nreqs, 3u);
	EXPECT_EQ(t.nkeys, 2u);
	EXPECT_EQ(t.skipped, 1u);
	EXPECT_EQ(t.reqs[0].time_ns, 0u);
	EXPECT_EQ(t.reqs[1].time_ns, 500000000u);
	EXPECT_EQ(t.reqs[2].time_ns, 2000000000u);
	EXPECT_EQ(t.reqs[0].op, LG_OP_GET);
	EXPECT_EQ(t.reqs[1].op, LG_OP_SET);
	EXPECT_EQ(t.reqs[1].size, 100u);
	EXPECT_EQ(t.reqs[1].ttl, 60u);
	EXPECT_EQ(t.reqs[0].key, t.reqs[2].key); // interned
	EXPECT_EQ(key(t, t.reqs[1].key), "beta");
	EXPECT_EQ(t.max_size, 100u);
	lg_trace_free(&t);
}

TEST(LoadgenTrace, TwitterSevenColumns)
{
	// time,key,key_size,value_size,client_id,op,ttl
	const std::string csv = "0,q:q:1:8WTwl7huJeQ,17,249,1,get,0\n"
				"0,q:q:1:MYY8VvHze8,16,0,2,get,0\n"
				"1,q:q:1:8WTwl7huJeQ,17,249,1,set,3600\n";
	struct lg_trace t;
	char err[256];

	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0) << err;
	ASSERT_EQ(t.nreqs, 3u);
	EXPECT_EQ(t.nkeys, 2u);
	EXPECT_EQ(key(t, 0), "q:q:1:8WTwl7huJeQ");
	EXPECT_EQ(t.reqs[2].op, LG_OP_SET);
	EXPECT_EQ(t.reqs[2].size, 249u);
	EXPECT_EQ(t.reqs[2].ttl, 3600u);
	EXPECT_EQ(t.reqs[2].time_ns, 1000000000u);
	lg_trace_free(&t);
}

TEST(LoadgenTrace, ManyKeysGrowTheTables)
{
	std::string csv;
	struct lg_trace t;
	char err[256];

	for (int i = 0; i < 5000; i++)
		csv += std::to_string(i) + ",key" + std::to_string(i % 3000) + ",10,set,0\n";
	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0) << err;
	EXPECT_EQ(t.nreqs, 5000u);
	EXPECT_EQ(t.nkeys, 3000u);
	EXPECT_EQ(t.reqs[4999].key, t.reqs[1999].key);
	EXPECT_EQ(key(t, t.reqs[4999].key), "key1999");
	lg_trace_free(&t);
}

TEST(LoadgenTrace, BadLinesAreNamed)
{
	const char *bad[] = {
		"1,a,b\n",                      // 3 columns
		"1,a,10,get,0\nx,b,10,get,0\n", // time not a number past the header
		"1,a b,10,get,0\n",             // space in a key
		"1,a,ten,get,0\n",              // size not a number
		"1,a,10,delete,0\n",            // nothing to replay
	};
	for (const char *b : bad) {
		struct lg_trace t;
		char err[256] = "";

		EXPECT_EQ(lg_trace_parse(&t, b, strlen(b), err, sizeof(err)), -1) << b;
		EXPECT_NE(err[0], 0) << b;
	}
}

TEST(LoadgenTrace, KeysServeAsWorkloadKeys)
{
	const std::string csv = "0,hello,5,set,0\n";
	struct lg_trace t;
	struct lg_workload w;
	char err[256], buf[LG_KEY_MAX];

	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	w.trace = &t;
	ASSERT_EQ(lg_workload_init(&w, err, sizeof(err)), 0);
	EXPECT_EQ(std::string(buf, lg_key_format(&w, 0, buf)), "hello");
	lg_trace_free(&t);
}

} // namespace
