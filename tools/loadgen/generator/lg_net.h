/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/net transport: the EAL's first port, one RX/TX queue pair per worker
 * lcore, a struct net_stack per lcore with active TCP opens to the server
 * (or UDP flows over LG_NET_UDP_PORTS local ports per lcore). The main
 * lcore runs the clock (lg_control). With net_memif, queue q of the
 * generator talks to queue q of the server; on a port with RSS over
 * several queues, each worker's local ports are those whose replies the
 * port's key and redirection table put on its own queue (lg_rss), and a
 * port whose hash leaves out the L4 ports is refused.
 */
#ifndef LG_NET_H
#define LG_NET_H

#include "lg_options.h"
#include "lg_session.h"

/* After rte_eal_init. Returns 0 with the merged stats, or -1 with a
 * message printed. */
int lg_net_run(struct lg_options *o, struct lg_stats *total, double *measure_s);

#endif /* LG_NET_H */
