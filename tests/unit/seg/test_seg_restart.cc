// SPDX-License-Identifier: BSD-3-Clause
// Warm restart of lib/seg (seg_restart.c): an engine over a heap in a file
// under /tmp saves itself, a new engine over the same file takes the cache
// back; and every case that must start cold instead (nothing saved, not
// stopped cleanly, another version or geometry, the clock went back, a
// corrupted table, a restart area whose checksum fails, and one resealed
// after a patch whose numbers, overflow buckets or segment times the
// loader's own checks must refuse). A model of what must be live is kept beside the
// engine and compared byte for byte after every restart.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "seg/seg.h"
#include "seg/seg_test.h"

namespace {

struct Clocks {
	int64_t now = 1700000000;  // engine clock
	int64_t wall = 1700000000; // wall clock
	static int64_t engine(void *arg) { return static_cast<Clocks *>(arg)->now; }
	static int64_t wall_fn(void *arg) { return static_cast<Clocks *>(arg)->wall; }
	void advance(int64_t s)
	{
		now += s;
		wall += s;
	}
};

struct Live {
	std::string value;
	uint32_t flags;
	int64_t expires_at; // engine clock, 0 = never
};

void
msync_persist(void *, const void *addr, size_t len)
{
	const uintptr_t page = 4096;
	uintptr_t lo = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
	uintptr_t hi = reinterpret_cast<uintptr_t>(addr) + len;

	ASSERT_EQ(msync(reinterpret_cast<void *>(lo), hi - lo, MS_SYNC), 0);
}

class SegRestart : public ::testing::Test {
protected:
	Clocks clk;
	std::string path;
	int fd = -1;
	void *map = MAP_FAILED;
	size_t map_len = 0;
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;
	struct seg_restart_area area = {};
	struct seg_restart_report rep = {};
	std::map<std::string, Live> model;
	std::set<std::string> gone; // deleted or expired keys
	bool verify_items = false;  // seg_restart_area.verify_items
	unsigned hash_power = 15;   // of the table (small: overflow buckets)
	// seg_restart_area.cancel: stop the load at its cancel_after-th look
	// at the hook (0: never)
	unsigned cancel_after = 0;
	std::atomic<unsigned> cancel_looks{ 0 };
	struct {
		bool known = false;
		uint64_t id = 0, usc = 0;
	} media; // what libpmem2 would say of the file's media

	void SetUp() override
	{
		char tmpl[] = "/tmp/seg-restart-XXXXXX";
		int f = mkstemp(tmpl);

		ASSERT_GE(f, 0);
		close(f);
		path = tmpl;
	}
	void TearDown() override
	{
		close_engine();
		unlink(path.c_str());
	}

	static struct engine_config config(size_t memory, size_t seg_size, Clocks *c,
					   unsigned hash_power = 15)
	{
		struct engine_config cfg = {};

		cfg.memory = memory;
		cfg.segment_size = seg_size;
		cfg.max_workers = 8;
		// A table of 2 MiB to start with (it grows when chains fill).
		cfg.hash_power = hash_power;
		cfg.clock = Clocks::engine;
		cfg.clock_arg = c;
		return cfg;
	}

	// Maps the file (restart area + heap), creates an engine over it and
	// loads whatever it holds.
	void open_engine(size_t memory = 32u << 20, size_t seg_size = 64u << 10,
			 unsigned threads = 2)
	{
		struct engine_config cfg = config(memory, seg_size, &clk, hash_power);
		size_t alen = seg_restart_area_bytes(&cfg), hlen = seg_heap_bytes(&cfg);
		char err[256] = "";

		ASSERT_GT(alen, 0u);
		ASSERT_GT(hlen, 0u);
		fd = open(path.c_str(), O_RDWR);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(ftruncate(fd, (off_t)(alen + hlen)), 0);
		map_len = alen + hlen;
		map = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(map, MAP_FAILED);
		cfg.heap = static_cast<uint8_t *>(map) + alen;
		cfg.heap_len = hlen;
		e = seg_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		area = {};
		area.addr = map;
		area.len = alen;
		area.persist = msync_persist;
		area.wall = Clocks::wall_fn;
		area.wall_arg = &clk;
		area.verify_items = verify_items;
		area.media_known = media.known;
		area.media_id = media.id;
		area.media_usc = media.usc;
		cancel_looks = 0;
		if (cancel_after) {
			area.cancel = [](void *arg) {
				auto *t = static_cast<SegRestart *>(arg);

				return ++t->cancel_looks >= t->cancel_after;
			};
			area.cancel_arg = this;
		}
		ASSERT_EQ(seg_restart_load(e, &area, threads, &rep), 0) << rep.reason;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
	}
	// A graceful stop: workers first, then the save.
	void stop_engine(bool save = true)
	{
		char err[256] = "";

		engine_worker_destroy(w);
		w = nullptr;
		if (save) {
			ASSERT_EQ(seg_restart_save(e, &area, err, sizeof(err)), 0) << err;
		}
		close_engine();
	}
	void close_engine()
	{
		engine_worker_destroy(w);
		w = nullptr;
		engine_destroy(e);
		e = nullptr;
		if (map != MAP_FAILED)
			munmap(map, map_len);
		map = MAP_FAILED;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}

