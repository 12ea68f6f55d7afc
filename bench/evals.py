"""Eval runs: the time one run takes and what each engine adds per run, with a scripted model that answers at once
(so no model latency).

A run = a fresh Chromium with the extension (launch), the page opened, one agent turn (two model requests, one
tool call), a page check, the session written, the browser closed. The engine's overhead per run is the eval's
wall time times its concurrency, less the time the runs themselves took, over the number of runs: what
scheduling, retries' bookkeeping, moving records and session folders back, and the report cost. The Dask
numbers are measured on a LocalCluster started before the clock starts (its start-up is reported apart).

    .venv/bin/python bench/evals.py [--runs 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.evals.suite import parse
from webmcp_nb.testing import ScriptedServer, by_task, call, say

SUITE = {
    "format": "webmcp-nb-evals",
    "name": "bench",
    "start_url": "demo:flights/",
    "tasks": [
        {
            "name": "search",
            "prompt": "[bench] Search LON to NYC on 2027-01-15, back 2027-01-22, 2 passengers.",
            "expectedCall": [{"functionName": "searchFlights"}],
            "expect_state": [{"selector": "#flight-list li", "count": {"$gte": 1}}],
        }
    ],
}
SCRIPT = {"[bench]": [call("searchFlights", **DEMO_SEARCH), say("Found them.")]}


def _warm() -> None:
    """On each worker: import the library once, before the clock starts."""
    import webmcp_nb.evals.job  # noqa: F401


def measure(report: wm.evals.EvalReport, wall_ms: float, concurrency: int) -> dict[str, Any]:
    runs = report.runs
    totals = [float(r.timings["total_ms"]) for r in runs]

    def median(key: str) -> float:
        return round(statistics.median(float(r.timings[key]) for r in runs), 1)

    return {
        "runs": len(runs),
        "passed": sum(r.status == "pass" for r in runs),
        "concurrency": concurrency,
        "wall_ms": round(wall_ms, 1),
        "run_ms_median": round(statistics.median(totals), 1),
        "launch_ms_median": median("launch_ms"),
        "open_ms_median": median("open_ms"),
        "model_ms_median": median("model_ms"),
        "tool_ms_median": median("tool_ms"),
        "close_ms_median": median("close_ms"),
        "engine_overhead_ms_per_run": round((wall_ms * concurrency - sum(totals)) / len(runs), 1),
        "throughput_runs_per_min": round(len(runs) / wall_ms * 60_000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="runs per engine (repeats of the one task)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    suite = parse(SUITE)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, ScriptedServer(by_task(SCRIPT)) as server:
        model = wm.Model("any", "scripted", base_url=server.base_url)

        def timed(name: str, concurrency: int, **options: Any) -> None:
            started = time.perf_counter()
            report = wm.evals.run(
                suite, models=[model], repeats=args.runs, concurrency=concurrency, output=Path(folder) / name,
                progress=False, **options,
            )  # fmt: skip
            out[name] = measure(report, (time.perf_counter() - started) * 1000, concurrency)
            print(f"{name}: {json.dumps(out[name])}", flush=True)

        timed("local_1", 1)
        timed("local_2", 2)
        if not args.no_dask:
            from distributed import Client, LocalCluster

            started = time.perf_counter()
            cluster = LocalCluster(
                n_workers=2, threads_per_worker=1, resources={"browser": 1}, processes=True, dashboard_address=None
            )
            client = Client(cluster)
            client.run(_warm)
            out["dask_cluster_start_ms"] = round((time.perf_counter() - started) * 1000, 1)
            try:
                timed("dask_2", 2, engine="dask", client=client)
            finally:
                client.close()
                cluster.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
