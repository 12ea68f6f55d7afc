"""``DevTools``: a launched browser's pages reached through its DevTools pipe, as the relay uses them — the page's own
native tools of each tab, listed (``bind``, then changes as they happen) and called (``call``), and ``settled``, which
a tab action's reply waits for so that it comes after the tools the page registered meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..link.lanes import Settle
from .calls import Calls
from .pages import Ask, Emit, Pages
from .pipe import Pipe

__all__ = ["DevTools"]


class DevTools:
    """The protocol on the pipe ``read_fd``/``write_fd`` of a Chromium started with ``--remote-debugging-pipe``;
    ``emit`` gets each change to a tab's native tools; ``ask`` tells the order in which a tab's frames registered
    theirs, when the browser does not."""

    def __init__(self, read_fd: int, write_fd: int, emit: Emit, ask: Ask) -> None:
        self.pipe = Pipe(read_fd, write_fd, on_event=self._event, on_oversized=self._oversized, on_close=self._closed)
        self.pages = Pages(self.pipe, emit, self._gone, ask)
        self.calls = Calls(self.pipe, self.pages)

    async def open(self) -> DevTools:
        """Start reading, and attach to every page as it appears (each paused until its tools are followed)."""
        await self.pipe.open()
        attach = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True, "filter": [{"type": "page"}]}
        await self.pipe.call("Target.setAutoAttach", attach)
        return self

    def bind(self, tab_id: int, target_id: str | None) -> tuple[list[dict[str, Any]], int]:
        """Tab ``tab_id`` is target ``target_id`` (the extension said): its native tools now, and how many were left
        out; changes follow through ``emit``."""
        return self.pages.bind(tab_id, target_id)

    def call(self, tab_id: int, params: dict[str, Any], settle: Settle) -> Callable[[], None] | None:
        """A ``tool.call`` for a page tool of tab ``tab_id``; what cancels it, or ``None`` if this way does not reach
        the tab."""
        return self.calls.call(tab_id, params, settle)

    async def settled(self, tab_id: int) -> None:
        await self.pages.settled(tab_id)

    def close(self) -> None:
        self.pipe.close()

    def _event(self, method: str, params: dict[str, Any], session: str | None) -> None:
        if method == "WebMCP.toolResponded":
            self.calls.responded(params)
        else:
            self.pages.event(method, params, session)

    def _gone(self, frames: set[str]) -> None:
        self.calls.gone(frames)

    def _oversized(self, message: Any) -> None:
        self.calls.oversized(message)

    def _closed(self) -> None:
        self.calls.closed()