	uint64_t set(const std::string &k, const std::string &v, int64_t exptime = 0,
		     uint32_t flags = 0, enum engine_store_mode mode = ENGINE_SET)
	{
		uint64_t cas = 0;
		int rc = engine_store(w, mode, k.data(), k.size(), v.data(), v.size(), flags,
				      exptime, 0, &cas);

		EXPECT_EQ(rc, ENGINE_OK) << k;
		return cas;
	}
	bool get(const std::string &k, std::string *v, struct engine_item *it)
	{
		std::string buf(1 << 16, '\0');
		int rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(), buf.size(),
				    it);

		if (rc == ENGINE_MISS)
			return false;
		EXPECT_EQ(rc, ENGINE_OK) << k;
		v->assign(buf.data(), it->vlen);
		return true;
	}

	// Writes a mix through every kind of write; the model says what is
	// live afterwards.
	void fill(unsigned n)
	{
		for (unsigned i = 0; i < n; i++) {
			std::string k = "key:" + std::to_string(i);
			std::string v = std::string(i % 37 + 1, (char)('a' + i % 26)) +
					std::to_string(i);
			int64_t ttl = i % 5 == 0 ? 100 : i % 5 == 1 ? 5000 : 0;
			uint32_t flags = i % 3 == 0 ? 0 : i * 7919u;

			set(k, v, ttl, flags);
			model[k] = { v, flags, ttl ? clk.now + ttl : 0 };
		}
		for (unsigned i = 0; i < n; i += 7) { // deletes
			std::string k = "key:" + std::to_string(i);

			ASSERT_EQ(engine_delete(w, k.data(), k.size(), 0), ENGINE_OK);
			model.erase(k);
			gone.insert(k);
		}
		for (unsigned i = 3; i < n; i += 11) { // overwrites
			std::string k = "key:" + std::to_string(i);
			std::string v = "overwritten-" + std::to_string(i);

			set(k, v, 0, 42);
			model[k] = { v, 42, 0 };
			gone.erase(k);
		}
		for (unsigned i = 4; i < n; i += 13) { // appends
			std::string k = "key:" + std::to_string(i);

			if (!model.count(k))
				continue;
			set(k, "+tail", 0, 0, ENGINE_APPEND);
			model[k].value += "+tail";
		}
		// The expiry the engine keeps (long TTLs are rounded down to
		// their TTL bucket's unit, never up).
		for (auto &[k, l] : model) {
			struct engine_item it = {};
			std::string v;

			ASSERT_TRUE(get(k, &v, &it)) << k;
			l.expires_at = it.expires_at;
		}
		for (unsigned i = 0; i < n / 50; i++) { // counters
			std::string k = "ctr:" + std::to_string(i);
			uint64_t out = 0;

			set(k, "100", 0, 5);
			ASSERT_EQ(engine_arith(w, k.data(), k.size(), true, i, &out, nullptr),
				  ENGINE_OK);
			model[k] = { std::to_string(100 + i), 5, 0 };
		}
	}

	// Every live key byte for byte, nothing gone comes back; returns the
	// cas values seen.
	std::set<uint64_t> verify()
	{
		std::set<uint64_t> cas;

		for (const auto &[k, l] : model) {
			struct engine_item it = {};
			std::string v;

			if (l.expires_at && l.expires_at <= clk.now) {
				EXPECT_FALSE(get(k, &v, &it)) << k << " served after its expiry";
				continue;
			}
			EXPECT_TRUE(get(k, &v, &it)) << k;
			EXPECT_EQ(v, l.value) << k;
			EXPECT_EQ(it.flags, l.flags) << k;
			EXPECT_EQ(it.expires_at, l.expires_at) << k;
			cas.insert(it.cas);
		}
		for (const auto &k : gone) {
			struct engine_item it = {};
			std::string v;

			EXPECT_FALSE(get(k, &v, &it)) << k << " came back";
		}
		return cas;
	}

	void check_at_rest()
	{
		struct seg_census c;
		char err[256] = "";

		ASSERT_EQ(seg_test_check(e, &c, err, sizeof(err)), 0) << err;
	}

	uint64_t curr_items()
	{
		struct engine_stats st;

		engine_stats(e, &st);
		return st.curr_items;
	}

