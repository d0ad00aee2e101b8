#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Renders bench-suite.py results (JSON) as Markdown tables and a PNG plot
(ops/s vs server cores, one line per server), apart from the measurement so
that results measured on another host render the same way:

    tools/loadgen/suite/bench_report.py OUT/results.json [--png docs/x.png]
        [--doc docs/bench/suite.md --marker NAME]

--doc replaces the text between the lines <!-- NAME:begin --> and
<!-- NAME:end --> of that file with the report; without it the report goes
to stdout. Medians over rounds; "vs memcached" is the median of the
per-round ratios to memcached's throughput with the same cores, workload
and pipelining depth (min-max in brackets). Every table gives depth 1
(one request per connection at a time, as most clients talk: the headline)
beside depth 4 (pipelined), so that a pipelining effect is never read as a
server's.
"""
import argparse
import json
import os
import sys


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


# The generator's lib/net counters (its "loadgen: net:" line, kept as the
# result's net_counters) that say a request or a packet was lost or
# resent: any of them above 0 makes the run not a result.
LOSS_COUNTERS = ("tcp_retransmits", "tcp_rto_expired", "tcp_fast_retransmits",
                 "tx_queue_full", "mempool_empty", "port_imissed", "port_oerrors",
                 "rx_nombuf")
# The generator's own counts with the same meaning.
LOSS_FIELDS = ("errors", "corrupt", "stale", "bad", "lost", "conn_failed")
# Open loop: more than this share of the measured sends late because the
# generator itself fell behind its schedule (generator_late; not window_late,
# where the connection's depth was full) and the latencies are the
# generator's, not the server's.
GENERATOR_LATE_MAX_PERCENT = 1


def generator_behind(r):
    """Why the generator's own lateness makes the run not a result, or None."""
    late, sent = r.get("generator_late"), r.get("sent")
    if late is None:
        return None  # a closed loop, or a generator from before the split
    if type(late) is not int or type(sent) is not int:
        return "generator_late %r of %r sends unreadable" % (late, sent)
    if late * 100 <= GENERATOR_LATE_MAX_PERCENT * sent:
        return None
    return "generator_late %d of %d sends (%.2f%%, over %d%%)" % (
        late, sent, 100.0 * late / sent if sent else 100.0, GENERATOR_LATE_MAX_PERCENT)


def parse_counters(text):
    """'name value name value ...' as {name: int}, by name, so that
    tcp_fast_retransmits is never read as tcp_retransmits. A value that is
    not a number is kept as None (and makes the run invalid)."""
    words = (text or "").split()
    out = {}
    for name, value in zip(words[0::2], words[1::2]):
        try:
            out[name] = int(value)
        except ValueError:
            out[name] = None
    if len(words) % 2:
        out[words[-1]] = None
    return out


def expected_hit_ratio(run):
    """Every key is preloaded (unless the generator was told --no-preload)
    and the servers have room for all of them: every get must hit."""
    return None if "--no-preload" in run.get("generator_cmd", "") else 1.0


def problems(run):
    """Why a run is not a result (empty: it is one): no result, a generator
    that failed, any error reply, corrupt or malformed answer, lost request,
    failed connection, a hit ratio below the preload's, a lib/net loss
    counter above 0, or (open loop) over 1% of the sends generator-late."""
    r = run["result"]
    if r is None:
        return ["no result"]
    why = []
    if r.get("exit_status"):
        why.append("generator exit status %s" % r["exit_status"])
    for k in LOSS_FIELDS:
        if r.get(k):
            why.append("%s %d" % (k, r[k]))
    want = expected_hit_ratio(run)
    if want is not None and r.get("gets") and r.get("hit_ratio", 0) < want:
        why.append("hit ratio %.6f below the preload's %.3f" % (r["hit_ratio"], want))
    for name, value in sorted(parse_counters(r.get("net_counters")).items()):
        if value is None:
            why.append("%s unreadable" % name)
        elif value and name in LOSS_COUNTERS:
            why.append("%s %d" % (name, value))
    behind = generator_behind(r)
    if behind:
        why.append(behind)
    if not r.get("throughput", 0) > 0:
        why.append("no throughput")
    return why


