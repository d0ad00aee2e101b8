/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A hashed timer wheel driven by the stack's injected clock.
 *
 * Why not rte_timer: rte_timer_manage() reads rte_get_timer_cycles()
 * itself, so time cannot be injected and unit tests would have to sleep;
 * and every ACK re-arms a retransmission timer, which in rte_timer is a
 * skip-list removal and insertion. Here each connection owns one timer
 * armed for its earliest deadline; pushing a deadline later costs nothing
 * (the timer fires early, finds nothing due and re-arms), pulling one
 * earlier is an O(1) list move. Timers further away than the wheel span
 * stay in their slot and are skipped until their round comes.
 */
#include "net/net_timer.h"

void
net_wheel_init(struct net_wheel *w, uint64_t now_us, net_timer_cb cb)
{
	w->cb = cb;
	for (unsigned i = 0; i < NET_WHEEL_SLOTS; i++)
		TAILQ_INIT(&w->slot[i]);
	w->tick = now_us >> NET_TICK_SHIFT;
}

void
net_timer_cancel(struct net_wheel *w, struct net_timer *t)
{
	if (!net_timer_armed(t))
		return;
	TAILQ_REMOVE(&w->slot[t->tick & (NET_WHEEL_SLOTS - 1)], t, link);
	t->tick = 0;
}

void
net_timer_arm(struct net_wheel *w, struct net_timer *t, uint64_t at_us)
{
	/* Round up: a timer never fires before its time. */
	uint64_t tick = (at_us + (1u << NET_TICK_SHIFT) - 1) >> NET_TICK_SHIFT;

	if (tick <= w->tick)
		tick = w->tick + 1;
	if (net_timer_armed(t)) {
		if (t->tick == tick)
			return;
		net_timer_cancel(w, t);
	}
	t->tick = tick; /* never 0: w->tick + 1 at least */
	TAILQ_INSERT_TAIL(&w->slot[tick & (NET_WHEEL_SLOTS - 1)], t, link);
}

static void
run_slot(struct net_stack *s, struct net_wheel *w, unsigned idx, uint64_t now_tick)
{
	struct net_timer_list due = TAILQ_HEAD_INITIALIZER(due);
	struct net_timer *t, *next;

	for (t = TAILQ_FIRST(&w->slot[idx]); t != NULL; t = next) {
		next = TAILQ_NEXT(t, link);
		if (t->tick <= now_tick) {
			TAILQ_REMOVE(&w->slot[idx], t, link);
			TAILQ_INSERT_TAIL(&due, t, link);
		}
	}
	/* Callbacks may re-arm or cancel any timer, so each is unlinked from
	 * `due` before its callback runs. */
	while ((t = TAILQ_FIRST(&due)) != NULL) {
		TAILQ_REMOVE(&due, t, link);
		t->tick = 0;
		w->cb(s, t);
	}
}

void
net_wheel_run(struct net_stack *s, struct net_wheel *w, uint64_t now_us)
{
	uint64_t now_tick = now_us >> NET_TICK_SHIFT;
	uint64_t from = w->tick + 1;

	if (now_tick < from)
		return;
	/* A long gap (a stalled loop, or a test jumping the clock) visits
	 * each slot once instead of once per elapsed tick. */
	if (now_tick - from >= NET_WHEEL_SLOTS)
		from = now_tick - NET_WHEEL_SLOTS + 1;
	/* Timers armed by callbacks land after now_tick (net_timer_arm), so
	 * setting the tick first keeps this loop finite. */
	w->tick = now_tick;
	for (uint64_t t = from; t <= now_tick; t++)
		run_slot(s, w, t & (NET_WHEEL_SLOTS - 1), now_tick);
}
