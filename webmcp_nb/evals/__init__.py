"""Evals: can models use a site's tools? A suite of tasks run across models and repeats, locally or on a Dask
cluster, each run an independent job (a fresh browser, an agent, a recorded session), scored by
webmcp-evals' matching rules plus checks of the page's end state.

    suite = wm.evals.load("evals.json")            # webmcp-evals' files as they are, or a native YAML suite
    report = wm.evals.run(suite, models=["deepseek:deepseek-chat", wm.evals.Model("qwen")], repeats=3)
    report                                          # per model and task: success, pass^k, tokens, latency
    report.compare(wm.evals.EvalReport.load(".evals/<earlier>"))
    wm.evals.run(suite, models=[...], variants={"shipped": {}, "clearer": {"setFilters": {"description": "..."}}})

Every run that fails says why (:mod:`.reasons`); ``variants`` run every task under each set of tool overrides and
the report says which variant wins, or that there is no clear difference. ``scripted:FILE`` is a stand-in model
that needs no key.

Modes: ``browser`` (a live page), ``local`` (tools from a schema file, mocked outputs, no browser) and
``smoke`` (the expected calls with sample arguments, no model). Engines: ``local`` and ``dask``.
docs/evals.md maps webmcp-evals' format to this one and lists every difference in behaviour.

Uses: core, link, browser, recording, agent, demo.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..core._loop import blocking, on_loop
from . import matcher
from .job import DEMO_PREFIX, MODES, RunRecord, RunSpec, run_id
from .report import Comparison, EvalReport, VariantComparison
from .suite import Model, Suite, SuiteError, Task, builtin, load, load_variants, shipped

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..recording.session import Session

__all__ = [
    "load",
    "builtin",
    "arun",
    "run",
    "rescore",
    "Suite",
    "Task",
    "Model",
    "EvalReport",
    "Comparison",
    "VariantComparison",
    "load_variants",
    "shipped",
    "RunRecord",
    "SuiteError",
    "DEMO_PREFIX",
]

Engine = Literal["local", "dask"]
Mode = Literal["browser", "local", "smoke"]
Variants = Mapping[str, Mapping[str, Mapping[str, Any]]]
"""Tool variants: ``{name: {tool: {description?, title?, input_schema?}}}``; ``{}`` is the page's own."""


def _mode(suite: Suite, mode: str | None, start_url: str | None) -> str:
    if mode is not None:
        if mode not in MODES:
            raise SuiteError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        return mode
    has_url = bool(start_url or suite.start_url or all(t.start_url for t in suite.tasks))
    return "browser" if has_url or not suite.tools else "local"


def _variants(given: Variants) -> dict[str, dict[str, dict[str, Any]]]:
    from .suite import variants

    return variants(
        {name: {tool: dict(fields) for tool, fields in (tools or {}).items()} for name, tools in given.items()}
    )


class _NoModels(SuiteError):
    """No model was chosen; ``data`` lets another face say how to choose one (the CLI: ``-m MODEL``)."""

    data: ClassVar[Mapping[str, str]] = {"missing": "models"}


def _models(suite: Suite, models: Sequence[str | Model] | None, mode: str) -> list[Model | None]:
    if mode == "smoke":
        return [None]
    chosen = list(models) if models is not None else list(suite.models)
    if not chosen:
        raise _NoModels("which models? run(suite, models=['deepseek:deepseek-chat', ...]) or models: in the suite")
    return [Model.parse(m) for m in chosen]


def plan(
    suite: Suite,
    *,
    models: Sequence[str | Model] | None = None,
    repeats: int | None = None,
    mode: str | None = None,
    start_url: str | None = None,
    native_webmcp: bool = False,
    evidence: str = "off",
    eval_id: str | None = None,
    variants: Variants | None = None,
) -> list[RunSpec]:
    """The runs an eval is made of: every model, variant, task and repeat, as job specs."""
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise ValueError(f"repeats must be a whole number of runs, 1 or more (or None: the suite's), not {repeats!r}")
    chosen_mode = _mode(suite, mode, start_url)
    chosen_variants: dict[str | None, Mapping[str, Mapping[str, Any]]] = {None: {}}
    if variants is not None:
        if chosen_mode == "smoke":
            raise SuiteError("smoke mode runs no model, so tool variants change nothing there; run with a model")
        chosen_variants = {name: tools for name, tools in _variants(variants).items()}
    eval_id = eval_id or time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    count = repeats or (1 if chosen_mode == "smoke" else suite.repeats)
    tasks = suite.tasks
    if chosen_mode == "smoke" and suite.kind != "webmcp-evals":  # a native task that expects no call: nothing to do
        tasks = tuple(t for t in tasks if matcher.count_expected(t.expected or ()))
        if not tasks:
            raise SuiteError(
                f"{suite.name}: nothing to run in smoke mode, which makes the calls a task expects, and no task "
                "expects one; run it with a model instead"
            )
    specs = [
        RunSpec(
            run_id=run_id(task, model, repeat, variant),
            eval_id=eval_id,
            task=task,
            model=model,
            repeat=repeat,
            mode=chosen_mode,
            start_url=start_url or suite.start_url,
            skills=suite.skills,
            tools=suite.tools,
            max_tool_calls=suite.max_tool_calls,
            **({"turn_timeout": suite.turn_timeout} if suite.turn_timeout else {}),
            allow_high_risk=suite.allow_high_risk,
            native_webmcp=native_webmcp,
            evidence=evidence,
            variant=variant,
            overrides=overrides,
        )
        for model, (variant, overrides), repeat, task in itertools.product(
            _models(suite, models, chosen_mode), chosen_variants.items(), range(1, count + 1), tasks
        )
    ]
    if chosen_mode == "smoke":  # their compiler: the whole file is checked before anything runs
        for task in tasks:
            matcher.smoke_steps(task.name, task.expected)
    return specs


