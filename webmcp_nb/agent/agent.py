"""The agent loop: a model (any OpenAI-compatible endpoint, through the ``openai`` SDK) using a tab's tools.

One turn = the user's task, then model replies and tool calls until the model answers or something stops it:
the call limit, the time limit, a failure, or the user (``run.cancel()``). However it ends, every tool call
in the conversation keeps a result that says truthfully what became of it, so the next turn is accepted. Tools
ask for confirmation by risk (``confirm="medium"``: medium and high; high always asks unless
``allow_high_risk=True``). Everything is emitted as events while it happens. The rules (prompt, limits, texts,
policies) are :mod:`webmcp_nb.core.agent_rules`; model I/O is :mod:`webmcp_nb.agent.model_io`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..browser.gate import ASK_TIMEOUT, Asker, Offer, check_call, check_page
from ..browser.tools import Tool
from ..core import _loop
from ..core.agent_rules import (
    CONFIRM,
    LIMITS,
    SYSTEM_PROMPT,
    TEXTS,
    fill,
    needs_confirmation,
    open_call_text,
    page_context,
    resolve_policy,
    result_text,
    stop_note,
)
from ..core.display import clip, escape, pre_json, table, visible
from ..core.errors import AgentBusyError, ConfigurationError, ConfirmationRequiredError, WebMCPError
from ..core.events import Event, EventStream, acting_as
from ..recording.session import Evidence, Session
from .model_io import ModelIO, Usage, parse_arguments
from .model_tools import ToolSpec, error_text, tool_specs
from .providers import PLACEHOLDER_KEY, Provider, resolve_provider

if TYPE_CHECKING:
    from ..browser.skills import Skill
    from ..browser.tab import Tab
    from ..mcp.client import MCPResult, MCPServer, MCPTool

__all__ = [
    "Agent",
    "AgentResult",
    "AgentRun",
    "Step",
    "ConfirmationRequest",
    "Usage",
    "DEFAULT_SYSTEM_PROMPT",
    "call_mcp_recorded",
]

ConfirmPolicy = Literal["high", "medium", "always", "never", "non-readonly"]

DEFAULT_SYSTEM_PROMPT = SYSTEM_PROMPT


@dataclass
class Step:
    """One tool call the model made in a turn."""

    tool: str
    arguments: Any
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    confirmed: bool | None = None
    """``True``/``False`` when the user was asked; ``None`` when no confirmation was needed."""
    risk: str | None = None
    """The tool's risk (``None`` when the model named a tool that does not exist)."""
    text: str | None = field(default=None, repr=False)
    """The page's result text, whole (the model got it cut to ``max_result_chars`` and framed as data)."""


@dataclass
class AgentResult:
    """What a turn produced: the answer, the tool calls, why it stopped early (if it did), the events."""

    answer: str | None
    steps: list[Step]
    stopped: str | None
    """``None`` when nothing stopped the turn; ``max_tool_calls`` (the model then answered without tools),
    ``turn_timeout`` or ``cancelled``."""
    events: list[Event]
    """This turn's events (on this tab), in order."""
    session: Session | None = None
    """The session that recorded the turn (``None`` with ``session=False``)."""
    usage: Usage | None = None
    """Tokens of the turn's requests added up, when the endpoint reported them."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [
            [
                i + 1,
                s.tool,
                clip(json.dumps(s.arguments, ensure_ascii=False), 120),
                clip(s.error or json.dumps(s.result, ensure_ascii=False), 160),
                f"{s.duration_ms:.0f} ms",
                s.risk or "",
                {True: "approved", False: "denied", None: ""}[s.confirmed],
            ]
            for i, s in enumerate(self.steps)
        ]
        stop = f" (stopped: {self.stopped})" if self.stopped else ""
        tokens = f"{self.usage.total_tokens:,} tokens" if self.usage else ""
        where = f"Recorded in {self.session.directory} (session.report() shows it)" if self.session is not None else ""
        notes = [note for note in (tokens, where) if note]
        text = [f"Answer{stop}: {self.answer}"] + [f"  {r[0]}. {r[1]}({r[2]}) → {r[3]}" for r in rows]
        html = (
            f"<div><b>Answer{stop}</b><div>{pre_json(self.answer)}</div>"
            + table(["#", "tool", "arguments", "result", "time", "risk", "confirmation"], rows)
            + "".join(f"<div><i>{escape(note)}</i></div>" for note in notes)
            + "</div>"
        )
        return {"text/plain": visible("\n".join(text + notes)), "text/html": html}


@dataclass
class ConfirmationRequest:
    """A tool call waiting for the user's yes or no."""

    id: str
    tool: str
    arguments: Any
    read_only: bool
    future: asyncio.Future[bool] = field(repr=False)
    answered_by: str = ""
    risk: str = "medium"
    provenance: str = ""
    """Where the tool comes from: the origin of the page's frame that registered it (marked when it is not the
    page's own), or ``the MCP server <name>``."""


