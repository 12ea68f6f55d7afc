"""``wm.mcp.connect(...)``: any MCP server's tools in a notebook, and beside a page's tools in an agent.

The server is reached with the official SDK's ``Client``: a command (stdio; its stderr goes to a log file in the
webmcp-nb home, since Jupyter's stderr has no file descriptor) or an ``http(s)://`` URL (Streamable HTTP). The
client is held open in one task on the library's loop, so it works from a cell while Jupyter's loop runs, and
protocol era is negotiated (2026-07-28 with ``subscriptions/listen``, else the 2025-11-25 handshake). Tool-list
changes are followed in either era; ``server.tools`` is always the server's current list.

A tool's result is the server's text (its text content blocks, joined); ``isError`` raises ``ToolError`` with the
server's message, as a page tool's failure does. What the server says is untrusted: its tools carry
``untrustedContentHint`` as the library sees them, so an agent marks their results as untrusted data.

A server is bounded as a page is: every request has a time limit (``ToolTimeoutError``), a result over
``max_result_chars`` is refused (``ResultTooLargeError``; an oversized message is refused before it is read whole,
by :mod:`webmcp_nb.mcp.stdio_bound` or :mod:`webmcp_nb.mcp.http_bound`), and its tool list keeps what the
extension's mirror keeps of a frame (descriptions cut, oversized schemas replaced, tools past the count left out,
with a warning).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.shared.exceptions import MCPError

from .._version import __version__
from ..browser.schema import call_arguments, check_arguments, has_pattern, signature_from_schema
from ..browser.tools import ToolsOmittedWarning, risk_label
from ..core._loop import blocking, on_loop, warn
from ..core.display import Markup, clip, escape, json_or_text, pre_json, pretty_json, table, visible
from ..core.errors import (
    NotConnectedError,
    ResultTooLargeError,
    ToolError,
    ToolNotFoundError,
    ToolTimeoutError,
    WebMCPError,
)
from ..core.events import Event, EventStream
from ..core.scripts import installed_script
from ..link.home import append_private, home
from ..link.protocol import ToolInfo
from .http_bound import BoundedTransport, bounded_http_client
from .stdio_bound import TOO_LARGE

__all__ = ["connect", "aconnect", "MCPServer", "MCPTool", "MCPToolMap", "MCPResult", "RecordedMCPServer"]

CALL_TIMEOUT = 60.0
"""Seconds a tool call may take by default."""
REQUEST_TIMEOUT = 30.0
"""Seconds any other request (a tool listing) may take by default."""
MAX_RESULT_CHARS = 4_000_000
"""Characters of a tool's result by default: a longer one is refused, as a page's is (``wm.launch``)."""
MAX_TOOLS = 50_000
MAX_DESCRIPTION_CHARS = 8_000
MAX_SCHEMA_CHARS = 200_000
"""What is kept of a server's tool list: the bounds the extension's mirror keeps of a frame's (``mirror.js``)."""
MAX_TITLE_CHARS = 200
MAX_LISTING_CHARS = 20_000_000
"""Characters of descriptions and schemas kept of a whole listing, however many pages a server offers: past them
the rest is left out (each tool is cut down as its page arrives, so no more than a page is held beyond them)."""
MAX_PAGES = 100
_STDIO_BOUND = Path(__file__).with_name("stdio_bound.py")
_HINTS = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}


class MCPResult:
    """What an MCP tool returned: ``text`` (its text blocks, joined), ``value`` (the structured content, or the
    text parsed as JSON when it is JSON), ``content`` (every block, as the server sent it), ``duration_ms``."""

    def __init__(self, tool: str, result: types.CallToolResult, duration_ms: float) -> None:
        self.tool = tool
        self.content = [block.model_dump(by_alias=True, exclude_none=True) for block in result.content]
        self.text = "\n".join(b["text"] for b in self.content if b.get("type") == "text")
        self.duration_ms = duration_ms
        self.value: Any = result.structured_content
        if self.value is None:
            self.value = json_or_text(self.text)

    def __repr__(self) -> str:
        return f"MCPResult({self.tool!r}, {self.duration_ms:.1f} ms, value={clip(repr(self.value), 200)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        head = f"{self.tool} → ok in {self.duration_ms:.1f} ms"
        return {
            "text/plain": visible(f"{head}\n{pretty_json(self.value, 4000)}"),
            "text/html": f"<div><b>{escape(head)}</b>{pre_json(self.value)}</div>",
        }


