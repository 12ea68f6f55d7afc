"""The benchmark: webmcp-nb against Playwright's WebMCP API, raw CDP and ``page.evaluate``, in one run on the
same pages, printed as one table (with ratios and the issue's targets) and written as JSON.

    python bench/run.py [--quick] [--json PATH] [--iterations N]   # needs the bench extra (Playwright)

Every call goes to ``bulk_0001`` on the demo page ``flights/?tools=1000`` (1000 trivial read-only tools plus the
page's own ``searchFlights``), so the numbers measure the path to the page, not the page. Listing is measured there
(a refresh, and a change to one tool reaching ``tab.tools``) and on ``flights/?tools=10000`` (a page load until
every tool is listed). Measurements that need Playwright (the ``bench`` extra) are skipped with a note when it is
not installed. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import webmcp_nb as wm
from webmcp_nb.browser.chromium import find_chromium
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.demo.server import DemoServer, serve_demo
from webmcp_nb.testing import ScriptedServer, call, say

__all__ = ["main", "run", "Plan", "Stats", "RawCDP"]

PAGE = "flights/?tools=1000"
LAUNCH_PAGE = "flights/"  # launch-to-tools-visible: the demo page as a user opens it
TOOL = "bulk_0001"
LAST_TOOL = "bulk_0999"  # the page is ready once this one is listed
BIG_PAGE = "flights/?tools=10000"
BIG_COUNT = 10_001  # its 10,000 bulk tools and searchFlights
IN_FLIGHT = 16
PLAYWRIGHT_MISSING = "Playwright ≥ 1.64 is not installed (pip install 'webmcp-nb[bench]'): its rows are skipped"

# Test-only stand-in for a WebMCP polyfill in Playwright's Chromium (no --enable-features=WebMCP): a Map of
# tools; executeTool runs one and returns its result as JSON text, as the extension's polyfill does.
TEST_POLYFILL = """(() => {
  const tools = new Map();
  const modelContext = {
    registerTool(tool, { signal } = {}) {
      tools.set(tool.name, tool);
      signal?.addEventListener('abort', () => tools.delete(tool.name), { once: true });
      return Promise.resolve();
    },
    async getTools() {
      return [...tools.values()].map(({ name, description, inputSchema, annotations }) =>
        ({ name, description, inputSchema, annotations }));
    },
    async executeTool(tool, input) {
      return JSON.stringify(await tools.get(tool?.name ?? tool).execute(input ?? {}));
    },
    addEventListener() {},
  };
  Object.defineProperty(document, 'modelContext', { configurable: true, value: modelContext });
})();"""
EVALUATE_CALL = "(name) => document.modelContext.executeTool(name, {})"
EVALUATE_LIST = "() => document.modelContext.getTools()"


# ----- what to run, and statistics -----


@dataclass(frozen=True)
class Plan:
    """How much of each measurement to run. A measurement also stops after ``budget`` seconds (with at least
    ``MIN_SAMPLES``), so a slow path reports fewer samples instead of stretching the run; ``n`` says how many."""

    sequential: int
    in_flight: int
    listings: int
    launches: int
    big_listings: int
    agent_steps: int
    memory_calls: int
    memory_warmup: int
    warmup: int
    budget: float
    quick: bool = False

    @classmethod
    def make(cls, *, quick: bool = False, iterations: int | None = None) -> Plan:
        n = iterations or (30 if quick else 500)
        if quick:
            return cls(n, 2 * n, max(5, n // 6), 1, 1, 5, 200, 20, 5, 1.5, quick=True)
        return cls(n, 4 * n, max(10, n // 10), 3, 3, 50, 10_000, 500, 20, 12.0)


MIN_SAMPLES = 10


def _percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class Stats:
    """Per-operation times (seconds) and the wall time of the whole measurement."""

    samples: list[float]
    wall: float

    def as_dict(self) -> dict[str, float | int]:
        ordered = sorted(self.samples)
        ms = lambda s: round(s * 1000, 3)  # noqa: E731
        return {
            "n": len(ordered),
            "p50_ms": ms(_percentile(ordered, 50)),
            "p95_ms": ms(_percentile(ordered, 95)),
            "p99_ms": ms(_percentile(ordered, 99)),
            "mean_ms": ms(statistics.fmean(ordered)),
            "per_s": round(len(ordered) / self.wall, 1),
            "wall_s": round(self.wall, 3),
        }


def measure(op: Callable[[], object], n: int, *, warmup: int, budget: float) -> dict[str, Any]:
    """``op()`` called ``n`` times in a row from this thread (blocking)."""
    for _ in range(warmup):
        op()
    samples: list[float] = []
    start = time.perf_counter()
    for _ in range(n):
        began = time.perf_counter()
        op()
        samples.append(time.perf_counter() - began)
        if began - start > budget and len(samples) >= MIN_SAMPLES:
            break
    return Stats(samples, time.perf_counter() - start).as_dict()


async def ameasure(
    op: Callable[[], Awaitable[object]], n: int, *, warmup: int, budget: float, concurrency: int = 1
) -> dict[str, Any]:
    """``await op()`` ``n`` times: in a row, or ``concurrency`` in flight (asyncio.gather with a semaphore)."""
    for _ in range(warmup):
        await op()
    samples: list[float] = []
    start = time.perf_counter()
    deadline = start + budget
    if concurrency == 1:
        for _ in range(n):
            began = time.perf_counter()
            await op()
            samples.append(time.perf_counter() - began)
            if began > deadline and len(samples) >= MIN_SAMPLES:
                break
    else:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                if time.perf_counter() > deadline and len(samples) >= MIN_SAMPLES:
                    return
                began = time.perf_counter()
                await op()
                samples.append(time.perf_counter() - began)

        await asyncio.gather(*(one() for _ in range(n)))
    return Stats(samples, time.perf_counter() - start).as_dict()


def _launch_stats(seconds: list[float]) -> dict[str, Any]:
    return {
        "n": len(seconds),
        "median_s": round(statistics.median(seconds), 3),
        "min_s": round(min(seconds), 3),
        "max_s": round(max(seconds), 3),
    }


def _rss_mb() -> float:
    """This process's resident set size (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _wait(predicate: Callable[[], bool], timeout: float, what: str, every: float = 0.001) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(every)