Confirmer = Callable[[ConfirmationRequest], bool | Awaitable[bool]]


class AgentRun:
    """A turn running in the background (from ``agent.start``): watch its events, answer confirmations,
    ``await`` it or ask for ``result()``. Nothing here blocks a cell unless you call ``result()``."""

    def __init__(self, agent: Agent, future: asyncio.Future[AgentResult]) -> None:
        self.agent = agent
        self._future = future

    @property
    def done(self) -> bool:
        return self._future.done()

    @property
    def pending(self) -> list[ConfirmationRequest]:
        """Confirmations waiting for an answer."""
        return list(self.agent._pending.values())

    def approve(self, request_id: str | None = None) -> bool:
        """Approve one waiting confirmation (the oldest if no id); True if it was still waiting."""
        return self.agent.answer(request_id, True)

    def deny(self, request_id: str | None = None) -> bool:
        return self.agent.answer(request_id, False)

    def result(self, timeout: float | None = None) -> AgentResult:
        """Wait for the turn to finish (blocking)."""
        return _loop.run(asyncio.wait_for(asyncio.shield(self._future), timeout))

    def cancel(self) -> None:
        """Stop the turn (from any thread). It ends with ``stopped="cancelled"``, and the conversation stays
        usable: the calls it left open are answered with what became of them."""
        _loop.loop().call_soon_threadsafe(self.agent._stop, self._future)

    def __await__(self) -> Any:
        return _wait(self._future).__await__()

    def __repr__(self) -> str:
        state = "done" if self.done else f"running, {len(self.pending)} confirmation(s) waiting"
        return f"<AgentRun {state}>"


@_loop.on_loop
async def _wait(future: asyncio.Future[AgentResult]) -> AgentResult:
    """The turn's result, awaited from any loop (the turn itself runs on the library's)."""
    return await asyncio.shield(future)


@dataclass
class _Turn:
    """What one turn has done so far, kept outside its task so a stop can close what the task left open."""

    steps: list[Step] = field(default_factory=list)
    open: dict[str, tuple[str, str, Step | None]] = field(default_factory=dict)
    """Tool calls of the last reply without a result yet: id → (name, how far it got, its step)."""
    answer: str | None = None
    stopped: str | None = None
    usage: Usage | None = None