class _Kept:
    """A server's tool list as its pages arrive, each tool cut down to the bounds at once (descriptions, titles,
    schemas), up to ``MAX_TOOLS`` tools and ``MAX_LISTING_CHARS`` in all; what was cut or left out, in words."""

    def __init__(self) -> None:
        self.tools: list[types.Tool] = []
        self.omitted = 0
        self.chars = 0
        self.cut: list[str] = []
        self.replaced: list[str] = []

    @property
    def full(self) -> bool:
        return len(self.tools) >= MAX_TOOLS or self.chars >= MAX_LISTING_CHARS

    def add(self, tools: list[types.Tool]) -> None:
        for tool in tools:
            if self.full:
                self.omitted += 1
                continue
            update: dict[str, Any] = {}
            if len(tool.description or "") > MAX_DESCRIPTION_CHARS:
                update["description"] = (tool.description or "")[:MAX_DESCRIPTION_CHARS]
                self.cut.append(tool.name)
            if tool.title and len(tool.title) > MAX_TITLE_CHARS:
                update["title"] = tool.title[:MAX_TITLE_CHARS]
            if tool.annotations and tool.annotations.title and len(tool.annotations.title) > MAX_TITLE_CHARS:
                update["annotations"] = tool.annotations.model_copy(
                    update={"title": tool.annotations.title[:MAX_TITLE_CHARS]}
                )
            schema = len(json.dumps(tool.input_schema, default=str))
            if schema > MAX_SCHEMA_CHARS:
                update["input_schema"], schema = dict(_SCHEMA_TOO_LARGE), 0
                self.replaced.append(tool.name)
            kept = tool.model_copy(update=update) if update else tool
            self.chars += len(kept.description or "") + schema
            self.tools.append(kept)

    def notes(self, *, more: bool) -> list[str]:
        """What the warning says; ``more``: the server offered pages that were not fetched."""
        notes = []
        if self.cut:
            notes.append(f"descriptions over {MAX_DESCRIPTION_CHARS:,} characters cut ({_few(self.cut)})")
        if self.replaced:
            notes.append(
                f"schemas over {MAX_SCHEMA_CHARS:,} characters replaced by an open one ({_few(self.replaced)}): "
                "their arguments are checked by the server alone"
            )
        if self.omitted or more:
            count = f"{self.omitted:,}{' or more' if more else ''}" if self.omitted else "more"
            notes.append(f"{count} tools past {self._bound()} left out")
        return notes

    def _bound(self) -> str:
        """The bound the listing stopped at, in words."""
        if len(self.tools) >= MAX_TOOLS:
            return f"the first {MAX_TOOLS:,}"
        if self.chars >= MAX_LISTING_CHARS:
            return f"{MAX_LISTING_CHARS:,} characters of descriptions and schemas"
        return f"{MAX_PAGES} pages of the listing"


