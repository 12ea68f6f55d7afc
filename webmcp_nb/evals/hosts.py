"""What an eval's agent works on: a live tab seen through a thin view (browser mode), or tools from a schema
file answered with mock outputs (local mode).

The agent uses a small part of ``Tab``: ``id``, ``url``, ``title``, ``tools``, ``skills``, ``browser`` (its
event stream and skills), ``acall`` and ``arefresh_tools``. ``EvalTab`` passes them through to the real tab,
except that the evals' probe skill is hidden from the model and a declarative form that waits for a person to
submit it answers ``pending form submission`` after a second, as webmcp-evals' browser mode does. ``MockTab``
has the same surface without a browser: its calls answer with the expected calls' ``mockOutput``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..browser.overrides import ToolOverride, check_fields
from ..browser.schema import check_arguments
from ..browser.skills import Skill
from ..browser.tools import Tool, ToolResult
from ..core.errors import InvalidArgumentsError, WebMCPError
from ..core.events import EventStream, acting_as
from ..link.protocol import ToolInfo
from . import matcher

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab
    from ..recording.session import Session

__all__ = ["EvalTab", "MockTab", "Record", "PROBE", "PENDING_SUBMISSION", "probe_skill", "unwrap"]

PROBE = "webmcp-nb-evals-probe"
"""The skill that reads the page for state checks; its tool is never offered to the model."""
PROBE_TOOL = "webmcp_nb_evals_probe"
PENDING_SUBMISSION = "pending form submission"
PENDING_AFTER = 1.0
"""Seconds a call may run before a form that waits for a person counts as pending (webmcp-evals: 1 s)."""


def probe_skill(url: str) -> Skill:
    """A read-only skill with one tool: the number of elements a CSS selector matches and their text."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    skill = Skill(PROBE, match=[f"{parts.scheme}://{parts.hostname}/*"], description="webmcp-nb evals: page checks")
    skill.add_tool(
        PROBE_TOOL,
        "async ({ selector }) => { const found = [...document.querySelectorAll(selector)];"
        " return { count: found.length,"
        " text: found.map((el) => (el.innerText ?? el.textContent ?? '').trim()).join('\\n') }; }",
        description="Count the elements a CSS selector matches, and read their text.",
        input_schema={"type": "object", "properties": {"selector": {"type": "string"}}, "required": ["selector"]},
        read_only=True,
    )
    return skill


def unwrap(value: Any) -> Any:
    """A tool's result as webmcp-evals' browser mode records it: MCP-style ``{content: [{text}]}`` becomes the
    text, ``{isError: true, ...}`` becomes ``{"error": ...}``."""
    if isinstance(value, dict):
        content = value.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict) and content[0].get("text"):
            return {"error": content[0]["text"]} if value.get("isError") else content[0]["text"]
        if value.get("isError"):
            error = value.get("error")
            if not isinstance(error, str):  # theirs: JSON.stringify(value)
                error = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            return {"error": error}
    return value


@dataclass(frozen=True)
class Record:
    """A call that reached the page (or the mock), and what came back as the matcher sees it."""

    tool: str
    result: Any
    error: str | None = None
    """The error code when the call failed (its ``result`` is then ``{"error": message}``)."""
    invalid: bool = False
    """The arguments did not fit the tool's schema."""


