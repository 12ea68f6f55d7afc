"""Eval suites on disk: webmcp-evals' files as they are, and the native format that extends them.

webmcp-evals: a JSON array of cases ``{name?, messages[], expectedCall}`` (and, for their ``local`` mode, a
``schema.json`` ``{"tools": [{name, description, inputSchema}]}``).

Native (YAML or JSON)::

    format: webmcp-nb-evals
    version: 1
    name: flights                    # optional; the file's name otherwise
    start_url: demo:flights/          # demo: the bundled demo pages, served wherever the run happens
    repeats: 3
    models: ["deepseek:deepseek-chat"]
    skills: [shop]                    # built-in skill names, or folders relative to this file
    max_tool_calls: 8
    turn_timeout: 60                  # seconds for the agent's turn (its time limit)
    allow_high_risk: false            # or a list of tool names the unattended policy may approve
    tools: schema.json                # local mode only: the tools, as webmcp-evals' schema.json
    tasks:
      - name: direct flights
        prompt: Find direct flights from LON to NYC ...   # or messages: [...] as in webmcp-evals
        expectedCall: [...]
        forbid_calls: [resetFilters]
        expect_answer: {$contains: "4"}
        expect_state:
          - {url: {$contains: "origin=LON"}}
          - {selector: "#flight-list li", count: {$gte: 1}}
          - {selector: "#result-count", text: {$contains: "Showing"}}
          - {tool: listFlights, arguments: {}, result: {$type: array}}

Everything here is plain data (picklable), so a task travels to a Dask worker as it is.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from ..agent.providers import PRESETS
from . import matcher

__all__ = [
    "SuiteError",
    "Task",
    "Suite",
    "Model",
    "load",
    "builtin",
    "shipped",
    "variants",
    "load_variants",
    "FORMAT",
    "FORMAT_VERSION",
    "NO_ANSWER_CHECK",
    "SCRIPTED",
]

FORMAT = "webmcp-nb-evals"
FORMAT_VERSION = 1


class _NoCheck:
    """The one value meaning "no check"; it stays the same object when a task is pickled to a worker."""

    def __reduce__(self) -> str:
        return "NO_ANSWER_CHECK"

    def __repr__(self) -> str:
        return "NO_ANSWER_CHECK"


NO_ANSWER_CHECK = _NoCheck()
"""``Task.expect_answer`` when the task says nothing about the answer."""

SUITES = Path(__file__).parent / "suites"
SCRIPTED = "scripted"
"""``scripted:FILE`` (or ``scripted:NAME`` of a shipped one) names a scripted stand-in model: no key, no network."""
MODEL_SUFFIX = ".model.yaml"
"""A shipped scripted model is ``suites/<name>.model.yaml``."""

_SUITE_KEYS = {
    "format", "version", "name", "start_url", "repeats", "models", "skills", "max_tool_calls", "turn_timeout",
    "allow_high_risk",
    "tools", "tasks",
}  # fmt: skip
_TASK_KEYS = {
    "name", "messages", "prompt", "expectedCall", "start_url", "forbid_calls", "expect_answer", "expect_state",
    "allow_high_risk",
}  # fmt: skip
_STATE_KINDS = (
    {"url"},
    {"selector", "text"},
    {"selector", "count"},
    {"tool", "result"},
    {"tool", "arguments", "result"},
)


class SuiteError(ValueError):
    """A suite file that is not what it should be; the message names the file and the place."""


@dataclass(frozen=True)
class Task:
    """One case: webmcp-evals' fields plus the native ones."""

    name: str
    messages: tuple[Mapping[str, Any], ...]
    expected: tuple[Mapping[str, Any], ...] | None
    """``expectedCall``: ``None`` means the model must call no tool (an empty list too)."""
    start_url: str | None = None
    forbid_calls: tuple[str, ...] = ()
    expect_answer: Any = NO_ANSWER_CHECK
    expect_state: tuple[Mapping[str, Any], ...] = ()
    allow_high_risk: bool | tuple[str, ...] | None = None
    """``None``: the suite's setting."""

    @property
    def prompt(self) -> str:
        """The last user message (what the run asks), for display."""
        for message in reversed(self.messages):
            if message.get("type", "message") == "message" and message.get("role") == "user":
                return str(message.get("content", ""))
        return ""