	// The saved header's fields, by offset (see struct restart_hdr).
	void poke32(size_t off, uint32_t v)
	{
		int f = open(path.c_str(), O_RDWR);

		ASSERT_GE(f, 0);
		ASSERT_EQ(pwrite(f, &v, sizeof(v), (off_t)off), (ssize_t)sizeof(v));
		close(f);
	}

	// The file's restart area (of the default geometry): read, changed by
	// fn(area, len, heap offset), written back; with reseal, its checksum
	// made right again, so that the loader's own checks judge the change.
	template <class F> void patch_area(F fn, bool reseal = true)
	{
		struct engine_config cfg = config(32u << 20, 64u << 10, &clk, hash_power);
		size_t alen = seg_restart_area_bytes(&cfg);
		int f = open(path.c_str(), O_RDWR);
		std::string area(alen, '\0');

		ASSERT_GE(f, 0);
		ASSERT_EQ(pread(f, area.data(), alen, 0), (ssize_t)alen);
		fn(area.data(), alen, f);
		if (reseal) {
			ASSERT_GE(seg_test_restart_reseal(area.data(), alen), 0);
		}
		ASSERT_EQ(pwrite(f, area.data(), alen, 0), (ssize_t)alen);
		close(f);
	}
	static size_t field(const char *area, size_t len, const char *name, uint32_t seg = 0,
			    size_t *size = nullptr)
	{
		size_t sz = 0;
		long off = seg_test_restart_field(area, len, name, seg, &sz);

		EXPECT_GE(off, 0) << name;
		if (size)
			*size = sz;
		return off < 0 ? 0 : (size_t)off;
	}
	// A saved field, from an area already read.
	static int64_t peek(const char *a, size_t len, const char *name, uint32_t seg)
	{
		size_t size = 0, off = field(a, len, name, seg, &size);
		int64_t v = 0;

		memcpy(&v, a + off, size);
		return v;
	}
	// Sets a saved field (little endian, truncated to its size).
	void poke_field(const char *name, int64_t v, uint32_t seg = 0, bool reseal = true)
	{
		patch_area(
			[&](char *a, size_t len, int) {
				size_t size = 0, off = field(a, len, name, seg, &size);

				memcpy(a + off, &v, size);
			},
			reseal);
	}
	int64_t peek_field(const char *name, uint32_t seg = 0)
	{
		int64_t v = 0;

		patch_area(
			[&](char *a, size_t len, int) {
				size_t size = 0, off = field(a, len, name, seg, &size);

				memcpy(&v, a + off, size);
			},
			false);
		return v;
	}
	// A sealed segment of a TTL bucket other than never's.
	uint32_t ttl_segment()
	{
		for (uint32_t s = 0; s < 512; s++)
			if (peek_field("img.state", s) == 2 && peek_field("img.ttl_bucket", s) < 1024)
				return s;
		ADD_FAILURE() << "no sealed segment with a TTL";
		return 0;
	}
	void expect_refused(const char *code, const char *words)
	{
		EXPECT_EQ(rep.state, SEG_RESTART_REFUSED) << rep.reason;
		EXPECT_STREQ(rep.code, code) << rep.reason;
		EXPECT_NE(strstr(rep.reason, words), nullptr) << rep.reason;
		EXPECT_EQ(curr_items(), 0u);
		check_at_rest();
	}
};

TEST_F(SegRestart, NewFileStartsColdThenWarm)
{
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_COLD) << rep.reason;
	fill(20000);
	std::set<uint64_t> before = verify();
	stop_engine();

	clk.advance(10);
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	EXPECT_EQ(rep.expired, 0u);
	EXPECT_GT(rep.segments, 0u);
	check_at_rest();
	EXPECT_EQ(curr_items(), model.size());
	// The same items keep their cas values.
	EXPECT_EQ(verify(), before);
	// New items never get a cas that was handed out before the stop.
	for (unsigned i = 0; i < 2000; i++) {
		uint64_t cas = set("new:" + std::to_string(i), "v");

		EXPECT_EQ(before.count(cas), 0u) << cas;
		EXPECT_GT(cas, *before.rbegin());
	}
	// And it goes on: a second restart keeps everything again.
	model["new:0"] = { "v", 0, 0 };
	stop_engine();
	open_engine(32u << 20, 64u << 10, 1);
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	verify();
	check_at_rest();
}