@on_loop
async def arun(
    suite: Suite | str | os.PathLike[str],
    *,
    models: Sequence[str | Model] | None = None,
    repeats: int | None = None,
    mode: Mode | None = None,
    engine: Engine = "local",
    concurrency: int = 2,
    retries: int = 1,
    start_url: str | None = None,
    output: str | os.PathLike[str] | None = None,
    provider_limits: Mapping[str, int] | None = None,
    native_webmcp: bool = False,
    evidence: Literal["off", "non-readonly", "all"] = "off",
    browser: Browser | None = None,
    client: Any = None,
    progress: bool = True,
    variants: Variants | None = None,
) -> EvalReport:
    """Run ``suite`` (a Suite or a path) for each model, ``repeats`` times, and report.

    ``variants``: ``{name: {tool: {description?, title?, input_schema?}}}``; every task runs under each (``{}``:
    the page's own tools), the model is shown the override and the page still runs its own tool, and the report
    compares the variants per model with their intervals (``report.compare_variants()``).

    ``mode``: ``browser``, ``local`` or ``smoke`` (default: ``browser`` when there is a start URL, else
    ``local``). ``engine="local"`` runs ``concurrency`` browsers at once here; ``engine="dask"`` runs each run
    as a task on ``client`` (a ``distributed.Client`` or a scheduler address), the current client, or a
    ``LocalCluster`` of ``concurrency`` workers. Runs that end in a browser or endpoint error are tried
    ``retries`` more times. ``provider_limits`` caps concurrent requests per provider (a preset name, or a
    model's ``base_url``), across the whole cluster with Dask. ``browser``: run in this browser instead
    (local engine, a fresh tab per run, one run at a time). Sessions and the report go to ``output``
    (default ``.evals/<eval id>``). Keys come from the environment of wherever the runs run; with the local
    engine a missing key or an endpoint that cannot be reached fails here, before any run
    (``ConfigurationError``, naming the variable or the address)."""
    chosen = suite if isinstance(suite, Suite) else load(suite)
    specs = plan(
        chosen, models=models, repeats=repeats, mode=mode, start_url=start_url, native_webmcp=native_webmcp,
        evidence=evidence, variants=variants,
    )  # fmt: skip
    if engine == "local":
        await preflight(specs)
    eval_id = specs[0].eval_id
    folder = Path(output) if output is not None else Path(".evals") / eval_id
    folder.mkdir(parents=True, exist_ok=True)
    limits = dict(provider_limits or {})
    started = time.perf_counter()
    if engine == "local":
        from .engines import run_local

        records = await run_local(
            specs, folder, concurrency=concurrency, retries=retries, limits=limits, browser=browser, progress=progress
        )
    elif engine == "dask":
        if browser is not None:
            raise SuiteError("browser= works with engine='local' only: a Dask worker launches its own browsers")
        from .engines import run_dask

        records = await asyncio.to_thread(
            run_dask, specs, folder, client=client, concurrency=concurrency, retries=retries, limits=limits,
            progress=progress,
        )  # fmt: skip
    else:
        raise SuiteError(f"engine must be 'local' or 'dask', not {engine!r}")
    info = {
        "eval_id": eval_id,
        "engine": engine,
        "concurrency": concurrency,
        "retries": retries,
        "wall_ms": (time.perf_counter() - started) * 1000,
        "suite_path": chosen.path,
        **({"variants": {name: dict(tools) for name, tools in _variants(variants).items()}} if variants else {}),
    }
    repeats_done = max((s.repeat for s in specs), default=1)
    report = EvalReport(
        records, suite=chosen.name, mode=specs[0].mode if specs else "browser", repeats=repeats_done,
        directory=folder, info=info,
    )  # fmt: skip
    report.save()
    return report


