// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the baseline engine's unit tests: a fake clock and a
// fixture owning one engine and one worker.
#ifndef SEGCACHED_TEST_BL_TEST_H
#define SEGCACHED_TEST_BL_TEST_H

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "baseline/baseline.h"
#include "../fake_clock.h"

// Unix-like seconds, far from 0 so absolute exptimes (> 30 days) work.
class BaselineTest : public testing::Test {
protected:
	FakeClock clock;
	engine *e = nullptr;
	engine_worker *w = nullptr;

	// Tests that need another configuration call this first.
	void start(const engine_config &cfg)
	{
		stop();
		char err[256] = "";
		e = baseline_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
	}
	void stop()
	{
		engine_worker_destroy(w);
		w = nullptr;
		engine_destroy(e);
		e = nullptr;
	}
	void SetUp() override { start(test_config(16u << 20, &clock)); }
	void TearDown() override { stop(); }

	int store(enum engine_store_mode mode, const std::string &k, const std::string &v,
		  uint32_t flags = 0, int64_t exptime = 0, uint64_t cas_in = 0,
		  uint64_t *cas_out = nullptr)
	{
		return engine_store(w, mode, k.data(), k.size(), v.data(), v.size(), flags,
				    exptime, cas_in, cas_out);
	}
	int set(const std::string &k, const std::string &v, int64_t exptime = 0, uint32_t flags = 0)
	{
		return store(ENGINE_SET, k, v, flags, exptime);
	}
	// The value, or "<MISS>" / "<status>" when there is none.
	std::string get(const std::string &k, engine_item *out = nullptr,
			int64_t touch = ENGINE_NO_TOUCH)
	{
		engine_item it;
		std::string buf(4096, '\0');
		engine_status rc = engine_get(w, k.data(), k.size(), touch, &buf[0], buf.size(),
					      &it);
		if (rc == ENGINE_BUF_SMALL) {
			buf.resize(it.vlen);
			rc = engine_get(w, k.data(), k.size(), touch, &buf[0], buf.size(), &it);
		}
		if (rc != ENGINE_OK)
			return std::string("<") + engine_status_name(rc) + ">";
		if (out != nullptr)
			*out = it;
		buf.resize(it.vlen);
		return buf;
	}
	// Writes n keys of vlen bytes, all of which must be stored; one fake
	// second passes every 1000 sets so the LRU sees ages.
	void fill(size_t vlen, int n, std::vector<std::string> *keys)
	{
		std::string v(vlen, 'v');
		for (int i = 0; i < n; i++) {
			std::string k = "fill:" + std::to_string(i);
			ASSERT_EQ(set(k, v), ENGINE_OK) << "set " << i << " of " << n;
			keys->push_back(k);
			if (i % 1000 == 999)
				clock.advance(1);
		}
	}
	struct engine_stats stats()
	{
		struct engine_stats st;
		::engine_stats(e, &st);
		return st;
	}
};

#endif // SEGCACHED_TEST_BL_TEST_H