class MCPTool:
    """One tool of an MCP server; call it with keyword arguments (checked against its schema first)."""

    def __init__(self, server: MCPServer | RecordedMCPServer, tool: types.Tool) -> None:
        self.server = server
        hints = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        annotations = {_HINTS[k]: v for k, v in hints.items() if k in _HINTS}
        annotations["untrustedContentHint"] = True  # a third party's text, whatever the server says
        self.info = ToolInfo(
            name=tool.name,
            title=tool.title or (tool.annotations.title if tool.annotations else None),
            description=tool.description or "",
            inputSchema=tool.input_schema,
            annotations=annotations,
            source=f"mcp:{server.name}",
        )
        try:
            self.__signature__ = signature_from_schema(tool.input_schema)
        except (TypeError, ValueError):
            self.__signature__ = inspect.Signature()
        self.__doc__ = visible(self.info.description or tool.name)  # what help() prints: a server's text, shown
        self.has_pattern = has_pattern(tool.input_schema)

    name = property(lambda self: self.info.name, doc="The tool's name on its server.")
    title = property(lambda self: self.info.title)
    description = property(lambda self: self.info.description)
    input_schema = property(lambda self: self.info.input_schema or {"type": "object", "properties": {}})
    annotations = property(lambda self: dict(self.info.annotations))
    source = property(lambda self: self.info.source, doc="``mcp:<server name>``")

    @property
    def qualified_name(self) -> str:
        """``<server>.<tool>``: what agents and sessions call it, beside page tools."""
        return f"{self.server.name}.{self.name}"

    @property
    def provenance(self) -> str:
        """Where the tool comes from, as agents' confirmations and the model say it: ``the MCP server <name>``."""
        from ..core.agent_rules import provenance

        return provenance(None, server=self.server.name)

    @property
    def read_only(self) -> bool:
        return self.info.annotations.get("readOnlyHint") is True

    @property
    def risk(self) -> str:
        """``low`` (``readOnlyHint``), ``high`` (``destructiveHint``) or ``medium``: the agents' rule for page tools."""
        from ..core.agent_rules import risk_of

        return risk_of(self.info.annotations)

    @on_loop
    async def acall(self, arguments: dict[str, Any] | None = None, /, **kwargs: Any) -> MCPResult:
        """Call the tool with keyword arguments, or a dict of them (for names that are not identifiers)."""
        return await self.server.acall(self.name, call_arguments(self.name, arguments, kwargs, "server.tools"))

    call = blocking(acall)
    __call__ = call

    def __repr__(self) -> str:
        return visible(f"<MCPTool {self.qualified_name}{self.__signature__} [{risk_label(self.risk)}]>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        body = (
            f"<div><b>{escape(self.qualified_name)}</b> <i>({escape(risk_label(self.risk))})</i>"
            f"<div>{escape(self.description)}</div>"
            f"<details><summary>input schema</summary>{pre_json(self.input_schema)}</details></div>"
        )
        return {"text/plain": visible(f"{self!r}\n{self.__doc__}"), "text/html": body}


class MCPToolMap(Mapping[str, MCPTool]):
    """A server's tools by name, always as the server last listed them."""

    def __init__(self, server: MCPServer | RecordedMCPServer) -> None:
        self._server = server

    def __getitem__(self, name: str) -> MCPTool:
        return self._server._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._server._tools))

    def __len__(self) -> int:
        return len(self._server._tools)

    def __repr__(self) -> str:
        return visible(f"MCPToolMap({', '.join(self) or 'no tools'})")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        tools = dict(self)
        caption = f"{len(tools)} tools of MCP server {self._server.name}"
        rows = [
            [Markup(f"<code>{escape(t.name)}</code>"), risk_label(t.risk), clip(t.description, 160)]
            for t in tools.values()
        ]
        lines = [caption] + [
            f"  {t.name:<28} {risk_label(t.risk):<11} {clip(t.description, 70)}" for t in tools.values()
        ]
        return {
            "text/plain": visible("\n".join(lines)),
            "text/html": table(["name", "risk", "description"], rows, caption),
        }


_SCHEMA_TOO_LARGE = {"type": "object", "description": "The schema was too large to keep."}


def _message_bound(max_result_chars: int) -> int:
    """Bytes a stdio server's message may have: room for a result of ``max_result_chars`` characters escaped in
    JSON, and for a long tool listing."""
    return 2 * max_result_chars + (1 << 20)


def _few(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _last_line(log: TextIO | None, path: Path) -> str:
    """The last line a stdio server wrote to its stderr log (why it would not start, usually)."""
    if log is None:
        return ""
    with contextlib.suppress(OSError, ValueError):
        log.flush()
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - 2000))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
            return visible(clip(lines[-1], 300)) if lines else ""
    return ""


def _log_path(name: str) -> Path:
    """Where a stdio server's stderr goes: ``<home>/mcp/<name>.log``."""
    return home() / "mcp" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:64] or 'server'}.log"


