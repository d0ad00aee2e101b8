/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The timer wheel (net_timer.c): a connection's one timer and the wheel
 * that fires it, on the stack's clock in microseconds.
 */
#ifndef SEGCACHED_NET_TIMER_H
#define SEGCACHED_NET_TIMER_H

#include <stdbool.h>
#include <stddef.h> /* NULL, which sys/queue.h uses */
#include <stdint.h>
#include <sys/queue.h>

struct net_stack;

#define NET_WHEEL_BITS 10
#define NET_WHEEL_SLOTS (1u << NET_WHEEL_BITS)
#define NET_TICK_SHIFT 10 /* one tick = 1024 us */

/* A connection's timer: 24 bytes, so that it shares a cache line with
 * the deadlines it serves. Armed when tick != 0; every timer of a wheel
 * has the wheel's callback. */
struct net_timer {
	TAILQ_ENTRY(net_timer) link;
	uint64_t tick;  /* expiry, in ticks, rounded up; 0 = not armed */
};
TAILQ_HEAD(net_timer_list, net_timer);
typedef void (*net_timer_cb)(struct net_stack *s, struct net_timer *t);

struct net_wheel {
	struct net_timer_list slot[NET_WHEEL_SLOTS];
	uint64_t tick; /* every slot up to this tick has been processed */
	net_timer_cb cb;
};

static inline bool
net_timer_armed(const struct net_timer *t)
{
	return t->tick != 0;
}

void net_wheel_init(struct net_wheel *w, uint64_t now_us, net_timer_cb cb);
/* Arm (or re-arm) t to fire at or after at_us. */
void net_timer_arm(struct net_wheel *w, struct net_timer *t, uint64_t at_us);
void net_timer_cancel(struct net_wheel *w, struct net_timer *t);
void net_wheel_run(struct net_stack *s, struct net_wheel *w, uint64_t now_us);


#endif /* SEGCACHED_NET_TIMER_H */