class Agent:
    """An agent on one tab. ``agent.run(task)`` blocks; ``await agent.arun(task)``; ``agent.start(task)``
    returns at once. Follow-up turns continue the same conversation."""

    def __init__(
        self,
        tab: Tab,
        *,
        model: str | None = None,
        provider: str | Provider | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        confirm: ConfirmPolicy = CONFIRM["default"],
        allow_high_risk: bool = False,
        on_confirm: Confirmer | None = None,
        max_tool_calls: int = LIMITS["max_tool_calls"],
        tool_timeout: float = LIMITS["tool_timeout_s"],
        turn_timeout: float = LIMITS["turn_timeout_s"],
        skills: list[Skill] | None = None,
        system_prompt: str | None = None,
        prompt_mode: bool | None = None,
        max_result_chars: int = LIMITS["max_result_chars"],
        max_retries: int = LIMITS["max_retries"],
        events: EventStream | None = None,
        session: Session | Literal[False] | None = None,
        evidence: Evidence = "non-readonly",
        mcp_servers: Sequence[MCPServer] = (),
        request_gate: Callable[[], AbstractAsyncContextManager[object]] | None = None,
        allowed_tools: Collection[str] | None = None,
    ) -> None:
        try:
            policy = resolve_policy(confirm)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        if policy != confirm:
            _loop.warn(f"confirm={confirm!r} is now called {policy!r}", DeprecationWarning)
        self.tab = tab
        self.mcp_servers = list(mcp_servers)
        """MCP servers (``wm.mcp.connect``) whose tools the agent has beside the page's, as ``<server>_<tool>``."""
        self.allowed_tools = frozenset(allowed_tools) if allowed_tools is not None else None
        """The only tools offered to the model (page tools by name, MCP tools as ``<server>.<tool>``), or all."""
        chosen = resolve_provider(provider, base_url, prompt_mode=prompt_mode)
        model = model or chosen.default_model
        if not model:
            raise ConfigurationError(f"provider {chosen.name!r} has no default model: pass model=...")
        self._api_key = chosen.api_key(api_key)
        self.confirm = policy
        """Which risks ask the user first: ``high``, ``medium`` (medium and high), ``always`` or ``never``."""
        self.allow_high_risk = allow_high_risk
        """Without it, high-risk tools ask under every policy, ``never`` included."""
        self.on_confirm = on_confirm
        self.max_tool_calls = max_tool_calls
        self.tool_timeout = tool_timeout
        self.turn_timeout = turn_timeout
        self.skills = skills
        self.system_prompt = system_prompt or DEFAULT_SYSTEM_PROMPT
        self.max_result_chars = max_result_chars
        self.events = events or tab.browser.events
        """Where the agent's events go: by default the browser's stream, which sessions record."""
        self.messages: list[dict[str, Any]] = []
        """The conversation so far, as sent to the model (the system message is rebuilt each turn)."""
        self.session: Session | None = session if isinstance(session, Session) else None
        """The recording of this agent's turns: the browser's open session, or one started at the first turn
        (``session=False``: none)."""
        self._record = session is not False
        self._evidence = evidence
        self._pending: dict[str, ConfirmationRequest] = {}
        self._io = ModelIO(chosen, model, self._api_key, max_retries, self._emit, itertools.count(1), gate=request_gate)
        self._current: asyncio.Future[AgentResult] | None = None
        self._body: asyncio.Future[None] | None = None
        self._stopping = False
        self._hidden: str | None = None  # what the last tool list held back of frames of sites not granted
        tab.browser._add_agent(self)

    @property
    def model(self) -> str:
        """The model's name, as requests send it."""
        return self._io.model

    @property
    def provider(self) -> Provider:
        """The endpoint and its quirks (it switches to prompt mode if the endpoint refuses ``tools``)."""
        return self._io.provider

    def __repr__(self) -> str:
        return f"<Agent {self.provider.name}:{self.model} on tab {self.tab.id}, {len(self.messages)} messages>"

    # ----- public -----

    def run(self, task: str | None) -> AgentResult:
        """Run one turn and wait for it. A confirmation that nobody can answer (no ``on_confirm``) fails at
        once with ``ConfirmationRequiredError`` rather than blocking the kernel. ``task=None`` continues the
        conversation as it stands (one that ends with tool results the model has not read yet)."""
        return _loop.run(self._run(task, can_wait=self.on_confirm is not None))

    @_loop.on_loop
    async def arun(self, task: str | None) -> AgentResult:
        """Run one turn; confirmations wait for ``on_confirm``, ``agent.answer`` or the panel."""
        return await self._run(task, can_wait=True)

    def start(self, task: str | None) -> AgentRun:
        """Start a turn in the background and return its handle at once."""
        return AgentRun(self, _loop.run(self._start(task)))

    async def _start(self, task: str | None) -> asyncio.Future[AgentResult]:
        return self._begin(task, can_wait=True)

    async def _run(self, task: str | None, *, can_wait: bool) -> AgentResult:
        return await self._begin(task, can_wait=can_wait)

    def _begin(self, task: str | None, *, can_wait: bool) -> asyncio.Future[AgentResult]:
        """On the loop: the turn as a task, refused while another runs (``AgentBusyError``)."""
        if self._current is not None and not self._current.done():
            raise AgentBusyError(
                "This agent is running a turn: wait for it (run.result()), answer its confirmation or cancel it "
                "(run.cancel()) first"
            )
        self._current = asyncio.ensure_future(self._turn(task, can_wait=can_wait))
        return self._current

    def answer(self, request_id: str | None, approved: bool, *, by: str = "notebook") -> bool:
        """Answer a waiting confirmation (the oldest when ``request_id`` is None). The first answer wins;
        returns False when there was nothing (any more) to answer. Safe from any thread."""
        request = self._pending.get(request_id) if request_id else next(iter(self._pending.values()), None)
        return request is not None and _loop.answer_first(request, approved, by)

    def _stop(self, turn: asyncio.Future[AgentResult]) -> None:
        """On the loop: stop ``turn``'s work, so it ends as ``cancelled`` (a turn that has ended: nothing)."""
        if turn is not self._current or turn.done():
            return
        if self._body is not None and not self._body.done():
            self._stopping = True
            self._body.cancel()
        elif not turn.done():
            turn.cancel()

    # ----- the turn -----

    async def _turn(self, task: str | None, *, can_wait: bool) -> AgentResult:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        turn = _Turn()
        if task is not None:
            self.messages.append({"role": "user", "content": task})
        self._ensure_session()
        first = self._emit(
            "agent.turn.started",
            task=task,
            model=self.model,
            provider=self.provider.name,
            confirm=self.confirm,
            allow_high_risk=self.allow_high_risk,
        )
        steps = self._steps(turn, loop.time() + self.turn_timeout, can_wait)
        body = self._body = asyncio.ensure_future(acting_as("agent", steps))  # its tool calls say the agent made them
        failure: BaseException | None = None
        try:
            await asyncio.wait_for(body, self.turn_timeout)
        except asyncio.CancelledError:
            self._close(turn, "cancelled")
            if not self._stopping:  # the caller's own task was cancelled: the conversation is closed, and so is this
                self._finished(turn, started)
                raise
        except asyncio.TimeoutError as exc:
            if isinstance(exc, WebMCPError):  # a tool's or the relay's time-out, not the turn's
                failure = exc
                self._close(turn, "error", error=_error_text(exc))
            else:
                self._close(turn, "turn_timeout", seconds=self.turn_timeout)
                self._emit("agent.limit", limit="turn_timeout", seconds=self.turn_timeout)
        except Exception as exc:
            failure = exc
            self._close(turn, "error", error=_error_text(exc))
        finally:
            self._body = None
            self._stopping = False
        if failure is not None:
            self._emit("agent.error", error=type(failure).__name__, message=str(failure)[:2000])
            self._finished(turn, started, error=_error_text(failure))
            raise failure
        self._finished(turn, started)
        events = [e for e in self.events.since(first.seq) if e.tab_id in (None, self.tab.id)]
        return AgentResult(turn.answer, turn.steps, turn.stopped, events, self.session, turn.usage)

    def _finished(self, turn: _Turn, started: float, error: str | None = None) -> None:
        self._emit(
            "agent.turn.finished",
            answer=turn.answer,
            stopped=turn.stopped,
            steps=len(turn.steps),
            usage=turn.usage.as_dict() if turn.usage else None,
            duration_ms=(time.perf_counter() - started) * 1000,
            **({"error": error} if error is not None else {}),
        )

    async def _steps(self, turn: _Turn, deadline: float, can_wait: bool) -> None:
        """Requests and tool calls until the model answers (or the call limit makes it)."""
        tools_offered = True
        while True:
            await check_page(self.tab, "read", self._asker, action="read the page", timeout=self._ask_time(deadline))
            specs = tool_specs(self._tools()) if tools_offered else {}
            reply = await self._io.complete(functools.partial(self._conversation, specs), specs)
            if reply.usage is not None:
                turn.usage = reply.usage if turn.usage is None else turn.usage + reply.usage
            self.messages.append(reply.history)
            if not reply.calls:
                turn.answer = reply.content
                return
            turn.open = {call_id: (name, "waiting", None) for call_id, name, _ in reply.calls}
            changed = False
            denied: str | None = None
            for call_id, name, raw_arguments in reply.calls:
                spec = specs.get(name)
                if not tools_offered or len(turn.steps) >= self.max_tool_calls:
                    turn.stopped = "max_tool_calls"
                    content = result_text(name, "error", fill(TEXTS["call_limit"], limit=self.max_tool_calls))
                    self._emit("agent.limit", limit="max_tool_calls", tool=name)
                elif denied is not None:
                    content = result_text(name, "error", fill(TEXTS["after_denial"], tool=denied))
                else:
                    step, reached = await self._tool_step(turn, call_id, specs, name, raw_arguments, deadline, can_wait)
                    content = self._result_text(spec, step)
                    changed = changed or (reached and step.risk != "low")
                    if step.confirmed is False:
                        denied = step.tool
                self.messages.append(self._tool_message(call_id, content))
                turn.open.pop(call_id, None)
            if changed:  # the page may have registered or removed tools: the next request offers the new set
                await self.tab.arefresh_tools()
            if turn.stopped == "max_tool_calls":
                if not tools_offered:  # it called tools when offered none: what it said is all there is
                    turn.answer = reply.content
                    return
                tools_offered = False  # one more reply, without tools: the model must answer now

    def _close(self, turn: _Turn, reason: str, **values: Any) -> None:
        """After a stop: answer every call the turn left open with what became of it, then tell the next
        turn's model that this one stopped."""
        turn.stopped = reason
        for call_id, (name, state, step) in turn.open.items():
            text = open_call_text(state, reason, **values)
            if step is not None:
                step.error = text
            self.messages.append(self._tool_message(call_id, result_text(name, "error", text)))
        turn.open = {}
        self.messages.append({"role": "user", "content": stop_note(reason, **values)})

    def _ensure_session(self) -> None:
        if not self._record:
            return
        if self.session is None:
            browser = self.tab.browser
            self.session = browser.session or Session(
                browser, evidence=self._evidence, model=self.model, provider=self.provider.name
            )
        if self._api_key != PLACEHOLDER_KEY:  # a real key: never written (a placeholder is not one)
            self.session.add_secret(self._api_key)

    # ----- one tool call -----

    async def _tool_step(
        self,
        turn: _Turn,
        call_id: str,
        specs: dict[str, ToolSpec],
        name: str,
        raw_arguments: Any,
        deadline: float,
        can_wait: bool,
    ) -> tuple[Step, bool]:
        """Run one call; returns its step and whether it reached the page."""
        spec = specs.get(name)
        arguments = parse_arguments(raw_arguments)
        step = Step(tool=spec.tool_name if spec else name, arguments=arguments, risk=spec.tool.risk if spec else None)
        turn.steps.append(step)
        if spec is None:
            step.error = fill(TEXTS["unknown_tool"], name=name, available=", ".join(specs) or TEXTS["no_tools"])
            return step, False
        if isinstance(arguments, str):
            step.error = fill(TEXTS["not_an_object"], arguments=arguments)
            return step, False
        if isinstance(spec.tool, Tool):
            try:
                await check_call(self.tab, spec.tool, spec.tool.name, self._asker, timeout=self._ask_time(deadline))
            except WebMCPError as exc:  # not granted (PERMISSION_DENIED): the model is told, and can tell its user
                step.error = error_text(exc)
                return step, False
        if needs_confirmation(self.confirm, spec.tool.risk, self.allow_high_risk):
            turn.open[call_id] = (name, "confirming", step)
            step.confirmed = await self._confirm(spec, arguments, can_wait)
            if not step.confirmed:
                step.error = TEXTS["denied"]
                self._emit("tool.denied", tool=spec.tool_name, arguments=arguments)
                return step, False
            turn.open[call_id] = (name, "waiting", step)  # approved, not started yet
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            raise asyncio.TimeoutError
        turn.open[call_id] = (name, "running", step)
        stream = self.tab.browser.events
        mark = stream.last_seq
        try:  # the tab (or _call_mcp) emits tool.called / tool.returned / tool.failed into the browser's stream
            if isinstance(spec.tool, Tool):
                result = await self.tab.acall(  # the tool the model was shown, in the document that registered it
                    spec.tool, spec.page_arguments(arguments), timeout=min(self.tool_timeout, remaining)
                )
                step.result, step.text, step.duration_ms = result.value, result.text, result.duration_ms
            else:
                timeout = min(self.tool_timeout, remaining)
                step.result, step.text, step.duration_ms = await self._call_mcp(spec, arguments, timeout)
        except WebMCPError as exc:
            step.error = error_text(exc)
            failed = [
                e for e in stream.since(mark + 1) if e.kind == "tool.failed" and e.tab_id == self.tab.id
            ]  # the page's own time, as the tab measured it (without evidence)
            step.duration_ms = (failed[-1].duration_ms or 0.0) if failed else 0.0
        return step, True

    @property
    def _asker(self) -> Asker:
        return Asker("agent", f"{self.provider.name}:{self.model}")

    def _ask_time(self, deadline: float) -> float:
        """How long an ask may wait: the turn's remaining time (:mod:`webmcp_nb.browser.gate`)."""
        return max(0.1, min(ASK_TIMEOUT, deadline - asyncio.get_running_loop().time() - 1.0))

    def _tools(self) -> list[Tool | MCPTool]:
        """The tab's tools the grants let a model see (:class:`~webmcp_nb.browser.gate.Offer`: a cross-origin
        frame's only while its site may be read; what it held back is said in the conversation), then each MCP
        server's (``MCPTool``: the same surface, ``qualified_name`` added); only the ``allowed_tools``, if given."""
        offer = Offer(self.tab)
        found: list[Tool | MCPTool] = [*offer.select(self.tab.tools.values())]
        self._hidden = offer.note()
        found += [tool for server in self.mcp_servers for tool in server.tools.values()]
        allowed = self.allowed_tools
        if allowed is None:
            return found
        return [tool for tool in found if (tool.name if isinstance(tool, Tool) else tool.qualified_name) in allowed]

    async def _call_mcp(self, spec: ToolSpec, arguments: Any, timeout: float) -> tuple[Any, str, float]:
        """An MCP server's tool, recorded in the agent's stream as a page tool's call is."""
        result, duration = await call_mcp_recorded(spec, arguments, timeout, self._emit)
        return result.value, result.text, duration

    async def _confirm(self, spec: ToolSpec, arguments: Any, can_wait: bool) -> bool:
        tool = spec.tool
        loop = asyncio.get_running_loop()
        request = ConfirmationRequest(
            uuid.uuid4().hex[:12],
            spec.tool_name,
            arguments,
            tool.read_only,
            loop.create_future(),
            risk=tool.risk,
            provenance=tool.provenance,
        )
        if self.on_confirm is None and not can_wait:
            raise ConfirmationRequiredError(
                f"{spec.tool_name!r} (from {tool.provenance or 'an unknown source'}) is a {tool.risk}-risk tool and "
                f"needs confirmation (confirm={self.confirm!r}), but "
                "agent.run() has nobody to ask. Pass on_confirm=callback, or confirm='never' (and "
                "allow_high_risk=True for high-risk tools), or use agent.start(task) / await agent.arun(task) and "
                "answer in the panel (agent.answer(id, True))."
            )
        self._pending[request.id] = request
        self._emit(
            "confirmation.requested",
            id=request.id,
            tool=request.tool,
            arguments=arguments,
            read_only=request.read_only,
            risk=request.risk,
            provenance=request.provenance,
        )
        try:
            if self.on_confirm is not None:
                request.answered_by = "callback"
                decision = self.on_confirm(request)
                if inspect.isawaitable(decision):
                    decision = await decision
                _loop.settle(request.future, bool(decision))
            approved = await asyncio.shield(request.future)
        finally:
            self._pending.pop(request.id, None)
        self._emit("confirmation.answered", id=request.id, tool=request.tool, approved=approved, by=request.answered_by)
        return approved

    def _result_text(self, spec: ToolSpec | None, step: Step) -> str:
        """The tool's result for the model: delimited, bounded, and marked when the page says it is untrusted."""
        untrusted = bool(spec and spec.tool.annotations.get("untrustedContentHint") is True)
        if step.error is not None:
            return result_text(step.tool, "error", step.error, untrusted, self.max_result_chars)
        return result_text(step.tool, "ok", step.text or "", untrusted, self.max_result_chars)

    # ----- the conversation -----

    def _conversation(self, specs: dict[str, ToolSpec]) -> list[dict[str, Any]]:
        """The messages of a request: the system message, then the conversation with the page's title and URL
        in a data block at its start (the page's words never get the system role)."""
        context = page_context(self.tab.title, self.tab.url, self._hidden)
        messages = list(self.messages)
        if messages and messages[0].get("role") == "user" and isinstance(messages[0].get("content"), str):
            messages[0] = {**messages[0], "content": f"{context}\n\n{messages[0]['content']}"}
        else:
            messages.insert(0, {"role": "user", "content": context})
        return [self._system_message(specs), *messages]

    def _system_message(self, specs: dict[str, ToolSpec]) -> dict[str, Any]:
        parts = [self.system_prompt]
        for skill in self._active_skills():
            parts.append(f"## Skill: {skill.name}\n{skill.instructions.strip()}")
        tools_text = self._io.system_tools_text(specs)
        if tools_text:
            parts.append(tools_text)
        return {"role": "system", "content": "\n\n".join(parts)}

    def _active_skills(self) -> list[Skill]:
        if self.skills is not None:
            return list(self.skills)
        registry = self.tab.browser.skills
        found = [registry.source(s.name) for s in self.tab.skills if s.ok]
        return [skill for skill in found if skill is not None and skill.instructions]

    def _tool_message(self, call_id: str, content: str) -> dict[str, Any]:
        if self.provider.prompt_mode:
            return {"role": "user", "content": content}
        return {"role": "tool", "tool_call_id": call_id, "content": content}

    def _emit(self, kind: str, **data: Any) -> Event:
        return self.events.emit(kind, tab_id=self.tab.id, url=self.tab.url, **data)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, WebMCPError):
        return f"{exc.code.value}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