# ----- webmcp-nb -----


def launch_to_tools(server: DemoServer, *, native: bool) -> float:
    """Seconds from ``wm.launch(url=...)`` to the tab's tools being non-empty; the browser is closed after."""
    started = time.perf_counter()
    browser = wm.launch(url=server.url(LAUNCH_PAGE), native_webmcp=native)
    try:
        _wait(lambda: any(len(tab.tools) for tab in browser.tabs), 30, "tools")
        return time.perf_counter() - started
    finally:
        browser.close()


@contextlib.contextmanager
def webmcp_nb_tab(
    server: DemoServer, *, native: bool, lanes: str = "loopback", devtools: bool = True
) -> Iterator[wm.Tab]:
    """The bench page in a launched browser: native tools through the DevTools pipe (``devtools``), or through the
    extension, as in the user's own Chrome."""
    browser = wm.launch(url=server.url(PAGE), native_webmcp=native, lanes=lanes, devtools=devtools)  # type: ignore[arg-type]
    try:
        tab = browser.tabs[0]
        tab.wait_for_tool(LAST_TOOL)
        yield tab
    finally:
        browser.close()


def webmcp_nb_calls(tab: wm.Tab, plan: Plan) -> dict[str, Any]:
    """``tab.call`` in a row; ``await tab.acall`` in a row and 16 in flight, from a plain ``asyncio.run``."""
    opts = {"warmup": plan.warmup, "budget": plan.budget}
    out = {"webmcp_nb_call": {"sequential": measure(lambda: tab.call(TOOL), plan.sequential, **opts)}}
    acall = lambda: tab.acall(TOOL)  # noqa: E731
    out["webmcp_nb_acall"] = {
        "sequential": asyncio.run(ameasure(acall, plan.sequential, **opts)),
        "in_flight_16": asyncio.run(ameasure(acall, plan.in_flight, concurrency=IN_FLIGHT, **opts)),
    }
    return out


def webmcp_nb_worker_calls(tab: wm.Tab, plan: Plan) -> dict[str, Any]:
    """The same calls through the extension (not the DevTools pipe): on a lane (loopback pages in the user's own
    Chrome), or with lanes off, the service worker's path, which pages outside loopback take."""
    opts = {"warmup": plan.warmup, "budget": plan.budget}
    return {
        "sequential": measure(lambda: tab.call(TOOL), plan.sequential, **opts),
        "in_flight_16": asyncio.run(ameasure(lambda: tab.acall(TOOL), plan.in_flight, concurrency=IN_FLIGHT, **opts)),
    }


def webmcp_nb_listing(tab: wm.Tab, plan: Plan) -> dict[str, Any]:
    """``tab.refresh_tools()``: the page re-reports its tools and the mirror has them."""
    stats = measure(tab.refresh_tools, plan.listings, warmup=2, budget=plan.budget)
    return {**stats, "tools": len(tab.tools)}


def webmcp_nb_change(tab: wm.Tab, plan: Plan) -> dict[str, Any]:
    """A changed 1,000-tool list: from the call that makes the page register one of its tools again, with a new
    description, until ``tab.tools`` shows that description (polled every 0.2 ms from this thread)."""
    revision = itertools.count()

    def change() -> None:
        k = next(revision)
        tab.call(TOOL, revise=k)
        wanted = f"(revision {k})"
        _wait(lambda: tab.tools[LAST_TOOL].description.endswith(wanted), 10, "the change", every=0.0002)

    stats = measure(change, plan.listings, warmup=3, budget=plan.budget)
    return {**stats, "tools": len(tab.tools)}


def webmcp_nb_big_listing(server: DemoServer, *, native: bool, runs: int) -> dict[str, Any]:
    """Seconds from ``tab.navigate`` to the 10,000-tool page until ``tab.tools`` lists all of its tools; between
    runs the tab goes back to the plain demo page (not timed)."""
    seconds = []
    with wm.launch(url=server.url(LAUNCH_PAGE), native_webmcp=native) as browser:
        tab = browser.tabs[0]
        for run in range(runs):
            started = time.perf_counter()
            tab.navigate(server.url(f"{BIG_PAGE}&run={run}"))
            _wait(lambda: len(tab.tools) == BIG_COUNT, 60, "10,000 tools")
            seconds.append(time.perf_counter() - started)
            tools = len(tab.tools)
            tab.navigate(server.url(LAUNCH_PAGE))
    return {**_launch_stats(seconds), "tools": tools}


