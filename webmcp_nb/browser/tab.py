"""``Tab``: one tab of a connected browser, its live tools, and every action on it as an ``a*`` coroutine run on
the library's loop with a blocking twin of the same name without the ``a``. Its state is the browser's mirror of
the tab, kept up to date from the relay, so reading ``tab.tools`` never waits on the browser."""

from __future__ import annotations

import base64
import contextlib
import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core._loop import blocking, on_loop, warn
from ..core.display import escape, visible
from ..core.errors import (
    Hint,
    InvalidArgumentsError,
    NavigatedError,
    StaleToolError,
    ToolNotFoundError,
    ToolTimeoutError,
    WebMCPError,
)
from ..core.events import origin
from ..link.grants import satisfies
from ..link.protocol import Method, TabInfo, ToolInfo
from . import checked
from .calls import CallRecord
from .schema import check_arguments
from .skills import InjectionResult, Skill, check_health
from .tools import TabTools, Tool, ToolMap, ToolResult, ToolsOmittedWarning

if TYPE_CHECKING:
    from .browser import Browser

__all__ = ["Tab", "PNG", "UNLISTED", "NAVIGATION_TIMEOUT", "tool_now"]

NAVIGATION_TIMEOUT = 45.0


class PNG(bytes):
    """PNG bytes that show as an image in a notebook."""

    def _repr_png_(self) -> bytes:
        return bytes(self)