// Issue 37: items larger than a segment come back whole, their links
// saved; a saved link that names no continuation, or one named twice,
// refuses the state as corrupt.
TEST_F(SegRestart, LargeItemsComeBackWholeAndBrokenLinksAreRefused)
{
	const size_t lens[] = { 70000, 300000, 1000000 };
	std::string buf(1u << 20, '\0');
	auto value = [](size_t len) {
		std::string v(len, '\0');

		for (size_t i = 0; i < len; i++)
			v[i] = static_cast<char>('a' + (i * 31 + len) % 26);
		return v;
	};
	auto read = [&](const std::string &k, std::string *v) {
		struct engine_item it = {};

		if (engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(), buf.size(),
			       &it) != ENGINE_OK)
			return false;
		v->assign(buf.data(), it.vlen);
		return true;
	};

	open_engine();
	fill(2000);
	for (size_t len : lens)
		set("large:" + std::to_string(len), value(len));
	stop_engine();
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	check_at_rest();
	verify();
	for (size_t len : lens) {
		std::string v;

		ASSERT_TRUE(read("large:" + std::to_string(len), &v)) << len;
		EXPECT_EQ(v, value(len)) << len;
	}
	stop_engine();
	// A large item's head made to name a free segment as its continuation.
	bool poked = false;

	patch_area(
		[&](char *a, size_t len, int) {
			const uint32_t nseg = (uint32_t)peek(a, len, "hdr.nseg", 0);
			uint32_t head = nseg, free_seg = nseg;

			for (uint32_t s = 0; s < nseg; s++) {
				if (peek(a, len, "img.state", s) == 2 && peek(a, len, "img.cont1", s))
					head = s;
				if (peek(a, len, "img.state", s) == 0)
					free_seg = s;
			}
			if (head == nseg || free_seg == nseg)
				return;
			size_t size = 0, off = field(a, len, "img.cont1", head, &size);
			const int32_t v = (int32_t)free_seg + 1;

			memcpy(a + off, &v, sizeof(v));
			poked = true;
		},
		true);
	ASSERT_TRUE(poked);
	open_engine();
	expect_refused("corrupt", "large item");
}

TEST_F(SegRestart, ParallelScanFindsTheSame)
{
	open_engine();
	fill(30000);
	stop_engine();
	open_engine(32u << 20, 64u << 10, 4);
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.threads, 4u);
	EXPECT_EQ(rep.items, model.size());
	verify();
	check_at_rest();
}

// The save counts what a worker at rest but not destroyed still holds of
// its changes to the live counts (lib/seg/seg_live.c: its last segment's
// appends, here): saved from the headers alone, the counts would be short
// of the slots and the load would refuse the state as corrupt.
TEST_F(SegRestart, SaveCountsWhatAWorkerStillHolds)
{
	open_engine();
	fill(3000);
	char err[256] = "";
	ASSERT_EQ(seg_restart_save(e, &area, err, sizeof(err)), 0) << err;
	close_engine();
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	verify();
	check_at_rest();
}
// Saved while two workers still hold chunks of the shared open segments
// (lib/seg/seg_chunk.c): the first worker's chunk lies under the second's,
// its unused bytes under a filler between items. The save takes the
// segments to where their chunks end; the load, every item verified, and
// the later walks of those segments (eviction) step over the fillers.
TEST_F(SegRestart, SaveWithChunksInFlight)
{
	open_engine();
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	for (unsigned i = 0; i < 50; i++) {
		const std::string k = "b:" + std::to_string(i), v(40 + i, 'b');

		ASSERT_EQ(engine_store(b, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0, 0,
				       0, nullptr),
			  ENGINE_OK);
		model[k] = { v, 0, 0 };
	}
	fill(3000);
	char err[256] = "";
	ASSERT_EQ(seg_restart_save(e, &area, err, sizeof(err)), 0) << err;
	engine_worker_destroy(b);
	close_engine();
	verify_items = true;
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	verify();
	check_at_rest();
	// Twice the heap of new items: every saved segment is merged or
	// evicted, walked to its end through the fillers (a walk that stopped
	// at one would free a segment that slots still point into).
	const std::string v(100, 'n');
	for (unsigned i = 0; i < 600000; i++) {
		const std::string k = "n:" + std::to_string(i);

		ASSERT_EQ(engine_store(w, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0, 0,
				       0, nullptr),
			  ENGINE_OK);
	}
	check_at_rest();
}

TEST_F(SegRestart, VerifyingEveryItemFindsTheSame)
{
	open_engine();
	fill(30000);
	stop_engine();
	verify_items = true;
	open_engine(32u << 20, 64u << 10, 3);
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	EXPECT_EQ(rep.segments_read, rep.segments);
	verify();
	check_at_rest();
}

TEST_F(SegRestart, ItemsThatExpiredWhileDownAreDropped)
{
	open_engine();
	fill(10000);
	stop_engine();
	clk.advance(101); // TTL 100 items are gone, TTL 5000 ones are not
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	uint64_t expired = 0;

	for (const auto &[k, l] : model)
		expired += l.expires_at && l.expires_at <= clk.now;
	EXPECT_GT(expired, 0u);
	EXPECT_EQ(rep.expired, expired);
	EXPECT_EQ(rep.items, model.size() - expired);
	verify();
	check_at_rest();
	EXPECT_EQ(curr_items(), model.size() - expired);
}

