"""One eval run as an independent job: a fresh browser (or no browser, in local mode), an agent, a recorded
session, a verdict. ``RunSpec`` says what to run and ``RunRecord`` what came of it; both are plain data, so the
same job runs on the library's loop (``engine="local"``) or as a Dask task on any worker.

A run ends in one of three ways: ``pass``, ``fail`` (the model did not do the task: wrong calls, a forbidden
call, a wrong answer, a page in the wrong state) or ``error`` (the browser or the model endpoint failed: the
engines retry these, and reports count them apart from failures). API keys are read here, from the
environment of the process that runs the job; no key is ever part of a spec, a record or a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import MISSING, asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..browser.skills import Skill, builtin_skills_path
from ..core.agent_rules import result_text
from ..core.errors import ModelError, NotConnectedError, PermissionDeniedError, WebMCPError
from . import matcher, reasons
from .hosts import PROBE, EvalTab, MockTab, Record, as_browser, as_tab, unwrap
from .suite import NO_ANSWER_CHECK, Model, Task

if TYPE_CHECKING:
    from ..agent.agent import ConfirmationRequest
    from ..browser.browser import Browser
    from ..demo.server import DemoServer
    from ..recording.session import Session

__all__ = ["RunSpec", "RunRecord", "RunError", "CallRow", "Check", "arun_job", "run_id", "DEMO_PREFIX", "MODES"]

MODES = ("local", "browser", "smoke")
DEMO_PREFIX = "demo:"
"""A start URL on the bundled demo pages, served by the process that runs the job (wherever that is)."""
RECORD_FILE = "eval.json"
"""The run's record, written next to its session.jsonl."""
REPORT_FILE = "report.html"
"""The run's session report (with the eval's verdict at its top), written next to its session.jsonl."""
RETRIED = ("browser", "endpoint")
"""The error kinds engines retry: another attempt may go better (a setup or internal error would end the same)."""
RUN_MARK = "--webmcp-nb-eval-run="
"""Added to each run's Chromium command line, so its processes can be found (and counted) from outside."""

T = TypeVar("T")


@dataclass(frozen=True)
class RunSpec:
    """What one run does. Plain data: it travels to a Dask worker as it is, with no key in it."""

    run_id: str
    eval_id: str
    task: Task
    model: Model | None
    """``None`` in smoke mode (no model)."""
    repeat: int
    mode: str
    start_url: str | None = None
    skills: tuple[str, ...] = ()
    tools: tuple[Mapping[str, Any], ...] = ()
    max_tool_calls: int | None = None
    allow_high_risk: bool | tuple[str, ...] = False
    native_webmcp: bool = False
    evidence: str = "off"
    tool_timeout: float = 10.0
    turn_timeout: float = 60.0
    variant: str | None = None
    """The name of the tool variant this run uses (``None``: the eval has no variants)."""
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The variant: tool name → ``{description, title, input_schema}`` shown to the model instead of the page's."""


@dataclass
class CallRow:
    """One tool call of a run."""

    tool: str
    arguments: Any
    result: Any = None
    error: str | None = None
    invalid: bool = False
    """An unknown tool, or arguments that do not fit the tool's schema."""
    unknown: bool = False
    """The model named a tool that does not exist (left out of the trajectory, as webmcp-evals does)."""
    denied: bool = False
    """The unattended policy refused it (a high-risk tool the suite does not allow)."""
    duration_ms: float = 0.0


@dataclass
class Check:
    """One ``expect_state`` check (or the answer check): what was observed and whether it satisfied the constraint."""

    check: dict[str, Any]
    observed: Any = None
    passed: bool = False
    error: str | None = None


