"""Replaying a session on a live page, and reporting where the page now behaves differently.

Two ways: ``replay_agent`` feeds the recorded model replies back through the agent loop (a scripted endpoint
stands in for the model, so no API key is needed) while the tool calls run again on the live page;
``replay_calls`` repeats the recorded tool calls in order. Each result is compared with the recording;
``ignore`` drops volatile fields (dotted paths, ``*`` matches one level) and ``tolerance`` accepts numbers
that differ by at most that much.

Tool overrides the session recorded (``override.set``/``override.cleared``) are applied to the tab again where
they happened (before the turn or the call that followed them), so the replay shows the model what the recording
showed it; the tab's own overrides are put back afterwards.

A session is a file anyone may have written, so it sets no policy of the replay's. The caller's does: ``confirm``
(default ``"high"``: only high-risk tools ask) and ``allow_high_risk`` (default ``False``), answered by the
caller's ``on_confirm``; with nobody to answer, a call that asks is denied. A recorded denial is replayed as one
(a file can only make a replay do less), a recorded approval approves nothing the caller's policy asks about, and
the agent is offered only the tools the recording called. Calls a session made by hand before (or between) the
agent's turns run again before the turn they set up, under the same policy.
"""

from __future__ import annotations

import asyncio
import difflib
import fnmatch
import inspect
import json
import uuid
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..browser.tab import tool_now
from ..core._loop import blocking, on_loop
from ..core.agent_rules import CONFIRM, needs_confirmation, resolve_policy
from ..core.display import clip, escape, json_or_text, table, visible
from ..core.errors import ConfigurationError, ErrorCode, WebMCPError
from ..core.events import Event
from ..recording.session import Session

if TYPE_CHECKING:
    from ..agent.agent import ConfirmationRequest, Confirmer, ConfirmPolicy
    from ..browser.tab import Tab
    from ..mcp.client import MCPServer, RecordedMCPServer

__all__ = [
    "Divergence",
    "ReplayReport",
    "replay_agent",
    "replay_calls",
    "areplay_agent",
    "areplay_calls",
    "compare",
    "REPLAY_CONFIRM",
]

REPLAY_CONFIRM: ConfirmPolicy = "high"
"""What a replay asks the caller about by default: high-risk tools (and, without ``allow_high_risk``, only those)."""


@dataclass(frozen=True)
class Divergence:
    """One step whose result differs from the recording."""

    step: int
    tool: str
    arguments: Any
    expected: Any
    actual: Any
    diff: str