TEST_F(SegRestart, ASegmentThatStraddlesNowHasItsItemsRead)
{
	open_engine();
	set("first", "a", 100);
	clk.advance(4);
	set("second", "b", 100);
	stop_engine();
	clk.advance(98); // "first" expired 2 s ago, "second" has 2 s left
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.segments_read, 1u);
	EXPECT_EQ(rep.expired, 1u);
	EXPECT_EQ(rep.items, 1u);
	struct engine_item it = {};
	std::string v;

	EXPECT_FALSE(get("first", &v, &it));
	ASSERT_TRUE(get("second", &v, &it));
	EXPECT_EQ(v, "b");
	check_at_rest();
}

TEST_F(SegRestart, EngineClockAnchorMovedKeepsExpiryOnTheWallClock)
{
	open_engine();
	set("short", "v", 100);
	stop_engine();
	// The new process's engine clock is anchored 50 s apart from the old
	// one's (the wall clock was stepped during the last run).
	clk.wall += 30;
	clk.now += 30 + 50;
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	struct engine_item it = {};
	std::string v;

	ASSERT_TRUE(get("short", &v, &it));
	// 30 s of its 100 have passed on the wall clock: 70 s left, on the
	// new engine clock.
	EXPECT_EQ(it.expires_at, clk.now + 70);
}

TEST_F(SegRestart, NotStoppedCleanlyStartsCold)
{
	open_engine();
	fill(5000);
	stop_engine();
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	set("after", "the restart");
	stop_engine(false); // kill -9: no save
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "dirty");
	EXPECT_EQ(curr_items(), 0u);
	struct engine_item it = {};
	std::string v;

	EXPECT_FALSE(get("key:1", &v, &it));
	EXPECT_FALSE(get("after", &v, &it));
	check_at_rest();
	// The cold engine works, and its next clean stop is warm again.
	set("fresh", "value");
	stop_engine();
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	ASSERT_TRUE(get("fresh", &v, &it));
	EXPECT_EQ(v, "value");
	EXPECT_EQ(curr_items(), 1u);
}

TEST_F(SegRestart, CrashDuringLoadStartsCold)
{
	open_engine();
	fill(2000);
	stop_engine();
	// The load marks the file not clean before it changes anything: a
	// process that dies right after it (no save) leaves it so.
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	close_engine();
	open_engine();
	EXPECT_STREQ(rep.code, "dirty");
}

TEST_F(SegRestart, OtherVersionStartsCold)
{
	open_engine();
	fill(1000);
	stop_engine();
	poke32(8, 999); // restart_hdr.version
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "version");
	EXPECT_EQ(curr_items(), 0u);
	check_at_rest();
}

TEST_F(SegRestart, OtherMemoryOrSegmentSizeStartsCold)
{
	open_engine(32u << 20, 64u << 10);
	fill(1000);
	stop_engine();
	open_engine(48u << 20, 64u << 10); // -m changed
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "geometry");
	EXPECT_EQ(curr_items(), 0u);
	model.clear();
	gone.clear();
	fill(100);
	stop_engine();
	open_engine(48u << 20, 128u << 10); // segment size changed
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "geometry");
	EXPECT_EQ(curr_items(), 0u);
	check_at_rest();
}

TEST_F(SegRestart, ClockWentBackStartsCold)
{
	open_engine();
	fill(1000);
	stop_engine();
	clk.wall -= 3600;
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "clock");
	EXPECT_EQ(curr_items(), 0u);
}

// Flips `bit` in the first item slot of up to 50 saved head buckets (the
// last ones of the saved table); with reseal, the area's
// checksum is made right again (the loader's table checks judge it).
static void
flip_saved_slots(const std::string &path, size_t alen, unsigned bit, bool reseal = true)
{
	int f = open(path.c_str(), O_RDWR);
	std::string area(alen, '\0');
	unsigned flipped = 0;

	ASSERT_GE(f, 0);
	ASSERT_EQ(pread(f, area.data(), alen, 0), (ssize_t)alen);
	// The saved table: the area has room for the table grown to its
	// largest, and the header says how much of it this save used.
	size_t tbytes = 0;
	long toff = seg_test_restart_field(area.data(), alen, "table", 0, &tbytes);

	ASSERT_GT(toff, 0);
	for (size_t off = (size_t)toff + tbytes - 64; off >= (size_t)toff && flipped < 50;
	     off -= 64) {
		uint64_t slot;

		memcpy(&slot, area.data() + off + 8, 8);
		if (slot == 0)
			continue;
		slot ^= 1ull << bit;
		memcpy(area.data() + off + 8, &slot, 8);
		flipped++;
	}
	ASSERT_GT(flipped, 0u);
	if (reseal) {
		ASSERT_EQ(seg_test_restart_reseal(area.data(), alen), 1);
	}
	ASSERT_EQ(pwrite(f, area.data(), alen, 0), (ssize_t)alen);
	close(f);
}