async def call_mcp_recorded(
    spec: ToolSpec, arguments: Any, timeout: float, emit: Callable[..., Any], **where: Any
) -> tuple[MCPResult, float]:
    """Call the MCP server's tool behind ``spec`` and record it with ``emit`` as a page tool's call is recorded:
    ``tool.called`` (with ``server``, and what a replay needs to stand in for the server: the tool's description and
    annotations), then ``tool.returned`` or ``tool.failed``; ``where`` adds fields to each (``origin``). The agent
    and the chat-site bridge both call through it. Returns the result and the call's time in ms."""
    tool = spec.tool
    assert not isinstance(tool, Tool)
    where = {"tool": spec.tool_name, "server": tool.server.name, **where}
    hints = {k: v for k, v in tool.annotations.items() if k != "untrustedContentHint"}
    emit(
        "tool.called",
        **where,
        arguments=arguments,
        read_only=tool.read_only,
        source=tool.source,
        description=tool.description,
        annotations=hints,
    )
    started = time.perf_counter()
    try:
        result = await tool.server.acall(tool.name, spec.page_arguments(arguments), timeout=timeout)
    except WebMCPError as exc:
        emit("tool.failed", **where, duration_ms=_ms_since(started), code=exc.code.value, error=exc.message)
        raise
    duration = _ms_since(started)
    emit("tool.returned", **where, duration_ms=duration, text=result.text)
    return result, duration


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
