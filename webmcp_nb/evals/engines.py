"""Where the runs run. Each run is one independent job (:func:`webmcp_nb.evals.job.arun_job`); an engine only
decides where and how many at once, retries runs that ended in a browser or endpoint error, and brings the
results (and the session folders) back. No scheduler of our own: ``local`` is an asyncio semaphore on the
library's loop, ``dask`` is Dask's.

- ``local``: ``concurrency`` runs at a time in this process, each with its own Chromium.
- ``dask``: each run is a task on a ``distributed`` cluster — the ``client`` given, the current one, or a
  ``LocalCluster`` started here with one single-threaded worker per browser slot. Tasks ask for one ``browser``
  resource (so a worker with ``--resources browser=N`` runs N at a time), are retried by Dask (``retries``),
  are collected as they finish, and are idempotent by run id: a finished run leaves its record in the
  scheduler's metadata, so a task run again (its worker died after finishing) returns that record instead of
  paying for the run twice. Requests to one provider are capped cluster-wide with a ``distributed.Semaphore``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from .job import RunError, RunRecord, RunSpec, arun_job

__all__ = ["run_local", "run_dask", "BROWSER_RESOURCE", "METADATA"]

BROWSER_RESOURCE = "browser"
"""The Dask worker resource a run takes: one browser slot."""
METADATA = "webmcp-nb-evals"
"""The first key of what runs leave in the scheduler's metadata: ``[METADATA, eval id, run id]``."""


def _progress(total: int, show: bool, what: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit="run", disable=not show)


def _tally(bar: Any, records: Sequence[RunRecord]) -> None:
    counts = {s: sum(r.status == s for r in records) for s in ("pass", "fail", "error")}
    bar.set_postfix(counts, refresh=False)
    bar.update(1)


def _fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)  # an earlier attempt's session: a run keeps only its last
    folder.mkdir(parents=True)
    return folder


async def run_local(
    specs: Sequence[RunSpec],
    output: Path,
    *,
    concurrency: int,
    retries: int,
    limits: Mapping[str, int],
    browser: Any = None,
    progress: bool = True,
) -> list[RunRecord]:
    """The runs on the library's loop, ``concurrency`` at a time (one at a time in a ``browser`` you gave)."""
    slots = asyncio.Semaphore(1 if browser is not None else max(1, concurrency))
    caps = {key: asyncio.Semaphore(n) for key, n in limits.items()}
    bar = _progress(len(specs), progress, "eval")
    done: list[RunRecord] = []

    def gate(spec: RunSpec) -> Callable[[], AbstractAsyncContextManager[object]] | None:
        cap = caps.get(spec.model.provider_key) if spec.model else None
        return (lambda: cap) if cap is not None else None

    async def one(spec: RunSpec) -> RunRecord:
        async with slots:
            attempts = 0
            while True:
                attempts += 1
                folder = _fresh(output / "runs" / spec.run_id)
                try:
                    record = await arun_job(spec, folder, browser=browser, gate=gate(spec))
                    break
                except RunError as exc:
                    record = exc.record
                    if attempts > retries:
                        break
            record.timings["attempts"] = attempts
            record.session = f"runs/{spec.run_id}"
            done.append(record)
            _tally(bar, done)
            return record

    try:
        return list(await asyncio.gather(*(one(s) for s in specs)))
    finally:
        bar.close()


# ----- Dask -----