@dataclass
class RunRecord:
    """What came of one run; ``to_dict`` is a row of the report's JSON."""

    run_id: str
    task: str
    model: str
    repeat: int
    mode: str
    status: str = "error"
    """``pass``, ``fail`` or ``error``."""
    reasons: list[str] = field(default_factory=list)
    """Why it failed, in words (:mod:`webmcp_nb.evals.reasons`); empty when it passed or ended in an error."""
    unmet: dict[str, Any] | None = None
    """The first expected call not met, for the report's side-by-side view: ``{call, expected, got, rows}``."""
    error_kind: str | None = None
    """For errors: ``browser``, ``endpoint``, ``setup`` (the suite itself is wrong), ``internal`` (anything else),
    or ``worker`` (Dask gave up on the task: its workers kept dying)."""
    error: str | None = None
    answer: str | None = None
    stopped: str | None = None
    calls: list[CallRow] = field(default_factory=list)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    """The matcher's rows: ``{expected, call, outcome}`` (``call`` indexes ``calls``)."""
    expected_steps: int = 0
    checks: list[Check] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    session: str | None = None
    """The run's session folder, relative to the eval's output folder."""
    variant: str | None = None
    """The tool variant it ran under (``None``: the eval has no variants)."""
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The variant's changes as the run saw them: tool → field → ``{"page": the page's own, "variant": ...}``."""
    notes: list[str] = field(default_factory=list)
    """What the run could not do as asked without failing for it (an override for a tool the page never listed)."""
    timings: dict[str, Any] = field(default_factory=dict)
    """``total_ms``, ``model_ms``, ``tool_ms``; where and how it ran: ``worker``, ``pid``, ``attempts``, the
    wall-clock ``started``/``ended`` of the run and of its browser, ``chromium_pid``; ``launch_ms``,
    ``open_ms`` and ``close_ms`` of its browser and page."""
    artifacts: dict[str, bytes] | None = field(default=None, repr=False)
    """The session folder's files, when the job ran where the driver cannot read its disk (Dask)."""

    @property
    def steps(self) -> int:
        return len(self.calls)

    @property
    def why(self) -> list[str]:
        """Why it did not pass, in words: the failure's reasons, or the error with its kind."""
        if self.status == "error":
            kind = self.error_kind or "internal"
            return [f"{kind} error: {self.error or '(no message)'}"]
        return list(self.reasons)

    @property
    def config(self) -> str:
        """What reports group it by: the model, and the variant when the eval has variants."""
        return self.model if self.variant is None else f"{self.model} [{self.variant}]"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("artifacts")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        """A row as :meth:`to_dict` wrote it (a report's ``runs``, an ``eval.json``). Keys this version does not
        know are left out; a row that is not one raises ``ValueError`` saying what is wrong with it."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a run must be a JSON object, not {type(data).__name__}")
        values = _known(cls, data)
        which = f"run {str(data.get('run_id', '?'))[:80]!r}"
        required = [f.name for f in dataclass_fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [name for name in required if name not in values]
        if missing:
            raise ValueError(f"{which} lacks {', '.join(missing)}")
        try:
            values["calls"] = [_from_json(CallRow, c) for c in values.get("calls") or []]
            values["checks"] = [_from_json(Check, c) for c in values.get("checks") or []]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{which}: {exc}") from None
        return cls(**values)


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the keys dataclass ``cls`` does not have (a newer version's)."""
    names = {f.name for f in dataclass_fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _from_json(cls: type[T], data: Any) -> T:
    """A ``CallRow`` or ``Check`` from its JSON object (keys this version does not know left out)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a {cls.__name__} must be a JSON object, not {type(data).__name__}")
    return cls(**_known(cls, data))


class RunError(Exception):
    """A run that ended in an error (browser or endpoint); ``record`` holds what it got to. Engines retry it."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__(f"{record.run_id}: {record.error_kind} error: {record.error}")
        self.record = record

    def __reduce__(self) -> tuple[Any, ...]:
        return (RunError, (self.record,))


def run_id(task: Task, model: Model | None, repeat: int, variant: str | None = None) -> str:
    """A stable id: the same task, model, repeat (and variant) always get the same one, in every eval and engine
    (the session folder's name; with the eval's id, the Dask task's key)."""
    label = model.label if model else "smoke"
    key = [task.name, label, repeat] + ([variant] if variant is not None else [])
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:8]
    named = f"{task.name[:24]}-{label[:24]}" + (f"-{variant[:16]}" if variant is not None else "")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", named).strip("-").lower()
    return f"{slug}-r{repeat}-{digest}"


