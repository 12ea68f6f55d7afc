"""``Browser``: the notebook's view of a connected Chrome/Chromium (its tabs are :class:`~webmcp_nb.browser.tab.Tab`).

State comes from the relay (``hello``, then ``tab.updated``/``tab.removed`` notifications) and is kept
in a mirror, so reading ``tab.tools`` never waits on the browser. Every action is an ``a*`` coroutine
run on the library's loop, with a blocking twin of the same name without the ``a``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..core._loop import blocking, on_loop, warn
from ..core.describe import counted
from ..core.display import Markup, clip, escape, table
from ..core.errors import (
    BrowserCrashedError,
    BrowserNotFoundError,
    Hint,
    NotConnectedError,
    TabNotFoundError,
    ToolTimeoutError,
)
from ..core.events import EventStream, origin
from ..link._sockets import spawn
from ..link.connection import LOST, Connection, LocalConnection
from ..link.grants import GrantsState
from ..link.protocol import (
    EXTENSION_ID,
    BrowserInfo,
    InstalledSkill,
    Method,
    SessionInfo,
    TabInfo,
    ToolChanges,
    parse_panel_event,
)
from ..link.relay import Relay
from .calls import CallLine, seconds
from .chromium import ChromiumProcess, ProcessExit
from .defaults import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS
from .panel_feed import PanelFeed
from .skills import SkillRegistry
from .tab import NAVIGATION_TIMEOUT, Tab

if TYPE_CHECKING:
    from ..recording.session import Session

__all__ = ["Browser", "UserScriptsWarning", "DEFAULT_CALL_TIMEOUT", "DEFAULT_MAX_RESULT_CHARS"]

log = logging.getLogger(__name__)

USER_SCRIPTS_OFF = (
    "Skills are off in this browser: open "
    f"chrome://extensions/?id={EXTENSION_ID} and turn on 'Allow User Scripts' for webmcp-nb "
    "(on Chrome before 138, turn on Developer mode in chrome://extensions). Page tools work without it."
)
EVENT_NAMES = 100  # tool names an event lists at most (a page may have thousands)
RECONNECT_GRACE = 10.0  # how long a request waits for a browser that is reconnecting
EXIT_GRACE = 0.5  # after losing a launched browser: how long to wait to learn whether its process ended


def _as_panel_event(raw: Any) -> Any:
    """A session's event in the shape a side panel sends (a failure's text is ``message`` there, ``error`` here)."""
    if isinstance(raw, dict) and isinstance(raw.get("data"), dict) and "error" in raw["data"]:
        return {**raw, "data": {"message": raw["data"]["error"], **raw["data"]}}
    return raw


class UserScriptsWarning(UserWarning):
    """The browser cannot run skills until the user allows user scripts for the extension."""


class Confirms(Protocol):
    """What asks the user to confirm calls on this browser's tabs (an agent, the chat-site bridge): the views'
    answers go to it."""

    def answer(self, request_id: str | None, approved: bool, *, by: str = ...) -> bool: ...


class Browser:
    """A connected browser. Made by :func:`webmcp_nb.own_chrome.connect` or :func:`webmcp_nb.browser.launch`.

    The rest of the package uses only these methods, never its attributes: ``_request`` (a request to this
    browser's extension), ``_wait_until``, ``_tab_from_reply``/``_forget_tab``/``_has_tab`` (tabs),
    ``_attach_session``/``_detach_session`` (sessions; their evidence is taken on the tabs' ``CallLine``),
    ``_add_agent``/``_answer_confirmation`` (agents' confirmations), ``_watch``/``_wait_bound``/
    ``_warn_if_skills_off`` (``launch()`` and ``connect()``), ``_relay_request``/``_on_relay`` (MCP sessions),
    ``_grants``/``_check_grant``/``_answer_grant``/``_revoke_grant`` (per-site grants, :mod:`.gate`)."""

    def __init__(
        self,
        connection: Connection | LocalConnection,
        *,
        browser_id: str | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.id = browser_id
        self.info: BrowserInfo | None = None
        self._connection = connection
        self._tabs: dict[int, Tab] = {}
        self._connected = False
        self._changed = asyncio.Event()
        self._on_close = on_close
        self._closed = False
        self.process: ChromiumProcess | None = None
        """The Chromium this library launched for it (``None`` for the user's own browser)."""
        self.available: dict[str, dict[str, Any]] = {}
        """Every browser connected to the relay, by id (a relay may serve several)."""
        self._exited = asyncio.Event()
        self._skills = SkillRegistry(self)
        self.events = EventStream()
        """Everything that happens through this browser: tool calls, agent turns, skills, navigation."""
        self._sessions: list[Session] = []  # those recording this browser now (their evidence hooks run on calls)
        self._calls = CallLine(
            self.events, self._request, self._sessions, call_timeout=call_timeout, max_result_chars=max_result_chars
        )
        self._agents: weakref.WeakSet[Confirms] = weakref.WeakSet()  # whose confirmations a side panel may answer
        self._loop = asyncio.get_running_loop()
        self._feed = PanelFeed(self.events, self._push_to_panels)
        self.relay: Relay | None = None
        """The in-process relay of a launched browser (``None`` when connected through the daemon)."""
        self._mcp_sessions: list[SessionInfo] = []
        self._introduced: set[str] = set()  # the sessions whose start the stream has told
        self._watchers: list[Callable[[], None]] = []
        self._grants = GrantsState()
        """The per-site grants as the relay last told them (enforced until it says otherwise)."""
        connection.add_listener(self._on_event)

    # ----- state from the relay -----

    def _on_event(self, method: str, params: dict[str, Any]) -> None:
        if method in (Method.HELLO.value, Method.SESSIONS_UPDATED.value) and isinstance(params.get("sessions"), list):
            self._on_sessions(params["sessions"])
        if method == Method.HELLO.value and "grants" in params:
            self._grants = GrantsState.from_wire(params["grants"])
        if method == Method.HELLO.value:
            self.available = {b["id"]: b for b in params.get("browsers") or [] if isinstance(b, dict) and "id" in b}
            mine = self.available.get(self.id) if self.id else None
            if mine is None and self.id is None and len(self.available) == 1:
                mine = next(iter(self.available.values()))
            if mine is not None:
                self._bind(mine)
            else:
                self._connected = False
        elif method == Method.BROWSER_ADDED.value:
            state = params.get("browser") or {}
            if isinstance(state.get("id"), str):
                self.available[state["id"]] = state
                if self.id == state["id"] or (self.id is None and len(self.available) == 1):
                    self._bind(state)
        elif method == Method.BROWSER_REMOVED.value:
            self.available.pop(params.get("browserId"), None)  # type: ignore[arg-type]
            if params.get("browserId") == self.id:
                self._connected = False
        elif method == Method.BROWSER_UPDATED.value:
            if params.get("browserId") == self.id and self.info is not None and "userScripts" in params:
                self.info.user_scripts = bool(params["userScripts"])
                self.events.emit("browser.updated", user_scripts=self.info.user_scripts)
        elif method == LOST:
            self._connected = False
        elif method == Method.PANEL_EVENT.value:
            if params.get("browserId") == self.id and isinstance(params.get("event"), dict):
                self._on_panel_event(params["event"])
        elif method == Method.SESSION_EVENTS.value:
            if params.get("browserId") == self.id and isinstance(params.get("events"), list):
                for raw in params["events"][:100]:
                    self._on_panel_event(_as_panel_event(raw), origin="mcp", mcp_session=str(params.get("sessionId")))
        elif method == Method.GRANTS_UPDATED.value:
            self._grants = GrantsState.from_wire(params)
        elif method == Method.GRANT_EVENT.value:
            if params.get("browserId") in (None, self.id) and isinstance(params.get("event"), dict):
                self._on_grant_event(params["event"])
        elif method == Method.SKILLS_UPDATED.value:
            if params.get("browserId") == self.id and self.info is not None:
                self.info.skills = [InstalledSkill.model_validate(s) for s in params.get("skills") or []]
                self.events.emit("skills.changed", skills=[s.name for s in self.info.skills])
        elif params.get("browserId") == self.id and self.id is not None:
            if method == Method.TAB_UPDATED.value:
                self._on_tab_updated(params["tab"], params.get("changes"))
            elif method == Method.TAB_REMOVED.value:
                self._forget_tab(params.get("tabId"))
        self._notify()

    def _on_tab_updated(self, raw: dict[str, Any], changes: dict[str, Any] | None) -> None:
        """A ``tab.updated``: the whole tab, or its fields and what changed in its tools (``ToolChanges``)."""
        info = TabInfo.model_validate(raw)
        tab = self._tabs.get(info.id)
        omitted_before = tab._info.tools_omitted if tab is not None else 0
        if changes is None:
            if tab is None:
                tab = self._upsert(info)
                added, removed = [t.name for t in info.tools], list[str]()
            else:
                added, removed = tab._set_info(info, whole=True)
        else:
            tab = tab or self._upsert(info)
            tab._set_info(info, whole=False)
            added, removed = tab._tools.apply(ToolChanges.model_validate(changes))
        if added or removed:
            self.events.emit(
                "tools.changed",
                tab_id=info.id,
                url=info.url,
                tools=tab._tools.first_names(EVENT_NAMES),
                count=len(tab._tools),
                added=added[:EVENT_NAMES],
                removed=removed[:EVENT_NAMES],
            )
        if info.tools_omitted and info.tools_omitted != omitted_before:
            self.events.emit(
                "tools.omitted", tab_id=info.id, url=info.url, omitted=info.tools_omitted, listed=len(tab._tools)
            )

    # ----- the event stream, shared with the side panel -----

    def _push_to_panels(self, events: list[dict[str, Any]]) -> None:
        if self.id is not None and not self._closed:
            spawn(self._connection.notify(Method.EVENTS_PUSH.value, {"browserId": self.id, "events": events}))

    def _on_panel_event(self, raw: Any, *, origin: str = "sidepanel", **extra: Any) -> None:
        """Something a side panel (or an MCP client's session: ``origin="mcp"``) did: into this browser's stream
        (so sessions record it); a side panel's confirmation answer goes to the agent waiting for it (the first
        answer wins). Only the kinds a panel sends, with their fields checked (``parse_panel_event``, as the
        relay does): never evidence, never a file name."""
        event = parse_panel_event(raw, origin)
        if event is None:
            return
        data = {**event.data, **extra}
        self.events.emit(event.kind, tab_id=event.tab_id, url=event.url, duration_ms=event.duration_ms, **data)
        if event.kind == "confirmation.answer" and origin == "sidepanel":
            self._answer_confirmation(event.data["id"], event.data["approved"], by="sidepanel")

    def _on_grant_event(self, raw: dict[str, Any]) -> None:
        """An ask, answer, refusal or change of a site's grant, made by the relay: into this stream (sessions record
        it); the relay sent it to the side panels itself."""
        kind, data = raw.get("kind"), raw.get("data")
        if isinstance(kind, str) and kind.startswith("grant.") and isinstance(data, dict):
            tab_id = raw.get("tab_id") if isinstance(raw.get("tab_id"), int) else None
            url = raw.get("url") if isinstance(raw.get("url"), str) else None
            fields = {str(k): v for k, v in data.items() if k not in ("tab_id", "url", "duration_ms")}
            self.events.emit(kind, tab_id=tab_id, url=url, **fields)

    def _on_sessions(self, raw: list[Any]) -> None:
        """The relay's MCP sessions; this browser's stream says when one starts, binds a tab or ends. A session
        is said to start once its client has introduced itself (its first request names it) or it has bound a
        tab, so the line names the client."""
        before = {s.id: s for s in self._mcp_sessions}
        sessions = []
        for item in raw:
            with contextlib.suppress(ValueError):
                sessions.append(SessionInfo.model_validate(item))
        self._mcp_sessions = sessions
        for session in sessions:
            old = before.pop(session.id, None)
            moved = old is not None and (old.browser_id, old.tab_id) != (session.browser_id, session.tab_id)
            if session.id not in self._introduced:
                if not (session.client or moved or session.tab_id is not None):
                    continue
                self._introduced.add(session.id)
                kind = "mcp.session.started"
            elif moved:
                kind = "mcp.session.bound"
            else:
                continue
            self.events.emit(
                kind, tab_id=session.tab_id, session=session.id, client=session.client, pid=session.pid, origin="mcp"
            )
        for gone in before.values():
            self._introduced.discard(gone.id)
            self.events.emit("mcp.session.ended", session=gone.id, client=gone.client, pid=gone.pid, origin="mcp")

    def _bind(self, raw: dict[str, Any]) -> None:
        info = BrowserInfo.model_validate(raw)
        self.id = info.id
        self.info = info
        self._connected = True
        seen = set()
        for tab in info.tabs:
            self._upsert(tab)
            seen.add(tab.id)
        for tab_id in set(self._tabs) - seen:
            self._forget_tab(tab_id)

    def _watch(self, process: ChromiumProcess) -> None:
        """Own the Chromium ``launch()`` started: learn the moment it ends."""
        self.process = process
        loop = self._loop

        def ended(exit: ProcessExit) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left to tell
                loop.call_soon_threadsafe(self._process_ended, exit)

        process.on_exit(ended)

    def _process_ended(self, exit: ProcessExit) -> None:
        """The launched Chromium is gone. Unless ``close()`` stopped it, that is a crash: it goes into the event
        stream, and every request waiting on it, or made from now on, raises ``BrowserCrashedError``."""
        self._exited.set()
        if exit.closed or self._closed:
            return
        self._connected = False
        self.events.emit(
            "browser.crashed",
            pid=exit.pid,
            returncode=exit.returncode,
            signal=exit.signal,
            log=exit.log_tail,
            message=str(exit),
        )
        self._notify()

    def _crashed(self) -> BrowserCrashedError | None:
        exit = self.exit
        if exit is None or exit.closed or self._closed:
            return None
        return BrowserCrashedError(f"{exit}. Its log ends:\n{exit.log_tail}\n", exit=exit, hint=Hint("relaunch"))

    @property
    def exit(self) -> ProcessExit | None:
        """How the Chromium ``launch()`` started ended (status, signal, log tail), or ``None`` while it runs and
        for a browser this library did not start."""
        return self.process.exit if self.process is not None else None

    def _tab_from_reply(self, reply: dict[str, Any]) -> Tab:
        """The tab a tab action names: its state was pushed (``tab.updated``) just before the reply."""
        if "tabId" not in reply:  # a full tab, as older extensions sent
            return self._upsert(TabInfo.model_validate(reply))
        tab = self._tabs.get(reply["tabId"])
        if tab is None:
            raise TabNotFoundError(f"tab {reply['tabId']} closed while it was loading")
        self._notify()
        return tab

    def _upsert(self, info: TabInfo) -> Tab:
        """A whole tab (``hello``, ``browser.added``)."""
        tab = self._tabs.get(info.id)
        if tab is None:
            tab = self._tabs[info.id] = Tab(self, info)
        else:
            tab._set_info(info, whole=True)
        return tab

    def _forget_tab(self, tab_id: Any) -> None:
        self._tabs.pop(tab_id, None)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        for watcher in list(self._watchers):
            try:
                watcher()
            except Exception:  # a broken view must not break the browser
                log.exception("a watcher of the browser's state failed")

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` (on the library's loop) whenever the browser's state may have changed — connected or
        not, closed, its tabs and their tools — so a view shows it as it is; returns the function that stops it."""
        self._watchers.append(callback)
        return lambda: self._watchers.remove(callback) if callback in self._watchers else None

    async def _wait_until(
        self, predicate: Callable[[], bool], timeout: float, what: str, *, quiet: bool = False
    ) -> None:
        """Wait until ``predicate()`` holds; after ``timeout`` raise ``ToolTimeoutError``, or return if ``quiet``."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate():
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                if quiet:
                    return
                raise ToolTimeoutError(f"gave up waiting for {what} after {timeout:g} s")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def _wait_bound(self, timeout: float, advice: Callable[[], str]) -> None:
        with contextlib.suppress(ToolTimeoutError):
            await self._wait_until(lambda: self._connected or self.exit is not None, timeout, "a browser")
        if not self._connected:
            waited = "" if self.exit is not None else f" within {timeout:g} s"  # not when Chromium exited at once
            raise BrowserNotFoundError(f"no browser with the webmcp-nb extension connected{waited}. {advice()}")
        self._warn_if_skills_off()

    def _warn_if_skills_off(self) -> None:
        if self.info is not None and not self.info.user_scripts:
            warn(USER_SCRIPTS_OFF, UserScriptsWarning)

    async def _request(self, method: Method, params: dict[str, Any], timeout: float) -> Any:
        if not self._connected:
            if self._crashed() is None:
                await self._connection.wait_ready()  # the relay itself gone: fails fast, saying what to do
            with contextlib.suppress(ToolTimeoutError):  # a restarted service worker is usually back in a second
                await self._wait_until(
                    lambda: self._connected or self._crashed() is not None,
                    min(timeout, RECONNECT_GRACE),
                    "the browser",
                )
        if crash := self._crashed():
            raise crash
        try:
            return await self._connection.request(method.value, {"browserId": self.id, **params}, timeout)
        except NotConnectedError:
            if self.process is not None and not self._closed:  # did the Chromium we launched just die?
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._exited.wait(), EXIT_GRACE)
                if crash := self._crashed():
                    raise crash from None
            raise

    def _on_relay(self, listener: Callable[[str, dict[str, Any]], None]) -> Callable[[], None]:
        """``listener(method, params)`` gets what the relay sends, after this browser has taken it in; returns what
        stops it."""
        return self._connection.add_listener(listener)

    async def _relay_request(self, method: Method, params: dict[str, Any], timeout: float = 10.0) -> Any:
        """A request the relay answers itself (MCP sessions), with no browser in between."""
        await self._connection.wait_ready()
        return await self._connection.request(method.value, params, timeout)

    # ----- per-site grants (webmcp_nb.browser.gate) -----

    async def _check_grant(self, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """``grants.check`` for this browser: the relay's answer, once the user answered if it had to ask."""
        reply: dict[str, Any] = await self._relay_request(
            Method.GRANTS_CHECK, {"browserId": self.id, **params}, timeout
        )
        return reply

    @on_loop
    async def _answer_grant(self, ask_id: str, answer: str, *, by: str = "notebook") -> dict[str, Any]:
        """Answer an ask (``once``, ``read``, ``act``, ``never``) as a view of this notebook; the first answer wins."""
        reply: dict[str, Any] = await self._relay_request(
            Method.GRANTS_ANSWER, {"id": ask_id, "answer": answer, "by": by}
        )
        return reply

    @on_loop
    async def _revoke_grant(self, origin: str) -> dict[str, Any]:
        """Forget a site's grant through the relay, so every view hears of it at once."""
        reply: dict[str, Any] = await self._relay_request(Method.GRANTS_REVOKE, {"origin": origin})
        return reply

    @on_loop
    async def _grants_now(self) -> GrantsState:
        """The grants as the relay reads them now (the file, this moment)."""
        self._grants = GrantsState.from_wire(await self._relay_request(Method.GRANTS_LIST, {}))
        return self._grants

    # ----- for the rest of the package: tabs, sessions, skills -----

    def _has_tab(self, tab: Tab) -> bool:
        """Whether ``tab`` is still one of this browser's open tabs (not closed, not replaced)."""
        return self._tabs.get(tab.id) is tab

    def _attach_session(self, session: Session) -> None:
        """``session`` records this browser from now on, and takes evidence around tool calls."""
        self._sessions.append(session)

    def _detach_session(self, session: Session) -> None:
        if session in self._sessions:
            self._sessions.remove(session)

    def _add_agent(self, agent: Confirms) -> None:
        """``agent`` (an agent, or the chat-site bridge) runs on this browser's tabs: views may answer its
        confirmations."""
        self._agents.add(agent)

    def _answer_confirmation(self, request_id: str, approved: bool, *, by: str) -> None:
        """A view's answer to a confirmation: the agent waiting for it takes it (the first answer wins)."""
        for agent in list(self._agents):
            agent.answer(request_id, approved, by=by)

    # ----- public -----

    @property
    def call_timeout(self) -> float:
        """Seconds a tool call may run before it fails with ``ToolTimeoutError`` (``tab.call(timeout=...)`` for one)."""
        return self._calls.call_timeout

    @call_timeout.setter
    def call_timeout(self, value: float) -> None:
        self._calls.call_timeout = seconds(value, "call_timeout")

    @property
    def max_result_chars(self) -> int:
        """Results longer than this (characters of JSON text) fail with ``ResultTooLargeError``."""
        return self._calls.max_result_chars

    @max_result_chars.setter
    def max_result_chars(self, chars: int) -> None:
        self._calls.max_result_chars = chars

    @property
    def connected(self) -> bool:
        """Whether the browser is connected to the relay right now."""
        return self._connected and not self._closed

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (the browser object is done; ``connect()`` or ``launch()`` give another)."""
        return self._closed

    @property
    def session(self) -> Session | None:
        """The session recording this browser now (the most recent, if several), or ``None``."""
        return self._sessions[-1] if self._sessions else None

    @property
    def mcp_sessions(self) -> list[SessionInfo]:
        """The MCP clients' sessions in the relay (``webmcp-nb mcp``): client, pid, bound tab, last activity."""
        return list(self._mcp_sessions)

    @on_loop
    async def aclose_mcp_session(self, session_id: str) -> None:
        """End an MCP client's session: its server process stops serving (its client sees it gone)."""
        await self._relay_request(Method.SESSION_CLOSE, {"sessionId": session_id})

    close_mcp_session = blocking(aclose_mcp_session)

    @property
    def skills(self) -> SkillRegistry:
        """The installed skills: ``install``, ``enable``/``disable``, ``disable_tool``, ``uninstall``."""
        return self._skills

    @property
    def tabs(self) -> list[Tab]:
        """Every open tab, in the order Chrome numbered them."""
        return [tab for _, tab in sorted(self._tabs.copy().items())]

    @property
    def active_tab(self) -> Tab | None:
        """The active tab (of the last focused window, when several have one)."""
        active = [t for t in self.tabs if t.active]
        return active[-1] if active else None

    def tab(self, tab_id: int) -> Tab:
        """The tab with Chrome id ``tab_id``."""
        try:
            return self._tabs[tab_id]
        except KeyError:
            raise TabNotFoundError(f"no tab {tab_id}; open tabs: {sorted(self._tabs)}") from None

    @on_loop
    async def aopen(self, url: str, *, active: bool = True) -> Tab:
        """Open ``url`` in a new tab; returns once it has loaded and its tools are mirrored."""
        tab = self._tab_from_reply(
            await self._request(Method.TAB_OPEN, {"url": url, "active": active}, NAVIGATION_TIMEOUT)
        )
        self.events.emit(
            "navigation", tab_id=tab.id, url=tab.url, opened=True, tools=tab._tools.first_names(EVENT_NAMES),
            origin=origin(),
        )  # fmt: skip
        return tab

    open = blocking(aopen)

    @on_loop
    async def aclose(self) -> None:
        """Disconnect; a browser this library launched is shut down and its temporary profile deleted."""
        if self._closed:
            return
        self._closed = True
        self._notify()
        for session in list(self._sessions):
            session.close()
        await self._connection.close()
        if self._on_close is not None:
            await self._on_close()

    close = blocking(aclose)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "connected" if self.connected else "disconnected"
        if crash := self._crashed():
            state = f"crashed: {crash.exit}"
        return f"<Browser {self.id} {state}, {len(self._tabs)} tabs>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        state = "connected" if self.connected else "disconnected"
        ua = self.info.user_agent if self.info else ""
        rows = [
            [
                t.id,
                "●" if t.active else "",
                clip(t.title, 60),
                Markup(f"<code>{escape(clip(t.url, 80))}</code>"),
                len(t.tools),
            ]
            for t in self.tabs
        ]
        caption = f"Browser {self.id} ({state})"
        text = [caption, ua] + [
            f"  {t.id:>6} {'*' if t.active else ' '} {clip(t.url, 70)}  ({counted(len(t.tools), 'tool')})"
            for t in self.tabs
        ]
        return {
            "text/plain": "\n".join(text),
            "text/html": table(["tab", "active", "title", "url", "tools"], rows, caption),
        }