def memory_growth(tab: wm.Tab, plan: Plan) -> dict[str, Any]:
    """RSS of this process before and after ``memory_calls`` sequential ``tab.call`` (after a warm-up)."""
    for _ in range(plan.memory_warmup):
        tab.call(TOOL)
    events = tab._browser.events.events
    gc.collect()
    before = _rss_mb()
    for _ in range(plan.memory_calls):
        tab.call(TOOL)
    gc.collect()
    after = _rss_mb()
    return {
        "calls": plan.memory_calls,
        "warmup": plan.memory_warmup,
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "growth_mb": round(after - before, 2),
        "events_kept": len(events),  # browser.events keeps the most recent ones (sessions keep all, on disk)
    }


def agent_overhead(tab: wm.Tab, server: DemoServer, steps: int) -> dict[str, Any]:
    """One agent turn of ``steps`` tool calls, driven by a scripted model that answers at once (the approach of
    bench/agent_overhead.py): per step = one model request + one ``listFlights`` call + the loop's own work."""
    tab.navigate(server.url("flights/"))
    tab.call("searchFlights", DEMO_SEARCH)
    tab.wait_for_tool("listFlights")
    direct = measure(lambda: tab.call("listFlights"), max(steps, 20), warmup=5, budget=30)
    script = [call("listFlights") for _ in range(steps)] + [say("done")]
    with ScriptedServer(script) as model:
        agent = wm.Agent(
            tab,
            base_url=model.base_url,
            api_key="bench",
            model="scripted",
            max_tool_calls=steps,
            turn_timeout=600,
            session=False,
        )
        started = time.perf_counter()
        result = agent.run("List the flights again and again.")
        total_ms = (time.perf_counter() - started) * 1000
    model_ms = [e.duration_ms or 0.0 for e in result.events if e.kind == "model.response"]
    tool_ms = [s.duration_ms for s in result.steps]
    per_step = total_ms / steps
    return {
        "steps": len(tool_ms),
        "per_step_ms": round(per_step, 2),
        "model_request_ms_p50": round(statistics.median(model_ms), 2),
        "tool_call_ms_p50": round(statistics.median(tool_ms), 2),
        "direct_tab_call_ms_p50": direct["p50_ms"],
        "loop_overhead_ms_per_step": round(
            per_step - statistics.fmean(model_ms[:-1] or model_ms) - statistics.fmean(tool_ms), 2
        ),
    }


# ----- raw CDP -----


class RawCDP:
    """A bare CDP client: a plain Chromium subprocess with native WebMCP, one WebSocket to its browser endpoint,
    one page session (flattened). A call is ``WebMCP.invokeTool``; it completes on ``WebMCP.toolResponded``."""

    FLAGS = (
        "--headless=new", "--no-sandbox", "--enable-features=WebMCP", "--remote-debugging-port=0",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-gpu",
    )  # fmt: skip

    def __init__(self) -> None:
        self._profile = tempfile.mkdtemp(prefix="webmcp-nb-bench-cdp-")
        self._process = subprocess.Popen(
            [find_chromium(), *self.FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._ids = itertools.count(1)
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._responses: dict[str, asyncio.Future[dict[str, Any]]] = {}  # invocationId → toolResponded
        self._loaded = asyncio.Event()
        self._changed = asyncio.Event()
        self.tools: set[str] = set()
        self.session = ""
        self.frame = ""

    async def start(self, url: str, timeout: float = 30) -> RawCDP:
        from websockets.asyncio.client import connect

        port_file = Path(self._profile, "DevToolsActivePort")
        deadline = time.perf_counter() + timeout
        while len(lines := (port_file.read_text().split() if port_file.exists() else [])) < 2:  # noqa: ASYNC240
            if time.perf_counter() > deadline or self._process.poll() is not None:
                raise RuntimeError("Chromium did not open its DevTools port")
            await asyncio.sleep(0.02)
        self._ws = await connect(f"ws://127.0.0.1:{lines[0]}{lines[1]}", max_size=None, compression=None)
        self._reader = asyncio.create_task(self._read())
        target = (await self.send("Target.createTarget", {"url": "about:blank"}, session=None))["targetId"]
        attached = await self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=None)
        self.session = attached["sessionId"]
        await self.send("Page.enable")
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(self._loaded.wait(), timeout)
        self.frame = (await self.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        await self.send("WebMCP.enable")
        await asyncio.wait_for(self._until(lambda: LAST_TOOL in self.tools), timeout)
        return self

    async def _read(self) -> None:
        async for raw in self._ws:
            msg = json.loads(raw)
            if "id" in msg:
                reply = self._replies.pop(msg["id"])
                if "error" in msg:
                    reply.set_exception(RuntimeError(f"CDP error: {msg['error']}"))
                else:
                    reply.set_result(msg.get("result", {}))
            elif msg.get("method") == "WebMCP.toolResponded":
                self._response(msg["params"]["invocationId"]).set_result(msg["params"])
            elif msg.get("method") == "WebMCP.toolsAdded":
                self.tools.update(tool["name"] for tool in msg["params"]["tools"])
                self._changed.set()
            elif msg.get("method") == "Page.loadEventFired":
                self._loaded.set()

    def _response(self, invocation: str) -> asyncio.Future[dict[str, Any]]:
        return self._responses.setdefault(invocation, asyncio.get_running_loop().create_future())

    async def _until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            self._changed.clear()
            await self._changed.wait()

    async def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = "") -> Any:
        rid = next(self._ids)
        self._replies[rid] = reply = asyncio.get_running_loop().create_future()
        message = {"id": rid, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session or self.session
        await self._ws.send(json.dumps(message))
        return await reply

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        params = {"frameId": self.frame, "toolName": tool, "input": arguments or {}}
        invocation = (await self.send("WebMCP.invokeTool", params))["invocationId"]
        try:
            response = await self._response(invocation)
        finally:
            self._responses.pop(invocation, None)
        if response["status"] != "Completed":
            raise RuntimeError(f"{tool}: {response['status']} {response.get('errorText', '')}")
        return response.get("output")

    async def load_all(self, url: str, count: int) -> int:
        """Load ``url`` (``WebMCP`` enabled) and wait until ``toolsAdded`` has brought ``count`` tools."""
        self.tools = set()
        await self.send("Page.navigate", {"url": url})
        await self._until(lambda: len(self.tools) >= count)
        return len(self.tools)

    async def relist(self) -> int:
        """``WebMCP.enable`` again and wait for every tool in ``toolsAdded`` (call ``disable`` first)."""
        expected, self.tools = len(self.tools), set()
        await self.send("WebMCP.enable")
        await self._until(lambda: len(self.tools) >= expected)
        return len(self.tools)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.send("Browser.close", session=None), 5)
        with contextlib.suppress(Exception):
            await self._ws.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(10)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)