# ----- where things are -----

_demo_lock = threading.Lock()
_demo: DemoServer | None = None


def _demo_url(path: str) -> str:
    """``path`` on this process's server of the bundled demo pages (started on first use)."""
    global _demo
    from ..demo.server import DemoServer

    with _demo_lock:
        if _demo is None:
            _demo = DemoServer()
        return _demo.url(path)


def resolve_url(url: str | None) -> str:
    if not url:
        raise ValueError("no start_url: give one in the suite, the task or run(start_url=...)")
    return _demo_url(url[len(DEMO_PREFIX) :]) if url.startswith(DEMO_PREFIX) else url


def shown_url(url: str) -> str:
    """``url`` as checks see it: a page of this process's demo server as ``demo:path`` (the port differs from
    one process to the next; the path does not)."""
    if _demo is not None and url.startswith(_demo.base):
        return DEMO_PREFIX + url[len(_demo.base) :]
    return url


def _skill(ref: str) -> Skill:
    path = Path(ref)
    if path.is_dir():
        return Skill.load(path)
    if (builtin_skills_path() / ref).is_dir():
        return Skill.builtin(ref)
    raise ValueError(f"skill {ref!r}: neither a folder nor a built-in skill")


# ----- the conversation a case starts from -----


def conversation(messages: tuple[Mapping[str, Any], ...]) -> tuple[list[dict[str, Any]], str | None]:
    """webmcp-evals messages as the agent's history, and the turn's task: the last user message, or ``None``
    when the case starts mid-conversation (the model's turn after a tool's response)."""
    history: list[dict[str, Any]] = []
    task: str | None = None
    items = list(messages)
    if items and items[-1].get("type", "message") == "message" and items[-1].get("role") == "user":
        task = str(items.pop()["content"])
    open_calls: list[tuple[str, str]] = []
    for i, message in enumerate(items):
        kind = message.get("type", "message")
        if kind == "functioncall":
            call_id = f"call_{i}"
            arguments = json.dumps(message.get("arguments") or {}, ensure_ascii=False)
            history.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": message["name"], "arguments": arguments},
                        }
                    ],
                }
            )
            open_calls.append((call_id, str(message["name"])))
        elif kind == "functionresponse":
            response = message.get("response")
            found = response.get("result") if isinstance(response, dict) else None
            value = response if found is None else found  # theirs: response?.result ?? response
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            match = next((c for c in open_calls if c[1] == message["name"]), open_calls[0] if open_calls else None)
            if match is None:
                history.append({"role": "user", "content": result_text(str(message["name"]), "ok", text)})
                continue
            open_calls.remove(match)
            history.append({"role": "tool", "tool_call_id": match[0], "content": result_text(match[1], "ok", text)})
        else:
            role = "assistant" if message.get("role") == "model" else "user"
            history.append({"role": role, "content": str(message.get("content", ""))})
    for call_id, name in open_calls:  # a call the case gives no response for: strict endpoints need one
        history.append({"role": "tool", "tool_call_id": call_id, "content": result_text(name, "ok", "")})
    return history, task


# ----- unattended confirmations -----


def policy(allowed: bool | tuple[str, ...]) -> Callable[[ConfirmationRequest], bool]:
    """The unattended answer: approve (and say so in the record), except high-risk tools the suite or task does
    not allow."""

    def answer(request: ConfirmationRequest) -> bool:
        ok = request.risk != "high" or allowed is True or (isinstance(allowed, tuple) and request.tool in allowed)
        request.answered_by = "eval policy"
        return ok

    return answer


