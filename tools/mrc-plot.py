#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Draws a running segcached's live miss-ratio curve (`stats mrc`).

  tools/mrc-plot.py HOST:PORT --png FILE [--target RATIO] [--title TEXT] [--recent]

The curve is the miss ratio that segcached's own policy (segments, TTL
buckets, merge eviction) would have at each memory size from 1/8x to 4x
of its -m, predicted from a sample of the keys (docs/operations.md, "How
much memory"); the server's measured miss ratio at its -m is marked. With
--target the size that reaches that miss ratio is printed (interpolated
between the modelled sizes), e.g. "to reach a 2.0% miss ratio: 3.1 GB".
--recent reads the recent window instead of since start (the last 32,768
to 65,536 sampled gets, against the server's own miss ratio over them).
Points `stats mrc` names rough (mrc_rough_sizes: fewer than 16 segments
at that size) are marked. Also prints the points as a table. Needs matplotlib only with --png.
"""
import argparse
import socket
import sys


def fetch(hostport, timeout=10.0):
    """`stats mrc` as a dict of name -> value string."""
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit("mrc-plot: HOST:PORT expected, got %r" % hostport)
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as s:
        s.sendall(b"stats mrc\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            d = s.recv(65536)
            if not d:
                raise SystemExit("mrc-plot: connection closed before END")
            buf += d
            if buf.startswith((b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR")):
                raise SystemExit("mrc-plot: the server answered %r" % buf.strip())
    out = {}
    for line in buf.decode().splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] == "STAT":
            out[parts[1]] = parts[2]
    return out


def curve(st, prefix="mrc:"):
    """[(bytes, miss ratio, sampled gets)] by size ("mrc_recent:": the
    recent window's)."""
    pts = []
    for k, v in st.items():
        if k.startswith(prefix):
            ratio, gets = v.split()
            pts.append((int(k[len(prefix):]), float(ratio), int(gets)))
    return sorted(pts)


def rough_sizes(st):
    """The sizes `stats mrc` names rough (none before issue 36's build)."""
    v = st.get("mrc_rough_sizes", "none")
    return set() if v == "none" else {int(b) for b in v.split(",")}


def size_for(pts, target):
    """The smallest size whose predicted miss ratio is at most target,
    interpolated linearly between modelled sizes; None beyond 4x."""
    prev = None
    for b, r, _ in pts:
        if r <= target:
            if prev is None or prev[1] == r:
                return b
            (b0, r0) = prev
            return b0 + (b - b0) * (r0 - target) / (r0 - r)
        prev = (b, r)
    return None


def human(b):
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if b >= div:
            return "%.1f %s" % (b / div, unit)
    return "%d B" % b


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("server", metavar="HOST:PORT")
    p.add_argument("--png", help="write the plot to this PNG file")
    p.add_argument("--target", type=float, help="miss ratio to size for, e.g. 0.02")
    p.add_argument("--title", default=None)
    p.add_argument("--recent", action="store_true",
                   help="the recent window (mrc_recent:) instead of since start")
    a = p.parse_args(argv)
    st = fetch(a.server)
    if st.get("mrc_status") != "enabled":
        raise SystemExit("mrc-plot: the server has no miss-ratio curve (mrc_status %s; "
                         "started with --no-mrc, or not the seg engine?)"
                         % st.get("mrc_status", "missing"))
    if a.recent and "mrc_recent_gets" not in st:
        raise SystemExit("mrc-plot: this server has no recent window (a build before it)")
    pts = curve(st, "mrc_recent:" if a.recent else "mrc:")
    rough = rough_sizes(st)
    current = int(st["mrc_current_bytes"])
    measured = float(st["mrc_recent_measured_miss_ratio" if a.recent
                        else "mrc_measured_miss_ratio"])
    if a.recent:
        print("recent window: the last %s gets (%s epochs ended)" %
              (st["mrc_recent_gets"], st["mrc_recent_epochs"]))
    print("sample: rate %s, %s keys, %s requests" %
          (st["mrc_sample_rate"], st["mrc_sample_keys"], st["mrc_sample_requests"]))
    print("%12s  %10s  %12s" % ("memory", "miss ratio", "sampled gets"))
    for b, r, g in pts:
        print("%12s  %10.4f  %12d%s" % (human(b), r, g, "  <- -m (measured %.4f)" % measured
                                       if b == current else "  (rough)" if b in rough else ""))
    if a.target is not None:
        need = size_for(pts, a.target)
        if need is None:
            print("to reach a %.1f%% miss ratio: more than %s (4x, the largest modelled)" %
                  (a.target * 100, human(pts[-1][0])))
        else:
            print("to reach a %.1f%% miss ratio: %s" % (a.target * 100, human(need)))
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.plot([b / (1 << 30) for b, _, _ in pts], [r for _, r, _ in pts], "o-",
                label="predicted (segcached's policy, sampled)")
        if rough:
            rp = [(b, r) for b, r, _ in pts if b in rough]
            ax.plot([b / (1 << 30) for b, _ in rp], [r for _, r in rp], "o", mfc="white",
                    color="C0", label="rough (fewer than 16 segments there)")
        ax.plot([current / (1 << 30)], [measured], "r*", markersize=14,
                label="measured at -m %s" % human(current))
        if a.target is not None:
            ax.axhline(a.target, color="grey", linestyle=":", label="target %.3g" % a.target)
        ax.set_xlabel("memory (GB)")
        ax.set_ylabel("miss ratio")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.grid(True, alpha=0.3)
        ax.set_title(a.title or "live miss-ratio curve of %s" % a.server)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.png, dpi=100)
        print("wrote %s" % a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