async def raw_cdp_suite(server: DemoServer, plan: Plan) -> dict[str, Any]:
    opts = {"warmup": plan.warmup, "budget": plan.budget}
    cdp = RawCDP()
    try:
        await cdp.start(server.url(PAGE))
        invoke = lambda: cdp.call(TOOL)  # noqa: E731
        calls = {
            "sequential": await ameasure(invoke, plan.sequential, **opts),
            "in_flight_16": await ameasure(invoke, plan.in_flight, concurrency=IN_FLIGHT, **opts),
        }
        samples: list[float] = []
        start = time.perf_counter()
        for _ in range(plan.listings):
            await cdp.send("WebMCP.disable")  # not timed
            began = time.perf_counter()
            await cdp.relist()
            samples.append(time.perf_counter() - began)
        listing = {**Stats(samples, time.perf_counter() - start).as_dict(), "tools": len(cdp.tools)}
        seconds = []
        for run in range(plan.big_listings):
            began = time.perf_counter()
            tools = await cdp.load_all(server.url(f"{BIG_PAGE}&run={run}"), BIG_COUNT)
            seconds.append(time.perf_counter() - began)
        big = {**_launch_stats(seconds), "tools": tools}
    finally:
        await cdp.close()
    return {"calls": calls, "listing": listing, "big_listing": big}


# ----- Playwright -----


def _playwright_available() -> bool:
    """Playwright with ``page.webmcp`` (1.64 and later)."""
    try:
        from playwright.async_api import Page
    except ImportError:
        return False
    return hasattr(Page, "webmcp")


async def playwright_suite(server: DemoServer, plan: Plan) -> dict[str, Any]:
    """Native page: ``page.webmcp.call_tool`` and ``page.webmcp.tools()``. Polyfill page (Chromium without
    WebMCP, ``TEST_POLYFILL`` as an init script): ``page.evaluate`` calling ``executeTool``. Async API only."""
    from playwright.async_api import async_playwright

    opts = {"warmup": plan.warmup, "budget": plan.budget}
    executable = find_chromium()
    native_args = ["--enable-features=WebMCP", "--no-sandbox", "--headless=new"]
    out: dict[str, Any] = {}
    async with async_playwright() as pw:
        launches = []
        for _ in range(plan.launches):
            started = time.perf_counter()
            browser = await pw.chromium.launch(executable_path=executable, args=native_args)
            page = await browser.new_page()
            await page.goto(server.url(LAUNCH_PAGE))
            while not await page.webmcp.tools():  # noqa: ASYNC110 - polling is what is timed, as for webmcp-nb
                await asyncio.sleep(0.001)
            launches.append(time.perf_counter() - started)
            await browser.close()
        out["launch"] = _launch_stats(launches)

        browser = await pw.chromium.launch(executable_path=executable, args=native_args)
        try:
            page = await browser.new_page()
            await page.goto(server.url(PAGE))
            await page.wait_for_function("async () => (await document.modelContext.getTools()).length > 1000")
            call_tool = lambda: page.webmcp.call_tool(TOOL, {})  # noqa: E731
            assert await call_tool() == {"index": 1}
            out["native_calls"] = {
                "sequential": await ameasure(call_tool, plan.sequential, **opts),
                "in_flight_16": await ameasure(call_tool, plan.in_flight, concurrency=IN_FLIGHT, **opts),
            }
            listing = await ameasure(page.webmcp.tools, plan.listings, warmup=2, budget=plan.budget)
            out["native_listing"] = {**listing, "tools": len(await page.webmcp.tools())}
            seconds = []
            for run in range(plan.big_listings):
                began = time.perf_counter()
                await page.goto(server.url(f"{BIG_PAGE}&run={run}"))
                while len(tools := await page.webmcp.tools()) < BIG_COUNT:  # noqa: ASYNC110 - as above
                    await asyncio.sleep(0.001)
                seconds.append(time.perf_counter() - began)
            out["native_big_listing"] = {**_launch_stats(seconds), "tools": len(tools)}
        finally:
            await browser.close()

        browser = await pw.chromium.launch(executable_path=executable, args=["--no-sandbox", "--headless=new"])
        try:
            page = await browser.new_page()
            await page.add_init_script(TEST_POLYFILL)
            await page.goto(server.url(PAGE))
            await page.wait_for_function("async () => (await document.modelContext.getTools()).length > 1000")

            async def evaluate() -> Any:
                return json.loads(await page.evaluate(EVALUATE_CALL, TOOL))

            assert await evaluate() == {"index": 1}
            out["polyfill_calls"] = {
                "sequential": await ameasure(evaluate, plan.sequential, **opts),
                "in_flight_16": await ameasure(evaluate, plan.in_flight, concurrency=IN_FLIGHT, **opts),
            }
            listing = await ameasure(lambda: page.evaluate(EVALUATE_LIST), plan.listings, warmup=2, budget=plan.budget)
            out["polyfill_listing"] = {**listing, "tools": len(await page.evaluate(EVALUATE_LIST))}
        finally:
            await browser.close()
    return out