# ----- the job -----


Gate = Callable[[], AbstractAsyncContextManager[object]]


async def arun_job(
    spec: RunSpec,
    session_dir: Path,
    *,
    browser: Browser | None = None,
    gate: Gate | None = None,
    worker: str = "local",
) -> RunRecord:
    """Run ``spec`` once. Raises :class:`RunError` (carrying the record) when the browser or the endpoint failed:
    those may go better next time; returns the record otherwise, a setup or internal error included (a retry would
    end the same). ``browser``: use this one (a fresh tab) instead of launching one."""
    record = RunRecord(spec.run_id, spec.task.name, spec.model.label if spec.model else "smoke", spec.repeat, spec.mode)
    record.variant = spec.variant
    record.expected_steps = matcher.count_expected(spec.task.expected or ())
    record.timings = {"worker": worker, "pid": os.getpid(), "started": time.time()}
    started = time.perf_counter()
    try:
        if spec.mode == "local":
            await _local(spec, record, session_dir, gate)
        else:
            await _in_browser(spec, record, session_dir, browser, gate)
    except ModelError as exc:
        _errored(record, "endpoint", exc)
    except PermissionDeniedError as exc:  # the site is not granted (or skills are off): another try ends the same
        _errored(record, "setup", exc)
    except (NotConnectedError, OSError, asyncio.TimeoutError) as exc:
        _errored(record, "browser", exc)
    except (ValueError, KeyError) as exc:
        _errored(record, "setup", exc)
    except WebMCPError as exc:
        _errored(record, "browser", exc)
    except Exception as exc:  # a bug of ours, or a surprise: one run's error row, not the whole eval's end
        _errored(record, "internal", exc)
    record.timings["total_ms"] = (time.perf_counter() - started) * 1000
    record.timings["ended"] = time.time()
    with contextlib.suppress(OSError):  # next to the session: what the eval made of it (rescore reads it)
        (session_dir / RECORD_FILE).write_text(json.dumps(record.to_dict(), default=str), encoding="utf-8")
    _verdict(spec, record, session_dir)
    if record.status == "error" and record.error_kind in RETRIED:
        raise RunError(record)
    return record


def _verdict(spec: RunSpec, record: RunRecord, session_dir: Path) -> None:
    """The run's verdict at the end of its session (``verdict.pass|fail|error``), and the session's HTML report
    beside it (``report.html``), which then opens with that verdict and its reasons."""
    from ..recording.session import Session

    if not (session_dir / "session.jsonl").is_file():
        return  # it ended before its session began (the browser did not start): eval.json says why
    try:
        session = Session.load(session_dir)
        session.add_secret(api_key(spec.model))
        session.append(
            f"verdict.{record.status}", by="eval", reasons=record.why, task=record.task, model=record.model,
            variant=record.variant, run_id=record.run_id,
        )  # fmt: skip
        session.report(session_dir / REPORT_FILE)
    except (OSError, ValueError) as exc:
        record.notes.append(f"the session's report could not be written: {exc}")


def api_key(model: Model | None) -> str | None:
    """The key this process would send for ``model`` (from its environment), or ``None``."""
    variable = model.key_variable if model is not None else None
    return os.environ.get(variable) if variable else None


def _errored(record: RunRecord, kind: str, exc: BaseException) -> None:
    record.status, record.error_kind = "error", kind
    record.error = f"{type(exc).__name__}: {exc}"[:2000]


async def _local(spec: RunSpec, record: RunRecord, session_dir: Path, gate: Gate | None) -> None:
    from ..recording.session import Session

    if not spec.tools:
        raise ValueError("local mode needs the tools: a schema.json (tools=...) or the suite's tools key")
    host = MockTab(spec.tools, spec.task.expected)
    session = Session(as_browser(host.browser), directory=session_dir, evidence="off", **_header(spec))
    try:
        _override(spec, host)
        await _agent_turn(spec, record, as_tab(host), host.records, session, gate, mock=True)
        _overridden(spec, record, host.tools)
    finally:
        session.close()
    _score(spec, record)


