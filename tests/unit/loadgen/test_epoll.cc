// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// lg_epoll_wait_ns on a kernel without epoll_pwait2 (Linux < 5.11),
// simulated by a seccomp filter that answers that one system call with
// ENOSYS: the generator's socket workers once ignored the -1 and never saw
// an answer there.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lg_epoll.h"

namespace {

// An epoll set with one socket that has a byte to read (fds[1] stays open).
int ready_epoll(int fds[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
		return -1;
	int ep = epoll_create1(0);
	struct epoll_event ev = {};

	ev.events = EPOLLIN;
	ev.data.fd = fds[0];
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) != 0 ||
	    write(fds[1], "x", 1) != 1)
		return -1;
	return ep;
}

TEST(LgEpoll, ReturnsReadyEvents)
{
	int fds[2];
	int ep = ready_epoll(fds);
	struct epoll_event evs[4];

	ASSERT_GE(ep, 0);
	EXPECT_EQ(lg_epoll_wait_ns(ep, evs, 4, 0), 1);
	EXPECT_EQ(lg_epoll_wait_ns(ep, evs, 4, 5000000), 1);
	EXPECT_EQ(evs[0].data.fd, fds[0]);
	char c;
	ASSERT_EQ(read(fds[0], &c, 1), 1);
	EXPECT_EQ(lg_epoll_wait_ns(ep, evs, 4, 1000), 0);
	close(ep);
	close(fds[0]);
	close(fds[1]);
}

#ifdef __NR_epoll_pwait2
// Exits 0 when, with epoll_pwait2 refused, the raw call fails with ENOSYS
// (so the simulation holds) and lg_epoll_wait_ns still reports the event.
[[noreturn]] void without_pwait2()
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_epoll_pwait2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		_exit(10);
	int fds[2];
	int ep = ready_epoll(fds);
	struct epoll_event evs[4];
	struct timespec ts = { 0, 0 };

	if (ep < 0)
		_exit(11);
	if (epoll_pwait2(ep, evs, 4, &ts, NULL) != -1 || errno != ENOSYS)
		_exit(12);
	// Twice: the first call falls back, the second remembers.
	if (lg_epoll_wait_ns(ep, evs, 4, 0) != 1 || evs[0].data.fd != fds[0])
		_exit(13);
	if (lg_epoll_wait_ns(ep, evs, 4, 2000000) != 1)
		_exit(14);
	char c;
	if (read(fds[0], &c, 1) != 1 || lg_epoll_wait_ns(ep, evs, 4, 1000) != 0)
		_exit(15);
	_exit(0);
}

TEST(LgEpollDeathTest, FallsBackWithoutPwait2)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(without_pwait2(), ::testing::ExitedWithCode(0), "");
}
#endif

} // namespace