# ----- the run -----


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return round(ours / theirs, 3) if ours and theirs else None


def _get(data: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def ratios_and_targets(r: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, dict[str, Any]]]:
    native, polyfill = r["calls"]["native"], r["calls"]["polyfill"]
    nb_p50 = _get(native, "webmcp_nb_call", "sequential", "p50_ms")
    nb_rate = _get(native, "webmcp_nb_acall", "in_flight_16", "per_s")
    cdp_p50 = _get(native, "raw_cdp", "sequential", "p50_ms")
    cdp_rate = _get(native, "raw_cdp", "in_flight_16", "per_s")
    poly_p50 = _get(polyfill, "webmcp_nb_call", "sequential", "p50_ms")
    eval_p50 = _get(polyfill, "playwright_evaluate", "sequential", "p50_ms")
    ratios = {  # webmcp-nb ÷ the other: below 1 is better for latency, above 1 is better for throughput
        "native_sequential_p50_vs_raw_cdp": _ratio(nb_p50, cdp_p50),
        "native_extension_sequential_p50_vs_raw_cdp": _ratio(
            _get(native, "webmcp_nb_extension", "sequential", "p50_ms"), cdp_p50
        ),
        "native_sequential_p50_vs_playwright": _ratio(
            nb_p50, _get(native, "playwright_call_tool", "sequential", "p50_ms")
        ),
        "native_in_flight_16_throughput_vs_raw_cdp": _ratio(nb_rate, cdp_rate),
        "native_in_flight_16_throughput_vs_playwright": _ratio(
            nb_rate, _get(native, "playwright_call_tool", "in_flight_16", "per_s")
        ),
        "polyfill_sequential_p50_vs_page_evaluate": _ratio(poly_p50, eval_p50),
        "launch_to_first_call_vs_playwright": _get(r, "launch_call", "results", "ratio"),
    }
    listing, launch = r["list_tools"], r["launch"]

    def target(text: str, value: Any, met: bool | None) -> dict[str, Any]:
        return {"target": text, "value": value, "met": met}

    def at_most(value: float | None, limit: float | None, strict: bool = False) -> bool | None:
        if value is None or limit is None:
            return None
        return value < limit if strict else value <= limit

    nb_list = {mode: _get(listing, mode, "webmcp_nb_refresh_tools", "p50_ms") for mode in ("native", "polyfill")}
    nb_change = {mode: _get(listing, mode, "webmcp_nb_changed", "p50_ms") for mode in ("native", "polyfill")}
    nb_change["native_extension"] = _get(listing, "native", "webmcp_nb_changed_extension", "p50_ms")
    spelt = {"native_extension": "native, through the extension"}
    nb_big = {mode: _get(r, "list_10000", mode, "webmcp_nb", "median_s") for mode in ("native", "polyfill")}
    nb_launch = {mode: _get(launch, f"webmcp_nb_{mode}", "median_s") for mode in ("native", "polyfill")}
    growth = _get(r, "memory", "growth_mb")
    targets = {
        "native_sequential_p50_le_raw_cdp": target("native sequential p50 ≤ raw CDP", nb_p50, at_most(nb_p50, cdp_p50)),
        "polyfill_sequential_p50_le_page_evaluate": target(
            "polyfill sequential p50 ≤ page.evaluate", poly_p50, at_most(poly_p50, eval_p50)
        ),
        "in_flight_16_throughput_ge_raw_cdp": target(
            "16-in-flight calls/s ≥ raw CDP", nb_rate, at_most(cdp_rate, nb_rate)
        ),
        **{
            f"list_1000_tools_{mode}_le_25ms": target(f"list 1000 tools ({mode}) ≤ 25 ms", v, at_most(v, 25.0))
            for mode, v in nb_list.items()
        },
        **{
            f"changed_1000_tools_{mode}_le_25ms": target(
                f"a changed 1000-tool list in tab.tools ({spelt.get(mode, mode)}) ≤ 25 ms", v, at_most(v, 25.0)
            )
            for mode, v in nb_change.items()
        },
        **{
            f"list_10000_tools_{mode}_le_2s": target(f"list 10,000 tools ({mode}) ≤ 2 s", v, at_most(v, 2.0))
            for mode, v in nb_big.items()
        },
        **{
            f"launch_to_tools_{mode}_le_1s": target(f"launch to tools visible ({mode}) ≤ 1 s", v, at_most(v, 1.0))
            for mode, v in nb_launch.items()
        },
        "launch_to_first_call_le_playwright": target(
            "launch → first call, fresh process: webmcp-nb ÷ Playwright ≤ 1.0",
            ratios["launch_to_first_call_vs_playwright"],
            at_most(ratios["launch_to_first_call_vs_playwright"], 1.0),
        ),
        "memory_growth_lt_20mb": target(
            f"memory growth over {_get(r, 'memory', 'calls')} calls < 20 MB", growth, at_most(growth, 20.0, True)
        ),
    }
    return ratios, targets


