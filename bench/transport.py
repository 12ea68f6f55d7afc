"""A bare SDK server's cost per call on each stdio transport: the SDK's ``stdio_server`` and webmcp-nb's
(``webmcp_nb/mcp/_stdio.py``), the same low-level ``Server`` on both, whose one tool answers at once.

    python bench/run.py --mcp-transport [--calls N] [--blocks N] [--json PATH]
    python -m bench.transport [the same options]

Each server is a subprocess; a bare JSON-RPC client in this process (no SDK on this side) makes the handshake
(2025-11-25) and then sequential ``tools/call`` requests, each sent when the answer before it arrived, in
interleaved blocks (each server in turn), so the machine's drift falls on both alike. p50/p95 per call in ms, and
the server's CPU time per call (user + system, from ``/proc``). See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from bench.harness import machine, show

__all__ = ["main", "run", "TRANSPORTS"]

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = {"sdk": "the SDK's stdio_server", "webmcp_nb": "webmcp-nb's stdio transport (mcp/_stdio.py)"}

SERVER = textwrap.dedent(
    """
    import asyncio, sys
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from webmcp_nb.mcp._stdio import stdio_streams

    TOOL = types.Tool(name="echo", input_schema={"type": "object"})

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    async def main():
        server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
        server.middleware.clear()  # (its no-op OpenTelemetry middleware, as webmcp-nb mcp leaves it out)
        streams = stdio_server() if sys.argv[1] == "sdk" else stdio_streams()
        async with streams as (read, write):
            await server.run(read, write, server.create_initialization_options())

    asyncio.run(main())
    """
)


class _Server:
    def __init__(self, key: str, process: asyncio.subprocess.Process) -> None:
        self.key, self.process, self.next = key, process, 0
        self.samples: list[float] = []
        self.cpu = 0.0  # seconds of the server's CPU during the measured blocks

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next += 1
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method,
                                             "params": params}).encode() + b"\n")  # fmt: skip
        while True:
            answer = json.loads(await self.process.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _start(key: str, script: Path) -> _Server:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), key, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    server = _Server(key, process)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    assert "result" in await server.request("initialize", hello)
    assert process.stdin is not None
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return server


async def _block(server: _Server, calls: int, *, measured: bool = True) -> None:
    cpu = server.cpu_seconds()
    for _ in range(calls):
        began = time.perf_counter()
        answer = await server.request("tools/call", {"name": "echo", "arguments": {}})
        if measured:
            server.samples.append(time.perf_counter() - began)
        if answer.get("result", {}).get("content", [{}])[0].get("text") != "ok":
            raise RuntimeError(f"{server.key}: unexpected answer {answer}")
    if measured:
        server.cpu += server.cpu_seconds() - cpu


async def _run(calls: int, blocks: int, script: Path) -> list[_Server]:
    servers = [await _start(key, script) for key in TRANSPORTS]
    try:
        for server in servers:
            await _block(server, 200, measured=False)  # warm-up
        for _ in range(blocks):
            for server in servers:
                await _block(server, calls // blocks)
    finally:
        for server in servers:
            assert server.process.stdin is not None
            server.process.stdin.close()
            await server.process.wait()
    return servers


def run(calls: int, blocks: int) -> dict[str, Any]:
    """Every transport measured in ``blocks`` interleaved blocks, ``calls`` calls in all for each."""
    script = Path(os.environ.get("TMPDIR", "/tmp"), f"webmcp-nb-bench-bare-{os.getpid()}.py")
    script.write_text(SERVER)
    try:
        servers = asyncio.run(_run(calls, blocks, script))
    finally:
        script.unlink()
    results: dict[str, Any] = {}
    for server in servers:
        ordered = sorted(server.samples)
        results[server.key] = {
            "label": TRANSPORTS[server.key],
            "p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p95_ms": round(ordered[int(len(ordered) * 0.95)] * 1000, 3),
            "cpu_ms_per_call": round(server.cpu / len(ordered) * 1000, 3),
            "n": len(ordered),
        }
    results["ratio_p50"] = round(results["webmcp_nb"]["p50_ms"] / results["sdk"]["p50_ms"], 3)
    meta = {**machine(), "calls": calls, "blocks": blocks}
    return {"meta": meta, "results": results, "load_average": round(os.getloadavg()[0], 2)}


def render(result: dict[str, Any]) -> str:
    results = result["results"]
    lines = [
        f"A bare SDK server's tools/call, by stdio transport ({result['meta']['calls']} calls each in "
        f"{result['meta']['blocks']} interleaved blocks; load average {result['load_average']:.1f})",
        "",
        f"  {'':48}{'p50 ms':>9}{'p95 ms':>9}{'server CPU ms/call':>20}",
    ]
    for key in TRANSPORTS:
        entry = results[key]
        lines.append(
            f"  {entry['label']:48}{entry['p50_ms']:>9.3f}{entry['p95_ms']:>9.3f}{entry['cpu_ms_per_call']:>20.3f}"
        )
    lines += ["", f"  webmcp-nb's ÷ the SDK's, p50: {results['ratio_p50']:.3f}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/run.py --mcp-transport", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, metavar="N", help="calls per transport (default 3000)")
    parser.add_argument("--blocks", type=int, default=10, metavar="N", help="interleaved blocks (default 10)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.calls < args.blocks or args.blocks < 1:
        parser.error("--calls must be at least --blocks, and --blocks at least 1")
    result = run(args.calls, args.blocks)
    show(render(result), result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