class Tab:
    """One browser tab. ``tab.tools`` is a live mapping of the tools its frames registered."""

    def __init__(self, browser: Browser, info: TabInfo) -> None:
        self._browser = browser
        self._calls = browser._calls
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
    browser = property(lambda self: self._browser, doc="The browser this tab is in.")
    skills = property(
        lambda self: list(self._info.skills), doc="How each skill fared in this tab: health, tools, shadowed names."
    )
    url = property(lambda self: self._info.url, doc="The tab's current URL.")

    @property
    def origin(self) -> str:
        """The page's own origin (its top frame's), as the browser knows it; an iframe's tools may have another
        (``Tool.origin``)."""
        if self._info.origin:
            return self._info.origin
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""

    title = property(lambda self: self._info.title, doc="The tab's current title.")
    webmcp = property(
        lambda self: self._info.webmcp,
        doc="Which WebMCP the page has: ``native``, ``testing`` (Chrome 146–149), ``polyfill``, or ``''`` (none seen).",
    )
    active = property(lambda self: self._info.active, doc="Whether it is the active tab of its window.")

    @property
    def closed(self) -> bool:
        return not self._browser._has_tab(self)

    @property
    def tools(self) -> ToolMap:
        """The tab's tools by name (top frame first, each frame's in registration order); the mapping follows the
        page as it changes. ``tools.omitted`` counts tools the mirror left out (with a ``ToolsOmittedWarning``)."""
        omitted = self._info.tools_omitted
        if omitted and omitted != self._warned_omitted:
            self._warned_omitted = omitted
            warn(_omitted_message(self), ToolsOmittedWarning)
        return ToolMap(self)

    def _find_tool(self, name: str, frame: int | None) -> Tool:
        tool = self._tools.named(name) if frame is None else self._tools.get((frame, name))
        if tool is None:
            raise self._missing(name, frame)
        return tool

    def _missing(self, name: str, frame: int | None) -> ToolNotFoundError:
        """The error for a tool this tab does not list (``tab.call`` and ``tab.tools[name]`` raise the same):
        the closest names, the tab's tools, and what to do when the page has not registered it yet."""
        names = list(self._tools.names())
        close = difflib.get_close_matches(name, names, n=3) if isinstance(name, str) and len(names) < 5000 else []
        guess = f" Did you mean {', '.join(repr(n) for n in close)}?" if close else ""
        listed = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "") or "none"
        where = f" in frame {frame}" if frame is not None else ""
        return ToolNotFoundError(
            f"tab {self.id} ({self.url}) has no tool {name!r}{where}.{guess} Its tools: {listed}.",
            hint=Hint("wait_for_tool" if names else "no_tools_yet", {"name": name}),
        )

    # ----- calls -----

    @on_loop
    async def acall(
        self,
        name: str | Tool,
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

        By name, the call goes to the tool the tab has now. Given a ``Tool`` (what ``tab.tools`` gave, what an
        agent showed its model), it goes to that tool only in the document that registered it: once the page
        has navigated, reloaded or replaced the frame, ``StaleToolError``, even if the new page registers a tool
        of the same name.
        """
        held = name if isinstance(name, Tool) else None
        tool_name: str = name.name if isinstance(name, Tool) else name
        arguments = _arguments(tool_name, args, kwargs)
        limit = self._calls.limit(timeout)
        record = CallRecord(self._calls.events, self, tool_name, arguments)
        tool = await record.refusing(self._checked(tool_name, frame, arguments, held))
        record.called(tool)
        async with self._calls.evidence(self, tool):
            try:
                reply = await record.timed(self._calls.request(self._call_params(tool, arguments, limit, frame), limit))
            except WebMCPError as exc:
                record.failed(exc)
                _say_what_next(exc, limit)
                raise
            changed = reply.get("toolsChanged") is True
            if changed and reply.get("toolsShown") is not True:  # the frame says its tools changed while the call
                with contextlib.suppress(WebMCPError):  # ran: ask for them, so they show on return (unless the
                    await self.arefresh_tools()  # DevTools pipe already showed them); the call may have navigated
            duration = record.returned(reply["text"])
            return ToolResult(tool_name, reply["text"], duration, reply.get("frameId", tool.frame_id), changed)

    async def _checked(self, name: str, frame: int | None, arguments: dict[str, Any], held: Tool | None) -> Tool:
        """The tool a call goes to (``held``'s, in its own document), its arguments checked against its schema."""
        if held is not None:
            tool = await self._still_there(held)
            await _check(name, tool, arguments)
            return tool
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
        await _check(name, tool, arguments)
        return tool

    async def _still_there(self, held: Tool) -> Tool:
        """The tab's tool for ``held``: the same frame and name, registered by the same document (after a refresh
        if the mirror has not seen it yet), else ``StaleToolError`` (the page changed) or ``ToolNotFoundError``
        (the same page unregistered it)."""
        key, document = (held.frame_id, held.name), held.info.document_id
        tool = self._tools.get(key)
        if tool is None or tool.info.document_id != document:
            await self.arefresh_tools()
            tool = self._tools.get(key)
        if tool is not None and tool.info.document_id == document:
            return tool
        if tool is None and any(info.document_id == document for info in self._tools.infos.values()):
            raise self._missing(held.name, held.frame_id)
        raise StaleToolError(
            f"tab {self.id} no longer shows the document that registered {held.name!r} (it shows {self.url} now): "
            "the page changed since you listed it."
        )

    def _call_params(self, tool: Tool, arguments: dict[str, Any], limit: float, frame: int | None) -> dict[str, Any]:
        """The ``tool.call`` request: which tab, frame, document and tool, the arguments and the limits. The
        browser refuses it (``STALE_TOOL``) if the frame shows another document by the time it arrives."""
        params: dict[str, Any] = {
            "tabId": self.id,
            "name": tool.name,
            "frameId": tool.frame_id,
            "args": arguments,
            "timeoutMs": int(limit * 1000),
            "maxResultChars": self._calls.max_result_chars,
        }
        if tool.info.document_id is not None:
            params["documentId"] = tool.info.document_id
        if tool.source == UNLISTED and frame is None:
            del params["frameId"]  # whichever frame has it
        return params

    call = blocking(acall)

    @on_loop
    async def await_for_tool(self, name: str, timeout: float = 10.0) -> Tool:
        """Wait until the page registers ``name`` (it may do so after a search or a click)."""
        try:
            await self._browser._wait_until(lambda: name in self._tools.names(), timeout, f"tool {name!r}")
        except ToolTimeoutError:
            names = list(self._tools.names())
            listed = ", ".join(names[:20]) + (f", … ({len(names)} in all)" if len(names) > 20 else "") or "none"
            raise ToolTimeoutError(
                f"tab {self.id} ({self.url}) did not register {name!r} within {timeout:g} s; its tools: {listed}. "
                f"Wait longer with tab.wait_for_tool({name!r}, timeout=SECONDS), or do first what makes the page "
                "offer it (a search, a click)."
            ) from None
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
        self._browser.events.emit("navigation", tab_id=self.id, url=url, previous=self.url, origin=origin())
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
        """A PNG of the tab's visible area (the tab is activated first).

        Taken for a model (in an agent's turn or an MCP client's request whose grant check read this tab's site), the
        picture is bound to what was checked (:mod:`.checked`): the extension takes it only while the tab's top
        frame shows that site, in the same document from just before the capture to just after it
        (``NavigatedError`` otherwise), and while every frame shows a site that was checked or is granted ``read``
        (``PermissionDeniedError`` otherwise, naming those sites in ``data["sites"]``)."""
        params: dict[str, Any] = {"tabId": self.id}
        site = checked.site_of(self.id)
        if site is not None:
            granted = {where for where, level in self._browser._grants.levels.items() if satisfies(level, "read")}
            params |= {"site": site, "sites": sorted(checked.sites() | granted)}
        reply = await self._browser._request(Method.TAB_SCREENSHOT, params, 20.0)
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
            "text/plain": visible(f"{head}\n{tools['text/plain']}"),
            "text/html": f"<div><b>{escape(head)}</b>{tools['text/html']}</div>",
        }


async def tool_now(tab: Tab, name: str) -> Tool | None:
    """The tool ``name`` calls now (the tab asked for its tools once if its mirror has not seen it): whoever decides
    about a call by name (a grant check, a replay's policy) decides about this very tool, and calls it, so the call
    goes to it in its own document. ``None`` for one the mirror leaves out, or that is not there."""
    tool = tab._tools.named(name)
    if tool is None:
        with contextlib.suppress(WebMCPError):
            await tab.arefresh_tools()
        tool = tab._tools.named(name)
    return tool


UNLISTED = "unlisted"
"""The source of a tool called by name that the mirror does not list (see ``TabInfo.tools_omitted``)."""


def _unlisted(tab: Tab, name: str, frame: int | None) -> Tool:
    note = "Not in the mirror (its frame is over the mirror's bounds): called by name, arguments unchecked."
    return Tool(tab, ToolInfo(name=name, description=note, source=UNLISTED, frameId=frame or 0))


async def _check(name: str, tool: Tool, arguments: dict[str, Any]) -> None:
    """The arguments against the page's own schema (an override's differences named when they do not fit)."""
    try:
        await check_arguments(name, tool.info.input_schema, arguments, has_pattern=tool.has_pattern)
    except InvalidArgumentsError as exc:
        _name_the_override(exc, tool)
        raise


def _name_the_override(exc: InvalidArgumentsError, tool: Tool) -> None:
    """A call the page's schema refused, of a tool whose schema is overridden here: say which schema counts and
    where the two differ."""
    if tool.override is None or tool.override.input_schema is None:
        return
    differences = tool.differences
    where = f" They differ: {'; '.join(differences)}." if differences else ""
    exc.restate(
        f"{exc.what.rstrip('.')}. (Checked against the page's own schema: the input_schema shown to models is a "
        f"local override, tab.tools.overrides.{where})"
    )


def _say_what_next(exc: WebMCPError, limit: float) -> None:
    """Add the next step to a call's error where the browser's message stops at what happened."""
    if isinstance(exc, ToolTimeoutError):
        exc.with_hint(Hint("longer_timeout", {"limit": limit}))
    elif isinstance(exc, NavigatedError):
        exc.with_hint(Hint("check_page"))


def _arguments(name: str, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments: the ``args`` dict and the keyword arguments together."""
    if args is not None and not isinstance(args, Mapping):
        raise InvalidArgumentsError(
            f"{name}: the arguments must be a dict of named values, not {type(args).__name__} (WebMCP tools "
            "take an object; a tool whose schema is not one cannot be called)"
        )
    return {**(args or {}), **kwargs}


def _omitted_message(tab: Tab) -> str:
    return (
        f"tab {tab.id} ({tab.url}): {tab._info.tools_omitted:,} of the page's tools are left out of tab.tools "
        "(a frame is over the mirror's bounds: 50,000 tools or 16 M characters); tab.call(name) still reaches them"
    )