def run(plan: Plan, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> dict:
    """Every measurement, one browser at a time; returns the results (what ``--json`` writes)."""
    began = time.perf_counter()
    notes: list[str] = []
    has_playwright = _playwright_available()
    if not has_playwright:
        notes.append(PLAYWRIGHT_MISSING)
    results: dict[str, Any] = {
        "meta": _meta(plan, has_playwright),
        "calls": {"native": {}, "polyfill": {}},
        "list_tools": {"native": {}, "polyfill": {}},
        "list_10000": {"native": {}, "polyfill": {}},
        "launch": {},
    }
    with serve_demo() as server:
        log("launch to tools visible ...")
        for mode in ("native", "polyfill"):
            seconds = [launch_to_tools(server, native=mode == "native") for _ in range(plan.launches)]
            results["launch"][f"webmcp_nb_{mode}"] = _launch_stats(seconds)
        log("launch to a first call, fresh processes ...")
        from bench import launch_call  # (it imports this module)

        results["launch_call"] = launch_call.run(plan.launches, log)

        for mode in ("native", "polyfill"):
            log(f"webmcp-nb, {mode} page ...")
            with webmcp_nb_tab(server, native=mode == "native") as tab:
                results["calls"][mode].update(webmcp_nb_calls(tab, plan))
                results["list_tools"][mode]["webmcp_nb_refresh_tools"] = webmcp_nb_listing(tab, plan)
                results["list_tools"][mode]["webmcp_nb_changed"] = webmcp_nb_change(tab, plan)
                if mode == "native":
                    log(f"memory over {plan.memory_calls} calls ...")
                    results["memory"] = memory_growth(tab, plan)
                else:
                    log("agent overhead ...")
                    results["agent"] = agent_overhead(tab, server, plan.agent_steps)
        for mode in ("native", "polyfill"):
            log(f"webmcp-nb, {mode}, 10,000 tools ...")
            big = webmcp_nb_big_listing(server, native=mode == "native", runs=plan.big_listings)
            results["list_10000"][mode]["webmcp_nb"] = big
        log("webmcp-nb, native page through the extension (as in your own Chrome) ...")
        with webmcp_nb_tab(server, native=True, devtools=False) as tab:
            results["calls"]["native"]["webmcp_nb_extension"] = webmcp_nb_worker_calls(tab, plan)
            results["list_tools"]["native"]["webmcp_nb_changed_extension"] = webmcp_nb_change(tab, plan)
        log("webmcp-nb, native page through the extension, lanes off ...")
        with webmcp_nb_tab(server, native=True, lanes="off", devtools=False) as tab:
            results["calls"]["native"]["webmcp_nb_worker"] = webmcp_nb_worker_calls(tab, plan)

        log("raw CDP ...")
        cdp = asyncio.run(raw_cdp_suite(server, plan))
        results["calls"]["native"]["raw_cdp"] = cdp["calls"]
        results["list_tools"]["native"]["raw_cdp_enable"] = cdp["listing"]
        results["list_10000"]["native"]["raw_cdp"] = cdp["big_listing"]

        if has_playwright:
            log("Playwright ...")
            pw = asyncio.run(playwright_suite(server, plan))
            results["launch"]["playwright_native"] = pw["launch"]
            results["calls"]["native"]["playwright_call_tool"] = pw["native_calls"]
            results["calls"]["polyfill"]["playwright_evaluate"] = pw["polyfill_calls"]
            results["list_tools"]["native"]["playwright_tools"] = pw["native_listing"]
            results["list_tools"]["polyfill"]["playwright_evaluate_get_tools"] = pw["polyfill_listing"]
            results["list_10000"]["native"]["playwright_tools"] = pw["native_big_listing"]

    results["ratios"], results["targets"] = ratios_and_targets(results)
    results["notes"] = notes
    results["meta"]["duration_s"] = round(time.perf_counter() - began, 1)
    results["meta"]["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return results


def machine() -> dict[str, Any]:
    """What a run's numbers depend on besides the code: webmcp-nb's version, Chromium's, Python's, the CPUs."""
    executable = find_chromium()
    try:
        chromium = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        chromium = "unknown"
    return {
        "webmcp_nb": wm.__version__,
        "chromium": chromium,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
    }


def _meta(plan: Plan, has_playwright: bool) -> dict[str, Any]:
    return {
        **machine(),
        "playwright": metadata.version("playwright") if has_playwright else None,
        "page": PAGE,
        "tool": TOOL,
        "plan": {k: getattr(plan, k) for k in plan.__dataclass_fields__},
    }


# ----- the table -----

CALL_ROWS = {
    "native": [
        ("webmcp_nb_call", "webmcp-nb tab.call"),
        ("webmcp_nb_acall", "webmcp-nb await tab.acall"),
        ("webmcp_nb_extension", "webmcp-nb through the extension (a lane)"),
        ("webmcp_nb_worker", "webmcp-nb through the extension, lanes off (worker path)"),
        ("playwright_call_tool", "Playwright page.webmcp.call_tool"),
        ("raw_cdp", "raw CDP WebMCP.invokeTool"),
    ],
    "polyfill": [
        ("webmcp_nb_call", "webmcp-nb tab.call"),
        ("webmcp_nb_acall", "webmcp-nb await tab.acall"),
        ("playwright_evaluate", "Playwright page.evaluate(executeTool)"),
    ],
}
LIST_ROWS = {
    "webmcp_nb_refresh_tools": "webmcp-nb tab.refresh_tools()",
    "webmcp_nb_changed": "webmcp-nb, one tool changed → tab.tools",
    "webmcp_nb_changed_extension": "webmcp-nb through the extension, one tool changed → tab.tools",
    "playwright_tools": "Playwright page.webmcp.tools()",
    "raw_cdp_enable": "raw CDP WebMCP.enable → toolsAdded",
    "playwright_evaluate_get_tools": "Playwright page.evaluate(getTools)",
}
BIG_ROWS = {
    "webmcp_nb": "webmcp-nb tab.navigate → all in tab.tools",
    "playwright_tools": "Playwright goto → all in page.webmcp.tools()",
    "raw_cdp": "raw CDP Page.navigate → all in toolsAdded",
}
LAUNCH_ROWS = {
    "webmcp_nb_native": "webmcp-nb wm.launch(url, native_webmcp=True)",
    "webmcp_nb_polyfill": "webmcp-nb wm.launch(url)",
    "playwright_native": "Playwright launch + goto + webmcp.tools()",
}
RATIO_TEXT = {
    "native_sequential_p50_vs_raw_cdp": ("native, sequential p50: webmcp-nb ÷ raw CDP", "latency"),
    "native_extension_sequential_p50_vs_raw_cdp": (
        "native, sequential p50: webmcp-nb through the extension ÷ raw CDP",
        "latency",
    ),
    "native_sequential_p50_vs_playwright": ("native, sequential p50: webmcp-nb ÷ Playwright", "latency"),
    "native_in_flight_16_throughput_vs_raw_cdp": ("native, 16 in flight calls/s: webmcp-nb ÷ raw CDP", "rate"),
    "native_in_flight_16_throughput_vs_playwright": ("native, 16 in flight calls/s: webmcp-nb ÷ Playwright", "rate"),
    "polyfill_sequential_p50_vs_page_evaluate": ("polyfill, sequential p50: webmcp-nb ÷ page.evaluate", "latency"),
    "launch_to_first_call_vs_playwright": ("launch → first call, fresh process: webmcp-nb ÷ Playwright", "latency"),
}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _stats_row(label: str, s: dict[str, Any]) -> list[str]:
    return [label, _fmt(s["n"]), _fmt(s["p50_ms"]), _fmt(s["p95_ms"]), _fmt(s["p99_ms"]), _fmt(s["per_s"], 0)]


def _seconds_row(label: str, s: dict[str, Any]) -> list[str]:
    return [label, _fmt(s["n"]), _fmt(s["median_s"]), _fmt(s["min_s"]), _fmt(s["max_s"])]


def render(r: dict[str, Any]) -> str:
    """The results as one plain-text table."""
    stat_head = ["", "n", "p50 ms", "p95 ms", "p99 ms", "per s"]
    sections: list[tuple[str, list[str], list[list[str]]]] = []
    rows = []
    for mode, entries in CALL_ROWS.items():
        rows.append([f"{mode} page"])
        for key, label in entries:
            for kind, shape in (("sequential", "sequential"), ("in_flight_16", "16 in flight")):
                if (s := _get(r["calls"][mode], key, kind)) is not None:
                    rows.append(_stats_row(f"  {label}, {shape}", s))
    sections.append((f"Tool calls ({r['meta']['tool']} on {r['meta']['page']})", stat_head, rows))
    rows = []
    for mode in ("native", "polyfill"):
        for key, label in LIST_ROWS.items():
            if (s := r["list_tools"][mode].get(key)) is not None:
                rows.append(_stats_row(f"  {mode}: {label} [{s['tools']} tools]", s))
    sections.append(("Listing the page's tools", stat_head, rows))
    rows = [
        _seconds_row(f"  {mode}: {label} [{s['tools']} tools]", s)
        for mode in ("native", "polyfill")
        for key, label in BIG_ROWS.items()
        if (s := r["list_10000"][mode].get(key)) is not None
    ]
    sections.append((f"A page with 10,000 tools ({BIG_PAGE})", ["", "n", "median s", "min s", "max s"], rows))
    launches = r["launch"]
    rows = [_seconds_row(f"  {label}", s) for key, label in LAUNCH_ROWS.items() if (s := launches.get(key)) is not None]
    sections.append((f"Launch to tools visible ({LAUNCH_PAGE})", ["", "n", "median s", "min s", "max s"], rows))
    first_call = _get(r, "launch_call", "results") or {}
    rows = []
    for entry in first_call.values():
        if isinstance(entry, dict):
            s = entry["first_call_s"]
            row = [s["median"], s["min"], s["max"], entry["import_s"]["median"]]
            rows.append([f"  {entry['label']}", _fmt(len(s["samples"])), *(_fmt(v, 3) for v in row)])
    sections.append((
        f"Launch to a first call, each in a fresh process ({_get(r, 'launch_call', 'meta', 'page')})",
        ["", "n", "median s", "min s", "max s", "import s"], rows,
    ))  # fmt: skip
    a = r["agent"]
    rows = [
        [f"  {label}", _fmt(a[key])]
        for key, label in (
            ("per_step_ms", "per step (model request + tool call + loop)"),
            ("model_request_ms_p50", "model request, p50"),
            ("tool_call_ms_p50", "tool call inside the loop, p50"),
            ("direct_tab_call_ms_p50", "same tool by tab.call, p50"),
            ("loop_overhead_ms_per_step", "the loop's own work per step"),
        )
    ]
    sections.append((f"Agent overhead per step ({a['steps']} steps, scripted model)", ["", "ms"], rows))
    m = r["memory"]
    rows = [
        ["  RSS before / after", f"{_fmt(m['rss_before_mb'], 1)} / {_fmt(m['rss_after_mb'], 1)}"],
        ["  growth", _fmt(m["growth_mb"])],
        ["  events kept in browser.events", _fmt(m["events_kept"])],
    ]
    sections.append(
        (f"Memory of this process over {m['calls']:,} tab.call (after {m['warmup']} warm-up)", ["", "MB"], rows)
    )
    rows = []
    for key, value in r["ratios"].items():
        label, kind = RATIO_TEXT[key]
        better = "" if value is None else ("better" if (value <= 1 if kind == "latency" else value >= 1) else "worse")
        rows.append([f"  {label}", _fmt(value, 3), f"{'lower' if kind == 'latency' else 'higher'} is better", better])
    sections.append(("Ratios", ["", "ratio", "", "webmcp-nb"], rows))
    rows = []
    for t in r["targets"].values():
        met = {True: "met", False: "MISSED", None: "n/a"}[t["met"]]
        rows.append([f"  {t['target']}", _fmt(t["value"]), met])
    sections.append(("Targets (from the issue)", ["", "value", ""], rows))

    meta = r["meta"]
    lines = [
        f"webmcp-nb {meta['webmcp_nb']} benchmark — {meta['chromium']}, Playwright {meta['playwright'] or '(none)'}, "
        f"Python {meta['python']}, {meta['machine']}"
    ]
    for title, head, body in sections:
        cells = [head, *body]
        width = [max(len(row[i]) for row in cells if len(row) > i) for i in range(len(head))]
        lines += ["", title]
        for row in cells:
            if len(row) == 1:
                lines.append(row[0])
                continue
            first = row[0].ljust(width[0])
            lines.append("  ".join([first, *(cell.rjust(width[i + 1]) for i, cell in enumerate(row[1:]))]).rstrip())
    lines += ["", *(f"note: {note}" for note in r["notes"])]
    lines.append(f"({meta['duration_s']} s; load average at the end {meta.get('load_average')})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/run.py",
        description="Benchmark webmcp-nb against Playwright's WebMCP API, raw CDP and page.evaluate.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="CI mode: a few dozen iterations each, 200 memory calls; every row"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--iterations", type=int, metavar="N", help="sequential calls per measurement (16-in-flight: 4×N; quick: 2×N)"
    )
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="run N busy loops beside the benchmark (the issue's 'load 4' is two beside it on two cores)",
    )
    args = parser.parse_args(argv)
    if args.iterations is not None and args.iterations < 1:
        parser.error("--iterations must be at least 1")
    with busy_loops(args.busy):
        results = run(Plan.make(quick=args.quick, iterations=args.iterations))
    results["meta"]["busy_loops"] = args.busy
    show(render(results), results, args.json)
    return 0


@contextlib.contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """``n`` processes that only spin, for the length of the run: a machine under a known extra load."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def show(table: str, results: dict[str, Any], json_path: str | None) -> None:
    """Print the table; with ``--json PATH``, also write every number there."""
    print(table)
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


def spread(values: list[float]) -> dict[str, Any]:
    """Seconds measured once a round: the median, the fastest and the slowest (to the millisecond), and every one."""
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "samples": [round(v, 3) for v in values],
    }


def rounds_table(result: dict[str, Any], title: str, columns: dict[str, str], width: int) -> list[str]:
    """The table of a benchmark made of rounds: ``title`` with the rounds and the load after each, then a row per
    entry of ``result["results"]`` (its label in ``width`` characters) with each column's median (min to max);
    ``columns`` maps each :func:`spread` field to its heading."""
    loads = " / ".join(f"{x:.1f}" for x in result["load_average"])
    lines = [
        f"{title}, {result['meta']['rounds']} rounds interleaved, medians (min–max); load average after each round: "
        + loads,
        "",
        f"  {'':{width}}" + "".join(f"{heading:>{_cell(heading)}}" for heading in columns.values()),
    ]
    for entry in result["results"].values():
        if isinstance(entry, dict):
            cells = [f"{entry[k]['median']:.3f} s ({entry[k]['min']:.3f}–{entry[k]['max']:.3f})" for k in columns]
            row = "".join(f"{cell:>{_cell(heading)}}" for cell, heading in zip(cells, columns.values(), strict=True))
            lines.append(f"  {entry['label']:{width}}{row}")
    return lines


def _cell(heading: str) -> int:
    """A column's width: its heading's or a median (min to max) of seconds', and two spaces before it."""
    return max(len(heading), len("0.000 s (0.000–0.000)")) + 2


def rounds_main(
    argv: list[str] | None,
    prog: str,
    doc: str,
    run: Callable[[int], dict[str, Any]],
    render: Callable[[dict[str, Any]], str],
    what: str,
) -> int:
    """The command line of a benchmark made of rounds (``--rounds N``, ``--json PATH``): run, print, write."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, metavar="N", help=f"rounds of {what} (default 7)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = run(args.rounds)
    show(render(result), result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
