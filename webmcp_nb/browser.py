"""``Browser`` and ``Tab``: the notebook's view of a connected Chrome/Chromium and its tabs.

State comes from the relay (``hello``, then ``tab.updated``/``tab.removed`` notifications) and is kept
in a mirror, so reading ``tab.tools`` never waits on the browser. Every action is an ``a*`` coroutine
run on the library's loop, with a blocking twin of the same name without the ``a``.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._loop import blocking, on_loop
from .chromium import ChromiumProcess, ProcessExit
from .connection import LOST, Connection, LocalConnection
from .display import Markup, clip, escape, table
from .errors import (
    BrowserCrashedError,
    BrowserNotFoundError,
    InvalidArgumentsError,
    NotConnectedError,
    TabNotFoundError,
    ToolNotFoundError,
    ToolTimeoutError,
    WebMCPError,
)
from .events import Event, EventStream
from .protocol import (
    EXTENSION_ID,
    BrowserInfo,
    InstalledSkill,
    Method,
    TabInfo,
    ToolChanges,
    ToolInfo,
    parse_panel_event,
)
from .relay import Relay
from .schema import validate_arguments
from .skills import InjectionResult, Skill, SkillRegistry, check_health
from .tools import TabTools, Tool, ToolMap, ToolResult, ToolsOmittedWarning

if TYPE_CHECKING:
    from .agent import Agent
    from .session import Session

__all__ = ["Browser", "Tab", "PNG", "UserScriptsWarning", "DEFAULT_CALL_TIMEOUT", "DEFAULT_MAX_RESULT_CHARS"]

DEFAULT_CALL_TIMEOUT = 30.0
"""Seconds a tool call may run before it fails with ``ToolTimeoutError``."""

DEFAULT_MAX_RESULT_CHARS = 4_000_000
"""Results longer than this (characters of JSON text) fail with ``ResultTooLargeError``."""

NAVIGATION_TIMEOUT = 45.0
USER_SCRIPTS_OFF = (
    "Skills are off in this browser: open "
    f"chrome://extensions/?id={EXTENSION_ID} and turn on 'Allow User Scripts' for webmcp-nb "
    "(on Chrome before 138, turn on Developer mode in chrome://extensions). Page tools work without it."
)
PANEL_TEXT_LIMIT = 4_000  # characters of a string field sent to side panels
PANEL_FLUSH_DELAY = 0.03  # seconds events wait to be batched for side panels
REPLY_MARGIN = 5.0  # the browser enforces call timeouts; Python waits this much longer as a backstop
EVENT_NAMES = 100  # tool names an event lists at most (a page may have thousands)
RECONNECT_GRACE = 10.0  # how long a request waits for a browser that is reconnecting
EXIT_GRACE = 0.5  # after losing a launched browser: how long to wait to learn whether its process ended


_validators = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="webmcp-nb-validate")
VALIDATION_TIMEOUT = 2.0


async def _validate(name: str, schema: dict[str, Any] | None, arguments: dict[str, Any]) -> None:
    """Validate off the loop: a page's schema may hold a pathological ``pattern`` (catastrophic regex)."""
    future = asyncio.get_running_loop().run_in_executor(_validators, validate_arguments, name, schema, arguments)
    try:
        await asyncio.wait_for(future, VALIDATION_TIMEOUT)
    except TimeoutError:
        raise InvalidArgumentsError(
            f"{name}: checking the arguments against the page's schema took over {VALIDATION_TIMEOUT:g} s "
            "(a pathological pattern?); the call was not made"
        ) from None


class UserScriptsWarning(UserWarning):
    """The browser cannot run skills until the user allows user scripts for the extension."""


class PNG(bytes):
    """PNG bytes that show as an image in a notebook."""

    def _repr_png_(self) -> bytes:
        return bytes(self)


