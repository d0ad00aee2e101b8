#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""tools/udp-replay (issue 24): the native UDP path fed from a pcap
through net_pcap, no network at all.

A once-through replay with TX to a pcap: every request of the file gets
exactly its reply (its request id, STORED for a set, the key's value for
a get), and the stats count the file's gets, hits and sets. Then the tool
itself, briefly: the infinite replay of a small working set and the
read-once large one (a preload of every key first), each answering
every get with a hit, and the stack's adaptive first phase probing.
Needs root (DPDK's runtime directory); skipped (77) otherwise.
"""
import argparse
import json
import os
import struct
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "udp-replay"))
import pcap_requests  # noqa: E402
import udp_replay  # noqa: E402

SEGCACHED = None


def read_pcap(path):
    """The UDP payloads of an Ethernet pcap, in order."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):  # micro- or nanosecond stamps
        raise AssertionError("not a little-endian pcap: %#x" % magic)
    off = 24
    while off < len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, off)
        fr = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if fr[12:14] != b"\x08\x00" or fr[23] != 17:
            continue
        ihl = (fr[14] & 15) * 4
        ip = fr[14:14 + ihl]
        udp = fr[14 + ihl:]
        ulen = struct.unpack_from("!H", udp, 4)[0]
        # both checksums as a receiver checks them: the sum with the
        # checksum in it is 0
        if pcap_requests.checksum(ip) != 0:
            raise AssertionError("bad IPv4 header checksum in reply %d" % len(out))
        pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, ulen)
        if struct.unpack_from("!H", udp, 6)[0] != 0 and \
                pcap_requests.checksum(pseudo + udp[:ulen]) != 0:
            raise AssertionError("bad UDP checksum in reply %d" % len(out))
        out.append(udp[8:ulen])
    return out


class Replay(unittest.TestCase):
    def test_once_through_every_reply(self):
        keys, count = 300, 1500
        reqs = list(pcap_requests.requests(keys, keys, count, 0.9, 64, 7))
        with tempfile.TemporaryDirectory() as tmp:
            rx = os.path.join(tmp, "rx.pcap")
            tx = os.path.join(tmp, "tx.pcap")
            c = pcap_requests.write(rx, iter(reqs))
            with udp_replay.Replay(SEGCACHED, rx, infinite=False, tx_pcap=tx,
                                   memory_mb=64, logdir=tmp) as srv:
                st = udp_replay.wait_requests(srv, len(reqs))
            self.assertEqual(st["cmd_get"], c["get"])
            self.assertEqual(st["get_hits"], c["get"])  # every key was preloaded
            self.assertEqual(st["get_misses"], 0)
            self.assertEqual(st["cmd_set"], c["set"])
            replies = read_pcap(tx)
        self.assertEqual(len(replies), len(reqs))
        for n, (reply, (kind, i, _)) in enumerate(zip(replies, reqs)):
            rid, seq, total, res = struct.unpack_from("!HHHH", reply)
            self.assertEqual((rid, seq, total, res), (n & 0xffff, 0, 1, 0), n)
            k = pcap_requests.key_of(i)
            if kind == "set":
                want = b"STORED\r\n"
            else:
                want = b"VALUE %s 0 64\r\n%s\r\nEND\r\n" % (k, pcap_requests.value_of(k, 64))
            self.assertEqual(reply[8:], want, "request %d (%s %s)" % (n, kind, k))

    def run_tool(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "runs.json")
            rc = udp_replay.main(["--rounds", "1", "--seconds", "1", "--warmup", "0.5",
                                  "--json", out] + list(args) + [SEGCACHED])
            self.assertEqual(rc, 0)
            with open(out) as f:
                runs = json.load(f)["runs"]
        self.assertEqual(len(runs), 1)
        return runs[0][SEGCACHED]

    def assert_all_hits(self, d):
        # the stats are read while the server runs: a burst's gets may be
        # counted before their hits at either end of the window
        self.assertGreater(d["cmd_get"], 0)
        self.assertEqual(d["get_misses"], 0)
        self.assertLessEqual(abs(d["get_hits"] - d["cmd_get"]), 2 * 32)

    def test_small_working_set_loops(self):
        m = self.run_tool("--keys", "500", "--memory", "64")
        d = m["delta"]
        self.assert_all_hits(d)
        self.assertGreater(d["cmd_set"], 0)
        self.assertEqual(m["curr_items"], 500)
        self.assertGreater(m["rate"], 0)
        # the stack tried its first phase both ways and chose
        self.assertGreater(m["net"]["rx_probes_prepare"] + m["net"]["rx_probes_plain"], 0)

    def test_large_working_set_streams(self):
        m = self.run_tool("--keys", "20000", "--pcap-preload-max", "1000",
                          "--stream-requests", "20000", "--max-rate", "1e6", "--memory", "64")
        self.assert_all_hits(m["delta"])
        self.assertEqual(m["curr_items"], 20000)


def main():
    global SEGCACHED
    p = argparse.ArgumentParser()
    p.add_argument("--segcached", required=True)
    a, rest = p.parse_known_args()
    if os.geteuid() != 0:
        print("skipped: needs root (DPDK's runtime directory)")
        return 77
    SEGCACHED = os.path.abspath(a.segcached)
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
