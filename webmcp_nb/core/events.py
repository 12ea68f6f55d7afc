"""The one event stream: everything that happens (tool calls, model turns, confirmations, skills) as
``Event`` records, in order. Agents emit into a stream; widgets, the side panel and session recording
subscribe to it.

Events of acts (tool calls, navigation) say who acted in ``data.origin``: ``notebook`` (a cell), ``panel``
(the notebook panel), ``agent``, ``sidepanel`` (the extension's side panel), ``mcp`` (an MCP client) or
``bridge`` (the chat-site bridge, for a web chat's assistant). The
actor is a context variable: whoever starts work sets it with :func:`acting_as`, and every call made in that
work carries it."""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

__all__ = ["Event", "EventStream", "KEPT", "ORIGINS", "origin", "acting_as"]

T = TypeVar("T")

ORIGINS = {
    "notebook": "notebook",
    "panel": "notebook panel",
    "agent": "agent",
    "sidepanel": "side panel",
    "mcp": "MCP client",
    "bridge": "chat bridge",
    "evals": "eval harness",
}
"""Who may act, as ``data.origin`` spells it and as views say it."""

_origin: contextvars.ContextVar[str] = contextvars.ContextVar("webmcp_nb_origin", default="notebook")


def origin() -> str:
    """Who is acting in the current context (``notebook`` unless :func:`acting_as` said otherwise)."""
    return _origin.get()


async def acting_as(who: str, work: Awaitable[T]) -> T:
    """Await ``work`` as ``who`` (one of :data:`ORIGINS`): the events of the calls it makes say so."""
    token = _origin.set(who)
    try:
        return await work
    finally:
        _origin.reset(token)


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


KEPT = 5_000
"""How many recent events a stream keeps in memory; sessions keep everything, on disk."""


class EventStream:
    """A thread-safe stream of events: listeners are called as each one is emitted, and the most recent
    ``keep`` stay in ``events`` (a long-running kernel must not grow without bound)."""

    def __init__(self, keep: int = KEPT) -> None:
        self.events: deque[Event] = deque(maxlen=keep)
        self._listeners: list[Listener] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.last_seq = 0
        """The sequence number of the latest event (0 before the first)."""

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
            event = Event.model_construct(  # the fields are ours to fill: no validation on the hot path
                seq=next(self._seq),
                ts=time.time(),
                kind=kind,
                tab_id=tab_id,
                url=url,
                duration_ms=duration_ms,
                data=data,
            )
            self.events.append(event)
            self.last_seq = event.seq
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

    def since(self, seq: int) -> list[Event]:
        """The kept events from sequence number ``seq`` on."""
        with self._lock:
            return [e for e in self.events if e.seq >= seq]

    def of_kind(self, prefix: str) -> list[Event]:
        """The events whose kind is ``prefix`` or starts with ``prefix.``."""
        return [e for e in self.events if e.kind == prefix or e.kind.startswith(prefix + ".")]
