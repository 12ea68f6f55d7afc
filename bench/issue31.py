"""Issue 31's rows in one table: each of webmcp-nb's numbers beside its peer's from the same run, the ratio, the
issue's target and whether it was met. It runs the other benchmarks' parts in a quick form:

- MCP cold start (``bench/cold_start.py``): spawn → ``initialize`` answered and → first page-tool result, against
  chrome-devtools-mcp and Playwright MCP;
- launch → first call in a fresh process (``bench/launch_call.py``), against Playwright;
- ``tab.call`` p50 against raw CDP ``WebMCP.invokeTool`` (``bench/harness.py``'s pieces, in interleaved blocks) and
  a changed 1,000-tool list reaching ``tab.tools``, on ``flights/?tools=1000``;
- an MCP page-tool call, sequential p50, in ``--launch`` mode and in your own Chrome, against
  chrome-devtools-mcp (``bench/mcp.py``, its listing left out).

    python bench/run.py --issue31 [--rounds N] [--calls N] [--busy N] [--json PATH]

See bench/README.md. Nothing here asserts a number: a target is reported met or MISSED.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from bench import cold_start, launch_call
from bench import harness as bench
from bench import mcp as bench_mcp
from bench.harness import machine, show
from webmcp_nb.core import _loop
from webmcp_nb.demo.server import DemoServer, serve_demo

__all__ = ["main", "run", "rows"]

CHANGE_LIMIT_MS = 25.0
MCP_PEERS = ("webmcp_nb", "webmcp_nb_own", "devtools")
SERIES = ("tab_call", "acall_on_loop", "lane_call", "lane_acall_on_loop", "raw_cdp", "raw_cdp_blocking")


def tab_calls(server: DemoServer, calls: int, listings: int, blocks: int = 6) -> dict[str, Any]:
    """Sequential calls of one tool on the same page, in ``blocks`` interleaved blocks: ``tab.call`` in a launched
    browser with native WebMCP (the DevTools pipe) and, for context, ``await tab.acall`` on the library's loop (no
    hand-over between threads) and both through the extension (``devtools=False``: a lane, your own Chrome's path);
    raw CDP's ``WebMCP.invokeTool`` (its own plain Chromium) awaited on its loop and from a blocking caller (the
    same hand-over to a loop thread and back that ``tab.call`` makes). Then the changed 1,000-tool list."""
    cdp_loop = asyncio.new_event_loop()
    cdp_thread = threading.Thread(target=cdp_loop.run_forever, name="raw-cdp", daemon=True)
    cdp = bench.RawCDP()
    samples: dict[str, list[float]] = {key: [] for key in SERIES}

    async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
        out = []
        for _ in range(n):
            began = time.perf_counter()
            await call()
            out.append(time.perf_counter() - began)
        return out

    def blocking(call: Callable[[], Any], n: int) -> list[float]:
        out = []
        for _ in range(n):
            began = time.perf_counter()
            call()
            out.append(time.perf_counter() - began)
        return out

    def on_cdp_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, cdp_loop).result()

    cdp_thread.start()
    try:
        on_cdp_loop(cdp.start(server.url(bench.PAGE)))
        with (
            bench.webmcp_nb_tab(server, native=True) as tab,
            bench.webmcp_nb_tab(server, native=True, devtools=False) as lane,
        ):
            run: dict[str, Callable[[int], list[float]]] = {
                "tab_call": lambda n: blocking(lambda: tab.call(bench.TOOL), n),
                "acall_on_loop": lambda n: _loop.run(timed(lambda: tab.acall(bench.TOOL), n)),
                "lane_call": lambda n: blocking(lambda: lane.call(bench.TOOL), n),
                "lane_acall_on_loop": lambda n: _loop.run(timed(lambda: lane.acall(bench.TOOL), n)),
                "raw_cdp": lambda n: on_cdp_loop(timed(lambda: cdp.call(bench.TOOL), n)),
                "raw_cdp_blocking": lambda n: blocking(lambda: on_cdp_loop(cdp.call(bench.TOOL)), n),
            }
            for series in run.values():
                series(20)
            per = max(1, calls // blocks)
            for block in range(blocks):
                for key in SERIES if block % 2 == 0 else SERIES[::-1]:
                    samples[key] += run[key](per)
            plan = bench.Plan.make(quick=True, iterations=calls)
            changed = bench.webmcp_nb_change(tab, bench.Plan(**{**plan.__dict__, "listings": listings}))
    finally:
        with contextlib.suppress(Exception):
            on_cdp_loop(cdp.close())
        cdp_loop.call_soon_threadsafe(cdp_loop.stop)
        cdp_thread.join()
        cdp_loop.close()
    return {
        **{key: bench.Stats(times, sum(times)).as_dict() for key, times in samples.items()},
        "changed": changed,
        "load_average": round(os.getloadavg()[0], 2),
    }


SDK_IMPORT = (
    "import time, webmcp_nb.browser.started; began = time.perf_counter(); import webmcp_nb.mcp.server; "
    "print(time.perf_counter() - began)"
)
"""What ``webmcp-nb mcp --launch`` imports once Chromium is starting and the browser stack is in: the MCP SDK and the
server, timed in a fresh process (``gc`` off, as the command has it)."""


def sdk_import(rounds: int) -> dict[str, Any]:
    """Seconds the MCP SDK and the server take to import, in ``rounds`` fresh processes: the part of a cold start
    that is the SDK's, on the path to the first answer after ``initialize``."""
    samples = []
    for _ in range(rounds):
        script = f"import gc; gc.disable(); {SDK_IMPORT}"
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        samples.append(float(out.stdout.split()[-1]))
    return bench.spread(samples)