def _log_file(path: Path) -> TextIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    return io.TextIOWrapper(append_private(path), encoding="utf-8")


def _name_from(target: str | Sequence[str]) -> str:
    if isinstance(target, str) and re.match(r"^https?://", target):
        from urllib.parse import urlsplit

        return urlsplit(target).hostname or "server"
    words = shlex.split(target) if isinstance(target, str) else list(target)
    for word in reversed(words):  # the package or script, not the launcher: `uvx mcp-server-time` → mcp-server-time
        if not word.startswith("-"):
            base = Path(word).name.removesuffix(".py").removesuffix(".js")
            return re.sub(r"^(mcp-server-|server-)", "", base) or base
    return "server"


def installed_here(words: Sequence[str]) -> list[str]:
    """A command line whose bare command (no folder in it) is found beside this Python first (pip's ``bin/``, often
    not on a kernel's ``PATH``), else left to ``PATH``."""
    first, *rest = words
    if os.sep in first or (os.altsep and os.altsep in first):
        return list(words)
    return [installed_script(first) or first, *rest]


class MCPServer:
    """A connected MCP server (from :func:`connect`): ``tools``, ``call``/``acall``, ``close``."""

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        env: Mapping[str, str] | None,
        cwd: str | Path | None,
        name: str | None,
        request_timeout: float = REQUEST_TIMEOUT,
        max_result_chars: int = MAX_RESULT_CHARS,
    ) -> None:
        self.target = target
        self.name = re.sub(r"[^A-Za-z0-9_-]", "_", name or _name_from(target))
        """A short name: agents prefix its tools with it (``time.get_current_time`` → ``time_get_current_time``)."""
        self.events = EventStream()
        """Calls made through this object: ``tool.called``, ``tool.returned``, ``tool.failed``, ``tools.changed``."""
        self.protocol_version = ""
        self.server_info: types.Implementation | None = None
        self.client_info = types.Implementation(name=name or "webmcp-nb", version=__version__)
        """How this client introduces itself to the server (``clientInfo``): the ``name`` given to ``connect``, so a
        server that shows its clients (``webmcp-nb mcp``'s sessions) shows that."""
        self.request_timeout = request_timeout
        """Seconds a request other than a tool call (a listing) may take: ``ToolTimeoutError`` after that."""
        self.max_result_chars = max_result_chars
        """Characters a tool's result may have: a longer one raises ``ResultTooLargeError``."""
        self.omitted = 0
        """Tools of the server's last listing left out (past ``MAX_TOOLS`` or ``MAX_LISTING_CHARS``)."""
        self._env, self._cwd = env, cwd
        self._tools: dict[str, MCPTool] = {}
        self._client: Client | None = None
        self._closing = asyncio.Event()
        self._holder: asyncio.Task[None] | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._log: TextIO | None = None
        self._http: BoundedTransport | None = None

    # ----- the connection, held in one task -----

    async def _open(self, timeout: float) -> None:
        """Connect within ``timeout`` seconds, else ``NotConnectedError``. On any failure the holder is cancelled
        before closing: it may still be inside the SDK's handshake, which has no timeout of its own."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        holder = self._holder = asyncio.ensure_future(self._hold(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except asyncio.TimeoutError:  # (not the built-in TimeoutError before Python 3.11)
            holder.cancel()
            await self.aclose()
            where = f" (its stderr is in {_log_path(self.name)})" if self._log is not None else ""
            raise NotConnectedError(
                f"MCP server {self.name} did not complete the MCP handshake within {timeout:g} s{where}: check "
                "that the command or URL runs an MCP server, or give connect() a longer timeout"
            ) from None
        except BaseException:
            holder.cancel()
            await self.aclose()
            raise

    def _client_for(self) -> Client:
        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                self._refresh_soon()

        target = self.target
        bounds: dict[str, Any] = {"message_handler": on_message, "cache": None, "client_info": self.client_info}
        bounds["read_timeout_seconds"] = self.request_timeout
        limit = _message_bound(self.max_result_chars)
        if isinstance(target, str) and re.match(r"^https?://", target):
            self._http = BoundedTransport(limit)
            return Client(bounded_http_client(target, self._http), **bounds)
        words = shlex.split(target) if isinstance(target, str) else [str(w) for w in target]
        if not words:
            raise ValueError("connect() needs a command or a URL")
        params = StdioServerParameters(  # through stdio_bound.py, which refuses a message past the bound unread
            command=sys.executable,
            args=["-I", "-S", str(_STDIO_BOUND), str(limit), "--", *installed_here(words)],
            env=dict(self._env) if self._env is not None else None,
            cwd=str(self._cwd) if self._cwd is not None else None,
        )
        self._log = _log_file(_log_path(self.name))
        return Client(stdio_client(params, errlog=self._log), **bounds)

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        """Open the client, list its tools, follow list changes, and keep it open until :meth:`aclose`."""
        try:
            async with self._client_for() as client:
                self._client = client
                self.protocol_version = client.protocol_version
                self.server_info = client.server_info
                await self._list()
                ready.set_result(None)
                with contextlib.suppress(ListenNotSupportedError, MCPError):
                    if client.protocol_version >= "2026":
                        async with client.listen(tools_list_changed=True) as stream:
                            listening = asyncio.ensure_future(self._follow(stream))
                            await self._closing.wait()
                            listening.cancel()
                            return
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done() and isinstance(exc, asyncio.CancelledError):
                ready.cancel()  # _open gave up waiting: nobody reads it
            elif not ready.done():
                ready.set_exception(self._not_connected(exc))
            elif not isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    def _not_connected(self, exc: BaseException) -> NotConnectedError:
        """Why connecting failed: for a URL, what its server answered and what to check; for a command, the last
        line it wrote to its stderr."""
        if self._http is None:
            said = _last_line(self._log, _log_path(self.name))
            said = f" (its stderr ends: {said})" if said else ""
            return NotConnectedError(f"could not start MCP server {self.name}: {_why(exc)}{said}")
        answered = f"it answered {self._http.not_mcp}; " if self._http.not_mcp else ""
        check = "that the URL" if answered else "that the server is running and that the URL"
        return NotConnectedError(
            f"could not connect to the MCP server at {self.target}: {answered}{_why(exc)}. Check {check} is the "
            "server's MCP endpoint (often ending in /mcp), served over Streamable HTTP (an endpoint of the older SSE "
            "transport is not)"
        )

    async def _follow(self, stream: Any) -> None:
        async for _ in stream:
            self._refresh_soon()

    def _refresh_soon(self) -> None:
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._list_quietly())

    async def _list_quietly(self) -> None:
        """A listing after a change notification: a failure is an event, since nobody awaits it."""
        try:
            await self._list()
        except WebMCPError as exc:
            self.events.emit("tools.failed", server=self.name, code=exc.code.value, error=exc.message)

    async def _list(self) -> None:
        client = self._client
        if client is None:
            raise NotConnectedError(f"MCP server {self.name} is closed")
        kept = _Kept()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                page = await client.list_tools(cursor=cursor)
            except MCPError as exc:
                raise self._error("tools/list", exc) from None
            kept.add(page.tools)
            cursor = page.next_cursor
            if not cursor or kept.full:
                break
        before = set(self._tools)
        self._tools = {tool.name: MCPTool(self, tool) for tool in kept.tools}
        self.omitted = kept.omitted
        if notes := kept.notes(more=bool(cursor)):
            warn(f"MCP server {self.name}: {'; '.join(notes)}", ToolsOmittedWarning)
        added, removed = sorted(set(self._tools) - before), sorted(before - set(self._tools))
        if added or removed:
            self.events.emit("tools.changed", server=self.name, added=added, removed=removed, count=len(self._tools))

    def _error(self, method: str, exc: MCPError, timeout: float | None = None) -> WebMCPError:
        """The library's error for an SDK error: a time-out, a message refused for its size, or the server's."""
        if exc.code == types.REQUEST_TIMEOUT:
            seconds = self.request_timeout if timeout is None else timeout
            return ToolTimeoutError(f"MCP server {self.name} did not answer {method} within {seconds:g} s")
        if exc.code == TOO_LARGE:
            data = exc.data if isinstance(exc.data, dict) else None
            return ResultTooLargeError(f"MCP server {self.name}, {method}: {exc.message}", data=data)
        return ToolError(f"{self.name}, {method}: {exc}")

    # ----- public -----

    @property
    def tools(self) -> MCPToolMap:
        """The server's tools by name, live: it follows the server's list changes."""
        return MCPToolMap(self)

    @property
    def connected(self) -> bool:
        return self._client is not None

    @on_loop
    async def acall(
        self, name: str, args: dict[str, Any] | None = None, /, *, timeout: float = CALL_TIMEOUT, **kwargs: Any
    ) -> MCPResult:
        """Call tool ``name`` with ``args`` and/or keyword arguments. ``InvalidArgumentsError`` when they do not
        fit its schema (the server never sees the call); ``ToolError`` with the server's message when it reports
        an error (``isError``); cancelling the call cancels it on the server."""
        arguments = {**(args or {}), **kwargs}
        tool = self._tools.get(name)
        if tool is None:
            listed = ", ".join(self._tools) or "none"
            raise ToolNotFoundError(f"MCP server {self.name} has no tool {name!r}; its tools: {listed}")
        await check_arguments(name, tool.input_schema, arguments, has_pattern=tool.has_pattern, server=self.name)
        if self._client is None:
            raise NotConnectedError(f"MCP server {self.name} is closed")
        self.events.emit("tool.called", server=self.name, tool=name, arguments=arguments)
        started = time.perf_counter()
        try:
            result = await self._client.call_tool(name, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            error = self._error(f"a call of {name}", exc, timeout)
        else:
            outcome = MCPResult(name, result, (time.perf_counter() - started) * 1000)
            size = len(json.dumps([outcome.content, result.structured_content], default=str))
            if size > self.max_result_chars:
                error = ResultTooLargeError(
                    f"The result of {self.name}.{name} is {size:,} characters, over the {self.max_result_chars:,} "
                    "limit (wm.mcp.connect(max_result_chars=...) raises it)",
                    data={"size": size, "limit": self.max_result_chars},
                )
            elif not result.is_error:
                self.events.emit("tool.returned", server=self.name, tool=name, text=outcome.text)
                return outcome
            else:
                error = ToolError(outcome.text or f"{self.name}.{name} reported an error", data=outcome.content)
        duration = (time.perf_counter() - started) * 1000
        self.events.emit(
            "tool.failed", server=self.name, tool=name, code=error.code.value, error=error.message, duration_ms=duration
        )
        raise error

    call = blocking(acall)

    @on_loop
    async def arefresh_tools(self) -> MCPToolMap:
        """List the server's tools again now (they are followed as they change anyway); ``ToolTimeoutError``
        when the server does not answer within ``request_timeout``."""
        await self._list()
        return self.tools

    refresh_tools = blocking(arefresh_tools)

    @on_loop
    async def aclose(self) -> None:
        """Disconnect; a stdio server's process is stopped."""
        self._closing.set()
        if self._holder is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._holder
        if self._log is not None:
            self._log.close()

    close = blocking(aclose)

    def __enter__(self) -> MCPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"protocol {self.protocol_version}" if self.connected else "closed"
        return f"<MCPServer {self.name} ({state}), {len(self._tools)} tools>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        tools = self.tools._repr_mimebundle_()
        who = self.server_info.name if self.server_info else self.name
        head = f"MCP server {self.name} ({who}, {'protocol ' + self.protocol_version if self.connected else 'closed'})"
        return {
            "text/plain": visible(f"{head}\n{tools['text/plain']}"),
            "text/html": f"<div><b>{escape(head)}</b>{tools['text/html']}</div>",
        }


