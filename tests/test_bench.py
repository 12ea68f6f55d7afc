"""The benchmark harness in quick mode, in-process: every measurement is there with sane numbers.
No timing thresholds: the run's numbers depend on the machine; only their shape is checked."""

from __future__ import annotations

import json
import math

import pytest

from bench import harness as benchmark
from bench import issue31

pytestmark = pytest.mark.browser

STATS_KEYS = {"n", "p50_ms", "p95_ms", "p99_ms", "mean_ms", "per_s", "wall_s"}


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def check_stats(stats: dict, where: str) -> None:
    assert stats.keys() >= STATS_KEYS, where
    assert isinstance(stats["n"], int) and stats["n"] >= 1, where
    for key in STATS_KEYS - {"n"}:
        assert positive(stats[key]), f"{where}: {key} = {stats[key]!r}"
    assert stats["p50_ms"] <= stats["p95_ms"] <= stats["p99_ms"], where


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_run_writes_every_measurement(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert benchmark.main(["--quick", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    has_playwright = benchmark._playwright_available()

    native = r["calls"]["native"]
    polyfill = r["calls"]["polyfill"]
    expected_native = {"webmcp_nb_call": ["sequential"], "webmcp_nb_acall": ["sequential", "in_flight_16"]}
    expected_polyfill = dict(expected_native)
    expected_native["raw_cdp"] = ["sequential", "in_flight_16"]
    expected_native["webmcp_nb_worker"] = ["sequential", "in_flight_16"]
    expected_native["webmcp_nb_extension"] = ["sequential", "in_flight_16"]
    if has_playwright:
        expected_native["playwright_call_tool"] = ["sequential", "in_flight_16"]
        expected_polyfill["playwright_evaluate"] = ["sequential", "in_flight_16"]
    for mode, expected, got in (("native", expected_native, native), ("polyfill", expected_polyfill, polyfill)):
        for path, kinds in expected.items():
            for kind in kinds:
                check_stats(got[path][kind], f"calls.{mode}.{path}.{kind}")

    listings = {
        "native": ["webmcp_nb_refresh_tools", "webmcp_nb_changed", "webmcp_nb_changed_extension", "raw_cdp_enable"],
        "polyfill": ["webmcp_nb_refresh_tools", "webmcp_nb_changed"],
    }
    if has_playwright:
        listings["native"].append("playwright_tools")
        listings["polyfill"].append("playwright_evaluate_get_tools")
    for mode, paths in listings.items():
        for path in paths:
            listing = r["list_tools"][mode][path]
            check_stats(listing, f"list_tools.{mode}.{path}")
            assert listing["tools"] > 1000  # the 1000 bulk tools and the page's own searchFlights

    big = {"native": ["webmcp_nb", "raw_cdp"], "polyfill": ["webmcp_nb"]}
    if has_playwright:
        big["native"].append("playwright_tools")
    for mode, paths in big.items():
        for path in paths:
            listing = r["list_10000"][mode][path]
            assert listing["tools"] == 10_001 and listing["n"] >= 1, (mode, path)
            assert 0 < listing["min_s"] <= listing["median_s"] <= listing["max_s"], (mode, path)

    launches = ["webmcp_nb_native", "webmcp_nb_polyfill"] + (["playwright_native"] if has_playwright else [])
    for key in launches:
        launch = r["launch"][key]
        assert launch["n"] >= 1
        assert all(positive(launch[k]) for k in ("median_s", "min_s", "max_s")), key
        assert launch["min_s"] <= launch["median_s"] <= launch["max_s"]
    first_call = r["launch_call"]["results"]
    for key in ["webmcp_nb"] + (["playwright"] if has_playwright else []):
        for field in ("import_s", "first_call_s"):
            assert len(first_call[key][field]["samples"]) == 1 and positive(first_call[key][field]["median"]), key
    if has_playwright:
        (row,) = issue31.launch_rows(r["launch_call"])  # issue 31's table reads these results as they are
        assert positive(row["ratio"]) and row["met"] in (True, False) and row["target"] == "≤ 1.00×"

    agent = r["agent"]
    assert agent["steps"] == r["meta"]["plan"]["agent_steps"]
    for key in ("per_step_ms", "model_request_ms_p50", "tool_call_ms_p50", "direct_tab_call_ms_p50"):
        assert positive(agent[key]), key
    assert isinstance(agent["loop_overhead_ms_per_step"], float)  # a difference: may come out negative

    memory = r["memory"]
    assert memory["calls"] == 200 and memory["warmup"] > 0
    assert positive(memory["rss_before_mb"]) and positive(memory["rss_after_mb"])
    assert memory["growth_mb"] == pytest.approx(memory["rss_after_mb"] - memory["rss_before_mb"], abs=0.11)

    assert set(r["ratios"]) == {
        "native_sequential_p50_vs_raw_cdp",
        "native_extension_sequential_p50_vs_raw_cdp",
        "native_sequential_p50_vs_playwright",
        "native_in_flight_16_throughput_vs_raw_cdp",
        "native_in_flight_16_throughput_vs_playwright",
        "polyfill_sequential_p50_vs_page_evaluate",
        "launch_to_first_call_vs_playwright",
    }
    for key, value in r["ratios"].items():
        if has_playwright or ("playwright" not in key and "evaluate" not in key):
            assert positive(value), key
        else:
            assert value is None, key
    assert len(r["targets"]) == 14
    for key, target in r["targets"].items():
        assert target["met"] in (True, False, None), key
        assert isinstance(target["target"], str)
        if target["met"] is not None:
            assert isinstance(target["value"], (int, float)), key

    table = capsys.readouterr().out
    headings = ("Tool calls", "Listing the page's tools", "10,000 tools", "Launch to tools visible", "Agent overhead",
                "Launch to a first call")  # fmt: skip
    for heading in (*headings, "Memory"):
        assert heading in table
    assert "Ratios" in table and "Targets" in table


def test_stats_percentiles_and_rate():
    stats = benchmark.Stats([i / 1000 for i in range(1, 101)], wall=0.5).as_dict()
    assert (stats["n"], stats["p50_ms"], stats["p95_ms"], stats["p99_ms"]) == (100, 50.0, 95.0, 99.0)
    assert stats["per_s"] == 200.0
    one = benchmark.Stats([0.002], wall=0.002).as_dict()
    assert one["p50_ms"] == one["p99_ms"] == 2.0


def test_plan_sizes():
    quick, full = benchmark.Plan.make(quick=True), benchmark.Plan.make()
    assert quick.memory_calls == 200 and full.memory_calls == 10_000 and full.memory_warmup == 500
    assert full.sequential == 500 and full.in_flight == 2000
    assert benchmark.Plan.make(iterations=40).sequential == 40


@pytest.mark.slow
def test_the_evals_bench_measures_a_run_and_each_engine(tmp_path):
    from bench import evals as bench_evals

    out = tmp_path / "evals.json"
    assert bench_evals.main(["--runs", "1", "--no-dask", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    for name in ("local_1", "local_2"):
        assert r[name]["passed"] == r[name]["runs"] == 1
        assert all(positive(r[name][k]) for k in ("run_ms_median", "launch_ms_median", "open_ms_median"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_mcp_bench_measures_every_server_in_quick_mode(tmp_path, capsys):
    from bench import mcp as bench_mcp

    out = tmp_path / "mcp.json"
    assert bench_mcp.main(["--quick", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["meta"]["plan"]["runs"] == 1 and len(r["runs"]) == 1
    assert not r["notes"]  # npm ci installs the peers (package.json pins them)
    (run,) = r["runs"]
    peers = bench_mcp.peers_for(bench_mcp.Plan.make(quick=True))
    assert {peer.key for peer in peers} >= {"webmcp_nb", "webmcp_nb_own", "devtools", "playwright_settle_0"}
    for key in ["tab_call", *(peer.key for peer in peers)]:
        for kind in ("read_only", "writable"):
            check_stats(run[key][kind], f"{key}.{kind}")
    for peer in peers:
        listing = run[peer.key]["list_1000"]
        check_stats(listing, f"{peer.key}.list_1000")
        assert listing["tools"] == 1000, peer.key  # every bulk tool of flights/?tools=1000, as the client sees it
        assert run[peer.key]["protocol"] in ("2025-11-25", "2026-07-28"), peer.key
        if listing["how"] == "tools/list":
            assert positive(listing["client_ms"]), peer.key
    assert run["webmcp_nb"]["protocol"] == "2026-07-28" and run["webmcp_nb_legacy"]["protocol"] == "2025-11-25"
    assert set(run["targets"]) == {*bench_mcp.OURS, "webmcp_nb_own"}
    for ours, targets in run["targets"].items():
        assert set(targets) == (set(bench_mcp.TARGETS) if ours in bench_mcp.OURS else {"call_p50_vs_devtools"})
        for key, target in targets.items():
            assert isinstance(target["value"], float) and target["met"] in (True, False), key
    left_out = {"call_p50_vs_playwright"}  # Playwright MCP's default configuration is left out with --quick
    assert all(isinstance(value, float) for key, value in run["ratios"].items() if key not in left_out), run["ratios"]

    table = capsys.readouterr().out
    for heading in ("Page-tool calls", "The page's tools as the client sees them", "Targets"):
        assert heading in table
    assert all(peer.label in table for peer in peers)
    assert bench_mcp.OWN_TARGET[0] in table

    rows = issue31.mcp_rows(r)  # issue 31's table reads these results as they are
    assert [row["target"] for row in rows] == ["≤ 0.85×", "≤ 1.00×"]
    assert all(positive(row["ratio"]) and row["met"] in (True, False) for row in rows), rows


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_cold_start_bench_times_every_server_to_its_handshake_and_first_page_tool_result(tmp_path, capsys):
    from bench import cold_start

    out = tmp_path / "cold.json"
    assert cold_start.main(["--rounds", "1", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert not r["notes"] and len(r["load_average"]) == 1  # npm ci installs the peers (package.json pins them)
    for server in cold_start.SERVERS:
        entry = r["results"][server.key]
        for key in ("initialize_s", "first_result_s"):
            assert len(entry[key]["samples"]) == 1 and positive(entry[key]["median"]), (server.key, key)
        assert entry["initialize_s"]["median"] <= entry["first_result_s"]["median"], server.key
    assert positive(r["results"]["ratio_vs_faster_peer"])
    table = capsys.readouterr().out
    assert all(server.label in table for server in cold_start.SERVERS)

    rows = issue31.cold_rows(r)  # issue 31's table reads these results as they are
    assert [row["target"] for row in rows] == ["≤ 0.90× the faster peer", "≤ 0.3 s"]
    assert positive(rows[0]["ratio"]) and all(row["met"] in (True, False) for row in rows), rows


@pytest.mark.slow
def test_the_transport_bench_measures_a_bare_sdk_server_on_each_stdio_transport(tmp_path, capsys):
    from bench import transport

    out = tmp_path / "transport.json"
    assert transport.main(["--calls", "100", "--blocks", "2", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    for key in transport.TRANSPORTS:
        entry = r["results"][key]
        assert entry["n"] == 100 and positive(entry["p50_ms"]) and positive(entry["p95_ms"]), key
        assert entry["cpu_ms_per_call"] >= 0, key  # (clock ticks: a short run may see none)
    assert positive(r["results"]["ratio_p50"])
    table = capsys.readouterr().out
    assert all(label in table for label in transport.TRANSPORTS.values())


@pytest.mark.timeout(300)
def test_issue31s_call_rows_measure_tab_call_beside_raw_cdp_and_say_where_the_time_goes():
    from webmcp_nb.demo.server import serve_demo

    with serve_demo() as server:
        calls = issue31.tab_calls(server, calls=12, listings=3, blocks=2)
    for key in issue31.SERIES:
        check_stats(calls[key], key)
        assert calls[key]["n"] == 12, key
    check_stats(calls["changed"], "changed")
    rows = issue31.call_rows(calls)
    assert [row["target"] for row in rows] == ["≤ 1.00×", "–", "–", "–", "≤ 25 ms at load 4"]
    assert all(positive(row["ratio"]) for row in rows[:4]) and rows[0]["met"] in (True, False)
    assert all(row["met"] is None for row in rows[1:4])  # context, not targets

    mcp = {"runs": [{"devtools": {"read_only": {"p50_ms": 2.0}}, "webmcp_nb": {"read_only": {"p50_ms": 1.8, "n": 9}}}]}
    floor = issue31.mcp_rows(mcp, calls)[-1]  # the MCP stack's share of a --launch call + the extension's call
    expected = 1.8 - calls["acall_on_loop"]["p50_ms"] + calls["lane_acall_on_loop"]["p50_ms"]
    assert floor["met"] is None and floor["webmcp_nb"] == f"{expected:.3f} ms"


def test_issue31s_sdk_import_is_timed_in_fresh_processes():
    sdk = issue31.sdk_import(2)
    assert len(sdk["samples"]) == 2 and all(positive(s) for s in sdk["samples"])
    cold = {"label": "peer", "first_result_s": {"median": 1.0}}
    (row,) = issue31._sdk_row(sdk, cold)
    assert row["met"] is None and row["ratio"] == round(sdk["median"] / 1.0, 3)