TEST_F(SegRestart, VerifyFindsSlotsPointingAtWrongItems)
{
	open_engine();
	fill(3000);
	stop_engine();
	{
		struct engine_config cfg = config(32u << 20, 64u << 10, &clk);

		// Another offset in the same segment.
		flip_saved_slots(path, seg_restart_area_bytes(&cfg), 3);
	}
	verify_items = true;
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "corrupt") << rep.reason;
	EXPECT_EQ(curr_items(), 0u);
	check_at_rest();
	struct engine_item it = {};
	std::string v;

	for (int i = 1; i < 3000; i += 97)
		EXPECT_FALSE(get("key:" + std::to_string(i), &v, &it));
	set("k", "works");
	ASSERT_TRUE(get("k", &v, &it));
	EXPECT_EQ(v, "works");
}

TEST_F(SegRestart, SlotsPointingIntoOtherSegmentsStartCold)
{
	open_engine();
	fill(3000);
	stop_engine();
	{
		struct engine_config cfg = config(32u << 20, 64u << 10, &clk);

		// The lowest bit of the segment id: the counts no longer match.
		flip_saved_slots(path, seg_restart_area_bytes(&cfg), 20);
	}
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_REFUSED);
	EXPECT_STREQ(rep.code, "corrupt") << rep.reason;
	EXPECT_EQ(curr_items(), 0u);
	check_at_rest();
}

TEST_F(SegRestart, WithoutVerifyAWrongOffsetIsAMissNeverAnotherValue)
{
	open_engine();
	fill(3000);
	stop_engine();
	{
		struct engine_config cfg = config(32u << 20, 64u << 10, &clk);

		flip_saved_slots(path, seg_restart_area_bytes(&cfg), 3);
	}
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	unsigned missed = 0;

	// Every read is the key's own value or a miss: a reader checks the
	// key of the item a slot names.
	for (const auto &[k, l] : model) {
		struct engine_item it = {};
		std::string v;

		if (!get(k, &v, &it)) {
			missed++;
			continue;
		}
		EXPECT_EQ(v, l.value) << k;
		EXPECT_EQ(it.flags, l.flags) << k;
	}
	EXPECT_GT(missed, 0u);
	EXPECT_LE(missed, 50u);
}

TEST_F(SegRestart, PendingFlushAllComesDueWhileDown)
{
	open_engine();
	fill(500);
	engine_flush_all(e, 60);
	stop_engine();
	clk.advance(61);
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(curr_items(), 0u);
	struct engine_item it = {};
	std::string v;

	EXPECT_FALSE(get("key:1", &v, &it));
	check_at_rest();
}

// Issue 21, item 5: any byte of the header, the chains, the segment images
// or the table changed after the save is refused by the checksum.
TEST_F(SegRestart, AFlippedByteInTheTableOrAnImageFailsTheChecksum)
{
	open_engine();
	fill(3000);
	stop_engine();
	{
		struct engine_config cfg = config(32u << 20, 64u << 10, &clk);

		// (with the table checks alone, a wrong offset loads warm)
		flip_saved_slots(path, seg_restart_area_bytes(&cfg), 3, false);
	}
	open_engine();
	expect_refused("corrupt", "checksum");

	model.clear();
	gone.clear();
	fill(3000);
	stop_engine();
	// A byte no check reads: the unused word of a segment image.
	poke_field("img.reserved", 1, 0, false);
	open_engine();
	expect_refused("corrupt", "checksum");
}

// Issue 21, item 2: ovf_next = 0 (or 1) let the allocator hand out buckets
// still in use: recovered items and new writes were lost.
TEST_F(SegRestart, OverflowNextBelowTheBucketsInUseIsRefused)
{
	hash_power = 8; // 256 chains for 3,000 keys: overflow buckets
	open_engine();
	fill(3000);
	stop_engine();
	const int64_t next = peek_field("hdr.ovf_next");

	ASSERT_GT(next, 2) << "no overflow buckets";
	for (int64_t v : { int64_t{ 0 }, int64_t{ 1 } }) {
		poke_field("hdr.ovf_next", v);
		open_engine();
		expect_refused("corrupt", "ovf_next");
		// What would have been lost: new writes read back.
		for (int i = 0; i < 2000; i++)
			set("new:" + std::to_string(i), std::string(50, 'n'));
		for (int i = 0; i < 2000; i++) {
			struct engine_item it = {};
			std::string v2;

			ASSERT_TRUE(get("new:" + std::to_string(i), &v2, &it)) << i;
		}
		model.clear();
		gone.clear();
		fill(3000);
		stop_engine();
	}
}

