#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Gathers what tools/loadgen/scripts/scaling-run.sh left in its output directory
into OUT/scaling.json (the host: lscpu, uname, load average before and
after; every step's status; every storage-bench and end-to-end result),
OUT/scaling.md (the tables) and, where matplotlib is installed, the PNGs
OUT/scaling-e2e.png (requests/s vs server cores, one line per server and
pipelining depth: depth 1 solid, depth 4 dashed) and
OUT/scaling-storage.png (Mops/s vs threads, one line per engine, one panel
per workload). Runs on the measuring host or later anywhere else:

    tools/loadgen/suite/scaling_report.py OUT [--doc docs/bench/suite.md --marker NAME]
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402

THREADS_ORDER = (1, 2, 4, 8, 12, 16, 24, 32)


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def lscpu_field(text, name):
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k.strip() == name:
            return v.strip()
    return ""


def host_info(out):
    lscpu = read(os.path.join(out, "host", "lscpu.txt"))
    load = {}
    for when in ("before", "after"):
        fields = read(os.path.join(out, "host", "loadavg-%s.txt" % when)).split()
        load[when] = [float(x) for x in fields[:3]] if len(fields) >= 3 else None
    return {
        "cpu_model": lscpu_field(lscpu, "Model name"), "cpus": lscpu_field(lscpu, "CPU(s)"),
        "threads_per_core": lscpu_field(lscpu, "Thread(s) per core"),
        "sockets": lscpu_field(lscpu, "Socket(s)"),
        "uname": read(os.path.join(out, "host", "uname.txt")).strip(),
        "loadavg_before": load["before"], "loadavg_after": load["after"],
        "lscpu": lscpu, "lscpu_e": read(os.path.join(out, "host", "lscpu-e.txt")),
        "misc": read(os.path.join(out, "host", "misc.txt")),
        "plan": read(os.path.join(out, "host", "plan.txt")).strip(),
    }


def steps(out):
    rows = read(os.path.join(out, "steps.tsv")).splitlines()[1:]
    return [dict(zip(("step", "status", "seconds", "limit"), r.split("\t"))) for r in rows]


def step_lines(st, plan):
    """The end-to-end steps and every storage step that is not plain ok,
    one row each; the storage steps' count and time in one line."""
    secs = lambda s: int(s["seconds"]) if s["seconds"].isdigit() else 0  # noqa: E731
    sb = [s for s in st if s["step"].startswith("sb-")]
    shown = [s for s in st if not s["step"].startswith("sb-") or
             s["status"] not in ("ok", "not run")]
    out = ["| step | status | seconds | limit |", "|---|---|---|---|"]
    out += ["| %s | %s | %s | %s |" % (s["step"], s["status"], s["seconds"], s["limit"])
            for s in shown]
    out += ["", "storage-bench: %d steps, %d ok, %d not run (the baseline past the CPU "
            "count), in %d s. All steps: %d s (%s)." % (
                len(sb), sum(s["status"] == "ok" for s in sb),
                sum(s["status"] == "not run" for s in sb), sum(secs(s) for s in sb),
                sum(secs(s) for s in st), plan)]
    return out


def storage_problems(run, expiring=False):
    """Why a storage-bench run does not count: anything lost or refused.
    Every key is loaded before the timed phase, so every get must hit;
    with TTLs (expiring: a --shape run) items expire and are evicted by
    design, and only failures and errors count."""
    why = []
    w = run.get("warmup", {})
    checks = [("failed warm-up sets", w.get("failed")), ("failed sets", run.get("set_failed")),
              ("errors", run.get("errors"))]
    if not expiring:
        checks += [("warm-up evictions", w.get("evictions")), ("evictions", run.get("evictions"))]
    for what, n in checks:
        if n:
            why.append("%s %d" % (what, n))
    if not expiring and run.get("gets") and run.get("get_hits", 0) < run["gets"]:
        why.append("hit ratio %.4f" % (run["get_hits"] / run["gets"]))
    if not run.get("ops"):
        why.append("no operations")
    return why


def storage_results(out):
    """{(mix, dist): {threads: {engine: run}}} from OUT/storage/*.json,
    with the files that gave nothing."""
    table, missing = {}, []
    for path in sorted(glob.glob(os.path.join(out, "storage", "*.json"))):
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            missing.append(os.path.basename(path))
            continue
        c = d["config"]
        m = c.get("mix", {})
        mix = "%s:%s:%s" % (m.get("get"), m.get("set"), m.get("delete"))
        if c.get("shape", "none") != "none":
            # a TTL shape (issue 34): its own table, per eviction policy
            mix += " %s %s" % (c["shape"], c.get("eviction", "default"))
        key = (mix, "zipf:%g" % c["theta"] if c.get("dist") == "zipf" else c.get("dist", ""))
        for r in d["runs"]:
            r["problems"] = storage_problems(r, c.get("shape", "none") != "none")
            table.setdefault(key, {}).setdefault(r["threads"], {})[r["engine"]] = r
    return table, missing


def storage_key_name(key):
    mix, dist = key
    return "%s, %s" % (mix, dist)


def step_name(key, engine, threads):
    """scaling-run.sh's name of a storage-bench step."""
    mix, dist = key
    if " " in mix:  # a TTL shape: sb-ttl-SHAPE-POLICY-ENGINE-tN
        _, shape, policy = mix.split(" ")
        return "sb-ttl-%s-%s-%s-t%d" % (shape, policy, engine, threads)
    return "sb-%s-%s-%s-t%d" % ("-".join(mix.split(":")[:2]), dist.split(":")[0], engine,
                                threads)


def storage_lines(table, ncpus, status=None):
    """The storage tables; status: step name -> steps.tsv status, to say
    why a point has no result."""
    status = status or {}
    lines = []
    for key in sorted(table, key=lambda k: (k[0] != "90:10:0", k[1] != "zipf:0.99")):
        rows = table[key]
        one = {e: rows.get(1, {}).get(e) for e in ("seg", "baseline")}
        lines += ["", "storage-bench, get:set:delete %s (Mops/s; efficiency = Mops / "
                  "(min(threads, %d CPUs) x its 1-thread Mops); past %d threads, *vs %d* is "
                  "the throughput against its own %d-thread point: oversubscribed, lock "
                  "holders are preempted):" % (storage_key_name(key), ncpus, ncpus, ncpus,
                                               ncpus), "",
                  "| threads | seg Mops/s | baseline Mops/s | seg/baseline | seg efficiency | "
                  "baseline efficiency | seg vs %d | baseline vs %d |" % (ncpus, ncpus),
                  "|---|---|---|---|---|---|---|---|"]
        every = set(rows) | {int(n.rsplit("-t", 1)[1]) for n in status
                             if n.startswith(step_name(key, "", 0).rsplit("--", 1)[0] + "-")}
        for t in sorted(every):
            rows.setdefault(t, {})
            cells = ["| %d |" % t]
            mops = {}
            for e in ("seg", "baseline"):
                r = rows[t].get(e)
                if r is None:
                    st = status.get(step_name(key, e, t), "")
                    cells.append(" %s |" % ("collapsed (no result within its time limit)"
                                            if st == "timeout" and t > ncpus else st or "-"))
                elif r["problems"]:
                    cells.append(" invalid (%s) |" % ", ".join(r["problems"]))
                else:
                    mops[e] = r["mops"]
                    cells.append(" %.2f |" % r["mops"])
            cells.append(" %s |" % ("%.2f" % (mops["seg"] / mops["baseline"])
                                    if "seg" in mops and "baseline" in mops else ""))
            for e in ("seg", "baseline"):
                o = one[e]
                ok1 = o is not None and not o["problems"] and o["mops"] > 0
                cells.append(" %s |" % ("%.2f" % (mops[e] / (min(t, ncpus) * o["mops"]))
                                        if e in mops and ok1 else ""))
            for e in ("seg", "baseline"):
                ref = rows.get(ncpus, {}).get(e)
                ok16 = ref is not None and not ref["problems"] and ref["mops"] > 0
                cells.append(" %s |" % ("%.2f" % (mops[e] / ref["mops"])
                                        if t > ncpus and e in mops and ok16 else ""))
            lines.append("".join(cells))
    return lines


def merge_e2e(out):
    """The end-to-end suite's result files, one results dict (runs of all
    of them; the first one's meta)."""
    merged = None
    for sub in ("e2e-tcp", "e2e-udp"):
        path = os.path.join(out, sub, "results.json")
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            continue
        if merged is None:
            merged = d
            merged["meta"]["parts"] = [sub]
        else:
            merged["runs"] += d["runs"]
            merged["meta"]["parts"].append(sub)
            merged["meta"]["command"] += "\n" + d["meta"]["command"]
    return merged


def plot_storage(table, ncpus, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted(table, key=lambda k: (k[0] != "90:10:0", k[1] != "zipf:0.99"))
    fig, axes = plt.subplots(1, max(len(keys), 1), figsize=(4 * max(len(keys), 1), 4),
                             squeeze=False)
    for ax, key in zip(axes[0], keys):
        for e in ("seg", "baseline"):
            pts = [(t, table[key][t][e]["mops"]) for t in sorted(table[key])
                   if e in table[key][t] and not table[key][t][e]["problems"]]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=e)
        ax.axvline(ncpus, color="grey", linestyle=":", linewidth=1)
        ax.set_title(storage_key_name(key), fontsize=9)
        ax.set_xlabel("threads (dotted: CPUs)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("Mops/s")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="scaling-run.sh's output directory")
    ap.add_argument("--doc", help="Markdown file to write the report into")
    ap.add_argument("--marker", default="scaling-run",
                    help="the report replaces <!-- MARKER:begin --> ... <!-- MARKER:end -->")
    args = ap.parse_args()
    out = args.out
    host = host_info(out)
    st = steps(out)
    plan = host["plan"]
    folded = "fold=" in plan and "fold= " not in plan and not plan.endswith("fold=")
    storage, missing = storage_results(out)
    e2e = merge_e2e(out)
    try:
        ncpus = int(host["cpus"])
    except ValueError:
        ncpus = os.cpu_count()
    # storage-bench is not folded: its threads run on the host's own CPUs.

    summary = {"host": host, "steps": st, "storage_missing": missing,
               "storage": [{"mix": k[0], "dist": k[1], "threads": t, "engine": e, "run": r}
                           for k, rows in storage.items() for t, es in rows.items()
                           for e, r in es.items()],
               "e2e": e2e}
    with open(os.path.join(out, "scaling.json"), "w") as f:
        json.dump(summary, f, indent=1)

    lines = []
    if folded:
        lines += ["**Rehearsal, not a measurement** (%s): a 16-CPU host's commands folded "
                  "onto fewer CPUs." % plan, ""]
    la, lb = host["loadavg_before"], host["loadavg_after"]
    lines += ["Host: %s, %s CPUs (%s socket(s), %s thread(s) per core); `%s`; load average "
              "%s before, %s after." % (host["cpu_model"] or "unknown CPU", host["cpus"],
                                       host["sockets"], host["threads_per_core"],
                                       host["uname"], la, lb), ""]
    lines += step_lines(st, plan)
    if missing:
        lines += ["", "storage-bench gave no JSON: %s" % ", ".join(missing)]
    lines += storage_lines(storage, ncpus, {s["step"]: s["status"] for s in st})
    png_note = []
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
        png_note = ["", "(no matplotlib here: no PNG; run tools/loadgen/suite/scaling_report.py "
                    "on this directory where it is installed)"]
    if storage and have_mpl:
        plot_storage(storage, ncpus, os.path.join(out, "scaling-storage.png"))
        lines += ["", "![storage-bench Mops/s vs threads](scaling-storage.png)"]
    if e2e:
        png = os.path.join(out, "scaling-e2e.png") if have_mpl else None
        if png:
            bench_report.plot([e2e], png)
        lines += ["", bench_report.render(e2e, png and "scaling-e2e.png")]
    else:
        lines += ["", "The end-to-end suite gave no results."]
    lines += png_note
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "scaling.md"), "w") as f:
        f.write(text)
    if args.doc:
        bench_report.replace_marked(args.doc, args.marker, text.rstrip("\n"))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
