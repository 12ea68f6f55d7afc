"""CPU per tool call, by process: this Python process and each kind of Chromium process.

Usage: python -m bench.cpu_per_call [native|polyfill] [in-flight] [calls]   (from the repository root)

Runs the calls on the library's own loop (no hop from another thread), after a warm-up of the same size, and
divides each process's user+system CPU time over the run by the number of calls. It says where the time goes;
``python bench/run.py`` says how fast it is.
"""

from __future__ import annotations

import asyncio
import sys
import time

import psutil

import webmcp_nb as wm
from bench.harness import LAST_TOOL, PAGE, TOOL, serve_demo


def cpu_by_kind(root: psutil.Process) -> dict[int, tuple[str, float]]:
    out = {}
    for process in [root, *root.children(recursive=True)]:
        try:
            args, times = process.cmdline(), process.cpu_times()
        except psutil.Error:
            continue
        kind = "browser"
        for arg in args:
            if arg.startswith("--type="):
                kind = arg.removeprefix("--type=")
            elif arg.startswith("--utility-sub-type="):
                kind = arg.rsplit(".", 1)[-1]
            elif arg == "--extension-process":
                kind = "extension"
        out[process.pid] = (kind, times.user + times.system)
    return out


def main(mode: str = "native", in_flight: int = 16, calls: int = 3000) -> None:
    with serve_demo() as server, wm.launch(url=server.url(PAGE), native_webmcp=mode == "native") as browser:
        tab = browser.tabs[0]
        tab.wait_for_tool(LAST_TOOL)

        async def run() -> None:
            slots = asyncio.Semaphore(in_flight)

            async def one() -> None:
                async with slots:
                    await tab.acall(TOOL)

            await asyncio.gather(*(one() for _ in range(calls)))

        loop = browser._loop
        asyncio.run_coroutine_threadsafe(run(), loop).result()  # warm-up
        root, me = psutil.Process(browser.process.process.pid), psutil.Process()
        before, mine, started = cpu_by_kind(root), me.cpu_times(), time.perf_counter()
        asyncio.run_coroutine_threadsafe(run(), loop).result()
        seconds, after, mine_after = time.perf_counter() - started, cpu_by_kind(root), me.cpu_times()
    per_kind: dict[str, float] = {}
    for pid, (kind, cpu) in after.items():
        per_kind[kind] = per_kind.get(kind, 0.0) + cpu - before.get(pid, (kind, 0.0))[1]
    python = mine_after.user + mine_after.system - mine.user - mine.system
    print(f"{mode}, {in_flight} in flight: {calls / seconds:,.0f} calls/s; CPU ms per call:")
    print(f"  {'python (this process)':<24} {python / calls * 1000:.3f}")
    for kind, cpu in sorted(per_kind.items()):
        if cpu > 0:
            print(f"  {kind:<24} {cpu / calls * 1000:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "native", *(int(a) for a in sys.argv[2:4]))
