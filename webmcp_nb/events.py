"""The one event stream: everything that happens (tool calls, model turns, confirmations, skills) as
``Event`` records, in order. Agents emit into a stream; widgets, the side panel and session recording
subscribe to it."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Event", "EventStream"]


class Event(BaseModel):
    """One thing that happened. ``kind`` is dotted (``tool.called``, ``model.delta``, ...)."""

    seq: int
    ts: float = Field(description="Unix time in seconds")
    kind: str
    tab_id: int | None = None
    url: str | None = None
    duration_ms: float | None = None
    data: dict[str, Any] = Field(default_factory=dict)


Listener = Callable[[Event], None]


class EventStream:
    """An append-only, thread-safe list of events with listeners called as each one is emitted."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._listeners: list[Listener] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def emit(
        self,
        kind: str,
        *,
        tab_id: int | None = None,
        url: str | None = None,
        duration_ms: float | None = None,
        **data: Any,
    ) -> Event:
        with self._lock:
            event = Event(
                seq=next(self._seq),
                ts=time.time(),
                kind=kind,
                tab_id=tab_id,
                url=url,
                duration_ms=duration_ms,
                data=data,
            )
            self.events.append(event)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a broken view must not break the run
                import logging

                logging.getLogger(__name__).exception("event listener failed on %s", kind)
        return event

    def subscribe(self, listener: Listener, *, replay: bool = False) -> Callable[[], None]:
        """Call ``listener`` for every new event (and the past ones first with ``replay``); returns an
        unsubscribe function."""
        with self._lock:
            past = list(self.events) if replay else []
            self._listeners.append(listener)
        for event in past:
            listener(event)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def of_kind(self, prefix: str) -> list[Event]:
        """The events whose kind is ``prefix`` or starts with ``prefix.``."""
        return [e for e in self.events if e.kind == prefix or e.kind.startswith(prefix + ".")]