async def _in_browser(
    spec: RunSpec, record: RunRecord, session_dir: Path, browser: Browser | None, gate: Gate | None
) -> None:
    from ..browser.launch import alaunch
    from ..recording.session import Session

    url = resolve_url(spec.task.start_url or spec.start_url)
    own = browser is None
    if browser is None:
        record.timings["browser_started"] = time.time()
        began = time.perf_counter()
        browser = await alaunch(native_webmcp=spec.native_webmcp, args=[f"{RUN_MARK}{spec.run_id}"])
        record.timings["launch_ms"] = (time.perf_counter() - began) * 1000
        process = browser.process
        record.timings["chromium_pid"] = process.process.pid if process is not None else None
    tab = None
    session: Session | None = None
    try:
        began = time.perf_counter()
        tab = await browser.aopen(url)
        record.timings["open_ms"] = (time.perf_counter() - began) * 1000
        for ref in spec.skills:
            await tab.ainject(_skill(ref))
        session = Session(browser, directory=session_dir, evidence=spec.evidence, **_header(spec))  # type: ignore[arg-type]
        _override(spec, tab.tools)  # after the session began: the overrides are part of what it records
        view = EvalTab(tab)
        if spec.mode == "smoke":
            await _smoke(spec, record, view)
        else:
            await _agent_turn(spec, record, as_tab(view), view.records, session, gate, mock=False)
        view.cancel_pending()
        _overridden(spec, record, view.tools)
        session.close()  # the agent's run only: the checks below are the eval's, kept in eval.json
        await _state(spec, record, view)
        _score(spec, record)
    finally:
        if session is not None:
            session.close()
        if own:
            began = time.perf_counter()
            await browser.aclose()
            record.timings["close_ms"] = (time.perf_counter() - began) * 1000
            record.timings["browser_ended"] = time.time()
        else:  # a browser of the caller's: leave it as it was
            with contextlib.suppress(WebMCPError, KeyError):
                if tab is not None and not tab.closed:
                    await tab.aclose()
                if PROBE in browser.skills:
                    await browser.skills.auninstall(PROBE)


def _override(spec: RunSpec, tools: Any) -> None:
    """The variant's overrides on the run's tools (page tools, or local mode's): what the model is shown."""
    for name, fields in spec.overrides.items():
        tools.override(name, **fields, missing_ok=True)


def _overridden(spec: RunSpec, record: RunRecord, tools: Mapping[str, Any]) -> None:
    """What the variant changed, the page's own text beside it (the report shows the difference)."""
    for name, fields in spec.overrides.items():
        tool = tools.get(name)
        if tool is None:
            record.notes.append(f"the variant overrides {name}, a tool the page did not list at the end of the run")
            continue
        record.overrides[name] = {
            key: {"page": getattr(tool.info, key), "variant": value} for key, value in fields.items()
        }


@contextlib.contextmanager
def _endpoint(model: Model) -> Iterator[tuple[str | None, str | None]]:
    """Where the run's model answers, and a key of its own: a scripted model is served here for this run alone
    (on 127.0.0.1, in whichever process runs the job); any other is the model's own endpoint."""
    if model.script is None:
        yield model.base_url, None
        return
    from ..testing import ScriptedServer, script_from

    with ScriptedServer(script_from(json.loads(model.script), model.label)) as server:
        yield server.base_url, "scripted"


def _header(spec: RunSpec) -> dict[str, Any]:
    """What the run's session header says: which task, model and repeat it records."""
    model = spec.model
    return {
        "title": f"eval {spec.task.name} · {model.label if model else 'smoke'} · repeat {spec.repeat}",
        "model": model.label.partition(":")[2] if model else None,
        "provider": model.label.partition(":")[0] if model else None,
        "eval_run": spec.run_id,
        **({"variant": spec.variant} if spec.variant is not None else {}),
    }


