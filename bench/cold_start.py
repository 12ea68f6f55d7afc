"""Cold starts of MCP servers: a client spawns the server and times, from the spawn, the answer to its handshake
and its first page-tool result, for ``webmcp-nb mcp --launch --url`` and the peers (chrome-devtools-mcp, Playwright
MCP) on the same page, rounds interleaved.

    python bench/run.py --mcp-cold [--rounds N] [--json PATH]
    python -m bench.cold_start [the same options]

The client is a bare JSON-RPC client over the server's stdin and stdout (no SDK on the client's side: nothing of
the benchmark's own start-up is counted), speaking 2025-11-25, the era every server here speaks. Each server
gets the requests a client makes from nothing to a page tool's result:

- webmcp-nb: ``initialize``, ``notifications/initialized``, ``tools/call page_bulk_0001`` (the server was started
  on the page's URL);
- chrome-devtools-mcp: ``initialize``, ``notifications/initialized``, ``navigate_page`` to the page,
  ``execute_webmcp_tool bulk_0001`` (both on page 1, its first page: no ``list_pages`` to learn its id);
- Playwright MCP (``--timeout-settle 0``): ``initialize``, ``notifications/initialized``, ``browser_navigate`` to
  the page, ``tools/call webmcp_bulk_0001``.

Each request is sent the moment the answer before it arrived. A round starts every server once, one after the
other, in an order that rotates from round to round; each is stopped (stdin closed, then its process group
ended) before the next starts. See bench/README.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import machine, rounds_main, rounds_table, spread
from webmcp_nb.browser.chromium import find_chromium
from webmcp_nb.demo.server import serve_demo

__all__ = ["main", "run", "SERVERS"]

ROOT = Path(__file__).resolve().parents[1]
NODE_BIN = ROOT / "node_modules" / ".bin"
PAGE = "flights/?tools=3&writable=1"
TOOL = "bulk_0001"
WAIT = 60.0
PROTOCOL = "2025-11-25"


@dataclass(frozen=True)
class Server:
    """A server: its command (page URL, scratch folder → argv, cwd) and the requests after the handshake that bring
    a page tool's result (page URL → [(method, params)], the last one the page tool's call)."""

    key: str
    label: str
    command: Callable[[str, Path], list[str]]
    steps: Callable[[str], list[tuple[str, dict[str, Any]]]]
    node_tool: str | None = None


def _webmcp_nb(url: str, scratch: Path) -> list[str]:
    return [sys.executable, "-m", "webmcp_nb", "mcp", "--launch", "--native-webmcp", "--url", url]


def _devtools(url: str, scratch: Path) -> list[str]:
    return [
        str(NODE_BIN / "chrome-devtools-mcp"), "--headless", "--executablePath", find_chromium(), "--isolated",
        "--categoryExperimentalWebmcp", "--chromeArg=--enable-features=WebMCP", "--chromeArg=--no-sandbox",
        "--no-usage-statistics", "--no-performance-crux",
    ]  # fmt: skip


def _playwright(url: str, scratch: Path) -> list[str]:
    launch = {"executablePath": find_chromium(), "headless": True, "chromiumSandbox": False,
              "args": ["--enable-features=WebMCP"]}  # fmt: skip
    config = scratch / "playwright-mcp.json"
    config.write_text(json.dumps({"browser": {"browserName": "chromium", "isolated": True, "launchOptions": launch}}))
    return [str(NODE_BIN / "playwright-mcp"), "--config", str(config), "--output-dir", str(scratch),
            "--timeout-settle", "0"]  # fmt: skip


def _call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "tools/call", {"name": name, "arguments": arguments}


SERVERS = [
    Server("webmcp_nb", "webmcp-nb mcp --launch --url", _webmcp_nb, lambda url: [_call(f"page_{TOOL}", {})]),
    Server(
        "devtools", "chrome-devtools-mcp", _devtools,
        lambda url: [_call("navigate_page", {"pageId": 1, "type": "url", "url": url}),
                     _call("execute_webmcp_tool", {"pageId": 1, "toolName": TOOL, "input": "{}"})],
        node_tool="chrome-devtools-mcp",
    ),
    Server(
        "playwright", "Playwright MCP, --timeout-settle 0", _playwright,
        lambda url: [_call("browser_navigate", {"url": url}), _call(f"webmcp_{TOOL}", {})],
        node_tool="playwright-mcp",
    ),
]  # fmt: skip


class _Wire:
    """JSON-RPC over a child's pipes: requests out, each answer waited for by its id (other lines are skipped)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next = 0

    async def send(self, method: str, params: dict[str, Any], *, notify: bool = False) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next += 1
            message["id"] = self._next
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            message = json.loads(line)
            if message.get("id") == self._next and ("result" in message or "error" in message):
                return message

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send(method, params)
        return await self.answer()


