"""A tool call's path out of a tab: ``CallLine``, what a tab needs of its browser to call (the request, the limits,
the recording sessions' evidence around it), and ``CallRecord``, the events one call leaves in the stream (refused,
called, returned or failed, with the page's own time). ``Tab.acall`` reads as validation → the event → the
request → the record, without reaching into ``Browser``."""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import InvalidArgumentsError, ToolNotFoundError, WebMCPError
from ..core.events import EventStream, origin
from ..link.protocol import Method

if TYPE_CHECKING:
    from .tab import Tab
    from .tools import Tool

__all__ = ["CallLine", "CallRecord", "Evidence", "REPLY_MARGIN", "seconds"]

REPLY_MARGIN = 5.0
"""The browser enforces call timeouts; Python waits this much longer as a backstop."""


def seconds(value: Any, name: str) -> float:
    """``value`` as a time limit: a positive, finite number of seconds; else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    return float(value)


class Evidence(Protocol):
    """A recording session's hook: a screenshot before and after the calls its policy covers."""

    async def _evidence(self, phase: str, tab: Tab, tool: Tool) -> None: ...


class CallLine:
    """What a tab's calls need of their browser: its event stream, its request to the extension, its limits and
    the sessions recording it (whose evidence is taken around each call). ``Browser`` owns one; tabs hold it."""

    def __init__(
        self,
        events: EventStream,
        request: Callable[[Method, dict[str, Any], float], Awaitable[Any]],
        sessions: Sequence[Evidence],
        *,
        call_timeout: float,
        max_result_chars: int,
    ) -> None:
        self.events = events
        self._request = request
        self._sessions = sessions  # the browser's own list: sessions attach and detach there
        self.call_timeout = seconds(call_timeout, "call_timeout")
        self.max_result_chars = max_result_chars

    def limit(self, timeout: float | None) -> float:
        """The seconds a call may run: ``timeout``, else the browser's default."""
        return seconds(timeout, "timeout") if timeout is not None else self.call_timeout

    async def request(self, params: dict[str, Any], limit: float) -> dict[str, Any]:
        """``tool.call`` to the extension; the reply (``text``, ``frameId``)."""
        reply: dict[str, Any] = await self._request(Method.TOOL_CALL, params, limit + REPLY_MARGIN)
        return reply

    def evidence(self, tab: Tab, tool: Tool) -> contextlib.AbstractAsyncContextManager[None]:
        """The recording sessions' screenshots before the call and after its outcome (nothing to do, and no time
        spent on it, while no session records the browser)."""
        return self._evidence(tab, tool) if self._sessions else _NO_EVIDENCE

    @contextlib.asynccontextmanager
    async def _evidence(self, tab: Tab, tool: Tool) -> AsyncIterator[None]:
        for session in list(self._sessions):
            await session._evidence("before", tab, tool)
        try:
            yield
        finally:
            for session in list(self._sessions):
                await session._evidence("after", tab, tool)


_NO_EVIDENCE: contextlib.nullcontext[None] = contextlib.nullcontext()


class CallRecord:
    """One call's events in the browser's stream, all with the tab, its URL and who acted."""

    def __init__(self, events: EventStream, tab: Tab, name: str, arguments: dict[str, Any]) -> None:
        self._events = events
        self._name = name
        self._arguments = arguments
        self._where = {"tab_id": tab.id, "url": tab.url, "origin": origin()}
        self._started = self._ended = 0.0

    async def refusing(self, checks: Awaitable[Tool]) -> Tool:
        """The tool ``checks`` finds, or ``tool.refused`` (the page never sees the call) and its error."""
        try:
            return await checks
        except (ToolNotFoundError, InvalidArgumentsError) as exc:
            field = exc.field if isinstance(exc, InvalidArgumentsError) else None
            self._events.emit(
                "tool.refused",
                **self._where,
                tool=self._name,
                arguments=_json_safe(self._arguments),
                code=exc.code.value,
                error=exc.message,
                field=field,
            )
            raise

    def called(self, tool: Tool) -> None:
        self._events.emit(
            "tool.called",
            **self._where,
            tool=self._name,
            arguments=self._arguments,
            read_only=tool.read_only,
            source=tool.source,
            risk=tool.risk,
        )

    async def timed(self, reply: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """``reply``, timed: the tool's own time, without the evidence (or a refresh of the tools) around it."""
        self._started = time.perf_counter()
        try:
            return await reply
        finally:
            self._ended = time.perf_counter()

    def _took(self) -> float:
        return (self._ended - self._started) * 1000

    def failed(self, exc: WebMCPError) -> None:
        self._events.emit(
            "tool.failed",
            **self._where,
            duration_ms=self._took(),
            tool=self._name,
            code=exc.code.value,
            error=exc.message,
        )

    def returned(self, text: str) -> float:
        """``tool.returned`` with the page's text; the call's duration in milliseconds."""
        took = self._took()
        self._events.emit("tool.returned", **self._where, duration_ms=took, tool=self._name, text=text)
        return took


def _json_safe(value: Any) -> Any:
    """``value`` as it is when JSON can carry it, else its ``repr`` (a refused call's arguments may be neither)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value