async def _agent_turn(
    spec: RunSpec,
    record: RunRecord,
    tab: Any,
    records: list[Record],
    session: Session,
    gate: Gate | None,
    *,
    mock: bool,
) -> None:
    from ..agent.agent import Agent

    model = spec.model
    if model is None:
        raise ValueError(f"{spec.mode} mode needs a model")
    key = os.environ.get(model.api_key_env) if model.api_key_env else None
    if model.api_key_env and not key:
        raise ModelError(f"no API key: {model.api_key_env} is not set where this run runs")
    allowed = spec.task.allow_high_risk if spec.task.allow_high_risk is not None else spec.allow_high_risk
    limits: dict[str, Any] = {"max_tool_calls": spec.max_tool_calls} if spec.max_tool_calls else {}
    with _endpoint(model) as (base_url, scripted_key):
        agent = Agent(
            tab,
            provider=model.provider,
            model=model.model,
            base_url=base_url,
            api_key=scripted_key or key,
            prompt_mode=model.prompt_mode,
            confirm="medium",
            on_confirm=policy(allowed),
            tool_timeout=spec.tool_timeout,
            turn_timeout=spec.turn_timeout,
            session=session,
            evidence="off" if mock else spec.evidence,  # type: ignore[arg-type]
            request_gate=gate,
            **limits,
        )
        history, task = conversation(spec.task.messages)
        agent.messages = history
        result = await agent.arun(task)
    record.answer, record.stopped = result.answer, result.stopped
    if result.usage is not None:
        record.prompt_tokens, record.completion_tokens = result.usage.prompt_tokens, result.usage.completion_tokens
    record.cost = model.cost(record.prompt_tokens, record.completion_tokens)
    pending = list(records)
    for step in result.steps:
        row = CallRow(step.tool, step.arguments, duration_ms=step.duration_ms, denied=step.confirmed is False)
        reached = step.risk is not None and step.confirmed is not False and not isinstance(step.arguments, str)
        if reached and pending and pending[0].tool == step.tool:
            done = pending.pop(0)
            row.result, row.error, row.invalid = done.result, done.error, done.invalid
        else:
            row.unknown = step.risk is None
            row.invalid = row.unknown or isinstance(step.arguments, str)
            row.error = step.error
        record.calls.append(row)
    model_ms = sum(e.duration_ms or 0.0 for e in session.events if e.kind == "model.response")
    record.timings["model_ms"] = model_ms
    record.timings["tool_ms"] = sum(c.duration_ms for c in record.calls)


async def _smoke(spec: RunSpec, record: RunRecord, view: EvalTab) -> None:
    """The expected calls with sample arguments, in authored order, stopping at the first that fails."""
    steps = matcher.smoke_steps(spec.task.name, spec.task.expected)
    started = time.perf_counter()
    for tool, arguments in steps:
        row = CallRow(tool, arguments)
        record.calls.append(row)
        try:
            await view.await_for_tool(tool, timeout=5.0)
            call_started = time.perf_counter()
            result = await view.acall(tool, arguments, timeout=spec.tool_timeout)
            row.duration_ms = (time.perf_counter() - call_started) * 1000
            row.result = view.records[-1].result
        except WebMCPError as exc:
            row.error = f"{exc.code.value}: {exc.message}"
            break
        failure = matcher.tool_failure(row.result if row.result is not None else result.value)
        if failure:
            row.error = failure
            break
    record.timings["model_ms"] = 0.0
    record.timings["tool_ms"] = (time.perf_counter() - started) * 1000


