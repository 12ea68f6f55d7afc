"""The DevTools protocol on the pipe of a Chromium started with ``--remote-debugging-pipe``: the browser reads
commands from its fd 3 and writes replies and events to its fd 4, each message JSON text ending in a NUL byte. No
port is opened, so no other program can reach the browser this way: the pipe's ends belong to the process that
started it.

Replies and events are handed over in the order the browser wrote them, each as it is read (a callback, not a
future), so whoever reads an event knows every message the browser sent before it has been seen. A message
longer than :data:`MAX_MESSAGE_BYTES` is never held whole: it is dropped as it streams past, and only its ends
are kept to say whose it was (:class:`Oversized`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Pipe", "CommandError", "Oversized", "MAX_MESSAGE_BYTES"]

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 128 * 1024 * 1024
"""The longest message taken whole (the relay's own bound): room for a result at any ``max_result_chars``."""
ENDS = 4096
"""Bytes kept of each end of a message over the bound, to learn whose it was."""

Reply = Callable[[dict[str, Any] | None, "CommandError | None"], None]
"""``reply(result, error)``: exactly one of them is set."""
Event = Callable[[str, dict[str, Any], str | None], None]
"""``event(method, params, session id)``."""


class CommandError(Exception):
    """The browser refused a command: its code and message (``-32602 Tool not found``)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code, self.message = code, message


@dataclass(frozen=True)
class Oversized:
    """A message past the bound, dropped unread: its size and the bytes kept of its two ends."""

    size: int
    head: bytes
    tail: bytes


class Pipe:
    """Both ends of the pipe on the running loop. ``on_event`` gets the browser's events, ``on_oversized`` the ends
    of a message too long to take, ``on_close`` the pipe's end; ``send`` sends a command."""

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        on_event: Event,
        on_oversized: Callable[[Oversized], None] = lambda _: None,
        on_close: Callable[[], None] = lambda: None,
        max_message: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._read_fd, self._write_fd = read_fd, write_fd
        self._on_event, self._on_oversized, self._on_close = on_event, on_oversized, on_close
        self._max = max_message
        self._ids = itertools.count(1)
        self._waiting: dict[int, Reply] = {}
        self._parts: list[bytes] = []
        self._held = 0  # bytes of the message being read
        self._head = b""  # the first bytes of a message past the bound (being dropped)
        self._tail = b""
        self._writer: asyncio.WriteTransport | None = None
        self._reader: asyncio.ReadTransport | None = None
        self.closed = False

    async def open(self) -> Pipe:
        loop = asyncio.get_running_loop()
        self._reader, _ = await loop.connect_read_pipe(lambda: _Reading(self), os.fdopen(self._read_fd, "rb", 0))
        self._writer, _ = await loop.connect_write_pipe(lambda: _Writing(self), os.fdopen(self._write_fd, "wb", 0))
        return self

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, reply: Reply | None = None
    ) -> None:
        """Send ``method``; ``reply`` gets its answer when it comes (in order with the events), or a
        ``CommandError`` (code -1) when the pipe closes first. ``ValueError`` if ``params`` are not JSON (NaN,
        which JavaScript's JSON refuses, too)."""
        if self.closed or self._writer is None:
            if reply is not None:
                reply(None, CommandError(-1, "the browser's DevTools pipe is closed"))
            return
        rid = next(self._ids)
        message: dict[str, Any] = {"id": rid, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        try:
            data = _encode(message).encode() + b"\0"
        except TypeError as exc:
            raise ValueError(str(exc)) from None
        self._waiting[rid] = reply or _ignore
        self._writer.write(data)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """``send`` as a coroutine: the result, or ``CommandError``."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def settle(result: dict[str, Any] | None, error: CommandError | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result or {})

        self.send(method, params, session, settle)
        return await future

    def close(self) -> None:
        for transport in (self._writer, self._reader):
            if transport is not None:
                transport.close()
        self._closed()

    # ----- reading -----

    def _data(self, data: bytes) -> None:
        start = 0
        while (end := data.find(b"\0", start)) >= 0:
            self._take(data[start:end])
            self._message(b"".join(self._parts) if self._head == b"" else None)
            start = end + 1
        if start < len(data):
            self._take(data[start:])

    def _take(self, piece: bytes) -> None:
        """Add ``piece`` to the message being read, or past the bound only keep its ends."""
        self._held += len(piece)
        if self._head:
            self._tail = (self._tail + piece)[-ENDS:]
            return
        self._parts.append(piece)
        if self._held > self._max:
            whole = b"".join(self._parts)
            self._head, self._tail, self._parts = whole[:ENDS], whole[-ENDS:], []

    def _message(self, raw: bytes | None) -> None:
        size, head, tail = self._held, self._head, self._tail
        self._parts, self._held, self._head, self._tail = [], 0, b"", b""
        if raw is None:
            self._dropped(Oversized(size, head, tail))
            return
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("the browser sent a message that is not JSON (%d bytes)", size)
            return
        if not isinstance(message, dict):
            return
        rid = message.get("id")
        if rid is not None:
            reply = self._waiting.pop(rid, None)
            if reply is None:
                return
            error = message.get("error")
            if isinstance(error, dict):
                reply(None, CommandError(int(error.get("code", 0)), str(error.get("message", ""))))
            else:
                result = message.get("result")
                reply(result if isinstance(result, dict) else {}, None)
            return
        method, params = message.get("method"), message.get("params")
        if isinstance(method, str) and isinstance(params, dict):
            session = message.get("sessionId")
            try:
                self._on_event(method, params, session if isinstance(session, str) else None)
            except Exception:  # a handler's fault must not stop the reading of every later message
                log.exception("handling %s failed", method)

    def _dropped(self, oversized: Oversized) -> None:
        """A message past the bound: a reply's command fails; what it was otherwise, its owner learns."""
        match = _ID.search(oversized.head.split(b'"params"', 1)[0]) or _ID.search(oversized.tail)
        if match is not None and (reply := self._waiting.pop(int(match.group(1)), None)) is not None:
            reply(None, CommandError(-1, f"the browser's reply was {oversized.size:,} bytes, over the pipe's bound"))
            return
        self._on_oversized(oversized)

    def _closed(self) -> None:
        if self.closed:
            return
        self.closed = True
        waiting, self._waiting = self._waiting, {}
        for reply in waiting.values():
            with contextlib.suppress(Exception):
                reply(None, CommandError(-1, "the browser's DevTools pipe closed"))
        self._on_close()


_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def _ignore(result: dict[str, Any] | None, error: CommandError | None) -> None:
    pass


_ID = re.compile(rb'"id":(\d+)')


class _Reading(asyncio.Protocol):
    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe

    def data_received(self, data: bytes) -> None:
        self.pipe._data(data)

    def eof_received(self) -> bool | None:
        self.pipe._closed()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe._closed()


class _Writing(asyncio.Protocol):
    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe._closed()