@dataclass
class ReplayReport:
    """The outcome of a replay: how many steps ran, which diverged, and the replay's own session."""

    steps: int
    divergences: list[Divergence] = field(default_factory=list)
    session: Session | None = None
    denied: list[str] = field(default_factory=list)
    """The calls the replay's policy asked about that nobody approved (tool names, in order): they did not run."""
    replayed_by_hand: int = 0
    """Calls the session made outside the agent's turns (by hand, before the turn they set up), run again."""

    @property
    def ok(self) -> bool:
        return not self.divergences

    def __str__(self) -> str:
        lines = [f"replay: {self._head()}"]
        for d in self.divergences:
            lines.append(f"step {d.step} {d.tool}({clip(json.dumps(d.arguments), 100)}):")
            lines.append(d.diff)
        if self.denied:
            lines.append(self._denied())
        return visible("\n".join(lines))  # the diff holds the page's text

    def _head(self) -> str:
        by_hand = f" ({self.replayed_by_hand} of them made by hand)" if self.replayed_by_hand else ""
        outcome = "every result as recorded" if self.ok else f"{len(self.divergences)} diverged"
        return f"{self.steps} steps{by_hand}, {outcome}"

    def _denied(self) -> str:
        return (
            f"not run: {', '.join(self.denied)} (the replay's policy asks before them and nobody approved: pass "
            "on_confirm=... to answer, or allow_high_risk=True; webmcp-nb replay --allow-high-risk)"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [[d.step, d.tool, clip(json.dumps(d.arguments), 80), d.diff] for d in self.divergences]
        html = f"<b>Replay of {escape(self._head())}</b>"
        if rows:
            html += table(["step", "tool", "arguments", "diff"], rows)
        if self.denied:
            html += f"<p>{escape(self._denied())}</p>"
        return {"text/plain": str(self), "text/html": html}


def _strip(value: Any, ignore: tuple[str, ...], path: str = "") -> Any:
    if isinstance(value, dict):
        return {
            k: _strip(v, ignore, f"{path}.{k}" if path else k)
            for k, v in value.items()
            if not any(fnmatch.fnmatchcase(f"{path}.{k}" if path else k, pattern) for pattern in ignore)
        }
    if isinstance(value, list):
        return [_strip(v, ignore, f"{path}.{i}" if path else str(i)) for i, v in enumerate(value)]
    return value


def _close(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a == b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= tolerance
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def compare(expected: Any, actual: Any, *, ignore: tuple[str, ...] = (), tolerance: float = 0.0) -> str | None:
    """``None`` when ``actual`` matches ``expected`` (after ``ignore`` and ``tolerance``), else a diff."""
    left, right = _strip(expected, ignore), _strip(actual, ignore)
    if _close(left, right, tolerance):
        return None
    a = json.dumps(left, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    b = json.dumps(right, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "recorded", "replayed", lineterm="", n=1))


class RecordedStep(NamedTuple):
    """One recorded tool call: the tool, its arguments, its result (or its error code), the MCP server that ran it
    (``None`` for a page tool), and the ``seq`` of its ``tool.called`` event."""

    tool: str
    arguments: Any
    result: Any
    error: str | None
    server: str | None = None
    seq: int = 0


def recorded_steps(session: Session, *, mcp: bool | Collection[str] = True) -> list[RecordedStep]:
    """Each recorded tool call, in order. ``mcp``: keep the calls made to MCP servers' tools (those name their
    ``server``) — all of them (``True``), none (``False``) or those of the servers named. The eval harness's own
    checks of the page are not steps: nothing a replay runs makes them."""
    steps: list[RecordedStep] = []
    open_calls: dict[tuple[int | None, str, Any], list[tuple[Any, int]]] = {}
    for event in session.events:
        server = event.data.get("server")
        if server is not None and (mcp is False or (mcp is not True and server not in mcp)):
            continue
        if event.data.get("origin") == "evals":
            continue
        key = (event.tab_id, str(event.data.get("tool")), server)
        if event.kind == "tool.called":
            open_calls.setdefault(key, []).append((event.data.get("arguments"), event.seq))
        elif event.kind in ("tool.returned", "tool.failed") and open_calls.get(key):
            arguments, seq = open_calls[key].pop(0)
            where = str(server) if server is not None else None
            if event.kind == "tool.returned":
                steps.append(RecordedStep(key[1], arguments, json_or_text(event.data.get("text")), None, where, seq))
            else:
                steps.append(RecordedStep(key[1], arguments, None, event.data.get("code"), where, seq))
    return steps


class _Overrides:
    """The recording's tool overrides, applied to the replay's tab in the order they were made, up to a point of
    the recording; the tab's own overrides come back at the end."""

    def __init__(self, session: Session, tab: Tab) -> None:
        self.tab = tab
        self.pending = [e for e in session.events if e.kind in ("override.set", "override.cleared")]
        self.before = dict(tab.tools.overrides)
        self.applied = False

    def until(self, seq: float) -> None:
        """Apply what the recording did before its event ``seq``."""
        while self.pending and self.pending[0].seq < seq:
            event = self.pending.pop(0)
            data = event.data
            self.applied = True
            if event.kind == "override.set" and isinstance(data.get("fields"), dict):
                self.tab.tools.override(str(data.get("tool")), **data["fields"], missing_ok=True)
            elif event.kind == "override.cleared" and isinstance(data.get("tools"), list):
                self.tab.tools.clear_overrides(*map(str, data["tools"]))

    def restore(self) -> None:
        if not self.applied:
            return
        self.tab.tools.clear_overrides()
        for name, found in self.before.items():
            self.tab.tools.override(name, **found.fields, missing_ok=True)


def _progress(total: int, show: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="replay", unit="step", disable=not show)


class _Checker:
    """Compares each new tool result with the recorded one, in order, as the replay produces them. Each
    divergence also becomes a ``replay.diverged`` event in the tab's stream, so the replay's own session (and
    its report) shows it at the step."""

    def __init__(
        self,
        recorded: list[RecordedStep],
        ignore: tuple[str, ...],
        tolerance: float,
        progress: Any,
        tab: Tab,
    ) -> None:
        self.recorded, self.ignore, self.tolerance, self.progress = recorded, ignore, tolerance, progress
        self.tab = tab
        self.report = ReplayReport(0)

    def _diverged(self, divergence: Divergence) -> None:
        self.report.divergences.append(divergence)
        self.tab.browser.events.emit(
            "replay.diverged",
            tab_id=self.tab.id,
            url=self.tab.url,
            step=divergence.step,
            tool=divergence.tool,
            diff=divergence.diff,
        )

    def check(self, tool: str, arguments: Any, actual: Any, error: str | None) -> None:
        index = self.report.steps
        self.report.steps += 1
        self.progress.update(1)
        if index >= len(self.recorded):
            diff = "the replay made a call the recording does not have"
            self._diverged(Divergence(index + 1, tool, arguments, None, actual, diff))
            return
        recorded = self.recorded[index]
        expected = {"tool": recorded.tool, "result": recorded.result, "error": recorded.error}
        got = {"tool": tool, "result": actual, "error": error}
        found = compare(expected, got, ignore=tuple(f"result.{p}" for p in self.ignore), tolerance=self.tolerance)
        if found:
            self._diverged(Divergence(index + 1, tool, arguments, recorded.result, actual, found))

    def finish(self) -> ReplayReport:
        missing = len(self.recorded) - self.report.steps
        if missing > 0:
            step = self.recorded[self.report.steps]
            diff = f"the replay stopped {missing} call(s) short of the recording"
            self._diverged(Divergence(self.report.steps + 1, step.tool, step.arguments, step.result, None, diff))
        self.progress.close()
        return self.report


class _Policy:
    """The caller's policy for what a replay runs: which risks ask first (``confirm``, ``allow_high_risk``) and who
    answers (``on_confirm``; nobody: a denial). Every ask and answer is an event, as the agent's are."""

    def __init__(
        self, confirm: str, allow_high_risk: bool, on_confirm: Confirmer | None, tab: Tab, report: ReplayReport
    ) -> None:
        try:
            self.confirm = resolve_policy(confirm)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        self.allow_high_risk, self.on_confirm, self.tab, self.report = allow_high_risk, on_confirm, tab, report

    def asks(self, risk: str) -> bool:
        return needs_confirmation(self.confirm, risk, self.allow_high_risk)

    async def answer(self, request: ConfirmationRequest) -> bool:
        """The caller's answer (``False`` when there is nobody to ask); a denial is counted in the report."""
        approved = False
        if self.on_confirm is not None:
            decision = self.on_confirm(request)
            approved = bool(await decision if inspect.isawaitable(decision) else decision)
        if not approved:
            self.report.denied.append(request.tool)
        return approved

    async def allows(self, tool: str, arguments: Any, found: Any) -> bool:
        """Whether a recorded call of ``tool`` (``found``: the live tool, or ``None``) may run again: asked as an
        agent asks, when the caller's policy asks for its risk (the live tool's, never the recording's). A tool the
        replay cannot see (one the page lists past the mirror's bounds) has no known risk: it asks as a high-risk
        one does."""
        from ..agent.agent import ConfirmationRequest

        risk = str(found.risk) if found is not None else "high"
        if not self.asks(risk):
            return True
        events, where = self.tab.browser.events, {"tab_id": self.tab.id, "url": self.tab.url}
        request = ConfirmationRequest(
            uuid.uuid4().hex[:12],
            tool,
            arguments,
            bool(getattr(found, "read_only", False)),
            asyncio.get_running_loop().create_future(),
            answered_by="callback" if self.on_confirm is not None else "nobody",
            risk=risk,
            provenance=str(getattr(found, "provenance", "") or ""),
        )
        shown = {"tool": tool, "arguments": arguments, "risk": risk, "provenance": request.provenance}
        events.emit("confirmation.requested", **where, id=request.id, read_only=request.read_only, **shown)
        approved = await self.answer(request)
        answered = {"id": request.id, "tool": tool, "approved": approved, "by": request.answered_by}
        events.emit("confirmation.answered", **where, **answered)
        if not approved:
            events.emit("tool.denied", **where, tool=tool, arguments=arguments)
        return approved


async def _call_again(
    step: RecordedStep,
    tab: Tab,
    servers: Mapping[str, MCPServer | RecordedMCPServer],
    policy: _Policy,
    checker: _Checker,
) -> None:
    """One recorded call again, if the caller's policy lets it run: on ``tab`` (a page tool) or on the MCP server
    of the name it was recorded with; its result goes to ``checker``. A page tool's call goes to the very tool whose
    risk the policy weighed, in the document that registered it: not to one the page registers under that name
    while the caller is asked, nor to one it had not listed yet."""
    server = servers.get(step.server) if step.server is not None else None
    try:
        if server is not None:
            name = step.tool.removeprefix(f"{step.server}.")
            if await policy.allows(step.tool, step.arguments, server.tools.get(name)):
                done = await server.acall(name, step.arguments or {})
                checker.check(step.tool, step.arguments, json_or_text(done.text), None)
                return
        else:
            tool = await tool_now(tab, step.tool)
            if tool is None and not tab.tools.omitted:
                checker.check(step.tool, step.arguments, None, ErrorCode.TOOL_NOT_FOUND.value)
                return
            if await policy.allows(step.tool, step.arguments, tool):
                result = await tab.acall(tool or step.tool, step.arguments or {})
                checker.check(step.tool, step.arguments, result.value, None)
                return
        checker.check(step.tool, step.arguments, None, ErrorCode.CONFIRMATION_DENIED.value)
    except WebMCPError as exc:
        checker.check(step.tool, step.arguments, None, exc.code.value)


@on_loop
async def areplay_calls(
    session: Session,
    tab: Tab,
    *,
    ignore: tuple[str, ...] = (),
    tolerance: float = 0.0,
    progress: bool = True,
    servers: Sequence[MCPServer] = (),
    confirm: ConfirmPolicy = REPLAY_CONFIRM,
    allow_high_risk: bool = False,
    on_confirm: Confirmer | None = None,
) -> ReplayReport:
    """Repeat the recorded tool calls on ``tab`` in order and compare each result. Calls recorded from an MCP
    server (an agent's, or a chat bridge's) run again on the server of that name in ``servers``; those of
    servers not given are left out. A call whose risk the caller's policy asks about (``confirm``,
    ``allow_high_risk``: by default, high-risk ones) runs only if ``on_confirm`` approves it (see the module)."""
    by_name = {server.name: server for server in servers}
    recorded = recorded_steps(session, mcp=set(by_name))
    replay = Session(tab.browser, evidence="off", title=f"Replay of {session.header.id}")
    checker = _Checker(recorded, tuple(ignore), tolerance, _progress(len(recorded), progress), tab)
    policy = _Policy(confirm, allow_high_risk, on_confirm, tab, checker.report)
    overrides = _Overrides(session, tab)
    first = next(iter(session.filter("tool.called")), None)
    try:
        overrides.until(first.seq if first is not None else float("inf"))
        for step in recorded:
            await _call_again(step, tab, by_name, policy, checker)
        report = checker.finish()  # while the replay still records: a missing step is in its session too
    finally:
        overrides.restore()
        replay.close()
    report.session = replay
    return report


class _Turns:
    """The recording's agent turns, and what it did around them: the calls made outside every turn (by hand,
    before the turn they set up), each turn's own policy (which can only add asks) and the answers it recorded
    (of which only a denial counts)."""

    def __init__(self, session: Session, steps: list[RecordedStep]) -> None:
        events = list(session.events)
        self.started = [e for e in events if e.kind == "agent.turn.started"]
        finished = [e.seq for e in events if e.kind == "agent.turn.finished"]
        windows = [
            (turn.seq, next((f for f in finished if f > turn.seq), float("inf"))) for turn in self.started
        ]  # a turn that never finished (a killed kernel) runs to the end
        self.by_hand = [s for s in steps if not any(start < s.seq < end for start, end in windows)]
        self.called = {str(e.data.get("tool")) for e in events if e.kind == "tool.called"}
        self.answers: dict[str, deque[bool]] = {}
        for event in events:
            if event.kind == "confirmation.answered":
                self.answers.setdefault(str(event.data.get("tool")), deque()).append(event.data.get("approved") is True)

    @staticmethod
    def policy(turn: Event) -> tuple[str, bool]:
        """What the recorded turn says it asked about (nothing, for what does not read as a policy)."""
        try:
            confirm = resolve_policy(str(turn.data.get("confirm")))
        except ValueError:
            confirm = "never"
        return confirm, turn.data.get("allow_high_risk") is True

    def recorded_answer(self, tool: str) -> bool | None:
        """The recording's next answer about ``tool``, if it has one left."""
        answers = self.answers.get(tool)
        return answers.popleft() if answers else None


def _broader(a: str, b: str) -> str:
    """The policy that asks about what either asks about (the policies nest)."""
    return max(a, b, key=lambda policy: len(CONFIRM["policies"][policy]))


@on_loop
async def areplay_agent(
    session: Session,
    tab: Tab,
    *,
    ignore: tuple[str, ...] = (),
    tolerance: float = 0.0,
    progress: bool = True,
    confirm: ConfirmPolicy = REPLAY_CONFIRM,
    allow_high_risk: bool = False,
    on_confirm: Confirmer | None = None,
) -> ReplayReport:
    """Run the recorded agent turns again: the recorded model replies drive the loop (no API key), the tool
    calls run on ``tab``, and every result is compared with the recording. MCP servers the agent used are not
    needed: their recorded results stand in for them. Calls the session made by hand run again first, before the
    turn that followed them. The caller's policy decides what asks (``confirm``, ``allow_high_risk``: by default,
    high-risk tools), ``on_confirm`` answers (nobody: denied), and the agent is offered only the tools the
    recording called (see the module). A session with no agent turns (its calls made with ``tab.call``) raises
    ``ValueError``: ``replay_calls`` replays it."""
    from ..agent.agent import Agent
    from ..testing import Reply, ScriptedServer

    replies = [
        Reply(
            content=e.data.get("content"),
            tool_calls=tuple((c["name"], c.get("arguments") or {}) for c in e.data.get("tool_calls") or []),
        )
        for e in session.filter("model.response")
    ]
    recorded = recorded_steps(session)
    if not replies:
        raise ValueError(_no_agent_turns(session, len(recorded)))
    turns = _Turns(session, recorded)
    replay = Session(tab.browser, evidence="off", title=f"Replay of {session.header.id}")
    checker = _Checker(recorded, tuple(ignore), tolerance, _progress(len(recorded), progress), tab)
    policy = _Policy(confirm, allow_high_risk, on_confirm, tab, checker.report)
    stand_ins: list[Any] = []  # RecordedMCPServer: they answer as the servers did
    if any("server" in e.data for e in session.filter("tool.called")):
        from ..mcp.client import RecordedMCPServer

        stand_ins = RecordedMCPServer.from_events(session.events)
    listening = True

    def listen(event: Any) -> None:
        if not listening or event.tab_id != tab.id:
            return
        if event.kind == "tool.returned":
            checker.check(
                event.data["tool"], arguments.pop(0) if arguments else None, json_or_text(event.data["text"]), None
            )
        elif event.kind == "tool.failed":
            checker.check(event.data["tool"], arguments.pop(0) if arguments else None, None, event.data.get("code"))
        elif event.kind == "tool.called":
            arguments.append(event.data.get("arguments"))

    recorded_policy = ("never", False)  # the turn being replayed: what the recording says it asked about

    async def decide(request: ConfirmationRequest) -> bool:
        """The agent asks where the caller's policy or the recorded turn's asks: a recorded no is a no, and only the
        caller approves what the caller's policy asks about."""
        recorded_asks = needs_confirmation(recorded_policy[0], request.risk, recorded_policy[1])
        if recorded_asks and turns.recorded_answer(request.tool) is False:
            return False
        return await policy.answer(request) if policy.asks(request.risk) else True

    arguments: list[Any] = []
    overrides = _Overrides(session, tab)
    unsubscribe = tab.browser.events.subscribe(listen)
    server = ScriptedServer(replies)
    by_hand = deque(turns.by_hand)
    servers = {stand_in.name: stand_in for stand_in in stand_ins}

    async def calls_before(seq: float) -> None:
        nonlocal listening
        listening = False  # these are checked as they run, not from their events
        try:
            while by_hand and by_hand[0].seq < seq:
                step = by_hand.popleft()
                overrides.until(step.seq)
                await _call_again(step, tab, servers, policy, checker)
                checker.report.replayed_by_hand += 1
        finally:
            listening = True

    try:
        agent = Agent(
            tab,
            provider="any",
            base_url=server.base_url,
            model="replay",
            on_confirm=decide,
            session=replay,
            max_tool_calls=10_000,
            turn_timeout=600,
            mcp_servers=stand_ins,
            allowed_tools=turns.called,
        )
        for turn in turns.started:
            await calls_before(turn.seq)
            overrides.until(turn.seq)
            recorded_policy = turns.policy(turn)
            agent.confirm = _broader(policy.confirm, recorded_policy[0])
            agent.allow_high_risk = allow_high_risk and recorded_policy[1]
            await agent.arun(turn.data.get("task"))
        await calls_before(float("inf"))
        report = checker.finish()  # while the replay still records: a missing step is in its session too
    finally:
        overrides.restore()
        unsubscribe()
        server.close()
        replay.close()
    report.session = replay
    return report


def _no_agent_turns(session: Session, calls: int) -> str:
    """Why ``replay_agent`` cannot replay ``session`` (no model reply to feed back) and what replays it instead."""
    said = f"session {session.header.id} has no agent turns to replay (no model reply was recorded)"
    if not calls:
        return f"{said}, and no tool call either: there is nothing to replay"
    return f"{said}; its {calls} tool call(s) were made directly: replay them with wm.replay_calls(session, tab)"


replay_calls = blocking(areplay_calls)
replay_agent = blocking(areplay_agent)
