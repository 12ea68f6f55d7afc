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
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from bench import cold_start, launch_call
from bench import harness as bench
from bench import mcp as bench_mcp
from bench.harness import machine, show
from webmcp_nb.demo.server import DemoServer, serve_demo

__all__ = ["main", "run", "rows"]

CHANGE_LIMIT_MS = 25.0
MCP_PEERS = ("webmcp_nb", "webmcp_nb_own", "devtools")


def tab_calls(server: DemoServer, calls: int, listings: int, blocks: int = 6) -> dict[str, Any]:
    """``tab.call`` (a launched browser with native WebMCP: the DevTools pipe) and raw CDP's ``WebMCP.invokeTool``
    (its own plain Chromium) on the same page, in ``blocks`` interleaved blocks; then the changed 1,000-tool list."""
    loop = asyncio.new_event_loop()
    cdp = bench.RawCDP()
    ours: list[float] = []
    theirs: list[float] = []

    async def raw_block(n: int) -> None:
        for _ in range(n):
            began = time.perf_counter()
            await cdp.call(bench.TOOL)
            theirs.append(time.perf_counter() - began)

    try:
        loop.run_until_complete(cdp.start(server.url(bench.PAGE)))
        with bench.webmcp_nb_tab(server, native=True) as tab:
            loop.run_until_complete(raw_block(20))
            for _ in range(20):
                tab.call(bench.TOOL)
            del theirs[:]
            per = max(1, calls // blocks)
            for block in range(blocks):
                for side in ("ours", "theirs") if block % 2 == 0 else ("theirs", "ours"):
                    if side == "theirs":
                        loop.run_until_complete(raw_block(per))
                        continue
                    for _ in range(per):
                        began = time.perf_counter()
                        tab.call(bench.TOOL)
                        ours.append(time.perf_counter() - began)
            plan = bench.Plan.make(quick=True, iterations=calls)
            changed = bench.webmcp_nb_change(tab, bench.Plan(**{**plan.__dict__, "listings": listings}))
    finally:
        loop.run_until_complete(cdp.close())
        loop.close()
    return {
        "tab_call": bench.Stats(ours, sum(ours)).as_dict(),
        "raw_cdp": bench.Stats(theirs, sum(theirs)).as_dict(),
        "changed": changed,
        "load_average": round(os.getloadavg()[0], 2),
    }


def run(
    rounds: int, calls: int, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
) -> dict[str, Any]:
    """Every part, one after the other; returns their results (what ``--json`` writes) with the rows."""
    began = time.perf_counter()
    result: dict[str, Any] = {"meta": {**machine(), "rounds": rounds, "calls": calls}}
    log("MCP cold starts ...")
    result["cold_start"] = cold_start.run(rounds, log)
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
    """``tab.call`` p50 against raw CDP; the changed 1,000-tool list in ``tab.tools``."""
    ours, theirs, changed = calls["tab_call"], calls["raw_cdp"], calls["changed"]
    ratio = _ratio(ours["p50_ms"], theirs["p50_ms"])
    return [
        _row(
            f"tab.call p50, native page (the DevTools pipe), {ours['n']} calls",
            f"{ours['p50_ms']:.3f} ms",
            f"raw CDP WebMCP.invokeTool {theirs['p50_ms']:.3f} ms",
            ratio,
            "≤ 1.00×",
            _at_most(ratio, 1.0),
        ),
        _row(
            f"a changed 1,000-tool list → tab.tools, p50 of {changed['n']} (load {calls['load_average']:.1f})",
            f"{changed['p50_ms']:.2f} ms",
            "–",
            None,
            f"≤ {CHANGE_LIMIT_MS:g} ms at load 4",
            _at_most(changed["p50_ms"], CHANGE_LIMIT_MS),
        ),
    ]


def mcp_rows(mcp: dict[str, Any]) -> list[dict[str, Any]]:
    """An MCP page-tool call's p50 in ``--launch`` mode and in your own Chrome, against chrome-devtools-mcp."""
    out = []
    for number, run in enumerate(mcp["runs"], 1):
        devtools = (run.get("devtools") or {}).get("read_only")
        run_of = f", run {number}" if len(mcp["runs"]) > 1 else ""
        for key, what, limit in (
            ("webmcp_nb", "MCP page-tool call p50, --launch (the pipe)", 0.85),
            ("webmcp_nb_own", "MCP page-tool call p50, your own Chrome (the extension)", 1.00),
        ):
            ours = (run.get(key) or {}).get("read_only")
            if ours is None:
                continue
            ratio = _ratio(ours["p50_ms"], devtools["p50_ms"] if devtools else None)
            out.append(
                _row(
                    f"{what}, {ours['n']} calls{run_of}",
                    f"{ours['p50_ms']:.3f} ms",
                    f"chrome-devtools-mcp execute_webmcp_tool {devtools['p50_ms']:.3f} ms" if devtools else "–",
                    ratio,
                    f"≤ {limit:.2f}×",
                    _at_most(ratio, limit),
                )
            )
    return out


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows, in the issue's order, from the parts' results."""
    return [
        *cold_rows(result["cold_start"]),
        *launch_rows(result["launch_call"]),
        *call_rows(result["calls"]),
        *mcp_rows(result["mcp"]),
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
