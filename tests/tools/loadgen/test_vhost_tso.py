#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""tools/loadgen/scripts/vhost-run.sh with replies TSO cuts (issue 38):
segcached on net_virtio_user with --offloads cksum,tso sends 4 KiB values
as segments of several MSS, which net_vhost hands the generator whole. The
generator must take them: none dropped as a chain it could not linearise
(net_vhost's ext-buffer=1 gives a large frame one external buffer instead
of a chain of 2 KiB mbufs, which lib/net drops as drop_chained), every
value checked, and the server's counters must show TSO in use and no
software checksum. No figure is timed.

  test_vhost_tso.py tools/loadgen/scripts/vhost-run.sh BUILD_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    script, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        env = dict(os.environ, VALUE_SIZE="4096", KEYS="2000", DURATION="1",
                   OFFLOADS="cksum,tso")
        r = subprocess.run([script, build, "tcp", "1", out], env=env, capture_output=True,
                           text=True, timeout=150)
        print(r.stdout[-3000:])
        if r.returncode != 0:
            print(r.stderr[-3000:], file=sys.stderr)
            return "vhost-run.sh exited with %d" % r.returncode
        d = json.load(open(out))
    m = re.search(r"loadgen: net:.* drop_chained (\d+)", r.stdout + r.stderr)
    if m is None:
        return "no drop_chained in the generator's net line"
    checks = [
        ("the generator dropped chained frames", int(m.group(1)) == 0),
        ("errors or corrupt values", not d.get("errors") and not d.get("corrupt")),
        ("no value was checked", d.get("values_checked", 0) > 0),
        ("the server sent no TSO segment", (d.get("server_tcp_tx_tso") or 0) > 0),
        ("the server computed L4 checksums in software", d.get("server_tx_l4_cksum_sw") == 0),
    ]
    bad = [what for what, ok in checks if not ok]
    print({k: d.get(k) for k in ("throughput", "server_tcp_tx_tso", "server_tx_l4_cksum_sw",
                                 "server_tcp_retransmits")})
    return "; ".join(bad) if bad else None


if __name__ == "__main__":
    err = main()
    if err:
        print("FAIL:", err, file=sys.stderr)
        sys.exit(1)
