"""The notebook's event stream, fed to the extension's side panels: every event a browser's stream gets, in batches
(30 ms, long strings cut to 4 k), except those that came from a side panel in the first place, from another
process's MCP session (its own process fed them to the panels), or from the relay (``grant.*``: it sent them).
The side panel renders the same stream the notebook panel does; what a side panel does comes back as ``panel.event``
(:meth:`webmcp_nb.browser.browser.Browser._on_panel_event`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from ..core.display import clip
from ..core.events import Event, EventStream

__all__ = ["PanelFeed", "PANEL_TEXT_LIMIT", "PANEL_FLUSH_DELAY"]

PANEL_TEXT_LIMIT = 4_000
"""Characters of a string field sent to side panels."""
PANEL_FLUSH_DELAY = 0.03
"""Seconds events wait to be batched."""


class PanelFeed:
    """Subscribes to ``events`` and hands ``send`` each batch, on the loop it was made on (any thread may emit)."""

    def __init__(self, events: EventStream, send: Callable[[list[dict[str, Any]]], None]) -> None:
        self._send = send
        self._outbox: list[dict[str, Any]] = []
        self._scheduled = False
        self._lock = threading.Lock()  # the loop flushes while a cell's thread (a session's note) may add
        self._loop = asyncio.get_running_loop()
        events.subscribe(self._queue)

    def _queue(self, event: Event) -> None:
        if event.data.get("origin") in ("sidepanel", "mcp") or event.kind.startswith("grant."):
            return  # it came from there, or its own process sent it, or the relay did (grants)
        data = {k: clip(v, PANEL_TEXT_LIMIT) if isinstance(v, str) else v for k, v in event.data.items()}
        entry = {
            "seq": event.seq,
            "ts": event.ts,
            "kind": event.kind,
            "tab_id": event.tab_id,
            "url": event.url,
            "duration_ms": event.duration_ms,
            "data": data,
        }
        with self._lock:
            self._outbox.append(entry)
            if self._scheduled:
                return
            self._scheduled = True
        self._loop.call_soon_threadsafe(self._loop.call_later, PANEL_FLUSH_DELAY, self._flush)

    def _flush(self) -> None:
        with self._lock:
            events, self._outbox, self._scheduled = self._outbox, [], False
        if events:
            self._send(events)