@dataclass(frozen=True)
class Suite:
    """A set of tasks and how to run them."""

    name: str
    tasks: tuple[Task, ...]
    kind: str = FORMAT
    """``webmcp-nb-evals`` (native) or ``webmcp-evals`` (their array of cases)."""
    start_url: str | None = None
    repeats: int = 1
    models: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    """Built-in skill names or absolute folders."""
    max_tool_calls: int | None = None
    turn_timeout: float | None = None
    """Seconds for each run's agent turn (``None``: the agent's 60)."""
    allow_high_risk: bool | tuple[str, ...] = False
    tools: tuple[Mapping[str, Any], ...] = ()
    """For local mode: ``{name, description, inputSchema}`` each, as in webmcp-evals' schema.json."""
    path: str | None = None

    def __len__(self) -> int:
        return len(self.tasks)

    def task(self, name: str) -> Task:
        """The task called ``name``."""
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(name)

    def with_tools(self, path: str | os.PathLike[str]) -> Suite:
        """This suite with the tools of a webmcp-evals ``schema.json`` (for local mode)."""
        return replace(self, tools=load_tools(path))

    def __repr__(self) -> str:
        return f"<Suite {self.name!r}: {len(self.tasks)} tasks ({self.kind})>"


@dataclass(frozen=True)
class Model:
    """A model to evaluate: a provider preset (or ``any`` with ``base_url``) and a model name. The API key is
    read from the environment where the run happens (the preset's variable, or ``api_key_env``): it is never
    part of a job, a report or a session. ``price_input``/``price_output`` are USD per million tokens."""

    provider: str = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    prompt_mode: bool | None = None
    price_input: float | None = None
    price_output: float | None = None
    script: str | None = None
    """A scripted stand-in model (``scripted:FILE``): the file's data as JSON text. Each run serves it on
    127.0.0.1 (``webmcp_nb.testing.ScriptedServer``): no key, no network."""

    @classmethod
    def parse(cls, spec: str | Model) -> Model:
        """``"deepseek:deepseek-chat"``, ``"deepseek"`` (its default model), ``"any:name@http://host/v1"``, or
        ``"scripted:FILE"`` (a scripted model's file, or the name of a shipped one: ``scripted:flights``)."""
        if isinstance(spec, Model):
            return spec
        if spec.startswith(SCRIPTED + ":"):
            return cls.scripted(spec[len(SCRIPTED) + 1 :])
        base_url = None
        if "@" in spec:
            spec, base_url = spec.split("@", 1)
        provider, _, model = spec.partition(":")
        if provider not in PRESETS:
            raise SuiteError(f"model {spec!r}: unknown provider {provider!r}; presets: {', '.join(PRESETS)}")
        return cls(provider, model or None, base_url)

    @classmethod
    def scripted(cls, ref: str) -> Model:
        """A scripted model from its file (YAML or JSON; the format: ``webmcp_nb.testing.script_from``), or the
        name of one shipped with the suites (``flights``, ``shop``)."""
        from ..testing import script_from

        path = Path(ref)
        if not path.is_file() and (SUITES / f"{ref}{MODEL_SUFFIX}").is_file():
            path = SUITES / f"{ref}{MODEL_SUFFIX}"
        if not path.is_file():
            shipped_ones = ", ".join(p.name[: -len(MODEL_SUFFIX)] for p in sorted(SUITES.glob(f"*{MODEL_SUFFIX}")))
            raise SuiteError(
                f"model scripted:{ref}: no such file, and no shipped scripted model of that name (shipped: "
                f"{shipped_ones})"
            )
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise SuiteError(f"{path}: not valid YAML/JSON: {exc}") from None
        try:
            script_from(data, str(path))  # checked now, before any run
        except ValueError as exc:
            raise SuiteError(str(exc)) from None
        name = path.name[: -len(MODEL_SUFFIX)] if path.name.endswith(MODEL_SUFFIX) else path.stem
        return cls("any", name, script=json.dumps(data))

    @property
    def label(self) -> str:
        """How reports name it: ``provider:model`` (``scripted:NAME`` for a scripted model)."""
        if self.script is not None:
            return f"{SCRIPTED}:{self.model}"
        return f"{self.provider}:{self.model or PRESETS[self.provider].default_model}"

    @property
    def key_variable(self) -> str | None:
        """The environment variable its key is read from where the runs run (``None``: it needs none)."""
        if self.script is not None:
            return None
        preset = PRESETS.get(self.provider)
        return self.api_key_env or (preset.api_key_env if preset is not None else None)

    @property
    def provider_key(self) -> str:
        """What a cap on concurrent requests counts by: the endpoint (a preset, or a base URL)."""
        return self.label if self.script is not None else self.base_url or self.provider

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for these tokens, when prices were given."""
        if self.price_input is None or self.price_output is None:
            return None
        return (prompt_tokens * self.price_input + completion_tokens * self.price_output) / 1_000_000


# ----- loading -----


def _fail(where: str, message: str) -> SuiteError:
    return SuiteError(f"{where}: {message}")


def _message_list(where: str, raw: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(where, "messages must be a non-empty list")
    for i, message in enumerate(raw):
        kind = message.get("type", "message") if isinstance(message, dict) else None
        if kind not in ("message", "functioncall", "functionresponse"):
            raise _fail(f"{where} messages[{i}]", "each message is {role, type: message|functioncall|...}")
        if kind == "message" and not isinstance(message.get("content"), str):
            raise _fail(f"{where} messages[{i}]", "a message needs its content (text)")
        if kind != "message" and not isinstance(message.get("name"), str):
            raise _fail(f"{where} messages[{i}]", f"a {kind} needs the tool's name")
    return tuple(raw)


def _nodes(where: str, raw: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(raw, list):
        raise _fail(where, "expectedCall must be null or a list of calls and groups")
    for i, node in enumerate(raw):
        spot = f"{where}[{i}]"
        if not isinstance(node, dict):
            raise _fail(spot, "each expected call is an object")
        if "unordered" in node or "ordered" in node:
            _nodes(spot, node.get("unordered", node.get("ordered")))
        elif not isinstance(node.get("functionName"), str):
            raise _fail(spot, "an expected call needs functionName (or is an ordered/unordered group)")
        else:
            _constraints(spot, {key: node[key] for key in ("arguments", "result") if key in node})
    return tuple(raw)


def _constraints(where: str, value: Any) -> None:
    """Refuse a constraint the matcher does not know (``{"$eq": …}`` is known, ``{"$equals": …}`` is not), naming
    the place and the known keys: unknown keys pass in webmcp-evals, so a misspelt check would always pass."""
    try:
        matcher.check_constraints(value)
    except matcher.ConstraintError as exc:
        raise _fail(where, str(exc)) from None


def _names(where: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise _fail(where, "must be a list of names")
    return tuple(raw)


def _seconds(where: str, raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        raise _fail(where, "a number of seconds above 0")
    return float(raw)


def _count(where: str, raw: Any) -> int:
    """A suite's ``repeats``: a whole number of runs, 1 or more (0 planned no run at all)."""
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise _fail(where, f"a whole number of runs, 1 or more, not {raw!r}")
    return raw


