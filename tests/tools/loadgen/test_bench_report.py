#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""meson test bench-report (suite tools): bench_report.py's medians, per-round
ratios to memcached, scaling efficiency, invalid runs, depth 1 beside depth 4 in
every table, the marked-section rewrite of a Markdown file and the PNG, and
scaling_report.py's storage tables, on results made up here."""
import copy
import json
import os
import sys
import tempfile
import unittest

# The suite's modules, in tools/loadgen/suite (this file is tests/tools/loadgen/).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "loadgen", "suite"))
import bench_procs  # noqa: E402
import bench_report  # noqa: E402
import scaling_report  # noqa: E402

META = {
    "mode": "scaling", "command": "python3 tools/loadgen/suite/bench-suite.py --scaling",
    "commit": "abc1234", "hugepages": False, "keys": 1000, "key_size": 16,
    "value_size": 64, "settings": [{"depth": 4, "conns": 16}], "duration_s": 3,
    "warmup_s": 1, "rounds": 3, "started": "2026-11-23 08:00:00 UTC",
    "finished": "2026-11-23 08:05:00 UTC", "elapsed_s": 300,
    "host": {"cpu_model": "Test CPU", "online_cpus": 4, "cpus_used": [0, 1, 2, 3],
             "sockets": "1", "threads_per_core": "1", "kernel": "6.1",
             "memcached": "memcached 1.6.18", "loadavg_start": 1.0, "loadavg_end": 2.0},
}


def result(tp, corrupt=0, depth=4):
    return {"throughput": tp, "hit_ratio": 1.0, "errors": 0, "corrupt": corrupt, "bad": 0,
            "late": 0, "requests": int(tp * 3), "gets": int(tp * 2.7),
            "workers": 1, "conns_per_worker": 64 // depth, "depth": depth,
            "latency_us": {"p50": 10, "p90": 20, "p99": 30, "p99.9": 40, "max": 50}}


def run(server, cores, rnd, tp, corrupt=0, depth=4):
    return {"mode": "closed", "server": server, "label": "%s (x)" % server, "cores": cores,
            "transport": "tcp", "get_ratio": 0.9, "dist": "uniform", "round": rnd,
            "depth": depth, "conns": 64 // depth, "server_cmd": "", "generator_cmd": "",
            "result": None if tp is None else result(tp, corrupt, depth)}


def results():
    runs = []
    # memcached 100/110/90 at 1 core, 200/200/200 at 2 cores.
    for rnd, (m1, m2) in enumerate([(100, 200), (110, 200), (90, 200)]):
        runs += [run("memcached", 1, rnd, m1), run("memcached", 2, rnd, m2)]
    # native: 1000/1100/900 at 1 core (10x each round), 1500, 1600, failed at 2 cores.
    for rnd, (n1, n2) in enumerate([(1000, 1500), (1100, 1600), (900, None)]):
        runs += [run("native", 1, rnd, n1), run("native", 2, rnd, n2)]
    return {"meta": copy.deepcopy(META), "runs": runs}