def ok(run):
    return not problems(run)


def depth_of(run):
    """The run's pipelining depth (requests in flight per connection).
    Results from before the suite ran several depths have it in the
    generator's report only (with_depths fills it in)."""
    return run.get("depth") or (run.get("result") or {}).get("depth") or 0


def workload_key(run):
    return (run["cores"], run["transport"], run["get_ratio"], run["dist"], depth_of(run))


def display_order(wk):
    """cores, TCP before UDP, 90/10 before 50/50, uniform before zipf,
    depth 1 before depth 4 (the two side by side)."""
    return (wk[0], wk[1], -wk[2], wk[3], wk[4])


def with_depths(results):
    """results with every run's depth and connections per worker: older
    JSON has one setting for all runs, in its meta."""
    meta = results["meta"]
    for r in results["runs"]:
        if not r.get("depth"):
            r["depth"] = (r.get("result") or {}).get("depth") or meta.get("depth", 0)
        if not r.get("conns"):
            r["conns"] = (r.get("result") or {}).get("conns_per_worker") or \
                meta.get("conns_per_worker", 0)
    return results


def settings_of(meta):
    """[(depth, connections per worker)] of a suite: its meta's "settings",
    or the one depth and --conns of older JSON."""
    if meta.get("settings"):
        return [(s["depth"], s["conns"]) for s in meta["settings"]]
    return [(meta.get("depth", 0), meta.get("conns_per_worker", 0))]


def mix_name(get_ratio):
    g = int(round(get_ratio * 100))
    return "%d/%d" % (g, 100 - g)


def dist_name(d):
    return "zipf 0.99" if d == "zipf" else d


def server_order(runs):
    seen = []
    for r in runs:
        if r["server"] not in seen:
            seen.append(r["server"])
    # memcached, the baseline, last.
    return sorted(seen, key=lambda k: k == "memcached")


def ratios_vs_memcached(closed, key, wk, base_key="memcached"):
    """Per-round ratios of server key to memcached (or base_key), same
    workload and round."""
    base = {r["round"]: r for r in closed if r["server"] == base_key and
            workload_key(r) == wk and ok(r)}
    out = []
    for r in closed:
        if r["server"] == key and workload_key(r) == wk and ok(r) and r["round"] in base:
            out.append(r["result"]["throughput"] / base[r["round"]]["result"]["throughput"])
    return out


def fmt_ratio(rs):
    if not rs:
        return ""
    return "**%.2f** (%.2f-%.2f)" % (median(rs), min(rs), max(rs))


