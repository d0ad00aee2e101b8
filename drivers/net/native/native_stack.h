/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The native stack: memcached on DPDK with lib/net, run to completion.
 *
 * Every worker lcore owns one RX/TX queue pair of the port, one lib/net
 * stack instance and one engine_worker, and loops
 *
 *	rx_burst -> net_stack_input (-> recv callbacks -> cmd_process)
 *	         -> net_stack_poll -> tx_burst
 *
 * without blocking, sleeping or taking a lock per request. A TCP
 * connection lives on the lcore whose queue RSS (or the device's own flow
 * distribution) gives its packets, so no packet is ever handled by two
 * lcores. The main lcore only runs the control loop (control.c).
 */
#ifndef SEGCACHED_NATIVE_STACK_H
#define SEGCACHED_NATIVE_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "drivers/net/dpdk/dpdk_port.h"
#include "drivers/net/stack.h"
#include "net/net.h"

/* Counters of the application side of one worker lcore; lib/net keeps
 * the packet and TCP counters. One table. */
#define NATIVE_COUNTERS(X)                                                       \
	X(conns_opened, "TCP connections accepted and kept")                     \
	X(conns_closed, "TCP connections closed (any reason)")                   \
	X(conns_rejected, "TCP connections refused: over --max-conns")           \
	X(conns_reset, "TCP connections that ended by reset, timeout or idleness") \
	X(bytes_read, "request bytes consumed (TCP and UDP payload)")             \
	X(bytes_written, "response bytes handed to TCP or sent in datagrams")    \
	X(bytes_composed_in_place, "of those, bytes composed in TCP's send ring itself " \
	  "(one copy fewer)")                                                      \
	X(backpressure_stalls, "times a connection's requests waited for its output to drain") \
	X(large_requests, "requests larger than the receive buffer, assembled aside") \
	X(conns_oversized, "connections closed: a request over the item limit")  \
	X(udp_requests, "UDP datagrams received")                                \
	X(udp_bad_frames, "UDP datagrams without a valid frame header")          \
	X(udp_responses, "UDP response datagrams sent")                          \
	X(udp_send_failed, "UDP response datagrams that could not be sent")      \
	X(loops, "iterations of the lcore loop")                                 \
	X(busy_loops, "iterations that received or sent packets")                \
	X(busy_cycles, "TSC cycles spent in those iterations: the lcore's work, whatever " \
	  "its load (divided by the requests served, the cost of one)")           \
	X(conns_refused_per_source, "TCP connections reset at once: over the lcore's " \
	  "share of --max-conns-per-source")                                     \
	X(conns_request_timeouts, "TCP connections reset: a request not whole within " \
	  "--request-timeout")                                                   \
	X(conns_write_timeouts, "TCP connections reset: replies not taken within " \
	  "--request-timeout")                                                   \
	X(conns_out_of_memory, "TCP connections closed: no memory to keep replies TCP " \
	  "could not take")                                                      \
	X(admin_conns_opened, "admin port connections accepted")                 \
	X(admin_conns_closed, "admin port connections closed")                   \
	X(admin_conns_rejected, "admin port connections refused: over 16 at once")

enum native_counter {
#define NATIVE_COUNTER_ENUM(name, desc) NATIVE_C_##name,
	NATIVE_COUNTERS(NATIVE_COUNTER_ENUM)
#undef NATIVE_COUNTER_ENUM
	NATIVE_C_MAX
};

extern const char *const native_counter_names[NATIVE_C_MAX];

/* The running stack; opaque outside drivers/net/native. */
struct native;

/* The native stack behind the stack interface (stack.h). */
struct stack_ops;
extern const struct stack_ops native_stack_ops;

/* Worker lcores available besides the main lcore. */
unsigned native_worker_lcores(void);

/* Sets up the port, the per-lcore stacks and engine workers. Returns NULL
 * with an operator-facing message in err. */
/* Its part of cfg: both stacks' settings and the native ones
 * (drivers/net/stack.h); cfg is kept by value, the memory its pointers
 * point to must outlive the stack. */
struct native *native_create(const struct stack_config *cfg, char *err, size_t errlen);
/* Launches the worker lcores (rte_eal_remote_launch). */
int native_start(struct native *n, char *err, size_t errlen);
/* Stops the lcores (each closes its connections) and waits for them.
 * Idempotent. */
void native_stop(struct native *n);
/* Stops, closes every connection, releases the port. NULL ok. */
void native_destroy(struct native *n);

/* For stats and telemetry; safe from any thread while running (counters
 * may be a few packets old). */
void native_counters(const struct native *n, int worker, uint64_t out[NATIVE_C_MAX]);
uint64_t native_net_counter(const struct native *n, int worker, enum net_counter_id id);
/* Every lib/net counter of worker `worker`, or summed over all (< 0). */
void native_net_counters(const struct native *n, int worker, uint64_t out[NET_C__COUNT]);
uint64_t native_curr_conns(const struct native *n);
unsigned native_worker_lcore(const struct native *n, unsigned worker);
uint32_t native_worker_conns(const struct native *n, unsigned worker);
/* lib/net connection slots of a worker in use (any TCP state), and how
 * many each worker has. */
uint32_t native_worker_slots_in_use(const struct native *n, unsigned worker);
uint32_t native_slots_per_worker(const struct native *n);
/* Buffer pairs a worker may hold at once (--tcp-buffer-memory's share, or
 * one per slot), and a worker's buffer bytes: allocated so far, and held
 * by connections now. */
uint32_t native_buf_pairs_per_worker(const struct native *n);
void native_worker_buffers(const struct native *n, unsigned worker, uint64_t *bytes,
			   uint64_t *in_use);

/* `stats conns`: the listening address and every open connection with
 * its peer and lcore, in memcached's format. Any lcore or thread. */
struct proto_out;
void native_stats_conns(struct native *n, struct proto_out *out);

/* DPDK telemetry: /segcached/net (native_telemetry.c). The command stays
 * registered for the process; it answers with an error while no stack is
 * attached. */
int native_telemetry_register(void);
void native_telemetry_attach(struct native *n);
void native_telemetry_detach(void);

#endif /* SEGCACHED_NATIVE_STACK_H */