class ReportTest(unittest.TestCase):
    def test_median(self):
        self.assertEqual(bench_report.median([3, 1, 2]), 2)
        self.assertEqual(bench_report.median([4, 1, 2, 3]), 2.5)

    def test_ratios_are_per_round(self):
        closed = results()["runs"]
        rs = bench_report.ratios_vs_memcached(closed, "native", (1, "tcp", 0.9, "uniform", 4))
        self.assertEqual(sorted(rs), [10.0, 10.0, 10.0])
        # Round 2 failed at 2 cores: only rounds 0 and 1 give a ratio.
        rs = bench_report.ratios_vs_memcached(closed, "native", (2, "tcp", 0.9, "uniform", 4))
        self.assertEqual(sorted(rs), [7.5, 8.0])

    def test_corrupt_runs_do_not_count(self):
        r = results()
        r["runs"].append(run("native", 4, 0, 99999, corrupt=1))
        r["runs"].append(run("memcached", 4, 0, 1))
        tp, _, runs = bench_report.summarize(r["runs"], "native", (4, "tcp", 0.9, "uniform", 4))
        self.assertIsNone(tp)
        self.assertEqual(len(runs), 1)

    def test_counters_are_numbers_not_text(self):
        # tcp_fast_retransmits 0 once satisfied the text match "retransmits 0 "
        # while tcp_retransmits was 812.
        r = run("native", 1, 0, 1000)
        r["result"]["net_counters"] = (
            "tcp_retransmits 812 tcp_rto_expired 0 tcp_fast_retransmits 0 tx_nic_deferred 0 "
            "tx_queue_full 0 mempool_empty 0 drop_tcp_out_of_window 0 tcp_ooo_segs 0 "
            "port_imissed 0 port_oerrors 0 rx_nombuf 0")
        self.assertEqual(bench_report.problems(r), ["tcp_retransmits 812"])
        self.assertFalse(bench_report.ok(r))
        self.assertEqual(bench_report.parse_counters("a 1 tcp_fast_retransmits 0"),
                         {"a": 1, "tcp_fast_retransmits": 0})
        clean = run("native", 1, 0, 1000)
        clean["result"]["net_counters"] = r["result"]["net_counters"].replace("812", "0")
        self.assertTrue(bench_report.ok(clean))
        # Deferred sends and out-of-order segments lose nothing by themselves.
        clean["result"]["net_counters"] = "tx_nic_deferred 5 tcp_ooo_segs 3"
        self.assertTrue(bench_report.ok(clean))

    def test_every_loss_invalidates(self):
        for field, value in (("errors", 1), ("lost", 3), ("conn_failed", 1), ("bad", 1),
                             ("corrupt", 1), ("stale", 1), ("hit_ratio", 0.999)):
            r = run("posix", 1, 0, 1000)
            r["result"][field] = value
            self.assertFalse(bench_report.ok(r), field)
        for counter in ("port_imissed", "mempool_empty", "tx_queue_full",
                        "tcp_fast_retransmits", "tcp_rto_expired"):
            r = run("native", 1, 0, 1000)
            r["result"]["net_counters"] = "%s 2" % counter
            self.assertEqual(bench_report.problems(r), ["%s 2" % counter])
        # Without a preload no hit ratio is expected.
        r = run("posix", 1, 0, 1000)
        r["result"]["hit_ratio"] = 0.5
        r["generator_cmd"] = "segcached-loadgen --no-preload"
        self.assertTrue(bench_report.ok(r))

    def test_generator_behind_its_schedule_invalidates(self):
        # Open loop: over 1% of the sends late because the generator itself
        # fell behind means the latencies are the generator's, not the
        # server's. Window-late sends (the connection's depth was full) and
        # a backlog at the drain are the server's doing: reported, valid.
        def open_run(**counts):
            r = run("posix", 1, 0, 1000)
            r["mode"] = "open"
            r["generator_cmd"] = "segcached-loadgen --rate 1000"
            r["result"].update({"sent": 1000, "generator_late": 0, "window_late": 0,
                                "unsent_at_drain": 0})
            r["result"].update(counts)
            return r
        behind = open_run(generator_late=11, late=11)
        self.assertEqual(bench_report.problems(behind),
                         ["generator_late 11 of 1000 sends (1.10%, over 1%)"])
        self.assertTrue(bench_report.ok(open_run(generator_late=10, late=10)))
        self.assertTrue(bench_report.ok(open_run(window_late=900, late=900,
                                                 unsent_at_drain=40)))
        # A counter that is not a number is not a pass.
        self.assertFalse(bench_report.ok(open_run(generator_late="11")))
        self.assertFalse(bench_report.ok(open_run(generator_late=1, sent=0)))
        r = results()
        r["runs"].append(behind)
        text = bench_report.render(r)
        self.assertIn("* posix (x), tcp/0.9/uniform, depth 4, open loop: generator_late 11 of 1000 "
                      "sends (1.10%, over 1%)", text)
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 4 | 1000 | invalid: generator_late",
                      text)

    def test_invalid_runs_leave_the_median_and_are_shown(self):
        r = results()
        lossy = run("native", 1, 3, 1e9)  # would be the median's top
        lossy["result"]["lost"] = 7
        r["runs"].append(lossy)
        tp, _, runs = bench_report.summarize(r["runs"], "native", (1, "tcp", 0.9, "uniform", 4))
        self.assertEqual(tp, 1000)
        self.assertEqual(len(runs), 4)
        text = bench_report.render(r)
        self.assertIn("**2 of 13 run(s) invalid**", text)
        self.assertIn("* native (x), tcp/0.9/uniform, depth 4, round 3: lost 7", text)
        self.assertIn("* native (x), tcp/0.9/uniform, depth 4, round 2: no result", text)

    def test_verify_row_is_shown_and_a_stale_value_invalidates_it(self):
        r = results()
        clean = run("posix", 1, 0, 1000)
        clean["mode"] = "verify"
        clean["result"].update({"stale": 0, "values_checked": 2700})
        stale = run("native", 1, 0, 1000)
        stale["mode"] = "verify"
        stale["result"].update({"stale": 2, "values_checked": 2700})
        r["runs"] += [clean, stale]
        text = bench_report.render(r)
        table = text[text.index("Values verified"):]
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 4 | 2700 | 2700 | 0 | 0 | "
                      "valid |", table)
        self.assertIn("| native (x) | 1 | TCP 90/10 uniform, depth 4 | 2700 | 2700 | 2 | 0 | "
                      "invalid: stale 2 |", table)
        self.assertIn("* native (x), tcp/0.9/uniform, depth 4, --verify all: stale 2", text)

    def test_closed_loop_shows_no_latency(self):
        # Closed-loop response times are in-flight / throughput, not the
        # server's latency: the table gives the in-flight count instead.
        text = bench_report.render(results())
        closed = text[text.index("Closed loop (peak)"):]
        self.assertNotIn("p50", closed)
        self.assertNotIn("p99", closed)
        self.assertIn("| hit ratio | in flight | errors |", closed)
        self.assertIn("| 4 | 1000 | **10.00** (10.00-10.00) | 1.000 | 64 | 0 | 0 |", closed)

    def test_scaling_table(self):
        text = bench_report.render(results())
        # native: median 1000 at 1 core, 1550 at 2 (two good rounds),
        # efficiency 1550 / (2 x 1000) = 0.78; memcached 200 / (2 x 100) = 1.00.
        self.assertIn("| 1 | 4 | 1000 | 100 | **10.00** (10.00-10.00) | 1.00 | 1.00 |", text)
        self.assertIn("| 2 | 4 | 1550 | 200 | **7.75** (7.50-8.00) | 0.78 | 1.00 |", text)
        self.assertIn("Test CPU, 4 CPUs online", text)
        self.assertIn(META["command"], text)

    def test_spread_over_workers(self):
        closed = results()["runs"]
        r = run("posix", 2, 0, 500)
        r["server_workers"] = {"worker_requests": [300, 100]}
        n = run("native", 2, 0, 1500)
        n["server_workers"] = {"worker_conns_opened": [16, 16],
                               "worker_rx_packets": [50, 50]}
        text = "\n".join(bench_report.spread_lines(closed + [r, n]))
        self.assertIn("posix, 2 threads: each one's share of the requests 25.0% to 75.0% "
                      "(equal: 50.0%)", text)
        self.assertIn("native, 2 lcores: connections per lcore [16,16]; each one's share "
                      "of the received packets 50.0% to 50.0%", text)

    def test_doc_markers_and_png(self):
        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "perf.md")
            with open(doc, "w") as f:
                f.write("# Perf\nbefore\n<!-- x:begin -->\nold\n<!-- x:end -->\nafter\n")
            bench_report.replace_marked(doc, "x", "new text")
            with open(doc) as f:
                self.assertEqual(f.read(), "# Perf\nbefore\n<!-- x:begin -->\nnew text\n"
                                 "<!-- x:end -->\nafter\n")
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.skipTest("python3-matplotlib is not installed")
            png = os.path.join(d, "plot.png")
            bench_report.plot([results()], png)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