def _risk_allowance(where: str, raw: Any) -> bool | tuple[str, ...]:
    return raw if isinstance(raw, bool) else _names(where, raw)


def _state(where: str, raw: Any) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(where, "expect_state must be a list of checks")
    for i, check in enumerate(raw):
        if not isinstance(check, dict) or set(check) not in _STATE_KINDS:
            raise _fail(
                f"{where}[{i}]",
                "a check is {url: C}, {selector: css, text: C}, {selector: css, count: C} or "
                "{tool: name, arguments: {...}, result: C}",
            )
        _constraints(f"{where}[{i}]", {k: v for k, v in check.items() if k in ("url", "text", "count", "result")})
    return tuple(raw)


def _task(where: str, raw: Any, index: int, native: bool) -> Task:
    if not isinstance(raw, dict):
        raise _fail(where, "each case is an object")
    if native and (unknown := set(raw) - _TASK_KEYS):
        raise _fail(where, f"unknown keys {sorted(unknown)}; a task has {sorted(_TASK_KEYS)}")
    if native and "prompt" in raw:
        if "messages" in raw or not isinstance(raw["prompt"], str):
            raise _fail(where, "prompt is a text, and stands for messages (give one of them)")
        messages: tuple[Mapping[str, Any], ...] = ({"role": "user", "type": "message", "content": raw["prompt"]},)
    else:
        messages = _message_list(where, raw.get("messages"))
    expected = raw.get("expectedCall")
    if "expect_answer" in raw:
        _constraints(f"{where} expect_answer", raw["expect_answer"])
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        first = next((m.get("content") for m in messages if m.get("type", "message") == "message"), None)
        name = (first or "").strip() or f"Test {index + 1}"
    return Task(
        name=name.strip(),
        messages=messages,
        expected=None if expected is None else _nodes(f"{where} expectedCall", expected),
        start_url=raw.get("start_url"),
        forbid_calls=_names(f"{where} forbid_calls", raw.get("forbid_calls")),
        expect_answer=raw.get("expect_answer", NO_ANSWER_CHECK),
        expect_state=_state(f"{where} expect_state", raw.get("expect_state")),
        allow_high_risk=None
        if raw.get("allow_high_risk") is None
        else _risk_allowance(f"{where} allow_high_risk", raw["allow_high_risk"]),
    )