class EvalTab:
    """A live tab as an eval's agent sees it (see the module's docstring)."""

    def __init__(self, tab: Tab) -> None:
        self._tab = tab
        self._probe_ready = False
        self.pending: list[asyncio.Future[ToolResult]] = []
        """Calls answered as pending form submissions, still running in the page."""
        self.records: list[Record] = []
        """Every call the agent made on the page, in order."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tab, name)

    @property
    def tools(self) -> dict[str, Tool]:
        return {name: tool for name, tool in self._tab.tools.items() if tool.source != PROBE}

    @property
    def skills(self) -> list[Any]:
        return [s for s in self._tab.skills if getattr(s, "name", None) != PROBE]

    async def acall(self, tool: str | Tool, args: dict[str, Any] | None = None, /, **options: Any) -> ToolResult:
        name = _name(tool)
        try:
            result = await self._call(tool, args, options)
        except WebMCPError as exc:
            invalid = isinstance(exc, InvalidArgumentsError)
            self.records.append(Record(name, {"error": exc.message}, exc.code.value, invalid))
            raise
        self.records.append(Record(name, unwrap(result.value)))
        return result

    async def _call(self, tool: str | Tool, args: dict[str, Any] | None, options: dict[str, Any]) -> ToolResult:
        started, name = time.perf_counter(), _name(tool)
        call = asyncio.ensure_future(self._tab.acall(tool, args, **options))
        done, _ = await asyncio.wait({call}, timeout=PENDING_AFTER)
        if done or not await self._waits_for_submission(name):
            return await call
        call.add_done_callback(lambda f: f.cancelled() or f.exception())  # its end is seen, whatever it is
        self.pending.append(call)
        self._tab.browser.events.emit("eval.pending_submission", tab_id=self._tab.id, url=self._tab.url, tool=name)
        return ToolResult(name, PENDING_SUBMISSION, (time.perf_counter() - started) * 1000)

    async def probe(self, selector: str) -> dict[str, Any]:
        """``{count, text}`` of the elements ``selector`` matches in the top frame. The harness makes the call, not
        the model, even in the middle of its turn: the session says so, and a replay leaves it out."""
        return await acting_as("evals", self._probe(selector))

    async def _probe(self, selector: str) -> dict[str, Any]:
        if not self._probe_ready or PROBE_TOOL not in self._tab.tools:
            await self._tab.ainject(probe_skill(self._tab.url))
            self._probe_ready = True
        result = await self._tab.acall(PROBE_TOOL, {"selector": selector})
        value: dict[str, Any] = result.value
        return value

    async def _waits_for_submission(self, name: str) -> bool:
        """Whether ``name`` is a declarative form without ``toolautosubmit`` (it waits for a person)."""
        quoted = json.dumps(name)  # a CSS string: JSON's escapes are valid there
        try:
            found = await self.probe(f"form[toolname={quoted}]:not([toolautosubmit])")
        except Exception:  # no skills in this browser: the call is left to finish (or time out) as it will
            return False
        return bool(found.get("count"))

    def cancel_pending(self) -> None:
        for call in self.pending:
            call.cancel()


class _MockRegistry:
    """The skill registry of a browser that has none."""

    def source(self, name: str) -> Skill | None:
        return None


class MockBrowser:
    """The part of ``Browser`` that an agent and a session use, for local mode."""

    def __init__(self) -> None:
        self.events = EventStream()
        self.session: Session | None = None
        self.skills = _MockRegistry()
        self.info = None
        self.relay = None
        self.active_tab: MockTab | None = None

    def _add_agent(self, agent: object) -> None:
        pass

    def _attach_session(self, session: Session) -> None:
        self.session = session

    def _detach_session(self, session: Session) -> None:
        if self.session is session:
            self.session = None


class MockTab:
    """Tools from a schema file; each call answers with the ``mockOutput`` of the first expected call of that
    name not yet used (``{}`` when there is none), as webmcp-evals' local mode does. Arguments are not checked
    against the schema (theirs are not either); ``invalid`` remembers the calls that do not fit it."""

    id = 1
    url = "about:blank"
    origin = ""  # the tools come from a schema file: no origin to tell the model
    title = ""
    skills: list[Any] = []  # noqa: RUF012 - read-only, the same for every mock tab

    def __init__(self, tools: tuple[Mapping[str, Any], ...], expected: tuple[Mapping[str, Any], ...] | None) -> None:
        self.browser = MockBrowser()
        self.browser.active_tab = self
        self._infos = {
            t["name"]: ToolInfo(
                name=t["name"],
                description=t.get("description") or "",
                inputSchema=t.get("inputSchema") or t.get("parameters") or {"type": "object", "properties": {}},
                annotations=t.get("annotations") or {},
                source="schema",
            )
            for t in tools
        }
        self._overrides: dict[str, ToolOverride] = {}
        self._mocks = matcher.flatten(expected)
        self._used = [False] * len(self._mocks)
        self.records: list[Record] = []
        """Every call the agent made, in order."""

    @property
    def tools(self) -> dict[str, Tool]:
        host: Any = self
        return {name: Tool(host, info, self._overrides.get(name)) for name, info in self._infos.items()}

    def override(self, name: str, *, missing_ok: bool = False, **fields: Any) -> ToolOverride:
        """As ``tab.tools.override``: what the model is shown of ``name`` instead of the schema file's text."""
        checked = check_fields(name, fields)
        if not missing_ok and name not in self._infos:
            raise KeyError(name)
        self._overrides[name] = ToolOverride(name, **checked)
        tool = self.tools.get(name)
        self.browser.events.emit(
            "override.set", tab_id=self.id, url=self.url, tool=name, fields=checked,
            differences=tool.differences if tool is not None else [],
        )  # fmt: skip
        return self._overrides[name]

    def _mock(self, name: str) -> Any:
        for i, node in enumerate(self._mocks):
            if not self._used[i] and node.get("functionName") == name:
                self._used[i] = True
                return node.get("mockOutput", {})
        return {}

    async def acall(self, called: str | Tool, args: dict[str, Any] | None = None, /, **options: Any) -> ToolResult:
        name, arguments = _name(called), dict(args or {})
        tool = self.tools[name]
        invalid = True
        with contextlib.suppress(Exception):
            await check_arguments(name, tool.info.input_schema, arguments, has_pattern=tool.has_pattern)
            invalid = False
        self.browser.events.emit("tool.called", tab_id=self.id, url=self.url, tool=name, arguments=arguments)
        output = self._mock(name)
        text = output if isinstance(output, str) else json.dumps(output)
        self.browser.events.emit("tool.returned", tab_id=self.id, url=self.url, duration_ms=0.0, tool=name, text=text)
        self.records.append(Record(name, output, invalid=invalid))  # the mock output itself, as theirs records it
        return ToolResult(name, text, 0.0)

    async def arefresh_tools(self) -> MockTab:
        return self


def _name(tool: str | Tool) -> str:
    """The name of a call's tool: given by name, or as the ``Tool`` an agent showed its model."""
    return tool.name if isinstance(tool, Tool) else tool


def as_tab(host: EvalTab | MockTab) -> Tab:
    """The view, typed as the ``Tab`` the agent takes (it uses only the surface both views have)."""
    tab: Any = host
    return tab  # type: ignore[no-any-return]


def as_browser(host: MockBrowser) -> Browser:
    """The mock browser, typed as the ``Browser`` a session records from."""
    browser: Any = host
    return browser  # type: ignore[no-any-return]
