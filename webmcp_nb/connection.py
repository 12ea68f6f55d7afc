"""A client's link to the relay: requests matched to replies, notifications to listeners.

Two transports share that logic: :class:`Connection`, a WebSocket to a relay in another process (the
daemon), with reconnection and backoff when it goes away; and :class:`LocalConnection`, for the relay a
launched browser runs in this very process, where messages are handed over as dicts (no socket, no JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from .errors import NotConnectedError, PermissionDeniedError, ToolTimeoutError, error_from_code
from .protocol import Method, notification, request
from .relay import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from .relay import Frame, Relay

__all__ = ["Connection", "LocalConnection", "LOST"]

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]

LOST = "connection.lost"
"""What listeners get when the socket to the relay drops; a fresh ``hello`` follows the reconnect."""


class _Link:
    """What both transports share: waiting requests, listeners, and dispatch of what the relay sends."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._listeners: list[Listener] = []
        self._ready = asyncio.Event()

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            log.warning("bad message from relay: %r", type(message))
            return
        method = message.get("method")
        if method is None:
            rid = message.get("id")
            future = self._waiting.pop(rid, None) if isinstance(rid, int) else None
            if future is None or future.done():
                return
            error = message.get("error")
            if isinstance(error, dict):
                code, text = str(error.get("code", "INTERNAL")), str(error.get("message", ""))
                future.set_exception(error_from_code(code, text, error.get("data")))
            else:
                future.set_result(message.get("result"))
            return
        params = message.get("params")
        if method == Method.HELLO.value:
            self._ready.set()
        self._emit(str(method), params if isinstance(params, dict) else {})

    def _emit(self, method: str, params: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("listener failed on %s", method)

    def _fail_all(self, exc: Exception) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(exc)
        self._waiting.clear()

    async def _await_reply(self, rid: int, future: asyncio.Future[Any], method: str, timeout: float) -> Any:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(timeout, _expire, future, f"{method} got no answer within {timeout:g} s")
        try:
            return await future
        finally:
            timer.cancel()
            self._waiting.pop(rid, None)


def _expire(future: asyncio.Future[Any], message: str) -> None:
    if not future.done():
        future.set_exception(ToolTimeoutError(message))


class LocalConnection(_Link):
    """A client of a relay running on this loop in this process (``launch()``): no socket in between."""

    def __init__(self, relay: Relay) -> None:
        super().__init__()
        self._relay = relay
        self._attached = False

    def deliver(self, frame: Frame) -> None:
        self._dispatch(frame.message)

    async def open(self, timeout: float = 10.0) -> None:
        self._relay.attach(self)
        self._attached = True

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send one request and wait for its reply; remote errors raise their mapped exception."""
        if not self._attached:
            raise NotConnectedError("the connection was closed")
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        self._relay.request(self, rid, method, params)
        return await self._await_reply(rid, future, method, timeout)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self._attached:
            self._relay.notify(self, method, params)

    async def close(self) -> None:
        if self._attached:
            self._attached = False
            self._relay.detach(self)
        self._fail_all(NotConnectedError("the connection was closed"))


class Connection(_Link):
    """One client connection to a relay at ``url`` (``ws://127.0.0.1:PORT``) presenting ``token``.

    Runs on the library's loop. Listeners get every notification as ``(method, params)``, and ``hello``
    again after each reconnect.
    """

    def __init__(self, url: str, token: str) -> None:
        super().__init__()
        self.url = url.rstrip("/") + "/client"
        self._token = token
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    async def open(self, timeout: float = 10.0) -> None:
        """Connect once; raises ``NotConnectedError`` or ``PermissionDeniedError`` (bad token)."""
        await self._connect(timeout)
        self._reader = asyncio.create_task(self._read_forever())
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def _connect(self, timeout: float) -> None:
        try:
            self._ws = await connect(
                self.url,
                additional_headers={"Authorization": f"Bearer {self._token}"},
                max_size=MAX_MESSAGE_BYTES,
                compression=None,
                open_timeout=timeout,
                ping_interval=20,
                ping_timeout=40,
            )
        except InvalidStatus as exc:
            code = exc.response.status_code
            if code in (401, 403):
                raise PermissionDeniedError(f"the relay at {self.url} refused this client ({code})") from None
            raise NotConnectedError(f"the relay at {self.url} answered {code}") from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise NotConnectedError(f"no relay at {self.url}: {exc}") from None

    async def _read_forever(self) -> None:
        backoff = 0.2
        while not self._closed:
            assert self._ws is not None
            try:
                async for raw in self._ws:
                    try:
                        message = json.loads(raw)
                    except ValueError as exc:
                        log.warning("bad message from relay: %s", exc)
                        continue
                    self._dispatch(message)
            except ConnectionClosed:
                pass
            self._ready.clear()
            self._fail_all(NotConnectedError("the connection to the relay was lost"))
            self._emit(LOST, {})
            while not self._closed:
                await asyncio.sleep(backoff)
                try:
                    await self._connect(timeout=5.0)
                    backoff = 0.2
                    break
                except Exception as exc:  # keep trying whatever a listener on that port answers
                    log.info("reconnecting to relay: %s", exc)
                    backoff = min(backoff * 2, 5.0)

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send one request and wait for its reply; remote errors raise their mapped exception."""
        if self._ws is None or not self._ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), min(timeout, 5.0))
        if self._ws is None or not self._ready.is_set():
            raise NotConnectedError("not connected to the relay")
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        try:
            await self._ws.send(request(rid, method, params))
        except ConnectionClosed:
            self._waiting.pop(rid, None)
            raise NotConnectedError("the connection to the relay was lost") from None
        return await self._await_reply(rid, future, method, timeout)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification; dropped when the connection is down (nothing waits for it)."""
        if self._ws is not None and self._ready.is_set():
            with contextlib.suppress(ConnectionClosed):
                await self._ws.send(notification(method, params))

    async def close(self) -> None:
        self._closed = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail_all(NotConnectedError("the connection was closed"))