def run(
    rounds: int, calls: int, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
) -> dict[str, Any]:
    """Every part, one after the other; returns their results (what ``--json`` writes) with the rows."""
    began = time.perf_counter()
    result: dict[str, Any] = {"meta": {**machine(), "rounds": rounds, "calls": calls}}
    log("MCP cold starts ...")
    result["cold_start"] = cold_start.run(rounds, log)
    result["cold_start"]["sdk_import"] = sdk_import(rounds)
    log("launch → first call ...")
    result["launch_call"] = launch_call.run(rounds, log)
    log("tab.call and raw CDP, a changed 1,000-tool list ...")
    with serve_demo() as server:
        result["calls"] = tab_calls(server, calls, listings=max(10, calls // 15))
    log("MCP page-tool calls ...")
    plan = bench_mcp.Plan.make(quick=True, iterations=calls)
    plan = bench_mcp.Plan(**{**plan.__dict__, "list_page": False})
    result["mcp"] = bench_mcp.run(plan, log, only=MCP_PEERS)
    result["rows"] = rows(result)
    result["meta"]["duration_s"] = round(time.perf_counter() - began, 1)
    result["meta"]["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _row(what: str, ours: str, peer: str, ratio: float | None, target: str, met: bool | None) -> dict[str, Any]:
    return {"what": what, "webmcp_nb": ours, "peer": peer, "ratio": ratio, "target": target, "met": met}


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return round(ours / theirs, 3) if ours and theirs else None


def _at_most(value: float | None, limit: float) -> bool | None:
    return None if value is None else value <= limit


def cold_rows(cold: dict[str, Any]) -> list[dict[str, Any]]:
    """MCP cold start: the first page-tool result against the faster peer's; ``initialize`` within 0.3 s."""
    results = cold["results"]
    if "webmcp_nb" not in results:
        return []
    peers = {key: results[key] for key in ("devtools", "playwright") if key in results}
    ours = results["webmcp_nb"]
    first = ours["first_result_s"]["median"]
    faster = min(peers.values(), key=lambda e: e["first_result_s"]["median"], default=None)
    ratio = _ratio(first, faster["first_result_s"]["median"]) if faster else None
    n = len(ours["first_result_s"]["samples"])
    hello = ours["initialize_s"]
    return [
        _row(
            f"MCP cold start: spawn → first page-tool result (median of {n})",
            f"{first:.3f} s",
            f"{faster['label']} {faster['first_result_s']['median']:.3f} s" if faster else "–",
            ratio,
            "≤ 0.90× the faster peer",
            _at_most(ratio, 0.9),
        ),
        _row(
            f"MCP cold start: spawn → initialize answered (median; max of {n})",
            f"{hello['median']:.3f} s (max {hello['max']:.3f})",
            ", ".join(f"{e['label'].split(',')[0]} {e['initialize_s']['median']:.3f} s" for e in peers.values()),
            None,
            "≤ 0.3 s",
            _at_most(hello["max"], 0.3),
        ),
        *_sdk_row(cold.get("sdk_import"), faster),
    ]


def _sdk_row(sdk: dict[str, Any] | None, faster: dict[str, Any] | None) -> list[dict[str, Any]]:
    if sdk is None:
        return []
    peer = f"{faster['label']}'s whole cold start {faster['first_result_s']['median']:.3f} s" if faster else "–"
    return [
        _row(
            f"  context: the MCP SDK and the server imported, fresh process (median of {len(sdk['samples'])})",
            f"{sdk['median']:.3f} s",
            peer,
            _ratio(sdk["median"], faster["first_result_s"]["median"]) if faster else None,
            "–",
            None,
        )
    ]


def launch_rows(launch: dict[str, Any]) -> list[dict[str, Any]]:
    """``wm.launch()`` to the first call done, in a fresh process, against Playwright's launch + goto + call."""
    results = launch["results"]
    if "webmcp_nb" not in results:
        return []
    ours = results["webmcp_nb"]["first_call_s"]["median"]
    peer = results.get("playwright")
    theirs = peer["first_call_s"]["median"] if peer else None
    n = len(results["webmcp_nb"]["first_call_s"]["samples"])
    return [
        _row(
            f"wm.launch(url, native_webmcp=True) → first tab.call done, fresh process (median of {n})",
            f"{ours:.3f} s",
            f"Playwright launch + goto + webmcp.call_tool {theirs:.3f} s" if theirs else "–",
            _ratio(ours, theirs),
            "≤ 1.00×",
            _at_most(_ratio(ours, theirs), 1.0),
        )
    ]


def call_rows(calls: dict[str, Any]) -> list[dict[str, Any]]:
    """``tab.call`` p50 against raw CDP, then, for context, where its time goes (the hand-over between threads, the
    extension's path); the changed 1,000-tool list in ``tab.tools``."""
    ours, theirs, changed = calls["tab_call"], calls["raw_cdp"], calls["changed"]
    ratio = _ratio(ours["p50_ms"], theirs["p50_ms"])

    def context(what: str, key: str, peer: str, peer_key: str) -> dict[str, Any]:
        mine, other = calls[key], calls[peer_key]
        return _row(
            f"  context: {what}",
            f"{mine['p50_ms']:.3f} ms",
            f"{peer} {other['p50_ms']:.3f} ms",
            _ratio(mine["p50_ms"], other["p50_ms"]),
            "–",
            None,
        )

    return [
        _row(
            f"tab.call p50, native page (the DevTools pipe), {ours['n']} calls",
            f"{ours['p50_ms']:.3f} ms",
            f"raw CDP WebMCP.invokeTool {theirs['p50_ms']:.3f} ms",
            ratio,
            "≤ 1.00×",
            _at_most(ratio, 1.0),
        ),
        context("await tab.acall on the library's loop (no hand-over)", "acall_on_loop", "raw CDP", "raw_cdp"),
        context("tab.call", "tab_call", "raw CDP from a blocking caller (the same hand-over)", "raw_cdp_blocking"),
        context("tab.call through the extension (a lane: your own Chrome's path)", "lane_call", "raw CDP", "raw_cdp"),
        _row(
            f"a changed 1,000-tool list → tab.tools, p50 of {changed['n']} (load {calls['load_average']:.1f})",
            f"{changed['p50_ms']:.2f} ms",
            "–",
            None,
            f"≤ {CHANGE_LIMIT_MS:g} ms at load 4",
            _at_most(changed["p50_ms"], CHANGE_LIMIT_MS),
        ),
    ]


def mcp_rows(mcp: dict[str, Any], calls: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """An MCP page-tool call's p50 in ``--launch`` mode and in your own Chrome, against chrome-devtools-mcp; with
    ``calls`` (:func:`tab_calls`), your own Chrome's floor: the MCP stack's share of a ``--launch`` call (it less
    ``await tab.acall`` on the pipe) plus ``await tab.acall`` through the extension, as if the relay daemon cost
    nothing."""
    out = []
    for number, run in enumerate(mcp["runs"], 1):
        devtools = (run.get("devtools") or {}).get("read_only")
        run_of = f", run {number}" if len(mcp["runs"]) > 1 else ""
        peer = f"chrome-devtools-mcp execute_webmcp_tool {devtools['p50_ms']:.3f} ms" if devtools else "–"
        for key, what, limit in (
            ("webmcp_nb", "MCP page-tool call p50, --launch (the pipe)", 0.85),
            ("webmcp_nb_own", "MCP page-tool call p50, your own Chrome (the extension)", 1.00),
        ):
            ours = (run.get(key) or {}).get("read_only")
            if ours is None:
                continue
            ratio = _ratio(ours["p50_ms"], devtools["p50_ms"] if devtools else None)
            out.append(
                _row(f"{what}, {ours['n']} calls{run_of}", f"{ours['p50_ms']:.3f} ms", peer, ratio,
                     f"≤ {limit:.2f}×", _at_most(ratio, limit))
            )  # fmt: skip
        launched = (run.get("webmcp_nb") or {}).get("read_only")
        if calls is not None and launched is not None:
            floor = launched["p50_ms"] - calls["acall_on_loop"]["p50_ms"] + calls["lane_acall_on_loop"]["p50_ms"]
            what = "  context: your own Chrome's floor (the MCP stack's share + the extension's call, no daemon)"
            out.append(
                _row(what, f"{floor:.3f} ms", peer, _ratio(floor, devtools["p50_ms"] if devtools else None), "–", None)
            )
    return out


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows, in the issue's order, from the parts' results."""
    return [
        *cold_rows(result["cold_start"]),
        *launch_rows(result["launch_call"]),
        *call_rows(result["calls"]),
        *mcp_rows(result["mcp"], result["calls"]),
    ]


def render(result: dict[str, Any]) -> str:
    meta = result["meta"]
    head = ["", "webmcp-nb", "peer (same run)", "ratio", "target", ""]
    body = [
        [r["what"], r["webmcp_nb"], r["peer"], "–" if r["ratio"] is None else f"{r['ratio']:.3f}", r["target"],
         {True: "met", False: "MISSED", None: "n/a"}[r["met"]]]
        for r in result["rows"]
    ]  # fmt: skip
    width = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [
        f"Issue 31's targets — webmcp-nb {meta['webmcp_nb']}, {meta['chromium']}, Python {meta['python']}, "
        f"{meta['machine']}; {meta['rounds']} cold starts and launches of each, {meta['calls']} calls a kind",
        "",
    ]
    for row in [head, *body]:
        lines.append("  ".join([f"  {row[0]}".ljust(width[0] + 2), *(c.ljust(width[i + 1]) for i, c in
                                                                      enumerate(row[1:]))]).rstrip())  # fmt: skip
    notes = [*result["cold_start"]["notes"], *result["launch_call"]["notes"], *result["mcp"]["notes"]]
    lines += ["", *(f"note: {note}" for note in notes)]
    lines.append(f"({meta['duration_s']} s; load average at the end {meta['load_average']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/run.py --issue31", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, metavar="N", help="cold starts and launches (default 3)")
    parser.add_argument("--calls", type=int, default=300, metavar="N", help="calls per measured kind (default 300)")
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="N busy loops beside it (load 4: --busy 2)")
    parser.add_argument("--json", metavar="PATH", help="also write every number as JSON to PATH")
    args = parser.parse_args(argv)
    for name in ("rounds", "calls"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    with bench.busy_loops(args.busy):
        result = run(args.rounds, args.calls)
    result["meta"]["busy_loops"] = args.busy
    show(render(result), result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