def summarize(closed, key, wk):
    """(median throughput, median-throughput run, all runs) or None."""
    runs = [r for r in closed if r["server"] == key and workload_key(r) == wk]
    good = [r for r in runs if ok(r)]
    if not good:
        return None, None, runs
    mid = sorted(good, key=lambda r: r["result"]["throughput"])[len(good) // 2]
    return median([r["result"]["throughput"] for r in good]), mid, runs


def header(meta):
    h = meta["host"]
    lines = []
    if meta.get("fold_cpus"):
        lines += ["**Plumbing test, not a measurement**: CPU ids run on CPU id mod %d "
                  "(--fold-cpus); server and generator share cores." % meta["fold_cpus"], ""]
    lines += [
        "Host: %s, %s CPUs online (%s socket(s), %s thread(s) per core), CPUs used %s; "
        "Linux %s; %s; hugepages %s. Commit %s; %s to %s (%.0f s); load average %.1f at "
        "the start, %.1f at the end." % (
            h.get("cpu_model") or "unknown CPU", h.get("online_cpus"), h.get("sockets"),
            h.get("threads_per_core"), ",".join(map(str, h.get("cpus_used", []))),
            h.get("kernel"), h.get("memcached"), "on" if meta.get("hugepages") else "off",
            meta.get("commit"), meta.get("started"), meta.get("finished", "?"),
            meta.get("elapsed_s", 0), h.get("loadavg_start", 0), h.get("loadavg_end", 0)),
        "",
        "```sh",
        meta["command"],
        "```",
        "",
        "Workload: %d keys of %d bytes, %d-byte values, %s per generator worker (one "
        "worker per server core), every key preloaded, %g s warm-up, %g s measured, "
        "%d round(s)." % (
            meta["keys"], meta["key_size"], meta["value_size"],
            " and ".join("depth %d x %d connections" % s for s in settings_of(meta)),
            meta["warmup_s"], meta["duration_s"], meta["rounds"]),
    ]
    if len(settings_of(meta)) > 1:
        lines += ["", DEPTH_NOTE]
    return lines


# Beside every table that has both depths.
DEPTH_NOTE = ("**Depth** is requests in flight per connection: depth 1 (each connection "
              "waits for its reply before the next request, as most clients talk) is the "
              "headline; depth 4 pipelines, and a server that reads a connection's "
              "requests in batches gains from it whatever else it does. Both settings keep "
              "the same requests in flight per generator worker, and every ratio compares "
              "servers at the same depth.")


# Beside every ratio to memcached: native's is not like for like.
TRANSPORT_NOTE = ("*native vs memcached* compares two transports as well as two servers: "
                  "segcached's lib/net over net_memif (shared memory between two DPDK "
                  "processes) against memcached over loopback and the kernel's TCP/IP stack; "
                  "*posix vs memcached* is the like-for-like row (the same kernel path, the "
                  "same generator).")


def scaling_table(closed):
    cores = sorted({r["cores"] for r in closed})
    wls = sorted({workload_key(r)[1:4] for r in closed},
                 key=lambda wl: display_order((0,) + wl + (0,)))
    depths = sorted({depth_of(r) for r in closed})
    keys = server_order(closed)
    lines = []
    for wl in wls:
        lines += ["", "Scaling, %s %s %s (req/s, median over rounds; vs memcached at the "
                  "same cores and depth; efficiency = req/s / (cores x its 1-core req/s at "
                  "that depth)). %s" % (wl[0].upper(), mix_name(wl[1]), dist_name(wl[2]),
                                        TRANSPORT_NOTE), ""]
        head = "| server cores | depth |" + "".join(" %s |" % k for k in keys) + \
            "".join(" %s vs memcached |" % k for k in keys if k != "memcached") + \
            "".join(" %s efficiency |" % k for k in keys)
        lines += [head, "|" + "---|" * (2 + 2 * len(keys) + len(keys) - ("memcached" in keys))]
        for n, depth in [(n, d) for n in cores for d in depths]:
            wk = wl + (depth,)
            one = {k: summarize(closed, k, (1,) + wk)[0] for k in keys}
            row = "| %d | %d |" % (n, depth)
            sums = {k: summarize(closed, k, (n,) + wk) for k in keys}
            if not any(runs for _, _, runs in sums.values()):
                continue
            tps = {k: sums[k][0] for k in keys}
            # Not run at this core count (native 7 beside 8): "-".
            row += "".join(" %s |" % ("%.0f" % tps[k] if tps[k] else
                                      "invalid" if sums[k][2] else "-") for k in keys)
            row += "".join(" %s |" % fmt_ratio(ratios_vs_memcached(closed, k, (n,) + wk))
                           for k in keys if k != "memcached")
            row += "".join(" %s |" % ("%.2f" % (tps[k] / (n * one[k]))
                                      if tps[k] and one[k] else "") for k in keys)
            lines.append(row)
    lines += spread_lines(closed)
    return lines


def spread_lines(closed):
    """How the load fell on the server's lcores or threads: segcached
    native's connections and received packets per lcore (telemetry),
    segcached posix's requests per worker (stats workers), read at the end
    of each run."""
    out = []
    for key in ("native", "native-baseline", "posix"):
        for n in sorted({r["cores"] for r in closed if r["server"] == key}):
            runs = [r for r in closed if r["server"] == key and r["cores"] == n and
                    r.get("server_workers")]
            if n < 2 or not runs:
                continue
            field = "worker_requests" if key == "posix" else "worker_rx_packets"
            shares = []
            for r in runs:
                xs = r["server_workers"].get(field) or []
                shares += [x / sum(xs) for x in xs] if sum(xs) else []
            if not shares:
                continue
            what = "requests" if key == "posix" else "received packets"
            conns = ""
            if key != "posix":
                conns = "connections per lcore %s; " % " / ".join(
                    "[%s]" % ",".join(map(str, r["server_workers"]["worker_conns_opened"]))
                    for r in runs)
            out.append("* %s, %d %s: %seach one's share of the %s %.1f%% to %.1f%% "
                       "(equal: %.1f%%)." % (
                           runs[0]["label"].split(" (")[0].split(" -t")[0], n,
                           "threads" if key == "posix" else "lcores", conns, what,
                           100 * min(shares), 100 * max(shares), 100.0 / n))
    return [""] + out if out else []


def in_flight(run):
    """Requests a closed-loop run keeps outstanding: workers x connections
    x depth (from the generator's own report when it has them)."""
    r = run["result"] or {}
    try:
        return str(int(r["workers"]) * int(r["conns_per_worker"]) * int(r["depth"]))
    except (KeyError, TypeError, ValueError):
        return "?"


def closed_table(closed):
    # No latency columns: in a closed loop each request waits for the ones
    # queued before it, so its percentiles measure the queue the generator
    # keeps full (p50 about in-flight / throughput), not the server.
    lines = ["", "Closed loop (peak): req/s is the median over rounds; **vs memcached** is "
             "the median of the per-round ratios to memcached at the same depth (min-max "
             "in brackets). *In flight* is connections x depth: a closed loop keeps that "
             "many requests queued, so its response times are about in-flight / req/s "
             "whatever the server does, and are not shown; latency comes from the "
             "open-loop runs only. " + TRANSPORT_NOTE, "",
             "| server | cores | proto | get/set | keys | depth | req/s | **vs memcached** | "
             "hit ratio | in flight | errors | corrupt/bad |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    wks = []
    for r in closed:
        if workload_key(r) not in wks:
            wks.append(workload_key(r))
    for key in server_order(closed):
        for wk in sorted(wks, key=display_order):
            tp, mid, runs = summarize(closed, key, wk)
            if not runs:
                continue
            label = runs[0]["label"]
            cols = "| %s | %d | %s | %s | %s | %d |" % (
                label, wk[0], wk[1].upper(), mix_name(wk[2]), dist_name(wk[3]), wk[4])
            if tp is None:
                lines.append(cols + " invalid (%d of %d runs) | | | | | |" % (
                    sum(1 for r in runs if not ok(r)), len(runs)))
                continue
            res = mid["result"]
            good = [r["result"] for r in runs if r["result"]]
            ratio = fmt_ratio(ratios_vs_memcached(closed, key, wk)) if key != "memcached" else ""
            lines.append(cols + " %.0f | %s | %.3f | %s | %d | %d |" % (
                tp, ratio, res["hit_ratio"], in_flight(mid),
                sum(r["errors"] for r in good), sum(r["corrupt"] + r["bad"] for r in good)))
    return lines


def engine_table(closed):
    """The storage engines behind the same native stack, per round."""
    wks = sorted({workload_key(r) for r in closed if r["server"] == "native"},
                 key=display_order)
    lines = ["", "Segcache vs the baseline engine (rte_hash), both behind the native stack: "
             "median of the per-round ratios of segcached native to segcached native "
             "`--engine baseline` at the same depth (min-max in brackets):", "",
             "| cores | proto | get/set | keys | depth | Segcache / baseline |",
             "|---|---|---|---|---|---|"]
    for wk in wks:
        rs = ratios_vs_memcached(closed, "native", wk, "native-baseline")
        lines.append("| %d | %s | %s | %s | %d | %s |" % (
            wk[0], wk[1].upper(), mix_name(wk[2]), dist_name(wk[3]), wk[4],
            fmt_ratio(rs) or "-"))
    return lines


def verify_table(verified):
    """The --verify all runs: every get's value and version checked against
    the sets acknowledged before it was sent."""
    lines = ["", "Values verified (`--verify all`: every get's bytes, and its version no "
             "older than a set acknowledged before the get and no newer than any sent):",
             "", "| server | cores | workload | gets | values checked | stale | corrupt | "
             "result |", "|---|---|---|---|---|---|---|---|"]
    for run in verified:
        r = run["result"] or {}
        wl = "%s %s %s, depth %d" % (run["transport"].upper(), mix_name(run["get_ratio"]),
                                     dist_name(run["dist"]), depth_of(run))
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            run["label"], run["cores"], wl, r.get("gets", "-"), r.get("values_checked", "-"),
            r.get("stale", "-"), r.get("corrupt", "-"),
            "valid" if ok(run) else "invalid: " + "; ".join(problems(run))))
    return lines


