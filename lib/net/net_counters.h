/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Every counter of a stack instance, in one table. Each entry is
 * X(name, description); the enum, the names and the descriptions below
 * are all generated from it, so a counter is added in exactly one place.
 * Counters belong to one stack instance (one lcore) and are plain uint64_t:
 * the owning lcore writes them, anyone may read them (aligned 64-bit loads
 * do not tear on the platforms DPDK supports; a reader may see a value a
 * few packets old).
 */
#ifndef SEGCACHED_NET_COUNTERS_H
#define SEGCACHED_NET_COUNTERS_H

#define NET_COUNTERS(X)                                                        \
	/* link level */                                                       \
	X(rx_packets, "packets handed to the stack")                           \
	X(rx_bytes, "bytes handed to the stack (frame length)")                \
	X(tx_packets, "packets the NIC accepted")                              \
	X(tx_bytes, "bytes the NIC accepted")                                  \
	X(tx_nic_deferred, "TX bursts the NIC took only in part, its ring full (the " \
	  "rest kept, in order, for the next)")                                \
	X(tx_queue_full, "packets not built: the TX array was full")           \
	X(mempool_empty, "packets not built: the TX mempool was empty")        \
	X(drop_truncated, "frames shorter than their headers say")             \
	X(drop_chained, "multi-segment frames that could not be linearised")   \
	X(drop_ethertype, "frames with an unhandled ethertype")                \
	X(drop_not_our_mac, "frames addressed to another unicast MAC")         \
	X(rx_probes_prepare, "RX probes after which the first phase (lookups, " \
	  "prefetches, hints) ran: it paid")                                   \
	X(rx_probes_plain, "RX probes after which frames went one by one: the " \
	  "first phase did not pay")                                           \
	/* checksum offload: which path each packet took (the RX verdicts are \
	 * the port's flags; unknown ones are checked in software) */          \
	X(tx_ip_cksum_offload, "IPv4 headers built with their checksum left to the NIC") \
	X(tx_ip_cksum_sw, "IPv4 headers built with their checksum computed in software") \
	X(tx_l4_cksum_offload, "TCP/UDP packets built with their checksum left to the " \
	  "NIC (the pseudo-header's sum filled in)")                           \
	X(tx_l4_cksum_sw, "TCP/UDP packets built with their checksum computed in " \
	  "software")                                                          \
	X(rx_ip_cksum_unknown, "IPv4 packets the port gave no header checksum verdict") \
	X(rx_ip_cksum_bad, "IPv4 packets the port flagged: header checksum bad") \
	X(rx_ip_cksum_good, "IPv4 packets the port flagged: header checksum good") \
	X(rx_ip_cksum_none, "IPv4 packets the port flagged: header checksum not in " \
	  "the packet but the header verified")                                \
	X(rx_l4_cksum_unknown, "TCP/UDP packets the port gave no checksum verdict") \
	X(rx_l4_cksum_bad, "TCP/UDP packets the port flagged: checksum bad")  \
	X(rx_l4_cksum_good, "TCP/UDP packets the port flagged: checksum good") \
	X(rx_l4_cksum_none, "TCP/UDP packets the port flagged: checksum not filled in " \
	  "(sent by a local peer that offloaded it) but the data is intact")   \
	/* ARP */                                                              \
	X(arp_rx, "ARP packets received")                                      \
	X(arp_replies_sent, "ARP requests for our address answered")           \
	X(arp_requests_sent, "ARP requests sent to resolve a peer")            \
	X(arp_learned, "ARP cache entries learned or refreshed")               \
	X(arp_drop, "ARP packets dropped (malformed or not for us)")           \
	/* IPv4 */                                                             \
	X(ip_rx, "IPv4 packets for us")                                        \
	X(drop_ip_bad_header, "IPv4: bad version, IHL or total length")        \
	X(drop_ip_bad_cksum, "IPv4: bad header checksum")                      \
	X(drop_ip_fragment, "IPv4: fragments (not reassembled)")               \
	X(drop_ip_options, "IPv4: packets with options")                       \
	X(drop_ip_not_for_us, "IPv4: destination is not our address")         \
	X(drop_ip_bad_source, "IPv4: a source no reply may go to (broadcast, multicast, ...)") \
	X(drop_ip_not_allowed, "IPv4: a source outside the allow-list")        \
	X(drop_ip_ttl, "IPv4: TTL zero")                                       \
	X(drop_ip_proto, "IPv4: protocol not handled")                         \
	/* ICMP */                                                             \
	X(icmp_echo_rx, "ICMP echo requests received")                         \
	X(icmp_echo_replies, "ICMP echo replies sent")                         \
	X(drop_icmp, "ICMP: bad checksum, truncated, or type not handled")     \
	/* UDP */                                                              \
	X(udp_rx, "UDP datagrams delivered to the application")                \
	X(udp_tx, "UDP datagrams sent")                                        \
	X(drop_udp_bad_cksum, "UDP: bad checksum")                             \
	X(drop_udp_bad_len, "UDP: length field disagrees with the IP length")  \
	X(drop_udp_no_port, "UDP: no listener on the destination port")        \
	X(drop_udp_bad_source, "UDP: source MAC not unicast, port 0, or off the subnet") \
	/* TCP segments */                                                     \
	X(tcp_rx_segs, "TCP segments received (valid headers)")                \
	X(tcp_tx_segs, "TCP segments built for transmission")                  \
	X(tcp_tx_zero_copy, "TCP segments sent without copying their data")   \
	X(tcp_tx_tso, "TCP segments larger than the MSS, cut by the NIC (TSO)") \
	X(drop_tcp_bad_cksum, "TCP: bad checksum")                             \
	X(drop_tcp_bad_header, "TCP: bad data offset or options")              \
	X(drop_tcp_no_conn, "TCP: no connection or listener (RST sent)")       \
	X(drop_tcp_out_of_window, "TCP: segments outside the receive window")  \
	X(drop_tcp_bad_ack, "TCP: ACKs of data never sent")                    \
	/* TCP connections */                                                  \
	X(tcp_passive_opens, "TCP connections accepted (SYN received)")        \
	X(tcp_active_opens, "TCP connections started by connect()")            \
	X(tcp_established, "TCP connections that reached ESTABLISHED")         \
	X(tcp_closed, "TCP connections released")                              \
	X(tcp_resets_rx, "TCP connections reset by the peer")                  \
	X(tcp_resets_tx, "RST segments sent")                                  \
	X(tcp_timeouts, "TCP connections dropped after too many retransmits")  \
	X(tcp_orphan_timeouts, "TCP connections reset: closed, not done within orphan_timeout_us") \
	X(tcp_orphan_overflow, "TCP closes turned into resets: over max_orphans") \
	X(tcp_idle_timeouts, "TCP connections closed for idleness")            \
	X(tcp_conn_table_full, "TCP: SYN or connect refused, no free slot")    \
	X(tcp_time_wait_reused, "TCP: TIME_WAIT slots recycled for new SYNs")  \
	/* TCP reliability and congestion */                                   \
	X(tcp_retransmits, "TCP segments retransmitted")                       \
	X(tcp_rto_expired, "TCP retransmission timeouts")                      \
	X(tcp_fast_retransmits, "TCP fast retransmits (3 duplicate ACKs)")     \
	X(tcp_dup_acks, "TCP duplicate ACKs received")                         \
	X(tcp_ooo_segs, "TCP out-of-order segments queued")                    \
	X(tcp_ooo_drop, "TCP out-of-order segments dropped (queue full)")      \
	X(tcp_no_buffers, "TCP bytes refused: no buffer pair could be had "  \
	  "(max_buf_pairs held, or rte_malloc failed)")                        \
	X(tcp_zero_window_probes, "TCP zero-window probes sent")               \
	X(tcp_challenge_acks, "TCP challenge ACKs sent (RFC 5961)")            \
	X(tcp_delayed_acks, "TCP ACKs sent by the delayed-ACK timer")          \
	/* SYN flood defence */                                                \
	X(tcp_backlog_full, "TCP SYNs beyond the SYN backlog")                 \
	X(tcp_syncookies_sent, "TCP SYN cookies sent")                         \
	X(tcp_syncookies_ok, "TCP connections completed from a SYN cookie")   \
	X(tcp_syncookies_bad, "TCP ACKs with an invalid SYN cookie")           \
	X(tcp_refused_full, "TCP segments refused with every slot taken "     \
	  "(stateless: a connection's handshake ACK and first data each count)")

enum net_counter_id {
#define NET_COUNTER_ENUM(name, desc) NET_C_##name,
	NET_COUNTERS(NET_COUNTER_ENUM)
#undef NET_COUNTER_ENUM
	NET_C__COUNT
};

#endif /* SEGCACHED_NET_COUNTERS_H */