class RecordedMCPServer:
    """An MCP server as a recorded session saw it: its tools (as the agent was offered them) and their results in
    order. ``replay_agent`` gives it to the agent in place of the live server, so a session replays without it."""

    def __init__(
        self, name: str, tools: Mapping[str, dict[str, Any]], outcomes: Mapping[str, list[dict[str, Any]]]
    ) -> None:
        self.name = name
        self.events = EventStream()
        self._tools = {
            tool: MCPTool(self, types.Tool(name=tool, input_schema={"type": "object"}, **_recorded(meta)))
            for tool, meta in tools.items()
        }
        self._outcomes = {tool: list(results) for tool, results in outcomes.items()}

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> list[RecordedMCPServer]:
        """The MCP servers an agent used in a recording, from its ``tool.*`` events that name a ``server``."""
        tools: dict[str, dict[str, dict[str, Any]]] = {}
        outcomes: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for event in events:
            server = event.data.get("server")
            if not isinstance(server, str):
                continue
            tool = str(event.data.get("tool", "")).removeprefix(f"{server}.")
            if event.kind == "tool.called":
                tools.setdefault(server, {}).setdefault(tool, event.data)
            elif event.kind == "tool.returned":
                outcomes.setdefault(server, {}).setdefault(tool, []).append({"text": event.data.get("text", "")})
            elif event.kind == "tool.failed":
                failure = {"code": event.data.get("code"), "error": event.data.get("error", "")}
                outcomes.setdefault(server, {}).setdefault(tool, []).append(failure)
        return [cls(name, listed, outcomes.get(name, {})) for name, listed in tools.items()]

    @property
    def tools(self) -> MCPToolMap:
        return MCPToolMap(self)

    async def acall(self, name: str, args: dict[str, Any] | None = None, /, **kwargs: Any) -> MCPResult:
        """The next recorded outcome of ``name``."""
        from ..core.errors import error_from_code

        queue = self._outcomes.get(name) or []
        if not queue:
            raise ToolError(f"the recording has no further result of {self.name}.{name}")
        outcome = queue.pop(0)
        if "code" in outcome:
            raise error_from_code(str(outcome["code"]), str(outcome.get("error", "")))
        text = str(outcome.get("text", ""))
        return MCPResult(name, types.CallToolResult(content=[types.TextContent(text=text)]), 0.0)

    def __repr__(self) -> str:
        return f"<RecordedMCPServer {self.name}, {len(self._tools)} tools>"


