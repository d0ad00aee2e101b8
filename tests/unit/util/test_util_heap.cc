// SPDX-License-Identifier: BSD-3-Clause
// lib/util/util_heap: util_heap_in_use follows what malloc hands out and
// takes back, small blocks (in the arenas) and large ones (mmap'd) alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/util_heap.h"

namespace {

// Keeps the compiler from dropping a malloc/free pair whose memory is
// never read.
void escape(void *p)
{
	asm volatile("" : : "g"(p) : "memory");
}

void *touched_malloc(size_t n)
{
	void *p = malloc(n);
	if (p != nullptr)
		memset(p, 0x5a, n);
	escape(p);
	return p;
}

// util_heap_in_use reads glibc's mallinfo2: under a sanitizer's allocator
// (ASan, TSan) it reads 0 whatever is held, and there is nothing to check.
class UtilHeap : public ::testing::Test {
protected:
	void SetUp() override
	{
		void *p = touched_malloc(1000);
		const bool counted = util_heap_in_use() > 0;

		free(p);
		if (!counted)
			GTEST_SKIP() << "mallinfo2 reads 0: not glibc's allocator (a sanitizer build)";
	}
};

// Memory for the vector itself is taken before the first reading.
TEST_F(UtilHeap, SmallBlocksCountWhileHeldAndNotAfter)
{
	const size_t n = 256, size = 1000;
	std::vector<void *> blocks;
	blocks.reserve(n);
	uint64_t before = util_heap_in_use();
	for (size_t i = 0; i < n; i++) {
		blocks.push_back(touched_malloc(size));
		ASSERT_NE(blocks.back(), nullptr);
	}
	uint64_t held = util_heap_in_use();
	EXPECT_GE(held, before + n * size);
	// chunk headers and alignment cost a little, not more than 64 bytes a block
	EXPECT_LE(held, before + n * (size + 64));
	for (void *p : blocks)
		free(p);
	// glibc's per-thread cache keeps up to 7 freed chunks of a size, and
	// mallinfo2 counts those as in use: all but them are back.
	uint64_t after = util_heap_in_use();
	EXPECT_GE(after, before);
	EXPECT_LE(after, before + 7 * (size + 64));
}

// Blocks beyond the mmap threshold (128 KiB by default) are counted too
// (mallinfo2's hblkhd), rounded up to a page.
TEST_F(UtilHeap, LargeBlockIsCountedAndReturned)
{
	const size_t size = 8u << 20;
	uint64_t before = util_heap_in_use();
	void *p = touched_malloc(size);
	ASSERT_NE(p, nullptr);
	uint64_t held = util_heap_in_use();
	EXPECT_GE(held, before + size);
	EXPECT_LE(held, before + size + 2 * 4096);
	free(p);
	EXPECT_EQ(util_heap_in_use(), before);
}

TEST_F(UtilHeap, NothingAllocatedNothingChanges)
{
	uint64_t a = util_heap_in_use();
	uint64_t b = util_heap_in_use();
	EXPECT_GT(a, 0u) << "gtest itself holds heap memory";
	EXPECT_EQ(a, b) << "reading allocates nothing";
}

} // namespace
