"""Launch to a first tool call, in a fresh process: ``wm.launch(url=…, native_webmcp=True)`` and the first tab's
``tab.call`` against Playwright's launch, ``goto`` and ``page.webmcp.call_tool`` on the same page and Chromium,
rounds interleaved.

    python bench/run.py --launch-call [--rounds N] [--json PATH]
    python -m bench.launch_call [the same options]

Each sample is a new Python process that imports its library (timed apart: ``import``), then times from the call
that starts the browser to the first tool result (``launch → first call``); the browser is closed after, not
timed. webmcp-nb's side starts at ``wm.launch``; Playwright's at ``sync_playwright().start()`` (its driver, a Node
process, is part of what a launch costs there; timed apart too: ``driver``). See bench/README.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import _playwright_available, machine, rounds_main, rounds_table, spread
from webmcp_nb.browser.chromium import find_chromium
from webmcp_nb.demo.server import serve_demo

__all__ = ["main", "run", "SIDES"]

ROOT = Path(__file__).resolve().parents[1]
PAGE = "flights/?tools=3&writable=1"  # the MCP benchmarks' page
TOOL = "bulk_0001"
WAIT = 120.0

WEBMCP_NB = """
import json, sys, time
began = time.perf_counter()
import webmcp_nb as wm
t0 = time.perf_counter()
browser = wm.launch(url=sys.argv[1], native_webmcp=True)
result = browser.tabs[0].call(sys.argv[2])
done = time.perf_counter()
browser.close()
assert result.value == {"index": 1}, result
print(json.dumps({"import_s": t0 - began, "first_call_s": done - t0}))
"""

PLAYWRIGHT = """
import json, sys, time
began = time.perf_counter()
from playwright.sync_api import sync_playwright
t0 = time.perf_counter()
pw = sync_playwright().start()
driver = time.perf_counter()
browser = pw.chromium.launch(executable_path=sys.argv[3], args=["--enable-features=WebMCP", "--no-sandbox"])
page = browser.new_page()
page.goto(sys.argv[1])
result = page.webmcp.call_tool(sys.argv[2], {})
done = time.perf_counter()
browser.close()
pw.stop()
assert result == {"index": 1}, result
print(json.dumps({"import_s": t0 - began, "driver_s": driver - t0, "first_call_s": done - t0}))
"""

SIDES = {
    "webmcp_nb": ("webmcp-nb wm.launch(url, native_webmcp=True) + tab.call", WEBMCP_NB),
    "playwright": ("Playwright launch + goto + page.webmcp.call_tool", PLAYWRIGHT),
}


def sample(code: str, url: str) -> dict[str, float]:
    """One fresh process's timings (seconds)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", code, url, TOOL, find_chromium()],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, "PYTHONPATH": path},
    )
    if done.returncode != 0:
        raise RuntimeError(f"the sample failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(rounds: int, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> dict:
    """``rounds`` rounds, each one sample of every side (the order alternating); medians and every sample."""
    sides = [key for key in SIDES if key != "playwright" or _playwright_available()]
    notes = [] if "playwright" in sides else ["Playwright ≥ 1.64 is not installed: its side is skipped"]
    samples: dict[str, list[dict[str, float]]] = {key: [] for key in sides}
    loads: list[float] = []
    with serve_demo() as demo:
        url = demo.url(PAGE)
        for number in range(rounds):
            for key in sides if number % 2 == 0 else sides[::-1]:
                got = sample(SIDES[key][1], url)
                samples[key].append(got)
                log(f"round {number + 1}: {SIDES[key][0]}: {got['first_call_s']:.3f} s")
            loads.append(round(os.getloadavg()[0], 2))
    results: dict[str, Any] = {}
    for key in sides:
        entry: dict[str, Any] = {"label": SIDES[key][0]}
        for field in samples[key][0]:
            entry[field] = spread([s[field] for s in samples[key]])
        results[key] = entry
    if len(sides) == 2:
        ours, theirs = (results[key]["first_call_s"]["median"] for key in sides)
        results["ratio"] = round(ours / theirs, 3)
    meta = {**machine(), "page": PAGE, "tool": TOOL, "rounds": rounds}
    return {"meta": meta, "results": results, "load_average": loads, "notes": notes}


def render(result: dict[str, Any]) -> str:
    results = result["results"]
    columns = {"import_s": "import", "first_call_s": "launch → first call"}
    lines = rounds_table(result, "Launch to a first tool call in a fresh process", columns, 60)
    if "driver_s" in results.get("playwright", {}):
        lines.append(
            f"  (Playwright's driver start, within its launch: {results['playwright']['driver_s']['median']:.3f} s)"
        )
    if "ratio" in results:
        lines += ["", f"  webmcp-nb ÷ Playwright, launch → first call: {results['ratio']:.3f} (target ≤ 1.0)"]
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return rounds_main(argv, "python bench/run.py --launch-call", __doc__ or "", run, render, "both sides")


if __name__ == "__main__":
    raise SystemExit(main())
