"""The stdio wire of ``webmcp-nb mcp``: lines read and written by the event loop, fed to the SDK's own session and
dispatch (``Server.run`` takes a read stream of ``SessionMessage`` and a write stream, as ``stdio_server`` gives).

The SDK's ``stdio_server`` reads and writes through anyio's file wrappers (each line read, each write and each
flush a hop to a worker thread and back) and passes every message through a reader task, a stream with no buffer
and a writer task. Here a line is parsed when the pipe delivers it and a message the session sends is written in the
same step, by the loop's own pipe transports: half a bare SDK server's time per call (``bench/README.md``). What
is parsed and written is the SDK's: its JSON-RPC model reads each line (a line it cannot read goes to the session
as the exception, as there), and each message is dumped as ``stdio_server`` dumps it.

As the SDK does, fd 0 reads the null device and fd 1 writes to stderr while the server runs (children and stray
prints miss the wire), and both come back after. When stdin or stdout is not a pipe or a socket (a terminal, a
file), the SDK's own transport serves instead: making a shared terminal non-blocking would upset its shell.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .early import EarlyWire, flush_stray_output, pipes

__all__ = ["stdio_streams"]

PAUSE_AT = 64
"""Messages waiting for the session at which the wire stops being read (until the session takes some)."""


class _Inbox:
    """The read stream: each line parsed as it arrives, kept in order for the session; end of stream when the
    client closes stdin."""

    def __init__(self) -> None:
        self._items: collections.deque[SessionMessage | Exception] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self.transport: asyncio.ReadTransport | None = None
        self._paused = False

    def line(self, line: bytes) -> None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False)
            item: SessionMessage | Exception = SessionMessage(message)
        except Exception as exc:  # the session answers it as stdio_server's would
            item = exc
        self._items.append(item)
        if len(self._items) >= PAUSE_AT and self.transport is not None and not self._paused:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def receive(self) -> SessionMessage | Exception:
        while not self._items:
            if self._ended:
                raise anyio.EndOfStream
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if self._paused and len(self._items) <= PAUSE_AT // 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return self._items.popleft()

    def __aiter__(self) -> _Inbox:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._ended = True
        self._items.clear()

    async def __aenter__(self) -> _Inbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _WireIn(asyncio.Protocol):
    """The pipe's reading end: complete lines to the inbox."""

    def __init__(self, inbox: _Inbox) -> None:
        self._inbox = inbox
        self._partial = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inbox.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            self._inbox.line(line)

    def eof_received(self) -> bool:
        if self._partial:  # a last line without its newline, as stdio_server reads it
            self._inbox.line(self._partial)
            self._partial = b""
        self._inbox.end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._inbox.end()


class _Outbox:
    """The write stream: each message the session sends, dumped as ``stdio_server`` dumps it and written at once;
    but not the SDK's answer to a request the early wire answered (``answered``: by id, the result it sent)."""

    def __init__(self, writer: asyncio.StreamWriter, answered: dict[Any, dict[str, Any]]) -> None:
        self._writer = writer
        self._closed = False
        self._answered = answered

    async def send(self, message: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._answered and self._sent_early(message.message):
            return
        self._writer.write(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
        await self._writer.drain()

    def _sent_early(self, message: Any) -> bool:
        """Whether ``message`` is the SDK's answer to a request answered early (said on stderr if it differs)."""
        ident = getattr(message, "id", None)
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or ident not in self._answered:
            return False
        sent = self._answered.pop(ident)
        own = message.model_dump(by_alias=True, exclude_unset=True, mode="json")
        if own.get("result") != sent:
            print(f"webmcp-nb mcp: the early answer to request {ident!r} was {sent}, the SDK's {own}", file=sys.stderr)
        return True

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> _Outbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@contextlib.contextmanager
def _diverted(fd: int, diversion: int) -> Any:
    """A private copy of ``fd`` (the wire) while ``fd`` itself points at ``diversion``; put back on exit."""
    wire = os.dup(fd)
    try:
        os.dup2(diversion, fd)
        os.close(diversion)
        yield wire
    finally:
        os.set_blocking(wire, True)  # the loop's transport made it non-blocking
        flush_stray_output()
        os.dup2(wire, fd)
        os.close(wire)


@contextlib.contextmanager
def _taken(early: EarlyWire | None) -> Any:
    """The wire's (in, out) descriptors: those the early wire took (put back by it on exit), or fd 0 and 1 taken
    now."""
    if early is not None:
        try:
            yield early.wire_in, early.wire_out
        finally:
            early.restore()
        return
    with _diverted(0, os.open(os.devnull, os.O_RDONLY)) as wire_in, _diverted(1, os.dup(2)) as wire_out:
        yield wire_in, wire_out


@contextlib.asynccontextmanager
async def stdio_streams(early: EarlyWire | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams ``Server.run`` takes, over this process's stdin and stdout; with ``early``, over
    the wire it took, beginning with what it read (and without the SDK's answer to what it answered)."""
    if early is None and not pipes():
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    with _taken(early) as (wire_in, wire_out):
        inbox = _Inbox()
        reading = _WireIn(inbox)
        read, ended = early.hand_over() if early is not None else (b"", False)
        if read:
            reading.data_received(read)
        read_transport = None
        if ended:
            reading.eof_received()
        else:
            source = os.fdopen(os.dup(wire_in), "rb", buffering=0)
            read_transport, _ = await loop.connect_read_pipe(lambda: reading, source)
        sink = os.fdopen(os.dup(wire_out), "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            yield inbox, _Outbox(writer, early.answered if early is not None else {})
        finally:
            if read_transport is not None:
                read_transport.close()
            transport.close()
