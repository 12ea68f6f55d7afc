"""Replaying a session on a live page, and reporting where the page now behaves differently.

Two ways: ``replay_agent`` feeds the recorded model replies back through the agent loop (a scripted endpoint
stands in for the model, so no API key is needed) while the tool calls run again on the live page;
``replay_calls`` repeats the recorded tool calls in order. Each result is compared with the recording;
``ignore`` drops volatile fields (dotted paths, ``*`` matches one level) and ``tolerance`` accepts numbers
that differ by at most that much.

Tool overrides the session recorded (``override.set``/``override.cleared``) are applied to the tab again where
they happened (before the turn or the call that followed them), so the replay shows the model what the recording
showed it; the tab's own overrides are put back afterwards.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ..core._loop import blocking, on_loop
from ..core.display import clip, json_or_text, table, visible
from ..core.errors import WebMCPError
from ..recording.session import Session

if TYPE_CHECKING:
    from ..browser.tab import Tab
    from ..mcp.client import MCPServer

__all__ = ["Divergence", "ReplayReport", "replay_agent", "replay_calls", "areplay_agent", "areplay_calls", "compare"]


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

    @property
    def ok(self) -> bool:
        return not self.divergences

    def __str__(self) -> str:
        if self.ok:
            return f"replay: {self.steps} steps, every result as recorded"
        lines = [f"replay: {self.steps} steps, {len(self.divergences)} diverged"]
        for d in self.divergences:
            lines.append(f"step {d.step} {d.tool}({clip(json.dumps(d.arguments), 100)}):")
            lines.append(d.diff)
        return visible("\n".join(lines))  # the diff holds the page's text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [[d.step, d.tool, clip(json.dumps(d.arguments), 80), d.diff] for d in self.divergences]
        head = "every result as recorded" if self.ok else f"{len(self.divergences)} diverged"
        html = f"<b>Replay of {self.steps} steps: {head}</b>"
        if rows:
            html += table(["step", "tool", "arguments", "diff"], rows)
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
    """One recorded tool call: the tool, its arguments, its result (or its error code), and the MCP server that
    ran it (``None`` for a page tool)."""

    tool: str
    arguments: Any
    result: Any
    error: str | None
    server: str | None = None


def recorded_steps(session: Session, *, mcp: bool | Collection[str] = True) -> list[RecordedStep]:
    """Each recorded tool call, in order. ``mcp``: keep the calls made to MCP servers' tools (those name their
    ``server``) — all of them (``True``), none (``False``) or those of the servers named. The eval harness's own
    checks of the page are not steps: nothing a replay runs makes them."""
    steps: list[RecordedStep] = []
    open_calls: dict[tuple[int | None, str, Any], list[Any]] = {}
    for event in session.events:
        server = event.data.get("server")
        if server is not None and (mcp is False or (mcp is not True and server not in mcp)):
            continue
        if event.data.get("origin") == "evals":
            continue
        key = (event.tab_id, str(event.data.get("tool")), server)
        if event.kind == "tool.called":
            open_calls.setdefault(key, []).append(event.data.get("arguments"))
        elif event.kind in ("tool.returned", "tool.failed") and open_calls.get(key):
            arguments = open_calls[key].pop(0)
            where = str(server) if server is not None else None
            if event.kind == "tool.returned":
                steps.append(RecordedStep(key[1], arguments, json_or_text(event.data.get("text")), None, where))
            else:
                steps.append(RecordedStep(key[1], arguments, None, event.data.get("code"), where))
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
        r_tool, _, r_result, r_error, _ = self.recorded[index]
        expected = {"tool": r_tool, "result": r_result, "error": r_error}
        got = {"tool": tool, "result": actual, "error": error}
        found = compare(expected, got, ignore=tuple(f"result.{p}" for p in self.ignore), tolerance=self.tolerance)
        if found:
            self._diverged(Divergence(index + 1, tool, arguments, r_result, actual, found))

    def finish(self) -> ReplayReport:
        missing = len(self.recorded) - self.report.steps
        if missing > 0:
            tool, arguments, result, _, _ = self.recorded[self.report.steps]
            diff = f"the replay stopped {missing} call(s) short of the recording"
            self._diverged(Divergence(self.report.steps + 1, tool, arguments, result, None, diff))
        self.progress.close()
        return self.report


@on_loop
async def areplay_calls(
    session: Session,
    tab: Tab,
    *,
    ignore: tuple[str, ...] = (),
    tolerance: float = 0.0,
    progress: bool = True,
    servers: Sequence[MCPServer] = (),
) -> ReplayReport:
    """Repeat the recorded tool calls on ``tab`` in order and compare each result. Calls recorded from an MCP
    server (an agent's, or a chat bridge's) run again on the server of that name in ``servers``; those of
    servers not given are left out."""
    by_name = {server.name: server for server in servers}
    recorded = recorded_steps(session, mcp=set(by_name))
    replay = Session(tab.browser, evidence="off", title=f"Replay of {session.header.id}")
    checker = _Checker(recorded, tuple(ignore), tolerance, _progress(len(recorded), progress), tab)
    overrides = _Overrides(session, tab)
    first = next(iter(session.filter("tool.called")), None)
    try:
        overrides.until(first.seq if first is not None else float("inf"))
        for tool, arguments, _, _, server in recorded:
            try:
                if server is not None:
                    done = await by_name[server].acall(tool.removeprefix(f"{server}."), arguments or {})
                    checker.check(tool, arguments, json_or_text(done.text), None)
                else:
                    result = await tab.acall(tool, arguments or {})
                    checker.check(tool, arguments, result.value, None)
            except WebMCPError as exc:
                checker.check(tool, arguments, None, exc.code.value)
        report = checker.finish()  # while the replay still records: a missing step is in its session too
    finally:
        overrides.restore()
        replay.close()
    report.session = replay
    return report


@on_loop
async def areplay_agent(
    session: Session, tab: Tab, *, ignore: tuple[str, ...] = (), tolerance: float = 0.0, progress: bool = True
) -> ReplayReport:
    """Run the recorded agent turns again: the recorded model replies drive the loop (no API key), the tool
    calls run on ``tab``, and every result is compared with the recording. MCP servers the agent used are not
    needed: their recorded results stand in for them. A session with no agent turns (its calls made with
    ``tab.call``) raises ``ValueError``: ``replay_calls`` replays it."""
    from ..agent.agent import Agent, ConfirmPolicy
    from ..core.agent_rules import resolve_policy
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
    decisions = iter([bool(e.data.get("approved")) for e in session.filter("confirmation.answered")])
    replay = Session(tab.browser, evidence="off", title=f"Replay of {session.header.id}")
    checker = _Checker(recorded, tuple(ignore), tolerance, _progress(len(recorded), progress), tab)
    stand_ins: list[Any] = []
    if any("server" in e.data for e in session.filter("tool.called")):
        from ..mcp.client import RecordedMCPServer

        stand_ins = RecordedMCPServer.from_events(session.events)

    def listen(event: Any) -> None:
        if event.kind == "tool.returned" and event.tab_id == tab.id:
            checker.check(
                event.data["tool"], arguments.pop(0) if arguments else None, json_or_text(event.data["text"]), None
            )
        elif event.kind == "tool.failed" and event.tab_id == tab.id:
            checker.check(event.data["tool"], arguments.pop(0) if arguments else None, None, event.data.get("code"))
        elif event.kind == "tool.called" and event.tab_id == tab.id:
            arguments.append(event.data.get("arguments"))

    arguments: list[Any] = []
    overrides = _Overrides(session, tab)
    unsubscribe = tab.browser.events.subscribe(listen)
    server = ScriptedServer(replies)
    try:
        started = next(iter(session.filter("agent.turn.started")), None)
        policy = cast(ConfirmPolicy, resolve_policy((started.data.get("confirm") if started else None) or "never"))
        agent = Agent(
            tab,
            provider="any",
            base_url=server.base_url,
            api_key="replay",
            model="replay",
            confirm=policy,
            allow_high_risk=bool(started and started.data.get("allow_high_risk")),
            on_confirm=lambda request: next(decisions, True),
            session=replay,
            max_tool_calls=10_000,
            turn_timeout=600,
            mcp_servers=stand_ins,
        )
        for turn in session.filter("agent.turn.started"):
            overrides.until(turn.seq)
            await agent.arun(turn.data["task"])
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
