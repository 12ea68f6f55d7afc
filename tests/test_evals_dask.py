"""``engine="dask"`` on a 2-worker LocalCluster (the one the engine starts): runs come from both workers, never
more than 2 browsers at once, a run that fails once passes on its retry, a worker killed mid-run has its run
done again with no duplicate row, no Chromium is left, the sessions brought back replay, and the report is the
local engine's apart from timings."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from eventually import eventually
from scripted_evals import FLIGHTS, HERE, model

import webmcp_nb as wm
from webmcp_nb.evals.job import RUN_MARK, resolve_url
from webmcp_nb.testing import ScriptedServer, by_task, fail

pytest.importorskip("distributed")
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def first_message(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body["messages"] if m.get("role") == "user"), "")


class Faults:
    """The scripted model, plus two faults: the first request of ``[forbidden]`` fails (a 400 the SDK does not
    retry, so the run ends in an endpoint error), and the first request of ``[direct]`` kills the Dask worker
    that runs a ``direct`` task, mid-run."""

    def __init__(self, kill: bool) -> None:
        self.script = by_task(FLIGHTS)
        self.kill = kill
        self.failed = False
        self.killed: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        text = first_message(body)
        with self.lock:
            if "[forbidden]" in text and not self.failed:
                self.failed = True
                return fail(400, "scripted outage", retry_after_ms=None)
            if "[direct]" in text and self.kill and not self.killed:
                self.killed.append(self.kill_a_direct_run())
        return self.script(body)

    def kill_a_direct_run(self) -> int:
        from distributed import default_client

        client = default_client()  # the engine's own client, on its own LocalCluster
        running = client.run(lambda dask_worker: [str(t.key) for t in dask_worker.state.executing])
        worker = next(w for w, keys in running.items() if any("-direct-" in k for k in keys))  # "…-direct-any-…"
        pid = client.run(os.getpid, workers=[worker])[worker]
        os.kill(pid, signal.SIGKILL)
        return int(pid)


def eval_chromiums() -> list[int]:
    """Processes whose command line carries an eval run's mark (one per run's Chromium)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if RUN_MARK.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def most_at_once(runs: list[Any]) -> int:
    """The largest number of run browsers alive at the same moment, from their recorded lifetimes."""
    edges = sorted(
        [(r.timings["browser_started"], 1) for r in runs] + [(r.timings["browser_ended"], -1) for r in runs],
        key=lambda edge: (edge[0], edge[1]),
    )
    alive = peak = 0
    for _, step in edges:
        alive += step
        peak = max(peak, alive)
    return peak


def test_the_dask_engine_on_a_local_cluster(tmp_path: Path, polyfill_browser: wm.Browser):
    suite = wm.evals.load(HERE / "flights.yaml")
    faults = Faults(kill=True)
    with ScriptedServer(faults) as server:
        report = wm.evals.run(
            suite,
            models=[model(server)],
            repeats=2,
            engine="dask",
            concurrency=2,
            retries=2,
            provider_limits={server.base_url: 2},
            output=tmp_path / "dask",
            progress=False,
        )
    assert faults.failed and faults.killed, "the faults did not happen"
    runs = report.runs
    assert len(runs) == 6 and len({r.run_id for r in runs}) == 6  # no duplicate rows
    assert sorted(p.name for p in (tmp_path / "dask" / "runs").iterdir()) == sorted(r.run_id for r in runs)
    assert all(r.status != "error" for r in runs), [r.error for r in runs]
    workers = {r.timings["worker"] for r in runs}
    assert len(workers) >= 2 and all(str(w).startswith("tcp://") for w in workers)  # both workers ran runs
    assert most_at_once(runs) <= 2
    flaky = next(r for r in runs if r.task == "forbidden" and r.timings["attempts"] == 2)
    assert flaky.status == "fail" and flaky.reasons == [
        "forbidden call (call 2): resetFilters()"
    ]  # its verdict, on retry
    rerun = [r for r in runs if r.task == "direct" and r.timings["attempts"] >= 2]
    assert rerun and all(r.status == "pass" for r in rerun)  # the killed worker's run, done again
    assert eventually(lambda: not eval_chromiums(), 20, "every eval Chromium gone")

    for run in (next(r for r in runs if r.task == "direct"), next(r for r in runs if r.task == "state")):
        tab = polyfill_browser.open(resolve_url("demo:flights/"))
        try:
            replay = wm.replay_agent(wm.Session.load(report.session_path(run)), tab, progress=False)
        finally:
            tab.close()
        assert replay.ok, str(replay)

    with ScriptedServer(Faults(kill=False)) as server:
        local = wm.evals.run(
            suite, models=[model(server)], repeats=2, concurrency=2, retries=2, output=tmp_path / "local",
            progress=False,
        )  # fmt: skip
    assert local.to_json(timings=False) == report.to_json(timings=False)