// Issue 21, items 2 and 3: a chain that loops, with a count from the file
// of 2^62, spun the start for ever. Walks are bounded by the buckets the
// hash segments hold, and the bitmap stops a loop at its second step.
TEST_F(SegRestart, ASelfLinkedOverflowBucketIsRefusedQuickly)
{
	hash_power = 8;
	for (bool huge_count : { true, false }) {
		open_engine();
		fill(3000);
		stop_engine();
		patch_area(
			[&](char *a, size_t len, int f) {
				size_t tlen = 0, t = field(a, len, "table", 0, &tlen);

				for (size_t b = t; b < t + tlen; b += 64) {
					uint64_t link;

					memcpy(&link, a + b + 56, 8);
					if (link == 0 || link >> 52 != 0)
						continue;
					// the overflow bucket it names, in the heap:
					// its own last slot links back to it
					off_t at = (off_t)(len + ((link >> 20) & 0xffffff) * (64u << 10) +
							   (link & 0xfffff) * 64 + 56);

					ASSERT_EQ(pwrite(f, &link, 8, at), 8);
					return;
				}
				FAIL() << "no overflow bucket";
			},
			false);
		if (huge_count)
			poke_field("hdr.ovf_used", int64_t{ 1 } << 62);
		open_engine();
		expect_refused("corrupt", huge_count ? "ovf_used" : "reached twice");
		EXPECT_LT(rep.usec, 1000000u);
		model.clear();
		gone.clear();
		stop_engine(false);
	}
}

// Issue 21, item 4: each saved number out of its range is refused, with
// the field named, before any arithmetic on it.
TEST_F(SegRestart, NumbersOutOfRangeAreRefusedByName)
{
	struct Case {
		const char *field;
		int64_t value;
		const char *named;
	};
	const int64_t min = INT64_MIN, max = INT64_MAX;
	const Case cases[] = {
		{ "hdr.gen_counter", int64_t{ 1 } << 44, "gen_counter" },
		{ "hdr.gen_counter", -1, "gen_counter" },
		{ "hdr.stop_clock", min, "stop_clock" },
		{ "hdr.stop_clock", 0, "stop_clock" },
		{ "hdr.stop_clock", max, "stop_clock" },
		{ "hdr.stop_wall", -(int64_t{ 1 } << 62), "stop_wall" },
		{ "hdr.stop_wall", min, "stop_wall" },
		{ "hdr.stop_wall", 900000000, "stop_wall" }, // 1998
		{ "hdr.flush_at", min, "flush_at" },
		{ "hdr.flush_at", max, "flush_at" },
		{ "hdr.ovf_used", int64_t{ 1 } << 62, "ovf_used" },
		{ "hdr.ovf_free_count", max, "ovf_free_count" },
		{ "hdr.ovf_segs", 7, "ovf_segs" },
		{ "hdr.ovf_seg", -5, "ovf_seg" },
		{ "hdr.ovf_seg", 100000, "ovf_seg" },
		{ "img.exp_base", max, "exp_base" },  // EXP_NEVER in a TTL bucket
		{ "img.exp_base", min, "exp_base" },
		{ "img.exp_base", 1700000000 + 100000, "exp_base" },
		{ "img.create_at", 1700000000 + 1000, "create_at" },
		{ "img.create_at", min, "create_at" },
		{ "img.exp_max", max, "exp_max" },
		{ "img.unit_shift", 12, "unit_shift" },
	};
	hash_power = 8;
	open_engine();
	for (const Case &c : cases) {
		SCOPED_TRACE(std::string(c.field) + " = " + std::to_string(c.value));
		model.clear();
		gone.clear();
		fill(1000);
		stop_engine();
		poke_field(c.field, c.value, strncmp(c.field, "img.", 4) == 0 ? ttl_segment() : 0);
		open_engine();
		expect_refused("corrupt", c.named);
	}
}

// Issue 21, item 5: power lost on PMEM after a clean stop (the media's
// unsafe shutdown count rose), or the file on other media: refused as
// dirty. Media libpmem2 cannot identify are not compared.
TEST_F(SegRestart, MediaUnsafeShutdownOrOtherDeviceIsRefused)
{
	media = { true, 77, 5 };
	open_engine();
	fill(500);
	stop_engine();
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	verify();
	stop_engine();
	media.usc = 6;
	open_engine();
	expect_refused("dirty", "unsafe shutdown count");
	model.clear();
	gone.clear();
	fill(500);
	stop_engine();
	media.id = 78;
	open_engine();
	expect_refused("dirty", "other media");
	model.clear();
	gone.clear();
	fill(500);
	stop_engine();
	media.known = false; // e.g. the file copied to /dev/shm
	open_engine();
	EXPECT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
}