async def _state(spec: RunSpec, record: RunRecord, view: EvalTab) -> None:
    """The task's ``expect_state`` checks, on the page as the run left it."""
    for check in spec.task.expect_state:
        result = Check(dict(check))
        try:
            if "url" in check:
                result.observed = shown_url(view.url)
                result.passed = matcher.matches(check["url"], result.observed)
            elif "selector" in check:
                found = await view.probe(str(check["selector"]))
                key = "text" if "text" in check else "count"
                result.observed = found.get(key)
                result.passed = matcher.matches(check[key], result.observed)
            else:
                tool = view._tab.tools.get(str(check["tool"]))
                if tool is None or not tool.read_only:
                    why = "no such tool" if tool is None else "not read-only (state checks never change the page)"
                    raise ValueError(f"{check['tool']}: {why}")
                value = (await view._tab.acall(tool.name, dict(check.get("arguments") or {}))).value
                result.observed = unwrap(value)
                result.passed = matcher.matches(check["result"], result.observed)
        except (WebMCPError, ValueError, matcher.ConstraintError) as exc:
            result.error = str(exc)
        record.checks.append(result)


def _row(row: matcher.Row, calls: list[matcher.Call], known: list[int]) -> dict[str, Any]:
    """A trajectory row for the report, with what tool-call accuracy counts: the right tool, and the right
    tool with matching arguments."""
    expected, actual = row.expected, calls[row.actual] if row.actual is not None else None
    tool_ok = expected is not None and actual is not None and expected.get("functionName") == actual.tool
    arguments = expected.get("arguments") if expected is not None else None
    try:
        arguments_ok = tool_ok and (
            arguments is None or matcher.matches(arguments, actual.arguments if actual else None)
        )
    except matcher.ConstraintError:
        arguments_ok = False
    return {
        "expected": dict(expected) if expected is not None else None,
        "call": known[row.actual] if row.actual is not None else None,
        "outcome": row.outcome,
        "tool_ok": tool_ok,
        "arguments_ok": arguments_ok,
    }


def _score(spec: RunSpec, record: RunRecord) -> None:
    """The verdict: the trajectory matches, no forbidden call, the answer and every state check pass; each failure
    with its reason in words (:mod:`webmcp_nb.evals.reasons`)."""
    task = spec.task
    record.reasons, record.unmet = [], None
    if spec.mode == "smoke":
        record.trajectory = [
            {"expected": None, "call": i, "outcome": "fail" if call.error else "pass"}
            for i, call in enumerate(record.calls)
        ]
        record.reasons += [
            f"smoke call {i} failed: {call.tool}: {call.error}" for i, call in enumerate(record.calls, 1) if call.error
        ]
    else:
        known = [i for i, c in enumerate(record.calls) if not c.unknown]  # as their local mode: not in the trajectory
        calls = [matcher.Call(record.calls[i].tool, record.calls[i].arguments, record.calls[i].result) for i in known]
        try:
            rows = matcher.trajectory(task.expected, calls)
            found, record.unmet = reasons.trajectory(task.expected, rows, calls, [i + 1 for i in known])
        except matcher.ConstraintError as exc:
            record.status, record.error_kind, record.error = "error", "setup", str(exc)
            return
        record.trajectory = [_row(r, calls, known) for r in rows]
        record.reasons += found
        record.reasons += reasons.forbidden(record.calls, task.forbid_calls)
        if task.expect_answer is not NO_ANSWER_CHECK:
            answer = Check({"answer": task.expect_answer}, record.answer)
            try:
                answer.passed = matcher.matches(task.expect_answer, record.answer)
            except matcher.ConstraintError as exc:
                answer.error = str(exc)
            record.checks.insert(0, answer)
            if not answer.passed:
                record.reasons.append(reasons.answer(task.expect_answer, record.answer, answer.error))
    for check in record.checks:
        if not check.passed and "answer" not in check.check:
            record.reasons.append(reasons.state(check.check, check.observed, check.error))
    stop = reasons.stopped(record.stopped, spec.max_tool_calls, spec.turn_timeout)
    if record.reasons and stop:
        record.reasons.insert(0, stop)  # what cut the run short comes first: the rest follows from it
    record.status = "pass" if not record.reasons else "fail"