def _unique(tasks: tuple[Task, ...]) -> tuple[Task, ...]:
    """webmcp-evals' cases may share a name (or, unnamed, a first message); a run's id comes from its task's name,
    so the later ones become ``name (2)``, ``name (3)``… (never a name another case has)."""
    taken = {task.name for task in tasks}
    seen: set[str] = set()
    unique = []
    for task in tasks:
        if task.name in seen:
            n = 2
            while f"{task.name} ({n})" in taken:
                n += 1
            task = replace(task, name=f"{task.name} ({n})")
            taken.add(task.name)
        seen.add(task.name)
        unique.append(task)
    return tuple(unique)


def load_tools(path: str | os.PathLike[str]) -> tuple[Mapping[str, Any], ...]:
    """The tools of a webmcp-evals ``schema.json`` (``{"tools": [{name, description, inputSchema}]}``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
        raise SuiteError(f"{path}: expected {{'tools': [{{name, description, inputSchema}}, ...]}}")
    return tuple(tools)


def _skill_ref(folder: Path, name: str) -> str:
    candidate = folder / name
    return str(candidate.resolve()) if ("/" in name or name.startswith(".")) and candidate.is_dir() else name


def parse(data: Any, *, name: str = "suite", path: Path | None = None) -> Suite:
    """A suite from already-parsed data (a list: webmcp-evals' cases; a mapping: the native format)."""
    where = str(path) if path else name
    if isinstance(data, list):
        tasks = _unique(tuple(_task(f"{where} case {i + 1}", case, i, native=False) for i, case in enumerate(data)))
        if not tasks:
            raise _fail(where, "no cases")
        return Suite(name, tasks, kind="webmcp-evals", path=str(path) if path else None)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(where, f"not an eval suite: expected a JSON array of cases or a mapping with format: {FORMAT}")
    if int(data.get("version", 1)) > FORMAT_VERSION:
        raise _fail(where, f"version {data['version']}; this library reads version {FORMAT_VERSION}")
    if unknown := set(data) - _SUITE_KEYS:
        raise _fail(where, f"unknown keys {sorted(unknown)}; a suite has {sorted(_SUITE_KEYS)}")
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        raise _fail(where, "tasks must be a non-empty list")
    tasks = tuple(_task(f"{where} tasks[{i}]", raw, i, native=True) for i, raw in enumerate(raw_tasks))
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise _fail(where, "task names must be unique")
    folder = path.parent if path else Path.cwd()
    tools: tuple[Mapping[str, Any], ...] = ()
    if isinstance(data.get("tools"), str):
        tools = load_tools(folder / data["tools"])
    elif isinstance(data.get("tools"), list):
        tools = tuple(data["tools"])
    models = data.get("models") or []
    return Suite(
        name=str(data.get("name") or name),
        tasks=tasks,
        start_url=data.get("start_url"),
        repeats=_count(f"{where} repeats", data.get("repeats", 1)),
        models=tuple(str(m) for m in models),
        skills=tuple(_skill_ref(folder, s) for s in _names(f"{where} skills", data.get("skills"))),
        max_tool_calls=data.get("max_tool_calls"),
        turn_timeout=_seconds(f"{where} turn_timeout", data.get("turn_timeout")),
        allow_high_risk=_risk_allowance(f"{where} allow_high_risk", data.get("allow_high_risk", False)),
        tools=tools,
        path=str(path) if path else None,
    )


def load(path: str | os.PathLike[str], *, tools: str | os.PathLike[str] | None = None) -> Suite:
    """Read a suite: a webmcp-evals ``evals.json`` as it is, or a native YAML/JSON suite. ``tools`` names a
    webmcp-evals ``schema.json`` for local mode."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise SuiteError(f"{file}: not valid {'JSON' if file.suffix == '.json' else 'YAML'}: {exc}") from None
    name = re.sub(r"[-_.]?evals?$", "", file.stem) or file.resolve().parent.name  # evals.json: its folder's name
    suite = parse(data, name=name, path=file)
    return suite.with_tools(tools) if tools is not None else suite


def shipped() -> list[str]:
    """The names of the suites shipped with webmcp-nb."""
    return sorted(p.stem for p in SUITES.glob("*.yaml") if "." not in p.stem)  # not NAME.model.yaml, …


def builtin(name: str) -> Suite:
    """A suite shipped with webmcp-nb, for the bundled demo pages: ``flights`` or ``shop``."""
    if name not in shipped():
        raise SuiteError(f"no shipped suite {name!r}; the shipped suites: {', '.join(shipped())}")
    return load(SUITES / f"{name}.yaml")


def variants(data: Any, where: str = "variants") -> dict[str, dict[str, dict[str, Any]]]:
    """Tool variants, checked: ``{variant: {tool: {description?, title?, input_schema?}}}`` (``inputSchema`` is
    accepted for ``input_schema``). ``{}`` is the page's own tools."""
    from ..browser.overrides import check_fields
    from ..core.errors import InvalidArgumentsError

    if not isinstance(data, dict) or not data:
        raise SuiteError(f"{where}: a mapping of variant names to {{tool: {{description, title, input_schema}}}}")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, tools in data.items():
        if not isinstance(name, str) or not name.strip():
            raise SuiteError(f"{where}: a variant's name is a non-empty text, not {name!r}")
        if tools is None:
            tools = {}
        if not isinstance(tools, dict):
            raise SuiteError(f"{where}: {name}: maps tool names to what to show instead ({{}}: the page's own)")
        out[name] = {}
        for tool, fields in tools.items():
            if not isinstance(fields, dict):
                raise SuiteError(f"{where}: {name}.{tool}: {{description, title, input_schema}}")
            try:
                out[name][str(tool)] = check_fields(str(tool), fields)
            except InvalidArgumentsError as exc:
                raise SuiteError(f"{where}: {name}: {exc.message}") from None
    return out


def load_variants(path: str | os.PathLike[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Tool variants from a YAML or JSON file (see :func:`variants`)."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SuiteError(f"{file}: not valid YAML/JSON: {exc}") from None
    return variants(data, str(file))
