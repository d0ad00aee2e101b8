// SPDX-License-Identifier: BSD-3-Clause
// Issue 23: lib/seg's parts of memcached's admin commands. The key dump
// (engine_dump) offers every live item exactly once, with its meta data,
// across any number of stops and resumes, and skips overwritten, deleted
// and expired copies; beside a writer it offers only well-formed keys of
// the keyspace. cache_memlimit (engine_set_memory) parks segments in
// bounded steps of engine_expire until the cache fits, and gives them back.
#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>
#include <thread>

#include "seg/seg.h"
#include "engine/engine_dump.h"
#include "seg_fixture.h"

namespace {

using seg_fixture::SegFixture;

struct Seen {
	std::map<std::string, struct engine_dump_item> items; // key -> meta (key not kept)
	unsigned dupes = 0;
	unsigned calls = 0;
	unsigned decline_every = 0; // 0: take everything
};

bool
take(void *arg, const struct engine_dump_item *d)
{
	auto *s = static_cast<Seen *>(arg);
	std::string k(static_cast<const char *>(d->key), d->klen);

	if (s->decline_every && ++s->calls % s->decline_every == 0)
		return false; // offered again on the next call
	if (s->items.count(k))
		s->dupes++;
	s->items[k] = *d;
	s->items[k].key = nullptr;
	return true;
}

Seen
dump_all(struct engine *e, unsigned decline_every)
{
	Seen s;
	struct engine_dump_cursor cur = {};
	unsigned rounds = 0;

	s.decline_every = decline_every;
	while (!cur.done && rounds++ < 1000000)
		engine_dump(e, &cur, take, &s);
	EXPECT_TRUE(cur.done);
	return s;
}

class SegAdmin : public SegFixture {
protected:
	int set(const std::string &k, size_t vlen, int64_t exptime = 0)
	{
		std::string v(vlen, 'v');

		return engine_store(w, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
				    exptime, 0, nullptr);
	}
};

TEST_F(SegAdmin, DumpOffersEachLiveItemOnce)
{
	make(16u << 20);
	for (int i = 0; i < 5000; i++)
		ASSERT_EQ(set("k" + std::to_string(i), 10 + i % 50, i % 2 ? 100 : 0), ENGINE_OK);
	for (int i = 0; i < 5000; i += 10) // overwritten: the old copy is dead
		ASSERT_EQ(set("k" + std::to_string(i), 7), ENGINE_OK);
	for (int i = 5; i < 5000; i += 10)
		ASSERT_EQ(engine_delete(w, ("k" + std::to_string(i)).data(),
					("k" + std::to_string(i)).size(), 0), ENGINE_OK);
	std::string fetched = "k1";
	char buf[64];
	struct engine_item it;
	ASSERT_EQ(engine_get(w, fetched.data(), fetched.size(), ENGINE_NO_TOUCH, buf, sizeof(buf),
			     &it),
		  ENGINE_OK);

	for (unsigned decline : { 0u, 7u, 2u }) {
		Seen s = dump_all(e, decline);
		EXPECT_EQ(s.dupes, 0u) << decline;
		EXPECT_EQ(s.items.size(), 4500u) << decline;
		for (int i = 0; i < 5000; i++) {
			auto f = s.items.find("k" + std::to_string(i));
			if (i % 10 == 5) {
				EXPECT_EQ(f, s.items.end()) << i;
				continue;
			}
			ASSERT_NE(f, s.items.end()) << i;
			EXPECT_EQ(f->second.vlen, i % 10 == 0 ? 7u : 10u + i % 50) << i;
			bool ttl = i % 2 && i % 10 != 0;
			EXPECT_EQ(f->second.expires_at, ttl ? clock.now.load() + 100 : 0) << i;
			EXPECT_EQ(f->second.cls, ttl ? 2u : 1u) << i;
			EXPECT_EQ(f->second.fetched, i == 1) << i;
			EXPECT_GT(f->second.size, f->second.vlen) << i;
		}
	}
	// expired items are not offered
	clock.advance(101);
	Seen s = dump_all(e, 0);
	EXPECT_EQ(s.items.size(), 2500u);
}

TEST_F(SegAdmin, DumpBesideAWriter)
{
	make(8u << 20);
	std::atomic<bool> stop{false};
	std::thread writer([&] {
		struct engine_worker *ww = engine_worker_create(e);
		std::string v(300, 'x');

		for (unsigned i = 0; !stop.load() && i < 2000000; i++) {
			std::string k = "w" + std::to_string(i % 40000);

			if (i % 5 == 0)
				engine_delete(ww, k.data(), k.size(), 0);
			else
				engine_store(ww, ENGINE_SET, k.data(), k.size(), v.data(),
					     v.size(), 0, i % 3 ? 0 : 50, 0, nullptr);
		}
		engine_worker_destroy(ww);
	});
	for (int i = 0; i < 100000 && stats().curr_items < 1000; i++)
		std::this_thread::yield();
	for (int round = 0; round < 20; round++) {
		Seen s = dump_all(e, 13);
		for (const auto &kv : s.items) {
			ASSERT_EQ(kv.first[0], 'w') << kv.first;
			ASSERT_EQ(kv.second.vlen, 300u) << kv.first;
			ASSERT_TRUE(kv.second.cls == 1 || kv.second.cls == 2) << kv.first;
		}
	}
	stop = true;
	writer.join();
}

TEST_F(SegAdmin, MemlimitParksAndGivesBack)
{
	make(64u << 20);
	struct engine_stats st = stats();
	const uint64_t seg = st.seg_size;

	for (int i = 0; i < 100000; i++)
		ASSERT_EQ(set("m" + std::to_string(i), 500), ENGINE_OK);
	ASSERT_GT(stats().bytes, 40u << 20);

	EXPECT_EQ(engine_set_memory(e, 65u << 20), -ERANGE);  // above the start
	EXPECT_EQ(engine_set_memory(e, 8u << 20), -ERANGE);   // too few segments left
	EXPECT_EQ(stats().limit_maxbytes, 64u << 20);
	ASSERT_EQ(engine_set_memory(e, 24u << 20), 0);
	EXPECT_EQ(stats().limit_maxbytes, 24u << 20);
	const uint64_t want = (40u << 20) / seg;
	// bounded steps: each engine_expire parks some; a few calls finish
	for (int i = 0; i < 100 && stats().seg_parked < want; i++)
		engine_expire(e);
	st = stats();
	EXPECT_EQ(st.seg_parked, want);
	EXPECT_LE(st.bytes, 24u << 20);
	EXPECT_GT(st.evictions, 0u);
	// writes go on within the smaller budget
	for (int i = 0; i < 50000; i++)
		ASSERT_EQ(set("n" + std::to_string(i), 500), ENGINE_OK);
	EXPECT_LE(stats().bytes, 24u << 20);
	EXPECT_EQ(stats().seg_parked, want);

	ASSERT_EQ(engine_set_memory(e, 64u << 20), 0);
	engine_expire(e);
	EXPECT_EQ(stats().seg_parked, 0u);
	for (int i = 0; i < 100000; i++)
		ASSERT_EQ(set("p" + std::to_string(i), 500), ENGINE_OK);
	EXPECT_GT(stats().bytes, 40u << 20);
}

} // namespace