// A pending flush_all long due (flush_at = 1) empties the cache at the
// load, and the report says so: it does not claim the items it counted.
TEST_F(SegRestart, AFlushDueAtTheLoadReportsNoItems)
{
	open_engine();
	fill(500);
	stop_engine();
	poke_field("hdr.flush_at", 1);
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, 0u);
	EXPECT_EQ(curr_items(), 0u);
	check_at_rest();
}

// Issue 21: a stop asked during the load (SIGTERM at start-up) stops it at
// the hook's next look, before anything is served or saved. Nothing in the
// heap changed: the file is clean again and the next load is warm with
// every item, at any point of the load.
TEST_F(SegRestart, ALoadStoppedByItsCancelHookKeepsTheFileWarm)
{
	open_engine();
	fill(30000);
	stop_engine();
	// 1: before the load; 2: the table's copy; 3 on: the scan (two
	// threads, a look every 1,024 of the 32,768 buckets).
	for (unsigned at : { 1u, 2u, 3u, 12u }) {
		cancel_after = at;
		open_engine();
		ASSERT_EQ(rep.state, SEG_RESTART_CANCELLED) << at << ": " << rep.reason;
		EXPECT_STREQ(rep.code, "cancelled");
		EXPECT_EQ(rep.expired, 0u);
		EXPECT_NE(strstr(rep.reason, "kept for the next start"), nullptr) << rep.reason;
		EXPECT_GE(cancel_looks.load(), at);
		close_engine();
	}
	cancel_after = 0;
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	verify();
	check_at_rest();
}

// Once the scan dropped an expired item the overflow buckets in the heap
// no longer match the saved table: a stop then leaves the file not clean
// and says so; the next start is cold, never a silent loss.
TEST_F(SegRestart, ALoadStoppedAfterDroppingExpiredItemsSaysTheNextStartIsCold)
{
	open_engine();
	fill(30000);
	stop_engine();
	clk.advance(101); // the TTL 100 items expired while down
	cancel_after = 12;
	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_CANCELLED) << rep.reason;
	EXPECT_GT(rep.expired, 0u);
	EXPECT_NE(strstr(rep.reason, "the next start is cold"), nullptr) << rep.reason;
	close_engine();
	cancel_after = 0;
	open_engine();
	expect_refused("dirty", "not stopped cleanly");
}

} // namespace

// Issue 21, "a hash table that keeps up": a table grown online is saved at
// its grown size and loads warm (the load resolves every chain by the saved
// size and, verifying, finds every item in its chain), and goes on growing
// after the load; a second save and load keeps everything again.
TEST_F(SegRestart, AGrownTableSavesAndLoadsWarm)
{
	hash_power = 8; // 256 chains to start with, up to 4096
	verify_items = true;
	open_engine();
	fill(6000);
	struct engine_stats st;

	engine_stats(e, &st);
	const uint64_t grown = st.hash_buckets;

	ASSERT_GT(grown, 256u) << "the table did not grow";
	ASSERT_LT(grown, 4096u);
	std::set<uint64_t> before = verify();
	stop_engine();

	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	EXPECT_EQ(rep.items, model.size());
	engine_stats(e, &st);
	EXPECT_EQ(st.hash_buckets, grown);
	check_at_rest();
	EXPECT_EQ(verify(), before);

	// More keys: it grows on from the loaded size.
	for (unsigned i = 0; i < 20000; i++) {
		std::string k = "more:" + std::to_string(i);

		set(k, k);
		model[k] = { k, 0, 0 };
	}
	engine_stats(e, &st);
	EXPECT_GT(st.hash_buckets, grown);
	const uint64_t grown2 = st.hash_buckets;
	before = verify();
	stop_engine();

	open_engine();
	ASSERT_EQ(rep.state, SEG_RESTART_WARM) << rep.reason;
	engine_stats(e, &st);
	EXPECT_EQ(st.hash_buckets, grown2);
	check_at_rest();
	EXPECT_EQ(verify(), before);
}

// A saved table smaller than this engine's starting table or larger than
// its largest is refused by name, never loaded into the wrong geometry.
TEST_F(SegRestart, ATableOutsideThisEnginesSizesIsRefused)
{
	hash_power = 8; // 256 buckets to start with, up to 4096
	for (int64_t buckets : { int64_t{ 255 }, int64_t{ 4097 }, int64_t{ 1 } << 13 }) {
		model.clear();
		gone.clear();
		open_engine();
		fill(3000);
		stop_engine();
		poke_field("hdr.buckets", buckets);
		open_engine();
		expect_refused("geometry", "hash table changed");
		close_engine();
	}
}