def _recorded(meta: dict[str, Any]) -> dict[str, Any]:
    raw = meta.get("annotations")
    hints: dict[str, Any] = raw if isinstance(raw, dict) else {}
    names = {v: k for k, v in _HINTS.items()}
    annotations = types.ToolAnnotations.model_validate(
        {names[k]: v for k, v in hints.items() if k in names and isinstance(v, bool)}
    )
    return {"description": str(meta.get("description") or ""), "annotations": annotations}


def _why(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # an exception group, from the SDK's task groups
    if isinstance(inner, tuple | list):
        return "; ".join(_why(e) for e in inner)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


@on_loop
async def aconnect(
    command_or_url: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    name: str | None = None,
    timeout: float = 30.0,
    request_timeout: float = REQUEST_TIMEOUT,
    max_result_chars: int = MAX_RESULT_CHARS,
) -> MCPServer:
    """Connect to an MCP server: a command line (``"mcp-server-time"``, or a list of words) run over stdio, or
    an ``http(s)://`` URL (Streamable HTTP). A bare command is looked for first where this Python's scripts are
    (pip's ``bin/``), then on ``PATH``. ``env`` is added to a small safe environment the SDK passes the
    command (``PATH``, ``HOME``…); ``name`` (default: from the command or host) prefixes its tools in agents.
    ``timeout``: seconds for the handshake and first listing; ``request_timeout``: for each later listing (a call
    has its own ``timeout``); ``max_result_chars``: the longest result a call returns (``ResultTooLargeError``)."""
    server = MCPServer(
        command_or_url,
        env=env,
        cwd=cwd,
        name=name,
        request_timeout=request_timeout,
        max_result_chars=max_result_chars,
    )
    await server._open(timeout)
    return server


connect = blocking(aconnect)