def _text(answer: dict[str, Any]) -> str:
    result = answer.get("result") or {}
    return "".join(part.get("text", "") for part in result.get("content", []))


async def cold_start(server: Server, url: str, scratch: Path) -> dict[str, float]:
    """Seconds from the spawn to the handshake's answer and to the page tool's result."""
    errlog = (scratch / f"{server.key}.log").open("ab")
    command = server.command(url, scratch)
    began = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errlog, cwd=scratch,
        start_new_session=True, limit=1 << 26,
    )  # fmt: skip
    wire = _Wire(process)
    try:
        return await asyncio.wait_for(_session(server, url, wire, began), WAIT)
    finally:
        await _stop(process)
        errlog.close()


async def _session(server: Server, url: str, wire: _Wire, began: float) -> dict[str, float]:
    hello = {"protocolVersion": PROTOCOL, "capabilities": {},
             "clientInfo": {"name": "webmcp-nb-bench", "version": "1"}}  # fmt: skip
    answer = await wire.request("initialize", hello)
    initialized = time.perf_counter() - began
    if "error" in answer:
        raise RuntimeError(f"{server.label}: initialize: {answer['error']}")
    await wire.send("notifications/initialized", {}, notify=True)
    for method, params in server.steps(url):
        answer = await wire.request(method, params)
        if "error" in answer or (answer.get("result") or {}).get("isError"):
            raise RuntimeError(f"{server.label}: {params.get('name', method)}: {answer}"[:400])
    first = time.perf_counter() - began
    if '"index"' not in _text(answer) and "index" not in _text(answer):
        raise RuntimeError(f"{server.label}: unexpected result {_text(answer)[:300]!r}")
    return {"initialize_s": initialized, "first_result_s": first}


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close the server's stdin (how a client leaves); end its process group if it has not exited soon after."""
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(process.wait(), 10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # what it started and left (Node's browsers, a stray child)
    await process.wait()


def _missing(server: Server) -> str | None:
    if server.node_tool is not None and not (NODE_BIN / server.node_tool).exists():
        return f"{server.label}: {NODE_BIN / server.node_tool} is missing (run `npm ci` at the repository's root)"
    return None


def run(rounds: int, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> dict:
    """``rounds`` rounds, each starting every server once (the order rotating); medians and every sample."""
    servers = [server for server in SERVERS if _missing(server) is None]
    notes = [why for server in SERVERS if (why := _missing(server)) is not None]
    samples: dict[str, list[dict[str, float]]] = {server.key: [] for server in servers}
    loads: list[float] = []
    with serve_demo() as demo, tempfile.TemporaryDirectory(prefix="webmcp-nb-bench-cold-") as tmp:
        url = demo.url(PAGE)
        for number in range(rounds):
            order = servers[number % len(servers) :] + servers[: number % len(servers)]
            for server in order:
                scratch = Path(tmp, f"{server.key}-{number}")
                scratch.mkdir()
                sample = asyncio.run(cold_start(server, url, scratch))
                samples[server.key].append(sample)
                log(f"round {number + 1}: {server.label}: {sample['initialize_s']:.3f} s, "
                    f"{sample['first_result_s']:.3f} s")  # fmt: skip
            loads.append(round(os.getloadavg()[0], 2))
    results: dict[str, Any] = {}
    for server in servers:
        entry: dict[str, Any] = {"label": server.label}
        for key in ("initialize_s", "first_result_s"):
            entry[key] = spread([sample[key] for sample in samples[server.key]])
        results[server.key] = entry
    peers = [results[key]["first_result_s"]["median"] for key in ("devtools", "playwright") if key in results]
    if "webmcp_nb" in results and peers:
        results["ratio_vs_faster_peer"] = round(results["webmcp_nb"]["first_result_s"]["median"] / min(peers), 3)
    meta = {**machine(), "page": PAGE, "tool": TOOL, "rounds": rounds, "protocol": PROTOCOL}
    return {"meta": meta, "results": results, "load_average": loads, "notes": notes}


def render(result: dict[str, Any]) -> str:
    results = result["results"]
    columns = {"initialize_s": "spawn → initialize answered", "first_result_s": "spawn → first page-tool result"}
    lines = rounds_table(result, "MCP cold start", columns, 36)
    if "ratio_vs_faster_peer" in results:
        lines += ["", f"  webmcp-nb ÷ the faster peer, first result: {results['ratio_vs_faster_peer']:.3f} "
                  "(target ≤ 0.9); initialize within 0.3 s of the spawn"]  # fmt: skip
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return rounds_main(argv, "python bench/run.py --mcp-cold", __doc__ or "", run, render, "every server")


if __name__ == "__main__":
    raise SystemExit(main())
