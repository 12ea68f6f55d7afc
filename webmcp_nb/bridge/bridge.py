"""The chat-site bridge, the notebook's side: MCP servers' tools (and page tools of other tabs) for a web chat the
user is logged into, with no API key. The page side (``extension/page/user-script/chat-bridge.js``, in a world of
its own, through ``bridge.open``/``bridge.send``/``bridge.event``) adds the tool instructions to what the user
sends, reports the visible text of the assistant's latest reply as it streams and once it is complete, says when a
call waits and types results back. Everything else happens here, with the agent's own parts: the prompt-mode text
and parser, the limits and the framing of results (:mod:`webmcp_nb.core.agent_rules`), ``tool_specs`` for names
and descriptions, ``wm.mcp.connect`` for the tools.

The chat page owns its DOM: a script of its own can write a call into the assistant's reply. So every call the
bridge reads is a request, never an approval: each asks the user in the side panel or the notebook panel (a
``confirmation.requested`` event; ``bridge.answer`` from a cell), where the page can neither draw nor click,
unless the user let that source's read-only tools run unasked (:mod:`.policy`); and its result waits in the chat's
input for the user to send it unless they chose ``auto_send=True``. The page is told origins, never URLs, and
never a waiting call's arguments.

A call is found by its reply's turn (the page counts what it sends) and its place in the reply, so a page that
re-renders a finished reply never runs it twice; only the assistant's messages (the adapter's ``assistant``
selector) are read. Every bridged call is an event in the browser's stream (``origin="bridge"``): the panels show
it, sessions record it, ``replay_calls(..., servers=[...])`` replays it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agent.agent import call_mcp_recorded
from ..agent.model_io import parse_arguments
from ..agent.model_tools import ToolSpec, error_text, specs_text, tool_specs
from ..browser import checked
from ..browser.gate import Asker, Offer, check_call, check_site, shows
from ..browser.tab import Tab
from ..browser.tools import Tool, risk_label
from ..core import _loop
from ..core.agent_rules import BRIDGE, LIMITS, PROMPT_MODE, TEXTS, fill, parse_tool_calls, result_text
from ..core.describe import counted
from ..core.display import clip, escape, table, visible
from ..core.errors import (
    ConfigurationError,
    ConfirmationRequiredError,
    NotConnectedError,
    PermissionDeniedError,
    ToolNotFoundError,
    WebMCPError,
)
from ..core.events import Event, acting_as
from ..link.grants import origin_of
from ..link.protocol import Method
from ..recording.session import Session
from .policy import AutoRun, RunPolicy
from .sites import Site, SiteCheck, load_site

if TYPE_CHECKING:
    from ..mcp.client import MCPTool

__all__ = ["ChatBridge", "BridgedCall", "ChatSiteWarning", "chat_bridge", "achat_bridge"]

OPEN_TIMEOUT = 20.0
"""Seconds for the page side to start (its script injected, its first check done)."""
SEND_TIMEOUT = 10.0
CHECK_TIMEOUT = 10.0
REOPEN_ATTEMPTS = 3
REOPEN_WAIT = 1.0
"""Seconds between attempts to start the page side on a new page (the old one may still be unloading)."""
MAX_OFFER_SCAN = 32
"""Places in a reply tried for a call written without its tags (``{"name": …``: the fallback offered to the user)."""
LOOSE_CALL = re.compile(r'\{\s*"name"\s*:')
WAITING = "waits for your answer in the side panel or the notebook panel"
"""What the bar and the bridge's status say of a call that waits: the page never gets a way to answer it."""


class ChatSiteWarning(UserWarning):
    """The chat site's adapter does not fit the live page (``bridge.check()`` says which selector)."""


@dataclass
class BridgedCall:
    """One call the chat's assistant asked for, and what became of it."""

    tool: str
    """The name the chat used (``time_get_current_time``)."""
    arguments: Any
    status: str = "waiting"
    """``ok``, ``error`` (the tool failed or timed out), ``denied`` (by the user, or unanswered in the turn's time),
    ``refused`` (no such bridged tool, a call past the limits, or not a call at all), or ``waiting``/``running``."""
    text: str = ""
    """What went back to the chat: the result or the error, before framing."""
    risk: str | None = None
    source: str = ""
    duration_ms: float = 0.0


@dataclass
class _Ask:
    """A call that waits for the user's answer: the answer to come, the name the chat wrote, who answered."""

    future: asyncio.Future[bool]
    tool: str
    answered_by: str = ""


@dataclass
class _Reply:
    """The assistant's reply of one turn (the page's session and its count of messages sent)."""

    calls: list[asyncio.Task[str]] = field(default_factory=list)
    done: bool = False
    finished: bool = False
    denied: str | None = None


class ChatBridge:
    """A web chat in ``tab`` given the tools of ``servers`` (see :func:`chat_bridge`)."""

    def __init__(
        self,
        tab: Tab,
        servers: Sequence[Any],
        *,
        site: Site,
        auto_run: RunPolicy,
        auto_send: bool,
        max_tool_calls: int,
        tool_timeout: float,
        turn_timeout: float,
        max_result_chars: int,
        session: Session | None,
    ) -> None:
        self.tab = tab
        self.servers = list(servers)
        """Where the tools come from: MCP servers (``wm.mcp.connect``) and tabs (their page tools)."""
        self.site = site
        self.auto_run = auto_run
        """Which calls run without the user's answer (:class:`~webmcp_nb.bridge.policy.RunPolicy`): none unless
        the user opted in."""
        self.auto_send = auto_send
        """Whether results are sent to the chat once typed (else they wait in its input for the user's Send)."""
        self.max_tool_calls = max_tool_calls
        self.tool_timeout = tool_timeout
        self.turn_timeout = turn_timeout
        self.max_result_chars = max_result_chars
        self.session = session
        """The recording of the bridge's calls (``None`` with ``session=False``)."""
        self.id = uuid.uuid4().hex
        self.calls: list[BridgedCall] = []
        """Every call the chat asked for, in order."""
        self.enabled = True
        self.running = False
        self.closed = False
        self._browser = tab.browser
        self._replies: dict[tuple[str, int], _Reply] = {}
        self._pending: dict[str, _Ask] = {}
        self._checks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._origin = origin_of(tab.url)
        """The chat site: the page side starts only on a page of it (not where the tab goes next)."""
        self._away = False
        """The tab left the chat site: the bridge starts again when it is back."""
        self._read_once: set[str] = set()
        """Sites of source tabs the user let the chat read once, when it opened (granted sites need no entry)."""
        self._turn_calls = 0
        self._turn_started = time.monotonic()
        self._answers: list[str] = []
        self._asked_at = 0
        """Where the answers to the user's last message start in ``_answers``."""
        self._read = False
        """Whether a reply to the user's last message was read."""
        self._unseen: str | None = None
        """Why no reply could be read since the user's last message (the ``assistant`` selector matches nothing new
        though the page changed), as the page side said it."""
        self._changed = asyncio.Event()
        """Set whenever an answer comes or a call starts waiting for the user: what ``await_answer`` waits on."""
        self._tasks: set[asyncio.Future[Any]] = set()
        self._config_soon: asyncio.Handle | None = None
        self._unsubscribe: list[Callable[[], None]] = []

    # ----- the tools, and what the chat is told -----

    def _tools(self) -> list[Tool | MCPTool]:
        """Every bridged tool: each MCP server's tools, and each tab's page tools the grants let the chat see
        (:class:`~webmcp_nb.browser.gate.Offer`, as every face offers them: while it may read the site of the page,
        and of the frame, that registered them): a source tab that moved to a site not granted (or revoked) offers
        nothing to the chat, not even its address."""
        found: list[Tool | MCPTool] = []
        for source in self.servers:
            if isinstance(source, Tab):
                readable = functools.partial(self._readable, source)
                found += Offer(source, readable).select(source.tools.values())
            else:
                found += source.tools.values()
        return found

    def _readable(self, tab: Tab, url: str) -> bool:
        return shows(tab.browser, url) or origin_of(url) in self._read_once

    def _tab_of(self, tool: Tool) -> Tab | None:
        """The source tab that lists this very tool object now (``None``: the page let it go)."""
        tabs = (source for source in self.servers if isinstance(source, Tab))
        return next((tab for tab in tabs if any(t is tool for t in tab.tools.values())), None)

    @property
    def tools(self) -> dict[str, Tool | MCPTool]:
        """The bridged tools by the name the chat uses for them."""
        return {name: spec.tool for name, spec in tool_specs(self._tools()).items()}

    def instructions(self, specs: dict[str, ToolSpec] | None = None) -> str:
        """What is added to the user's message: the agent's prompt-mode text and the tools (``specs``: of the
        bridged tools as they are now, unless given)."""
        specs = tool_specs(self._tools()) if specs is None else specs
        return fill(BRIDGE["instructions"], prompt_mode=PROMPT_MODE, tools=specs_text(specs))

    def _source(self, spec: ToolSpec) -> str:
        """Where a tool comes from, as the chat page and the panels are told: an origin, never a URL (a source tab's
        address can hold what the chat must not read)."""
        tool = spec.tool
        if isinstance(tool, Tool):
            return f"page tool of {tool.provenance}"
        return f"MCP server {tool.server.name}"

    def _config(self) -> dict[str, Any]:
        specs = tool_specs(self._tools())
        instructions = self.instructions(specs)
        return {
            "site": self.site.as_dict(),
            "tools": [
                {
                    "name": name,
                    "risk": spec.tool.risk,
                    "source": self._source(spec),
                    "about": clip(spec.tool.description or "", 300),
                }
                for name, spec in specs.items()
            ],
            "suffix": fill(BRIDGE["message"], text="", instructions=instructions),
            "key": f"{hash(instructions) & 0xFFFFFFFF:08x}",
            "autoSend": self.auto_send,
            "enabled": self.enabled,
        }

    def _tools_changed(self) -> None:
        """Tell the page the new list (and instructions) once, at the end of this turn of the loop."""
        if self._config_soon is None and self.running:
            self._config_soon = asyncio.get_running_loop().call_soon(self._push_config)

    def _push_config(self) -> None:
        self._config_soon = None
        self._spawn(self._post({"type": "config", **self._config()}))

    # ----- the page side -----

    @property
    def _asker(self) -> Asker:
        """Who asks for a site's grant: this bridge, by its chat site's name."""
        return Asker("bridge", f"the chat bridge on {self.site.name}")

    async def _open(self) -> None:
        """Start the page side (again, after a navigation): its first check comes back with it. The sites of the
        tabs whose tools it offers must let the chat read them first (the user is asked for one never granted). Only
        on the chat site: a tab that went elsewhere is refused here, and by the page side itself (the worker tells it
        the site, and it checks its own document's origin before it starts)."""
        if (now := origin_of(self.tab.url)) != self._origin:
            self._away = True
            raise PermissionDeniedError(
                f"the chat tab shows {now or 'no site'} now, not the chat site {self._origin}: the bridge starts "
                "again when the tab is back there"
            )
        for source in self.servers:
            if isinstance(source, Tab):
                level = await check_site(source.browser, "read", self._asker, tab=source, action="read")
                site = checked.site_of(source.id)  # the site the relay checked: the tab may have moved since
                if level == "ask" and site is not None:  # allowed once: for this bridge's life, not the grants'
                    self._read_once.add(site)
        params = {"tabId": self.tab.id, "bridgeId": self.id, "config": self._config(), "origin": self._origin}
        try:
            found = await self._browser._request(Method.BRIDGE_OPEN, params, OPEN_TIMEOUT)
        except PermissionDeniedError as exc:  # the page side found another site (this mirror of the tab lagged)
            self._away = isinstance(exc.data, dict) and "elsewhere" in exc.data
            raise
        self.running = True
        check = SiteCheck(self.site.name, found if isinstance(found, dict) else {})
        if not check.ok:
            problems = "; ".join(f"{key}: {why}" for key, why in check.failures.items())
            _loop.warn(
                f"the chat site {self.site.name!r} does not fit this page ({problems}); bridge.check() shows "
                "each selector (give site=... another adapter)",
                ChatSiteWarning,
            )

    async def _post(self, message: dict[str, Any]) -> None:
        """A message to the page side; ``NotConnectedError`` when it is not running (the page went away)."""
        params = {"tabId": self.tab.id, "bridgeId": self.id, "message": message}
        await self._browser._request(Method.BRIDGE_SEND, params, SEND_TIMEOUT)

    def _on_relay(self, method: str, params: dict[str, Any]) -> None:
        if self.closed:
            return
        if method == Method.BROWSER_ADDED.value:
            added = params.get("browser")
            if self.running and isinstance(added, dict) and added.get("id") == self._browser.id:
                self._spawn(self._revive())
            return
        if method == Method.TAB_UPDATED.value:
            if self._away and not self.tab.closed and origin_of(self.tab.url) == self._origin:
                self._away = False  # back on the chat site (the browser applied the update before this listener)
                self._spawn(self._reopen())
            return
        if method != Method.BRIDGE_EVENT.value or params.get("bridgeId") != self.id:
            return
        message = params.get("message")
        kind = message.get("type") if isinstance(message, dict) else None
        handler = getattr(self, f"_page_{kind}", None) if isinstance(kind, str) and kind.isidentifier() else None
        if handler is not None:
            handler(message)

    def _page_hello(self, message: dict[str, Any]) -> None:
        self.running = True

    def _page_sent(self, message: dict[str, Any]) -> None:
        by = "bridge" if message.get("by") == "bridge" else "user"
        if by == "user":  # the user's own message starts a turn: the call budget and the clock start over
            self._turn_calls, self._turn_started = 0, time.monotonic()
            self._asked()
        self._emit("bridge.sent", by=by, instructions=message.get("instructions") is True)

    def _asked(self) -> None:
        """The user sent a message: the next answer is its answer."""
        self._asked_at, self._read, self._unseen = len(self._answers), False, None

    def _page_unseen(self, message: dict[str, Any]) -> None:
        """The page changed since the last message was sent, but nothing matches ``assistant`` among what appeared:
        the bridge cannot read the reply (a wrong selector, or a site that changed its markup)."""
        tried = ", ".join(self.site.selectors["assistant"])
        seconds = float(message.get("seconds") or 0)
        self._unseen = (
            f"nothing on the page matches the site's assistant selector ({tried}) among what appeared in the "
            f"{seconds:g} s since the last message was sent, though the page changed: the bridge cannot read the "
            "reply (bridge.check() shows each selector; give site=... one that matches the assistant's messages)"
        )
        self._emit("bridge.problem", text=self._unseen, selector="assistant")
        self._changed.set()

    def _page_reply(self, message: dict[str, Any]) -> None:
        turn = (str(message.get("session")), int(message.get("turn") or 0))
        text = message.get("text")
        if not isinstance(text, str) or not self.enabled:
            return
        self._read, self._unseen = True, None
        reply = self._replies.setdefault(turn, _Reply())
        if reply.finished:
            return  # its results went back already: the page re-rendered it
        calls = parse_tool_calls(text)
        for call in calls[len(reply.calls) :]:  # the calls not seen yet, in order; each waits for the one before
            before = reply.calls[-1] if reply.calls else None
            reply.calls.append(self._spawn(self._handle(reply, call, before)))
        if message.get("done") is True and not reply.done:
            reply.done = True
            self._spawn(self._finish(turn, reply, text))

    def _page_toggle(self, message: dict[str, Any]) -> None:
        self.enabled = message.get("enabled") is True
        self._emit("bridge.state", enabled=self.enabled, by="chat page")

    def _page_checked(self, message: dict[str, Any]) -> None:
        waiter = self._checks.pop(str(message.get("id")), None)
        if waiter is not None and not waiter.done() and isinstance(message.get("check"), dict):
            waiter.set_result(message["check"])

    def _page_problem(self, message: dict[str, Any]) -> None:
        self._emit("bridge.problem", text=clip(str(message.get("text", "")), 500))

    def _page_gone(self, message: dict[str, Any]) -> None:
        """The page side went away: the tab navigated, reloaded or closed. Started again on the tab's next page."""
        self.running = False
        if self.tab.closed:
            self._spawn(self.aclose())
            return
        self._emit("bridge.state", enabled=self.enabled, running=False, why="the page went away (navigated)")
        if not self.closed:
            self._spawn(self._reopen())

    def _on_event(self, event: Event) -> None:
        """The browser's events: tool lists that change (page sources), grants that change which of them the chat may
        see, the chat tab's new pages."""
        sources = (s.id for s in self.servers if isinstance(s, Tab))
        if (event.kind == "tools.changed" and event.tab_id in sources) or event.kind == "grant.changed":
            self._tools_changed()

    async def _revive(self) -> None:
        """The extension connected again. A worker that restarted lost the page side's pipe (and the page side,
        seeing it go, stopped): it starts afresh. One that did not gets the config again, which changes nothing."""
        try:
            await self._post({"type": "config", **self._config()})
        except NotConnectedError:
            self.running = False
            self._emit("bridge.state", enabled=self.enabled, running=False, why="the extension restarted")
            await self._reopen()

    async def _reopen(self) -> None:
        """Start the page side on the tab's new page (the worker waits for it to load); a page still unloading
        when it was tried is tried again, a few times."""
        for attempt in range(REOPEN_ATTEMPTS):
            if self.closed or self.running or self.tab.closed:
                return
            try:
                await self._open()
            except WebMCPError as exc:
                if attempt == REOPEN_ATTEMPTS - 1 or isinstance(exc, PermissionDeniedError):
                    self._emit("bridge.problem", text=f"the bridge could not start on the new page: {exc.message}")
                    return
                await asyncio.sleep(REOPEN_WAIT)
            else:
                self._emit("bridge.state", enabled=self.enabled, running=True)
                return

    # ----- one reply, its calls -----

    async def _handle(self, reply: _Reply, call: dict[str, Any], before: asyncio.Task[str] | None) -> str:
        """One call of a reply, after the one before it: its result, framed for the chat."""
        if before is not None:
            with contextlib.suppress(Exception):
                await before
        name = str(call.get("name") or "tool_call")
        record = BridgedCall(tool=name, arguments=call.get("arguments"))
        self.calls.append(record)
        refusal = self._refusal(call, reply)
        if self._browser._grants.enforced and any(isinstance(s, Tab) for s in self.servers):
            with contextlib.suppress(WebMCPError):  # which page tools the chat may see: the grants as of now
                await self._browser._grants_now()
        specs = tool_specs(self._tools())
        spec = specs.get(name)
        if refusal is None and spec is None:
            refusal = fill(TEXTS["unknown_tool"], name=name, available=", ".join(specs) or TEXTS["no_tools"])
        arguments = parse_arguments(call.get("arguments"))
        if refusal is None and isinstance(arguments, str):
            refusal = fill(TEXTS["not_an_object"], arguments=clip(arguments, LIMITS["max_error_chars"]))
        if refusal is not None or spec is None:
            record.status, record.text = "refused", refusal or ""
            self._emit("tool.refused", tool=name, arguments=call.get("arguments"), error=clip(record.text, 500))
            return result_text(name, "error", record.text, limit=self.max_result_chars)
        self._turn_calls += 1
        record.risk, record.source = spec.tool.risk, self._source(spec)
        not_granted = await self._not_granted(spec)  # before the card, as agents do: no card for a call refused anyway
        if not_granted is not None:
            record.status, record.text = "error", not_granted
            return result_text(spec.model_name, "error", record.text, limit=self.max_result_chars)
        # Every call asks, unless the user let this source's read-only tools run unasked; a call read from a reply
        # without its tags always asks (it may be nothing the assistant meant as a call).
        offered = call.get("offered") is True
        asks = offered or not self.auto_run.runs_unasked(spec.tool)
        if asks and not await self._confirm(spec, arguments, record, offered=offered):
            reply.denied = spec.tool_name
            record.status, record.text = "denied", TEXTS["denied"]
            self._emit("tool.denied", tool=spec.tool_name, arguments=arguments)
            return result_text(name, "error", record.text, limit=self.max_result_chars)
        return await self._call(spec, arguments, record)

    async def _not_granted(self, spec: ToolSpec) -> str | None:
        """Why a page tool may not be called on its site (:func:`~webmcp_nb.browser.gate.check_call`: a site never
        granted asks the user), or ``None``; MCP servers' tools need no grant."""
        tool = spec.tool
        if not isinstance(tool, Tool):
            return None
        tab = self._tab_of(tool)
        try:
            if tab is None:
                raise ToolNotFoundError(f"{tool.name} is no longer on the page that offered it")
            await check_call(tab, tool, tool.name, self._asker)
        except WebMCPError as exc:
            return error_text(exc)
        return None

    def _refusal(self, call: dict[str, Any], reply: _Reply) -> str | None:
        """Why a call may not run, or ``None``: the limits, checked before every bridged call."""
        if "error" in call:
            return str(call["error"])
        if reply.denied is not None:
            return fill(TEXTS["after_denial"], tool=reply.denied)
        if self._turn_calls >= self.max_tool_calls:
            self._emit("agent.limit", limit="max_tool_calls", tool=str(call.get("name")), origin="bridge")
            return fill(TEXTS["call_limit"], limit=self.max_tool_calls)
        if time.monotonic() - self._turn_started > self.turn_timeout:
            self._emit("agent.limit", limit="turn_timeout", seconds=self.turn_timeout, origin="bridge")
            return fill(TEXTS["turn_limit"], seconds=self.turn_timeout)
        return None

    async def _call(self, spec: ToolSpec, arguments: dict[str, Any], record: BridgedCall) -> str:
        """Run the call on its server or tab, as an event in the browser's stream; its result, framed."""
        tool = spec.tool
        record.status = "running"
        self._status(f"running {spec.model_name}…")
        started = time.perf_counter()
        untrusted = tool.annotations.get("untrustedContentHint") is True
        try:
            if isinstance(tool, Tool):
                tab = self._tab_of(tool)
                if tab is None:
                    raise ToolNotFoundError(f"{tool.name} is no longer on the page that offered it")
                call = tab.acall(  # the tool shown to the chat, in the document that registered it
                    tool, spec.page_arguments(arguments), timeout=self.tool_timeout
                )
                text = (await acting_as("bridge", call)).text  # the tab emits tool.called … itself
            else:
                result, _ = await call_mcp_recorded(spec, arguments, self.tool_timeout, self._emit, origin="bridge")
                text = result.text
        except WebMCPError as exc:
            record.status, record.text = "error", error_text(exc)
            body = result_text(spec.model_name, "error", record.text, untrusted, self.max_result_chars)
        else:
            record.status, record.text = "ok", text
            body = result_text(spec.model_name, "ok", text, untrusted, self.max_result_chars)
        record.duration_ms = (time.perf_counter() - started) * 1000
        return body

    async def _finish(self, turn: tuple[str, int], reply: _Reply, text: str) -> None:
        """The reply is complete: its results go back to the chat, or — no call in it — the turn has ended."""
        if reply.calls:
            results: list[str] = []
            while len(results) < len(reply.calls):  # a call read from a re-render meanwhile is waited for too
                results.append(await reply.calls[len(results)])
            reply.finished = True
            await self._deliver(turn, "\n\n".join(results))
            return
        reply.finished = True
        loose = self._loose_call(text)
        if loose is not None:  # a call the chat wrote without its tags (a site that drops them): the user decides
            self._emit("bridge.offered", tool=loose["name"], arguments=loose.get("arguments"))
            result = await self._handle(reply, {**loose, "offered": True}, None)
            if reply.denied is None:
                await self._deliver(turn, result)
                return
        self._emit("bridge.answered", calls=self._turn_calls)
        self._answers.append(text)
        self._changed.set()
        self._status(f"the assistant answered ({counted(self._turn_calls, 'tool call')} this turn)")

    async def _deliver(self, turn: tuple[str, int], text: str) -> None:
        self._status(
            "results ready: they are sent to the chat once it has finished answering"
            if self.auto_send
            else "results ready: they are typed into the chat's input; press Send to give them to the chat"
        )
        await self._post({"type": "result", "session": turn[0], "turn": turn[1], "text": text})

    def _loose_call(self, text: str) -> dict[str, Any] | None:
        """A bridged tool's call written as bare JSON (no tags), offered to the user; the first few places that
        start like one are tried."""
        names = set(tool_specs(self._tools()))
        decoder = json.JSONDecoder()
        for match in itertools.islice(LOOSE_CALL.finditer(text), MAX_OFFER_SCAN):
            try:
                found, _ = decoder.raw_decode(text, match.start())
            except (ValueError, RecursionError):
                continue
            if isinstance(found, dict) and found.get("name") in names and isinstance(found.get("arguments", {}), dict):
                return {"name": found["name"], "arguments": found.get("arguments", {})}
        return None

    # ----- confirmations -----

    async def _confirm(self, spec: ToolSpec, arguments: Any, record: BridgedCall, *, offered: bool = False) -> bool:
        """A card in both panels (the side panel's and the notebook's), where the page cannot draw or click; the
        first answer wins. The chat page's bar only says that the call waits (its name, which the chat wrote, and
        no arguments). Unanswered within the turn's time limit, it counts as denied."""
        loop = asyncio.get_running_loop()
        request_id = uuid.uuid4().hex[:12]
        ask = self._pending[request_id] = _Ask(loop.create_future(), spec.model_name)
        tool = spec.tool
        self._emit(
            "confirmation.requested",
            id=request_id,
            tool=spec.tool_name,
            arguments=arguments,
            read_only=tool.read_only,
            risk=tool.risk,
            provenance=record.source + (" (written without its tool_call tags)" if offered else ""),
            origin="bridge",
        )
        self._changed.set()
        self._status("a call waits for your answer (below)")
        self._spawn(self._post({"type": "waiting", "id": request_id, "tool": spec.model_name}))
        remaining = max(0.0, self.turn_timeout - (time.monotonic() - self._turn_started))
        try:
            approved = await asyncio.wait_for(asyncio.shield(ask.future), remaining)
        except asyncio.TimeoutError:
            approved, ask.answered_by = False, "nobody: the turn's time ran out"
        by = self._pending.pop(request_id).answered_by
        self._emit("confirmation.answered", id=request_id, tool=spec.tool_name, approved=approved, by=by)
        self._spawn(self._post({"type": "resolve", "id": request_id, "approved": approved, "by": by}))
        return approved

    def answer(self, request_id: str | None, approved: bool, *, by: str = "notebook") -> bool:
        """Answer a confirmation (the oldest when ``request_id`` is None), from any thread; the first answer
        wins. Both panels answer through this; the chat page cannot."""
        ask = self._pending.get(request_id) if request_id else next(iter(self._pending.values()), None)
        return ask is not None and _loop.answer_first(ask, approved, by)

    @property
    def pending(self) -> list[str]:
        """Confirmations waiting for an answer, by id."""
        return [key for key, ask in self._pending.items() if not ask.future.done()]

    # ----- public -----

    @_loop.on_loop
    async def acheck(self) -> SiteCheck:
        """Which selector of the site's adapter works on the live page, and which fails."""
        request_id = uuid.uuid4().hex[:12]
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._checks[request_id] = waiter
        try:
            await self._post({"type": "check", "id": request_id})
            found = await asyncio.wait_for(waiter, CHECK_TIMEOUT)
        finally:
            self._checks.pop(request_id, None)
        return SiteCheck(self.site.name, found)

    check = _loop.blocking(acheck)

    @_loop.on_loop
    async def asend(self, text: str) -> None:
        """Type ``text`` into the chat as the user would, with the tool instructions when the conversation needs
        them, and send it. Returns at once; ``wait_answer()`` waits for the assistant's answer."""
        self._asked()
        await self._post({"type": "say", "text": str(text)})

    send = _loop.blocking(asend)

    @_loop.on_loop
    async def await_answer(self, timeout: float = 120.0) -> str:
        """The assistant's answer without a tool call (the end of a turn) to the user's last message, as the page
        shows it. Calls that wait for the user are waited for (answer them in a panel, or ``bridge.answer``)."""
        return await self._await_answer(timeout, can_wait=True)

    def wait_answer(self, timeout: float = 120.0) -> str:
        """The blocking twin of :meth:`await_answer`, which never waits on a click: when a call waits for the
        user's answer it raises ``ConfirmationRequiredError`` at once, naming it (answer it in the side panel, the
        notebook panel or with ``bridge.answer``, then call ``wait_answer()`` again)."""
        return _loop.run(self._await_answer(timeout, can_wait=False))

    async def _await_answer(self, timeout: float, *, can_wait: bool) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self._answers) <= self._asked_at:
            self._changed.clear()
            if not can_wait and self.pending:
                raise ConfirmationRequiredError(self._waiting_text())
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(self._timeout_text(timeout))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)
        return self._answers[self._asked_at]

    def _waiting_text(self) -> str:
        names = ", ".join(f"{self._pending[key].tool} ({key})" for key in self.pending)
        return (
            f"{names} {WAITING}: a cell does not wait for a click. Answer there (or bridge.answer(id, True) in a "
            "cell), then call wait_answer() again (or await bridge.await_answer(), which waits)"
        )

    def _timeout_text(self, timeout: float) -> str:
        said = f"the chat did not answer without a tool call within {timeout:g} s"
        if self._unseen is not None:
            return f"{said}: {self._unseen}"
        if not self._read:
            tried = ", ".join(self.site.selectors["assistant"])
            return f"{said}: no reply was read since the last message was sent (the site's assistant selector: {tried})"
        if self.pending:
            return f"{said}: {self._waiting_text()}"
        return said

    @_loop.on_loop
    async def aset_enabled(self, enabled: bool) -> None:
        """Switch the bridge on or off, as the bar's switch does (off: replies are not read, nothing is added)."""
        self.enabled = bool(enabled)
        await self._post({"type": "config", **self._config()})
        self._emit("bridge.state", enabled=self.enabled, by="notebook")

    set_enabled = _loop.blocking(aset_enabled)

    @_loop.on_loop
    async def aclose(self) -> None:
        """Take the bar away from the page and stop; confirmations still waiting are denied."""
        if self.closed:
            return
        self.closed = True
        for ask in self._pending.values():
            _loop.settle(ask.future, False)
        for stop in self._unsubscribe:
            stop()
        with contextlib.suppress(WebMCPError):
            await self._post({"type": "close"})
        for task in list(self._tasks):
            task.cancel()
        self.running = False
        self._emit("bridge.closed")
        if self._owns_session and self.session is not None:
            self.session.close()

    close = _loop.blocking(aclose)

    _owns_session = False
    """Whether closing the bridge closes its session (one it started itself)."""

    def __enter__(self) -> ChatBridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- helpers -----

    def _status(self, text: str) -> None:
        if self.running:
            self._spawn(self._post({"type": "status", "text": text}))

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and isinstance(task.exception(), NotConnectedError):
            self.running = False  # the page side is gone; the next page of the tab starts it again

    def _emit(self, kind: str, **data: Any) -> Event:
        data.setdefault("origin", "bridge")
        event: Event = self._browser.events.emit(kind, tab_id=self.tab.id, url=self.tab.url, **data)
        return event

    def __repr__(self) -> str:
        state = (
            "closed" if self.closed else ("on" if self.enabled else "off") + ("" if self.running else ", not running")
        )
        sending = "results sent at once" if self.auto_send else "results wait for your Send"
        return visible(
            f"<ChatBridge {self.site.name} in tab {self.tab.id} ({state}), {len(self.tools)} tools; "
            f"{self.auto_run}, {sending}>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        specs = tool_specs(self._tools())
        rows = [
            [name, risk_label(s.tool.risk), self._source(s), clip(s.tool.description or "", 120)]
            for name, s in specs.items()
        ]
        calls = [
            [c.tool, clip(json.dumps(c.arguments, default=str), 80), c.status, clip(c.text, 120)] for c in self.calls
        ]
        head = repr(self)
        html = f"<div><b>{escape(head)}</b>{table(['tool', 'risk', 'source', 'description'], rows, 'Bridged tools')}"
        if calls:
            html += table(["tool", "arguments", "status", "result"], calls, "Calls")
        lines = [
            head,
            *(f"  {r[0]} [{r[1]}] {r[2]}" for r in rows),
            *(f"  call {c[0]}({c[1]}) → {c[2]}" for c in calls),
        ]
        return {"text/plain": visible("\n".join(lines)), "text/html": html + "</div>"}


@_loop.on_loop
async def achat_bridge(
    tab: Tab,
    servers: Sequence[Any] = (),
    *,
    site: str | Path | Mapping[str, Any] | Site = "generic",
    auto_run: AutoRun | Mapping[str, AutoRun] = "never",
    auto_send: bool = False,
    max_tool_calls: int = LIMITS["max_tool_calls"],
    tool_timeout: float = LIMITS["tool_timeout_s"],
    turn_timeout: float = LIMITS["turn_timeout_s"],
    max_result_chars: int = LIMITS["max_result_chars"],
    session: Session | Literal[False] | None = None,
) -> ChatBridge:
    """Bridge the web chat in ``tab`` to the tools of ``servers`` (``wm.mcp.connect(...)`` servers, and tabs whose
    page tools it may use): a bar appears in the page; what the user sends gets the tool instructions; each call the
    assistant writes asks the user in the side panel and the notebook panel (``bridge.answer`` from a cell), runs
    here, and its result is typed into the chat's input for the user to send. ``site``: an adapter's name
    (``generic``, ``chatgpt``, ``deepseek``, ``kimi``, ``demo-chat``), a JSON file or a dict.

    Opt-ins, for a chat site the user trusts (the page can write calls into the assistant's reply and reads what
    goes back): ``auto_run="read-only"`` runs read-only tools' calls unasked (or ``{"time": "read-only"}``: per
    source, an MCP server by its name or a tab's page tools by its origin); ``auto_send=True`` sends results
    without waiting for the user's Send. The limits are the agent's. Recorded in ``session`` (default: the
    browser's open session, or a new one)."""
    if not servers:
        raise ConfigurationError("chat_bridge() needs servers=[...]: wm.mcp.connect(...) servers or tabs")
    for source in servers:
        if not hasattr(source, "tools"):
            raise ConfigurationError(f"servers must be MCP servers or tabs, not {type(source).__name__}")
    policy = RunPolicy.of(auto_run, servers)
    browser = tab.browser
    owned = session is None and browser.session is None
    recording = None if session is False else (session or browser.session or Session(browser, evidence="off"))
    bridge = ChatBridge(
        tab,
        servers,
        site=load_site(site),
        auto_run=policy,
        auto_send=bool(auto_send),
        max_tool_calls=max_tool_calls,
        tool_timeout=tool_timeout,
        turn_timeout=turn_timeout,
        max_result_chars=max_result_chars,
        session=recording,
    )
    bridge._owns_session = owned and recording is not None
    bridge._unsubscribe.append(browser._on_relay(bridge._on_relay))
    bridge._unsubscribe.append(browser.events.subscribe(bridge._on_event))
    for source in servers:
        if not isinstance(source, Tab):
            bridge._unsubscribe.append(source.events.subscribe(lambda event: bridge._tools_changed()))
    browser._add_agent(bridge)
    try:
        await bridge._open()
    except BaseException:
        await bridge.aclose()
        raise
    specs = tool_specs(bridge._tools())
    bridge._emit(
        "bridge.opened", site=bridge.site.name, tools=list(specs), auto_run=policy.describe(), auto_send=auto_send
    )
    return bridge


chat_bridge = _loop.blocking(achat_bridge)