def two_depths():
    """posix and memcached at 1 and 2 cores, two rounds, at depth 1 x 64
    and depth 4 x 16: posix pipelined is 3.5x memcached, one request at a
    time about 1x."""
    meta = copy.deepcopy(META)
    meta["settings"] = [{"depth": 1, "conns": 64}, {"depth": 4, "conns": 16}]
    runs = []
    for rnd in range(2):
        for cores, depth, posix, memcached in (
                (1, 1, (100, 120), 100), (1, 4, (300, 400), 100),
                (2, 1, (180, 200), 200), (2, 4, (700, 700), 200)):
            runs += [run("posix", cores, rnd, posix[rnd], depth=depth),
                     run("memcached", cores, rnd, memcached, depth=depth)]
    return {"meta": meta, "runs": runs}


class DepthTest(unittest.TestCase):
    """Every table gives depth 1 beside depth 4, each with its own ratio to
    memcached, so that a pipelining effect is never read as a server's."""

    def test_ratios_compare_the_same_depth(self):
        closed = two_depths()["runs"]
        self.assertEqual(sorted(bench_report.ratios_vs_memcached(
            closed, "posix", (1, "tcp", 0.9, "uniform", 1))), [1.0, 1.2])
        self.assertEqual(sorted(bench_report.ratios_vs_memcached(
            closed, "posix", (1, "tcp", 0.9, "uniform", 4))), [3.0, 4.0])
        # memcached at depth 4 only: posix at depth 1 has nothing to compare with.
        only4 = [r for r in closed if r["server"] == "posix" or r["depth"] == 4]
        self.assertEqual(bench_report.ratios_vs_memcached(
            only4, "posix", (1, "tcp", 0.9, "uniform", 1)), [])

    def test_header_names_both_settings_and_the_headline(self):
        text = bench_report.render(two_depths())
        self.assertIn("depth 1 x 64 connections and depth 4 x 16 connections per "
                      "generator worker", text)
        self.assertIn("depth 1 (each connection waits for its reply before the next "
                      "request, as most clients talk) is the headline", text)

    def test_scaling_table_has_both_depths_side_by_side(self):
        text = bench_report.render(two_depths())
        table = text[text.index("| server cores | depth |"):text.index("Closed loop")]
        rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
        # efficiency at depth 1: 190 / (2 x 110); at depth 4: 700 / (2 x 350)
        self.assertEqual(rows, [
            "| 1 | 1 | 110 | 100 | **1.10** (1.00-1.20) | 1.00 | 1.00 |",
            "| 1 | 4 | 350 | 100 | **3.50** (3.00-4.00) | 1.00 | 1.00 |",
            "| 2 | 1 | 190 | 200 | **0.95** (0.90-1.00) | 0.86 | 1.00 |",
            "| 2 | 4 | 700 | 200 | **3.50** (3.50-3.50) | 1.00 | 1.00 |"])

    def test_closed_table_has_both_depths_side_by_side(self):
        text = bench_report.render(two_depths())
        closed = text[text.index("| server | cores | proto | get/set | keys | depth |"):]
        lines = closed.splitlines()
        i = lines.index("| posix (x) | 1 | TCP | 90/10 | uniform | 1 | 110 | "
                        "**1.10** (1.00-1.20) | 1.000 | 64 | 0 | 0 |")
        self.assertEqual(lines[i + 1], "| posix (x) | 1 | TCP | 90/10 | uniform | 4 | 350 | "
                         "**3.50** (3.00-4.00) | 1.000 | 64 | 0 | 0 |")

    def test_engine_open_and_verify_tables_name_the_depth(self):
        r = two_depths()
        for depth, seg, base in ((1, 500, 400), (4, 900, 600)):
            r["runs"] += [run("native", 1, 0, seg, depth=depth),
                          run("native-baseline", 1, 0, base, depth=depth)]
            o = run("posix", 1, 0, 50, depth=depth)
            o["mode"], o["generator_cmd"] = "open", "segcached-loadgen --rate 55"
            v = run("posix", 1, 0, 1000, depth=depth)
            v["mode"] = "verify"
            v["result"].update({"stale": 0, "values_checked": 2700})
            r["runs"] += [o, v]
        text = bench_report.render(r)
        self.assertIn("| 1 | TCP | 90/10 | uniform | 1 | **1.25** (1.25-1.25) |\n"
                      "| 1 | TCP | 90/10 | uniform | 4 | **1.50** (1.50-1.50) |", text)
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 1 | 55 | 50 |", text)
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 4 | 55 | 50 |", text)
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 1 | 2700 | 2700 | 0 |", text)
        self.assertIn("| posix (x) | 1 | TCP 90/10 uniform, depth 4 | 2700 | 2700 | 0 |", text)

    def test_plot_has_a_line_per_server_and_depth(self):
        lines = bench_report.plot_lines([two_depths()])
        self.assertEqual(lines, [("posix", 1, [(1, 110), (2, 190)]),
                                 ("posix", 4, [(1, 350), (2, 700)]),
                                 ("memcached", 1, [(1, 100), (2, 200)]),
                                 ("memcached", 4, [(1, 100), (2, 200)])])

    def test_results_from_before_depths_render_with_their_one_depth(self):
        # JSON from before: one --depth and --conns in the meta, none per run.
        r = results()
        del r["meta"]["settings"]
        r["meta"].update({"conns_per_worker": 16, "depth": 4})
        for x in r["runs"]:
            del x["depth"], x["conns"]
        text = bench_report.render(r)
        self.assertIn("depth 4 x 16 connections per generator worker", text)
        self.assertIn("| 1 | 4 | 1000 | 100 | **10.00** (10.00-10.00) | 1.00 | 1.00 |", text)
        self.assertNotIn("is the headline", text)


