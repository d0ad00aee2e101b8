#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Writes a pcap of memcached UDP requests for the net_pcap replay.

Ethernet/IPv4/UDP frames from 198.18.0.1 (many source ports) to the
server at 198.18.0.2, each datagram one request behind memcached's 8-byte
UDP frame header (16-bit request ids counting up): first --preload keys
stored by sets (key ids 0 .. preload-1), then --requests requests drawn
from --keys keys, --get-ratio of them gets, the rest sets, all values
--value-size bytes. A key's value depends only on the key, so a hit
always returns value_of(key) however the replay loops. Standard library
only (struct); no network is touched.

usage: pcap_requests.py OUT.pcap [--keys N] [--preload N] [--requests N]
                        [--get-ratio F] [--value-size N] [--seed N]
"""
import argparse
import random
import struct
import sys

SERVER_MAC = bytes.fromhex("027063617000")  # DPDK net_pcap's first port
CLIENT_MAC = bytes.fromhex("02c0ffee0001")
CLIENT_IP = bytes([198, 18, 0, 1])
SERVER_IP = bytes([198, 18, 0, 2])
SERVER_PORT = 11211
CLIENT_PORTS = 1024  # source ports 40000 .. 41023, round robin


def key_of(i):
    return b"key:%08d" % i


def value_of(key, size):
    """The value bytes stored under key (printable, key-dependent)."""
    seed = sum(key) & 0xff
    return bytes(ord('a') + (seed + j) % 26 for j in range(size))


def checksum(data):
    """The Internet checksum: the one's complement sum of the 16-bit words
    is the bytes' big-endian value modulo 0xffff (0xffff for a non-zero
    multiple), which keeps millions of frames quick to write."""
    if len(data) % 2:
        data += b"\0"
    n = int.from_bytes(data, "big")
    s = n % 0xffff
    if s == 0 and n != 0:
        s = 0xffff
    return ~s & 0xffff


def frame(payload, sport):
    """One Ethernet frame carrying payload in a UDP datagram to the server."""
    ulen = 8 + len(payload)
    pseudo = CLIENT_IP + SERVER_IP + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", sport, SERVER_PORT, ulen, 0) + payload
    uck = checksum(pseudo + udp) or 0xffff
    udp = udp[:6] + struct.pack("!H", uck) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 0, 0x4000, 64, 17, 0,
                     CLIENT_IP, SERVER_IP)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return SERVER_MAC + CLIENT_MAC + b"\x08\x00" + ip + udp


def requests(keys, preload, count, get_ratio, value_size, seed):
    """(kind, key id, memcached request bytes) in replay order."""
    rng = random.Random(seed)
    for i in range(preload):
        k = key_of(i)
        yield "set", i, b"set %s 0 0 %d\r\n%s\r\n" % (k, value_size, value_of(k, value_size))
    for _ in range(count):
        i = rng.randrange(keys)
        k = key_of(i)
        if rng.random() < get_ratio:
            yield "get", i, b"get %s\r\n" % k
        else:
            yield "set", i, b"set %s 0 0 %d\r\n%s\r\n" % (k, value_size,
                                                          value_of(k, value_size))


FILE_HEADER = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)


def records(reqs, counts, first=0):
    """The pcap records (bytes) of reqs (a requests() sequence), request
    ids from first on; counts[kind] is incremented per request."""
    out = []
    for n, (kind, _, req) in enumerate(reqs, first):
        payload = struct.pack("!HHHH", n & 0xffff, 0, 1, 0) + req
        fr = frame(payload, 40000 + n % CLIENT_PORTS)
        out.append(struct.pack("<IIII", n // 1000000, n % 1000000, len(fr), len(fr)))
        out.append(fr)
        counts[kind] += 1
    return b"".join(out)


def write(path, reqs):
    """Writes the frames of reqs (a requests() sequence); returns the
    per-kind counts."""
    counts = {"get": 0, "set": 0}
    with open(path, "wb") as f:
        f.write(FILE_HEADER)
        f.write(records(reqs, counts))
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--keys", type=int, default=500, help="key space of the mix")
    ap.add_argument("--preload", type=int, default=None,
                    help="keys stored first by sets in the pcap (default: --keys)")
    ap.add_argument("--requests", type=int, default=5500, help="requests after the preload")
    ap.add_argument("--get-ratio", type=float, default=0.9)
    ap.add_argument("--value-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    preload = a.keys if a.preload is None else a.preload
    if a.keys < 1 or preload < 0 or a.requests < 0 or not 0 <= a.get_ratio <= 1:
        ap.error("--keys must be >= 1, --preload and --requests >= 0, "
                 "--get-ratio within 0..1")
    if a.value_size < 1 or a.value_size > 1300:
        ap.error("--value-size must be 1..1300 (one datagram)")
    c = write(a.out, requests(a.keys, preload, a.requests, a.get_ratio, a.value_size, a.seed))
    print("%s: %d gets, %d sets" % (a.out, c["get"], c["set"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
