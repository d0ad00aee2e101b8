/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * drivers/mem: the heap backings a server maps its segments in. The file
 * kind (libpmem2) is tested on /dev/shm, which pmem2 maps like any file
 * (page alignment, msync granularity); a device DAX's 2 MiB alignment is
 * the same rounding at a larger unit.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "drivers/mem/mem_region.h"

namespace {

class FileRegion : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/dev/shm/segcached-mem-test-XXXXXX";
		int fd = mkstemp(tmpl);

		ASSERT_GE(fd, 0);
		close(fd);
		path = tmpl;
	}
	void TearDown() override { unlink(path.c_str()); }

	off_t file_size() const
	{
		struct stat st;

		return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
	}

	std::string path;
	char err[256] = "";
};

/* A heap length that is not a multiple of the source's alignment (here the
 * page size) is mapped rounded up, not refused: -m 65 on a device DAX
 * with 2 MiB alignment is the same case. */
TEST_F(FileRegion, UnalignedLengthIsRoundedUpToTheSourceAlignment)
{
	const size_t len = (1u << 20) + 100;
	const long page = sysconf(_SC_PAGESIZE);
	struct mem_region r = {};

	ASSERT_EQ(mem_region_create(&r, MEM_REGION_FILE, path.c_str(), len, err, sizeof(err)), 0)
		<< err;
	EXPECT_EQ(r.kind, MEM_REGION_FILE);
	EXPECT_EQ(r.len, len);
	ASSERT_NE(r.addr, nullptr);
	EXPECT_EQ(file_size(), (off_t)((len + page - 1) / page * page));
	/* every byte of the heap is usable and durable */
	for (size_t i = 0; i < len; i++)
		static_cast<unsigned char *>(r.addr)[i] = (unsigned char)(i * 7 + 3);
	mem_region_persist(&r, r.addr, len);
	mem_region_destroy(&r);

	struct mem_region again = {};

	ASSERT_EQ(mem_region_create(&again, MEM_REGION_FILE, path.c_str(), len, err,
				    sizeof(err)), 0) << err;
	const unsigned char *p = static_cast<const unsigned char *>(again.addr);
	size_t bad = 0;

	for (size_t i = 0; i < len; i++)
		bad += p[i] != (unsigned char)(i * 7 + 3);
	EXPECT_EQ(bad, 0u);
	mem_region_destroy(&again);
}

/* A file already larger than the heap keeps its size (a restart with a
 * smaller -m must not truncate the saved heap away). */
TEST_F(FileRegion, LargerFileIsNotShrunk)
{
	const off_t big = 4 << 20;

	ASSERT_EQ(truncate(path.c_str(), big), 0);
	struct mem_region r = {};

	ASSERT_EQ(mem_region_create(&r, MEM_REGION_FILE, path.c_str(), 1 << 20, err,
				    sizeof(err)), 0) << err;
	EXPECT_EQ(file_size(), big);
	mem_region_destroy(&r);
}

/* One server per file: a second mapping of the same file is refused with
 * a message naming the file, and is possible again once the first is gone. */
TEST_F(FileRegion, SecondUserOfTheFileIsRefused)
{
	struct mem_region a = {}, b = {};

	ASSERT_EQ(mem_region_create(&a, MEM_REGION_FILE, path.c_str(), 1 << 20, err,
				    sizeof(err)), 0) << err;
	EXPECT_EQ(mem_region_create(&b, MEM_REGION_FILE, path.c_str(), 1 << 20, err,
				    sizeof(err)), -1);
	EXPECT_NE(strstr(err, "in use by another process"), nullptr) << err;
	EXPECT_NE(strstr(err, path.c_str()), nullptr) << err;
	mem_region_destroy(&a);
	EXPECT_EQ(mem_region_create(&b, MEM_REGION_FILE, path.c_str(), 1 << 20, err,
				    sizeof(err)), 0) << err;
	mem_region_destroy(&b);
}

TEST_F(FileRegion, UnopenablePathIsRefusedWithItsErrno)
{
	struct mem_region r = {};

	EXPECT_EQ(mem_region_create(&r, MEM_REGION_FILE, "/nonexistent-dir/heap", 1 << 20, err,
				    sizeof(err)), -1);
	EXPECT_NE(strstr(err, "cannot open /nonexistent-dir/heap"), nullptr) << err;
	EXPECT_NE(strstr(err, strerror(ENOENT)), nullptr) << err;
	EXPECT_EQ(r.addr, nullptr);
}

TEST(AnonRegion, MapsZeroedWritableMemory)
{
	char err[256] = "";
	struct mem_region r = {};
	const size_t len = 3 << 20;

	ASSERT_EQ(mem_region_create(&r, MEM_REGION_ANON, "anon", len, err, sizeof(err)), 0)
		<< err;
	ASSERT_NE(r.addr, nullptr);
	EXPECT_EQ(r.len, len);
	const unsigned char *p = static_cast<const unsigned char *>(r.addr);
	size_t nonzero = 0;

	for (size_t i = 0; i < len; i += 4096)
		nonzero += p[i] != 0;
	EXPECT_EQ(nonzero, 0u);
	memset(r.addr, 0xab, len);
	/* persisting anonymous memory is a no-op, not a crash */
	mem_region_persist(&r, r.addr, len);
	mem_region_destroy(&r);
}

TEST(AnyRegion, EmptyLengthIsRefused)
{
	char err[256] = "";
	struct mem_region r = {};

	EXPECT_EQ(mem_region_create(&r, MEM_REGION_ANON, "anon", 0, err, sizeof(err)), -1);
	EXPECT_STREQ(err, "empty memory region");
}

} // namespace