def open_table(opened):
    lines = ["", "Open loop (Poisson arrivals; latency from each request's intended send "
             "time; a send more than 100 us late counts as late):", "",
             "| server | cores | workload | target req/s | req/s | p50 us | p90 us | "
             "p99 us | p99.9 us | max us | late sends |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in opened:
        r = run["result"]
        wl = "%s %s %s, depth %d" % (run["transport"].upper(), mix_name(run["get_ratio"]),
                                     dist_name(run["dist"]), depth_of(run))
        rate = run["generator_cmd"].split("--rate ")[-1].split()[0]
        if not ok(run):
            lines.append("| %s | %d | %s | %s | invalid: %s | | | | | | |" %
                         (run["label"], run["cores"], wl, rate, "; ".join(problems(run))))
            continue
        lat = r["latency_us"]
        lines.append("| %s | %d | %s | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | "
                     "%d of %d |" % (run["label"], run["cores"], wl, rate, r["throughput"],
                                     lat["p50"], lat["p90"], lat["p99"], lat["p99.9"],
                                     lat["max"], r["late"], r["requests"]))
    return lines


def render(results, png=None, doc_dir=None):
    runs = with_depths(results)["runs"]
    closed = [r for r in runs if r["mode"] == "closed"]
    opened = [r for r in runs if r["mode"] == "open"]
    verified = [r for r in runs if r["mode"] == "verify"]
    lines = header(results["meta"])
    if len({r["cores"] for r in closed}) > 1 or results["meta"].get("mode") == "scaling":
        lines += scaling_table(closed)
    if png:
        rel = os.path.relpath(png, doc_dir) if doc_dir else png
        lines += ["", "![ops/s vs server cores](%s)" % rel]
    lines += closed_table(closed)
    servers = {r["server"] for r in closed}
    if "native" in servers and "native-baseline" in servers:
        lines += engine_table(closed)
    if opened:
        lines += open_table(opened)
    if verified:
        lines += verify_table(verified)
    lines += invalid_lines(runs)
    return "\n".join(lines)


def invalid_lines(runs):
    """Every run that is not a result, and why: none of them is in a
    median, a ratio or the plot."""
    bad = [r for r in runs if problems(r)]
    if not bad:
        return []
    out = ["", "**%d of %d run(s) invalid** (lost, refused or resent something; left out "
           "of every median, ratio and plot):" % (len(bad), len(runs)), ""]
    for r in bad:
        out.append("* %s, %s, depth %d, %s: %s" % (
            r["label"], "/".join(map(str, workload_key(r)[1:4])), depth_of(r),
            {"closed": "round %d" % r["round"], "open": "open loop",
             "verify": "--verify all"}.get(r["mode"], r["mode"]),
            "; ".join(problems(r))))
    return out


def plot_lines(results_list):
    """The plot's lines: [(name, depth, [(cores, median req/s)])], one per
    server and depth (and host, when several), of each file's first
    workload (TCP 90/10 uniform by default)."""
    lines = []
    for results in results_list:
        closed = [r for r in with_depths(results)["runs"] if r["mode"] == "closed"]
        host = results["meta"]["host"]
        wls = sorted({workload_key(r)[1:4] for r in closed},
                     key=lambda wl: display_order((0,) + wl + (0,)))
        depths = sorted({depth_of(r) for r in closed})
        for key, depth in [(k, d) for k in server_order(closed) for d in depths]:
            for wk in [wl + (depth,) for wl in wls[:1]]:
                pts = []
                for n in sorted({r["cores"] for r in closed}):
                    tp = summarize(closed, key, (n,) + wk)[0]
                    if tp:
                        pts.append((n, tp))
                if not pts:
                    continue
                runs = [r for r in closed if r["server"] == key]
                name = runs[0]["label"].split(" (")[0].split(" -t")[0]
                if len(results_list) > 1:
                    name += " (%s, %s CPUs)" % (host.get("cpu_model"), host.get("online_cpus"))
                lines.append((name, depth, pts))
    return lines


def plot(results_list, path):
    """ops/s vs server cores, one line per server and depth (plot_lines): a
    server's depths in one colour, depth 1 solid, deeper ones dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(7, 4.5))
    cores_seen = set()
    colours = {}
    for name, depth, pts in plot_lines(results_list):
        cores_seen.update(p[0] for p in pts)
        line = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                       label="%s, depth %d" % (name, depth),
                       linestyle="-" if depth == 1 else "--", color=colours.get(name))
        colours.setdefault(name, line[0].get_color())
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(cores_seen))
    ax.set_xticklabels([str(c) for c in sorted(cores_seen)])
    ax.set_xlabel("server cores")
    ax.set_ylabel("million requests/s (median over rounds)")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: "%g" % (v / 1e6)))
    ax.set_ylim(bottom=0)
    meta = results_list[0]["meta"]
    ax.set_title("segcached-loadgen, TCP 90/10 uniform, 64-byte values, depth 1 solid, "
                 "pipelined dashed\n%s, %s CPUs, %s%s" %
                 (meta["host"].get("cpu_model"), meta["host"].get("online_cpus"),
                  meta.get("started", "")[:10],
                  ", FOLDED onto %d CPUs: plumbing test, not a measurement" % meta["fold_cpus"]
                  if meta.get("fold_cpus") else ""), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def replace_marked(doc, marker, text):
    begin, end = "<!-- %s:begin -->" % marker, "<!-- %s:end -->" % marker
    with open(doc) as f:
        content = f.read()
    i, j = content.find(begin), content.find(end)
    if i < 0 or j < i:
        sys.exit("%s: no %s ... %s lines to replace" % (doc, begin, end))
    content = content[:i + len(begin)] + "\n" + text + "\n" + content[j:]
    with open(doc, "w") as f:
        f.write(content)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="results.json from bench-suite.py")
    ap.add_argument("--png", help="write the ops/s vs cores plot here")
    ap.add_argument("--doc", help="Markdown file to write the report into")
    ap.add_argument("--marker", default="bench-suite",
                    help="the report replaces <!-- MARKER:begin --> ... <!-- MARKER:end -->")
    args = ap.parse_args()
    results_list = []
    for path in args.results:
        with open(path) as f:
            results_list.append(json.load(f))
    if args.png:
        plot(results_list, args.png)
    doc_dir = os.path.dirname(os.path.abspath(args.doc)) if args.doc else None
    png = os.path.abspath(args.png) if args.png and args.doc else args.png
    # The plot covers every file: link it once, under the first report.
    text = "\n\n".join(render(r, png if i == 0 else None, doc_dir)
                       for i, r in enumerate(results_list))
    if args.doc:
        replace_marked(args.doc, args.marker, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