def storage_json(engine, threads, mops, **extra):
    r = {"round": 0, "engine": engine, "threads": threads, "ops": 1000, "mops": mops,
         "gets": 900, "get_hits": 900, "sets": 100, "set_failed": 0, "errors": 0,
         "evictions": 0, "warmup": {"stored": 1000, "failed": 0, "evictions": 0}}
    r.update(extra)
    return {"config": {"mix": {"get": 90, "set": 10, "delete": 0}, "dist": "zipf",
                       "theta": 0.99}, "runs": [r]}


class ScalingReportTest(unittest.TestCase):
    """scaling_report.py over a made-up scaling-run.sh directory."""

    def test_storage_tables(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "storage"))
            os.makedirs(os.path.join(d, "host"))
            files = {"sb-90-10-zipf-seg-t1": storage_json("seg", 1, 2.0),
                     "sb-90-10-zipf-seg-t2": storage_json("seg", 2, 3.0),
                     "sb-90-10-zipf-seg-t4": storage_json("seg", 4, 1.5),
                     "sb-90-10-zipf-baseline-t1": storage_json("baseline", 1, 1.0),
                     # a miss after a full preload: not a result
                     "sb-90-10-zipf-baseline-t2": storage_json("baseline", 2, 9.0,
                                                               get_hits=899)}
            for name, doc in files.items():
                with open(os.path.join(d, "storage", name + ".json"), "w") as f:
                    json.dump(doc, f)
            with open(os.path.join(d, "steps.tsv"), "w") as f:
                f.write("step\tstatus\tseconds\tlimit\n")
                for name in files:
                    f.write("%s\tok\t1\t40\n" % name)
                f.write("sb-90-10-zipf-baseline-t4\ttimeout\t15\t15\n")
            table, missing = scaling_report.storage_results(d)
            self.assertEqual(missing, [])
            st = {s["step"]: s["status"] for s in scaling_report.steps(d)}
            text = "\n".join(scaling_report.storage_lines(table, 2, st))
            # efficiency 3.0 / (2 x 2.0); past 2 CPUs, vs the 2-thread point
            self.assertIn("| 2 | 3.00 | invalid (hit ratio 0.9989) |  | 0.75 |  |  |  |", text)
            self.assertIn("| 4 | 1.50 | collapsed (no result within its time limit) |  | "
                          "0.38 |  | 0.50 |  |", text)
            self.assertIn("| 1 | 2.00 | 1.00 | 2.00 | 1.00 | 1.00 |  |  |", text)


class MemifRetryTest(unittest.TestCase):
    # bench-suite.py starts the server again, once, for a run whose
    # generator never saw the memif link come up; any other failure is
    # the run's result.
    def test_memif_never_connected_reads_the_generators_log(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertFalse(bench_procs.memif_never_connected(d, "none"))
            with open(os.path.join(d, "a.log"), "w") as f:
                f.write("memif_connect_client(): Failed to connect socket: /run/x.sock.\n"
                        "loadgen: port 0 (net_memif0): start failed\n")
            self.assertTrue(bench_procs.memif_never_connected(d, "a"))
            with open(os.path.join(d, "b.log"), "w") as f:
                f.write("loadgen: 12 corrupt replies\n")
            self.assertFalse(bench_procs.memif_never_connected(d, "b"))


if __name__ == "__main__":
    unittest.main()