def _pack(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _unpack(files: Mapping[str, bytes], folder: Path) -> None:
    _fresh(folder)
    for name, data in files.items():
        if Path(name).name == name and not name.startswith("."):  # plain names only: nothing outside the folder
            (folder / name).write_bytes(data)


def _cap(limits: Mapping[str, int], spec: RunSpec) -> Callable[[], AbstractAsyncContextManager[object]] | None:
    """A gate around each model request: a lease of the cluster-wide semaphore of the run's provider."""
    if spec.model is None or spec.model.provider_key not in limits:
        return None
    from distributed import Semaphore

    key = spec.model.provider_key
    semaphore = Semaphore(max_leases=limits[key], name=f"{METADATA}-{spec.eval_id}-{key}")

    @contextlib.asynccontextmanager
    async def lease() -> AsyncIterator[None]:
        await asyncio.to_thread(semaphore.acquire)  # the distributed client blocks: not on the library's loop
        try:
            yield
        finally:
            await asyncio.to_thread(semaphore.release)

    return lease


def dask_job(spec: RunSpec, limits: Mapping[str, int]) -> RunRecord:
    """One run as a Dask task (on a worker): returns the record, or raises ``RunError`` for Dask to retry."""
    from distributed import get_client, get_worker

    from ..core import _loop

    client, worker = get_client(), get_worker()
    key = [METADATA, spec.eval_id, spec.run_id]
    finished = client.get_metadata([*key, "record"], None)
    if finished is not None:  # an earlier attempt finished (its worker died before handing it over): no rerun
        record = RunRecord.from_dict(finished)
        record.artifacts = client.get_metadata([*key, "artifacts"], None)
        return record
    attempts = int(client.get_metadata([*key, "attempts"], 0)) + 1
    client.set_metadata([*key, "attempts"], attempts)
    folder = Path(tempfile.mkdtemp(prefix="webmcp-nb-eval-"))
    try:
        try:
            record = _loop.run(arun_job(spec, folder, gate=_cap(limits, spec), worker=worker.address))
        except RunError as exc:
            exc.record.timings["attempts"] = attempts
            exc.record.artifacts = _pack(folder)
            raise
        record.timings["attempts"] = attempts
        record.artifacts = _pack(folder)
        client.set_metadata([*key, "artifacts"], record.artifacts)
        client.set_metadata([*key, "record"], record.to_dict())
        return record
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _client(client: Any, concurrency: int) -> tuple[Any, Any]:
    """The client to use and what to close afterwards: ``client`` (a Client or a scheduler address), the current
    client, or a new LocalCluster with one worker per browser slot."""
    from distributed import Client, LocalCluster

    if isinstance(client, str):
        made = Client(client)
        return made, made
    if client is not None:
        return client, None
    with contextlib.suppress(ValueError):
        from distributed import default_client

        return default_client(), None
    cluster = LocalCluster(
        n_workers=max(1, concurrency),
        threads_per_worker=1,
        resources={BROWSER_RESOURCE: 1},
        processes=True,
        dashboard_address=None,
    )
    return Client(cluster), cluster


def _check_workers(client: Any) -> None:
    try:
        info = client.scheduler_info(n_workers=-1)  # every worker (newer distributed lists a few by default)
    except TypeError:
        info = client.scheduler_info()
    workers = info["workers"].values()
    if not any(w.get("resources", {}).get(BROWSER_RESOURCE) for w in workers):
        raise RuntimeError(
            "no Dask worker offers a 'browser' resource, so no eval run could start. Start workers with "
            "`dask worker SCHEDULER --nthreads 1 --resources browser=1` (one slot per Chromium the machine can run)."
        )


def run_dask(
    specs: Sequence[RunSpec],
    output: Path,
    *,
    client: Any,
    concurrency: int,
    retries: int,
    limits: Mapping[str, int],
    progress: bool = True,
) -> list[RunRecord]:
    """The runs as Dask tasks, collected as they finish (blocking: call it off the library's loop)."""
    from distributed import as_completed

    active, owned = _client(client, concurrency)
    bar = _progress(len(specs), progress, "eval (dask)")
    eval_id = specs[0].eval_id if specs else ""
    records: dict[str, RunRecord] = {}
    try:
        _check_workers(active)
        futures = {
            active.submit(
                dask_job, spec, dict(limits), key=f"{METADATA}-{spec.run_id}-{eval_id}", retries=retries,
                resources={BROWSER_RESOURCE: 1}, pure=False,
            ): spec
            for spec in specs
        }  # fmt: skip
        for future in as_completed(futures):
            spec = futures[future]
            record = future.result() if future.status == "finished" else _failed(spec, future.exception())
            if record.artifacts is not None:
                _unpack(record.artifacts, output / "runs" / spec.run_id)
                record.session = f"runs/{spec.run_id}"
            record.artifacts = None
            records[spec.run_id] = record  # by run id: a task Dask ran twice is one row
            _tally(bar, list(records.values()))
        with contextlib.suppress(Exception):
            active.set_metadata([METADATA, eval_id], {})  # the scheduler need not keep the records any longer
    finally:
        bar.close()
        if owned is not None:
            active.close()
            if owned is not active:
                owned.close()  # the LocalCluster started here
    return [records[s.run_id] for s in specs]


def _failed(spec: RunSpec, exc: BaseException | None) -> RunRecord:
    if isinstance(exc, RunError):
        return exc.record
    record = RunRecord(spec.run_id, spec.task.name, spec.model.label if spec.model else "smoke", spec.repeat, spec.mode)
    record.status, record.error_kind = "error", "worker"
    record.error = f"{type(exc).__name__}: {exc}"[:2000]
    record.timings = {"worker": None, "pid": os.getpid()}
    return record