class Tab:
    """One browser tab. ``tab.tools`` is a live mapping of the tools its frames registered."""

    def __init__(self, browser: Browser, info: TabInfo) -> None:
        self._browser = browser
        self._tools = TabTools(self)
        self._warned_omitted = 0
        self._info = info
        self._set_info(info, whole=True)

    def _set_info(self, info: TabInfo, *, whole: bool) -> tuple[list[str], list[str]]:
        """New fields for the tab, and its whole tool list if ``whole``; returns the names added and removed."""
        changed = self._tools.replace(info.tools) if whole else ([], [])
        self._info = info.model_copy(update={"tools": []})  # the tools live in self._tools
        return changed

    id = property(lambda self: self._info.id, doc="Chrome's tab id.")
    url = property(lambda self: self._info.url, doc="The tab's current URL.")
    title = property(lambda self: self._info.title, doc="The tab's current title.")
    webmcp = property(
        lambda self: self._info.webmcp,
        doc="Which WebMCP the page has: ``native``, ``testing`` (Chrome 146–149), ``polyfill``, or ``''``/``none``.",
    )
    active = property(lambda self: self._info.active, doc="Whether it is the active tab of its window.")

    @property
    def closed(self) -> bool:
        return self._browser._tabs.get(self.id) is not self

    @property
    def tools(self) -> ToolMap:
        """The tab's tools by name (top frame first, each frame's in registration order); the mapping follows the
        page as it changes. ``tools.omitted`` counts tools the mirror left out (with a ``ToolsOmittedWarning``)."""
        omitted = self._info.tools_omitted
        if omitted and omitted != self._warned_omitted:
            self._warned_omitted = omitted
            warnings.warn(_omitted_message(self), ToolsOmittedWarning, stacklevel=2)
        return ToolMap(self)

    def _find_tool(self, name: str, frame: int | None) -> Tool:
        tool = self._tools.named(name) if frame is None else self._tools.get((frame, name))
        if tool is not None:
            return tool
        names = list(self._tools.names())
        listed = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "") or "none"
        where = f" in frame {frame}" if frame is not None else ""
        raise ToolNotFoundError(
            f"tab {self.id} ({self.url}) has no tool {name!r}{where}; its tools: {listed}. "
            f"If the page registers it later, use tab.wait_for_tool({name!r})."
        )

    # ----- calls -----

    @on_loop
    async def acall(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        /,
        *,
        frame: int | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> ToolResult:
        """Call tool ``name`` with ``args`` and/or keyword arguments.

        Arguments are checked against the tool's input schema first; a mismatch raises
        ``InvalidArgumentsError`` naming the field, and the page never sees the call. ``timeout``
        (seconds, default the browser's ``call_timeout``) bounds the call in the browser.
        """
        arguments = {**(args or {}), **kwargs}
        try:
            tool = self._find_tool(name, frame)
        except ToolNotFoundError:  # the page may have registered it an instant ago: ask before giving up
            await self.arefresh_tools()
            try:
                tool = self._find_tool(name, frame)
            except ToolNotFoundError:
                if not self._info.tools_omitted:
                    raise
                tool = _unlisted(self, name, frame)  # it may be one the mirror left out: the page decides
        if tool.has_pattern:  # a page's regex could backtrack for minutes: check off the loop, with a limit
            await _validate(name, tool.info.input_schema, arguments)
        else:
            validate_arguments(name, tool.info.input_schema, arguments)
        limit = timeout if timeout is not None else self._browser.call_timeout
        params = {
            "tabId": self.id,
            "name": name,
            "frameId": tool.frame_id,
            "args": arguments,
            "timeoutMs": int(limit * 1000),
            "maxResultChars": self._browser.max_result_chars,
        }
        if tool.source == UNLISTED and frame is None:
            del params["frameId"]  # whichever frame has it
        events, where = self._browser.events, {"tab_id": self.id, "url": self.url}
        events.emit(
            "tool.called", **where, tool=name, arguments=arguments, read_only=tool.read_only, source=tool.source
        )
        for hook in list(self._browser._call_hooks):
            await hook("before", self, tool)
        started = time.perf_counter()
        try:
            reply = await self._browser._request(Method.TOOL_CALL, params, limit + REPLY_MARGIN)
        except WebMCPError as exc:
            duration = (time.perf_counter() - started) * 1000
            events.emit("tool.failed", **where, duration_ms=duration, tool=name, code=exc.code.value, error=exc.message)
            raise
        finally:
            for hook in list(self._browser._call_hooks):
                await hook("after", self, tool)
        duration = (time.perf_counter() - started) * 1000
        result = ToolResult(name, reply["text"], duration, reply.get("frameId", tool.frame_id))
        events.emit("tool.returned", **where, duration_ms=duration, tool=name, text=result.text)
        return result

    call = blocking(acall)

    @on_loop
    async def await_for_tool(self, name: str, timeout: float = 10.0) -> Tool:
        """Wait until the page registers ``name`` (it may do so after a search or a click)."""
        await self._browser._wait_until(lambda: name in self._tools.names(), timeout, f"tool {name!r} on tab {self.id}")
        return self._find_tool(name, None)

    wait_for_tool = blocking(await_for_tool)

    # ----- skills -----

    @on_loop
    async def ainject(self, skill: Skill) -> InjectionResult:
        """Run ``skill`` in this tab now (and install it for auto-injection on pages it matches).

        Raises ``SkillHealthError`` with the reason when its health check fails here; then none of its
        tools is registered. Injecting again replaces the earlier definitions in the page.
        """
        results = await self._browser.skills.ainstall(skill, tab=self)
        skill._last_tab = self
        return check_health(self.id, skill, results)

    inject = blocking(ainject)

    # ----- navigation and the rest -----

    @on_loop
    async def anavigate(self, url: str) -> Tab:
        """Load ``url`` in this tab and wait until it has loaded and its tools are mirrored."""
        self._browser.events.emit("navigation", tab_id=self.id, url=url, previous=self.url)
        self._update(
            await self._browser._request(Method.TAB_NAVIGATE, {"tabId": self.id, "url": url}, NAVIGATION_TIMEOUT)
        )
        return self

    navigate = blocking(anavigate)

    @on_loop
    async def areload(self) -> Tab:
        """Reload the current page and wait until it has loaded (its tools register again)."""
        self._update(await self._browser._request(Method.TAB_RELOAD, {"tabId": self.id}, NAVIGATION_TIMEOUT))
        return self

    reload = blocking(areload)

    @on_loop
    async def aback(self) -> Tab:
        """Go back in the tab's history and wait until the page is shown again."""
        self._update(await self._browser._request(Method.TAB_BACK, {"tabId": self.id}, NAVIGATION_TIMEOUT))
        return self

    back = blocking(aback)

    @on_loop
    async def ascreenshot(self) -> PNG:
        """A PNG of the tab's visible area (the tab is activated first)."""
        reply = await self._browser._request(Method.TAB_SCREENSHOT, {"tabId": self.id}, 20.0)
        return PNG(base64.b64decode(reply["data"]))

    screenshot = blocking(ascreenshot)

    @on_loop
    async def aactivate(self) -> Tab:
        """Make this the active tab of its window."""
        self._update(await self._browser._request(Method.TAB_ACTIVATE, {"tabId": self.id}, 10.0))
        return self

    activate = blocking(aactivate)

    @on_loop
    async def arefresh_tools(self) -> Tab:
        """Ask every frame to report its tools now (normally they are pushed as they change)."""
        self._update(await self._browser._request(Method.TAB_SYNC, {"tabId": self.id}, 10.0))
        return self

    refresh_tools = blocking(arefresh_tools)

    @on_loop
    async def aclose(self) -> None:
        """Close the tab."""
        await self._browser._request(Method.TAB_CLOSE, {"tabId": self.id}, 10.0)
        self._browser._forget_tab(self.id)

    close = blocking(aclose)

    def _update(self, reply: dict[str, Any]) -> None:
        """After a tab action: the tab's new state came as a push just before the reply."""
        self._browser._tab_from_reply(reply)

    # ----- display -----

    def __repr__(self) -> str:
        return f"<Tab {self.id} {self.url!r} title={self.title!r} tools={len(self._tools)}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        tools = self.tools._repr_mimebundle_()
        head = f"Tab {self.id}: {self.title or '(untitled)'} — {self.url}"
        return {
            "text/plain": f"{head}\n{tools['text/plain']}",
            "text/html": f"<div><b>{escape(head)}</b>{tools['text/html']}</div>",
        }


UNLISTED = "unlisted"
"""The source of a tool called by name that the mirror does not list (see ``TabInfo.tools_omitted``)."""


def _unlisted(tab: Tab, name: str, frame: int | None) -> Tool:
    note = "Not in the mirror (its frame is over the mirror's bounds): called by name, arguments unchecked."
    return Tool(tab, ToolInfo(name=name, description=note, source=UNLISTED, frameId=frame or 0))


def _omitted_message(tab: Tab) -> str:
    return (
        f"tab {tab.id} ({tab.url}): {tab._info.tools_omitted:,} of the page's tools are left out of tab.tools "
        "(a frame is over the mirror's bounds: 50,000 tools or 16 M characters); tab.call(name) still reaches them"
    )


class Browser:
    """A connected browser. Made by :func:`webmcp_nb.connect` or :func:`webmcp_nb.launch`."""

    def __init__(
        self,
        connection: Connection | LocalConnection,
        *,
        browser_id: str | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.call_timeout = call_timeout
        self.max_result_chars = max_result_chars
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
        self._skill_objects: dict[str, Skill] = {}  # skills installed from this process, for their instructions
        self.events = EventStream()
        """Everything that happens through this browser: tool calls, agent turns, skills, navigation."""
        self._call_hooks: list[Callable[[str, Tab, Tool], Awaitable[None]]] = []  # sessions' evidence
        self._sessions: list[Session] = []  # those recording this browser now
        self._agents: weakref.WeakSet[Agent] = weakref.WeakSet()  # whose confirmations a side panel may answer
        self._outbox: list[dict[str, Any]] = []  # events on their way to the extension's side panels
        self._loop = asyncio.get_running_loop()
        self.events.subscribe(self._forward)
        self.relay: Relay | None = None
        """The in-process relay of a launched browser (``None`` when connected through the daemon)."""
        connection.add_listener(self._on_event)

    # ----- state from the relay -----

    def _on_event(self, method: str, params: dict[str, Any]) -> None:
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
            self.available[state.get("id")] = state
            if self.id == state.get("id") or (self.id is None and len(self.available) == 1):
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
                added, removed = [t.name for t in info.tools], []
            else:
                added, removed = tab._set_info(info, whole=True)
        else:
            tab = tab or self._upsert(info)
            tab._set_info(info, whole=False)
            added, removed = tab._tools.apply(ToolChanges.model_validate(changes))
        if added or removed:
            names = list(tab._tools.names())
            self.events.emit(
                "tools.changed",
                tab_id=info.id,
                url=info.url,
                tools=names[:EVENT_NAMES],
                count=len(tab._tools),
                added=added[:EVENT_NAMES],
                removed=removed[:EVENT_NAMES],
            )
        if info.tools_omitted and info.tools_omitted != omitted_before:
            self.events.emit(
                "tools.omitted", tab_id=info.id, url=info.url, omitted=info.tools_omitted, listed=len(tab._tools)
            )

    # ----- the event stream, shared with the side panel -----

    def _forward(self, event: Event) -> None:
        """Queue an event for the extension's side panels (sent in batches, large texts cut)."""
        if event.data.get("origin") == "sidepanel":
            return  # it came from there
        data = {k: clip(v, PANEL_TEXT_LIMIT) if isinstance(v, str) else v for k, v in event.data.items()}
        self._outbox.append(
            {
                "seq": event.seq,
                "ts": event.ts,
                "kind": event.kind,
                "tab_id": event.tab_id,
                "url": event.url,
                "duration_ms": event.duration_ms,
                "data": data,
            }
        )
        if len(self._outbox) == 1:
            self._loop.call_soon_threadsafe(self._loop.call_later, PANEL_FLUSH_DELAY, self._flush_outbox)

    def _flush_outbox(self) -> None:
        events, self._outbox = self._outbox, []
        if events and self.id is not None and not self._closed:
            asyncio.ensure_future(
                self._connection.notify(Method.EVENTS_PUSH.value, {"browserId": self.id, "events": events})
            )

    def _on_panel_event(self, raw: dict[str, Any]) -> None:
        """Something a side panel did: into this browser's stream (so sessions record it); a confirmation
        answer goes to the agent waiting for it (the first answer wins). Only the kinds a panel sends, with
        their fields checked (``parse_panel_event``, as the relay does): never evidence, never a file name."""
        event = parse_panel_event(raw)
        if event is None:
            return
        self.events.emit(event.kind, tab_id=event.tab_id, url=event.url, duration_ms=event.duration_ms, **event.data)
        if event.kind == "confirmation.answer":
            for agent in list(self._agents):
                agent.answer(event.data["id"], event.data["approved"], by="sidepanel")

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
        return BrowserCrashedError(f"{exit}; start another with wm.launch(). Its log ends:\n{exit.log_tail}", exit=exit)

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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def _wait_bound(self, timeout: float, advice: Callable[[], str]) -> None:
        with contextlib.suppress(ToolTimeoutError):
            await self._wait_until(lambda: self._connected or self.exit is not None, timeout, "a browser")
        if not self._connected:
            raise BrowserNotFoundError(
                f"no browser with the webmcp-nb extension connected within {timeout:g} s. {advice()}"
            )
        self._warn_if_skills_off()

    def _warn_if_skills_off(self) -> None:
        if self.info is not None and not self.info.user_scripts:
            warnings.warn(USER_SCRIPTS_OFF, UserScriptsWarning, stacklevel=4)

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
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._exited.wait(), EXIT_GRACE)
                if crash := self._crashed():
                    raise crash from None
            raise

    # ----- public -----

    @property
    def connected(self) -> bool:
        """Whether the browser is connected to the relay right now."""
        return self._connected and not self._closed

    @property
    def session(self) -> Session | None:
        """The session recording this browser now (the most recent, if several), or ``None``."""
        return self._sessions[-1] if self._sessions else None

    @property
    def skills(self) -> SkillRegistry:
        """The installed skills: ``install``, ``enable``/``disable``, ``disable_tool``, ``uninstall``."""
        return SkillRegistry(self)

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
        names = list(tab._tools.names())
        self.events.emit("navigation", tab_id=tab.id, url=tab.url, opened=True, tools=names[:EVENT_NAMES])
        return tab

    open = blocking(aopen)

    @on_loop
    async def aclose(self) -> None:
        """Disconnect; a browser this library launched is shut down and its temporary profile deleted."""
        if self._closed:
            return
        self._closed = True
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
            f"  {t.id:>6} {'*' if t.active else ' '} {clip(t.url, 70)}  ({len(t.tools)} tools)" for t in self.tabs
        ]
        return {
            "text/plain": "\n".join(text),
            "text/html": table(["tab", "active", "title", "url", "tools"], rows, caption),
        }