run = blocking(arun)

REACH_TIMEOUT = 5.0
"""Seconds a model's endpoint has to accept a connection before an eval starts."""


async def preflight(specs: Sequence[RunSpec]) -> None:
    """Before any run: each model's key is set in this process's environment and its endpoint accepts a
    connection; else ``ConfigurationError`` naming the variable (``data["variable"]``) or the address
    (``data["url"]``)."""
    from urllib.parse import urlsplit

    from ..agent.providers import PRESETS
    from ..core.errors import ConfigurationError

    seen: set[str] = set()
    for model in [s.model for s in specs if s.model is not None and s.model.script is None]:
        if model.label in seen:
            continue
        seen.add(model.label)
        variable = model.key_variable
        if variable and not os.environ.get(variable):
            raise ConfigurationError(
                f"no API key for {model.label}: {variable} is not set. Set it in the kernel's environment "
                f"(os.environ[{variable!r}] = '…' in a cell, or in the shell that starts Jupyter), or try the suite "
                "with a scripted model (models=['scripted:FILE']), which needs none. No run was started.",
                data={"variable": variable, "model": model.label},
            )
        url = model.base_url or PRESETS[model.provider].base_url
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), REACH_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            why = f"no answer within {REACH_TIMEOUT:g} s" if isinstance(exc, asyncio.TimeoutError) else str(exc)
            raise ConfigurationError(
                f"the model endpoint of {model.label}, {url}, cannot be reached ({why}). Is it running, and is the "
                "address right? No run was started.",
                data={"url": url, "model": model.label},
            ) from None
        writer.close()


def rescore(session: Session | str | os.PathLike[str], task: Task, *, mode: str = "browser") -> RunRecord:
    """Score a recorded run again against ``task`` (its constraints perhaps edited since), with no browser and no
    key. What the run did (its calls and their results as the matcher saw them, the answer, what the page showed)
    comes from the ``eval.json`` beside the session, so an unchanged task gets the run's own verdict; a run that
    ended in a browser, endpoint or internal error has nothing to score and comes back as it was. A session with
    no ``eval.json`` (``mode`` then says how it ran) is read from its events, which lack what only the eval saw."""
    from ..recording.session import Session as _Session
    from .job import RECORD_FILE, Check, _score

    recorded = session if isinstance(session, _Session) else _Session.load(Path(session))
    beside = recorded.directory / RECORD_FILE
    if beside.is_file():
        record = RunRecord.from_dict(json.loads(beside.read_text(encoding="utf-8")))
        if record.status == "error" and record.error_kind != "setup":
            return record
        seen = [c for c in record.checks if "answer" not in c.check]
    else:
        record, seen = _from_events(recorded, task, mode), []
    record.task, record.status, record.reasons, record.error_kind, record.error = task.name, "pass", [], None, None
    record.trajectory, record.checks = [], []
    for current in task.expect_state:
        found = next((c for c in seen if _same_target(current, c.check)), None)
        key = next(k for k in ("url", "text", "count", "result") if k in current)
        if found is None:
            record.checks.append(Check(dict(current), None, False, "not observed in this run"))
        else:
            ok = found.error is None and matcher.matches(current[key], found.observed)
            record.checks.append(Check(dict(current), found.observed, ok, found.error))
    record.expected_steps = matcher.count_expected(task.expected or ())
    _score(RunSpec(record.run_id, "rescored", task, None, record.repeat, record.mode), record)
    return record


def _from_events(recorded: Session, task: Task, mode: str) -> RunRecord:
    """A run's calls and answer from its session's events alone (a session with no ``eval.json``)."""
    from ..core.display import json_or_text
    from .hosts import unwrap
    from .job import CallRow

    header = recorded.header
    label = f"{header.provider}:{header.model}" if header.provider else "smoke"
    record = RunRecord("rescored", task.name, label, 1, mode)
    calls: dict[str, list[CallRow]] = {}
    for event in recorded.events:
        data = event.data
        if event.kind == "tool.called":
            row = CallRow(str(data.get("tool")), data.get("arguments"))
            record.calls.append(row)
            calls.setdefault(row.tool, []).append(row)
        elif event.kind in ("tool.returned", "tool.failed") and calls.get(str(data.get("tool"))):
            row = calls[str(data.get("tool"))].pop(0)
            if event.kind == "tool.returned":
                row.result = unwrap(json_or_text(data.get("text")))
            else:
                row.result, row.error = {"error": data.get("error")}, data.get("code")
        elif event.kind == "tool.denied":
            record.calls.append(CallRow(str(data.get("tool")), data.get("arguments"), denied=True))
        elif event.kind == "agent.turn.finished":
            record.answer = data.get("answer")
    return record


def _same_target(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("selector", "tool", "arguments") if k in a or k in b) and (
        ("url" in a) == ("url" in b)
    )
