/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The options of --stack native, the DPDK user-space stack: the server's
 * address, its port, queues and descriptors, MTU, TCP buffer memory, link
 * wait, RSS key, offloads and UDP sources. One parser per row of the option table
 * (options_table.c).
 */
#include "options_private.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <rte_config.h>
#include "util/util_err.h"

int
opt_ip(struct options *o, const char *arg, char *err, size_t errlen)
{
	uint32_t addr;
	unsigned prefix;

	if (strlen(arg) >= sizeof(o->ip) || !options_parse_ipv4(arg, true, &addr, &prefix) || prefix < 1)
		return util_fail(err, errlen,
			    "'%s' is not an IPv4 address with a prefix length, e.g. 198.18.0.2/24",
			    arg);
	if (addr >> 24 == 0 || addr >> 24 >= 224 || addr >> 24 == 127)
		return util_fail(err, errlen, "'%s': not a unicast host address", arg);
	strcpy(o->ip, arg);
	o->ip_addr = addr;
	o->ip_prefix = (uint8_t)prefix;
	return 0;
}

int
opt_port_id(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, RTE_MAX_ETHPORTS - 1, &v, err, errlen) < 0)
		return -1;
	o->port_id = (int)v;
	return 0;
}

int
opt_queues(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, 128, &v, err, errlen) < 0)
		return -1;
	o->queues = (unsigned)v;
	return 0;
}

static int
opt_desc(const char *arg, uint16_t *out, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 64, 32768, &v, err, errlen) < 0)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int
opt_rx_desc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_desc(arg, &o->rx_desc, err, errlen);
}

int
opt_tx_desc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_desc(arg, &o->tx_desc, err, errlen);
}

int
opt_mtu(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 576, 9000, &v, err, errlen) < 0)
		return -1;
	o->mtu = (uint16_t)v;
	return 0;
}

int
opt_tcp_buffer_memory(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	/* as -m: a bare number is megabytes */
	if (options_parse_size(arg, MIB, &v) < 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (megabytes, or a number with a K, M or G suffix)",
			    arg);
	o->tcp_buffer_memory = v;
	o->tcp_buffer_memory_given = true;
	return 0;
}

int
opt_link_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 3600, &v, err, errlen) < 0)
		return -1;
	o->link_timeout = (unsigned)v;
	return 0;
}

int
opt_rss_key(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t n = strlen(arg);

	if (n == 0 || n % 2 != 0 || n / 2 > sizeof(o->rss_key))
		return util_fail(err, errlen, "'%s' is not 1 to %zu bytes in hex", arg,
				 sizeof(o->rss_key));
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int b;

		if (!isxdigit((unsigned char)arg[2 * i]) ||
		    !isxdigit((unsigned char)arg[2 * i + 1]) ||
		    sscanf(arg + 2 * i, "%2x", &b) != 1)
			return util_fail(err, errlen, "'%s' is not hex", arg);
		o->rss_key[i] = (uint8_t)b;
	}
	o->rss_key_len = (uint8_t)(n / 2);
	return 0;
}

int
opt_udp_any_source(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->udp_any_source, err, errlen);
}

/* --offloads cksum,tso | cksum | none: what the port may do for the
 * stack; the port's own capabilities still decide the rest. */
int
opt_offloads(struct options *o, const char *arg, char *err, size_t errlen)
{
	bool cksum = false, tso = false;
	char buf[64];

	if (strlen(arg) >= sizeof(buf))
		return util_fail(err, errlen, "'%s': not a list of offloads", arg);
	strcpy(buf, arg);
	if (strcmp(buf, "none") != 0) {
		char *save = NULL;

		for (char *w = strtok_r(buf, ",", &save); w != NULL;
		     w = strtok_r(NULL, ",", &save)) {
			if (strcmp(w, "cksum") == 0)
				cksum = true;
			else if (strcmp(w, "tso") == 0)
				tso = true;
			else
				return util_fail(err, errlen,
					    "'%s': offloads are cksum and tso, e.g. cksum,tso; "
					    "or none", w);
		}
		if (!cksum && !tso)
			return util_fail(err, errlen, "'%s': not a list of offloads", arg);
	}
	if (tso && !cksum)
		return util_fail(err, errlen,
			    "'%s': TSO leaves the checksums to the NIC; tso needs cksum "
			    "(cksum,tso)", arg);
	o->no_cksum_offload = !cksum;
	o->no_tso = !tso;
	return 0;
}
