"""The stdio wire of ``webmcp-nb mcp``: the SDK's ``stdio_server`` fed by the loop's own pipe transports.

By default ``stdio_server`` reads and writes through anyio's file wrappers, and each line read, each write and each
flush is a hop to a worker thread and back: profiled, those hops were the largest share of the server's CPU per
call. Here the wire is read and written by the event loop itself. As the SDK does, fd 0 reads the null device and
fd 1 writes to stderr while the server runs (children and stray prints miss the wire), and both come back after.
When stdin or stdout is not a pipe or a socket (a terminal, a file), the SDK's own transport serves instead: making
a shared terminal non-blocking would upset the shell it belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.stdio import stdio_server

__all__ = ["stdio_streams"]

LINE_LIMIT = 1 << 30
"""Characters one message may have (the reader's buffer; asyncio's default of 64 KiB would refuse big arguments)."""


class _Lines:
    """The wire's lines, as ``stdio_server`` reads them (``async for line in stdin``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _Writer:
    """The wire's writing end, as ``stdio_server`` writes (``await stdout.write(text)``, ``await stdout.flush()``)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


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
        os.dup2(wire, fd)
        os.close(wire)


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams ``Server.run`` takes, over this process's stdin and stdout."""
    if not (_pipe_or_socket(0) and _pipe_or_socket(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    with _diverted(0, os.open(os.devnull, os.O_RDONLY)) as wire_in, _diverted(1, os.dup(2)) as wire_out:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        source = os.fdopen(os.dup(wire_in), "rb", buffering=0)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
        sink = os.fdopen(os.dup(wire_out), "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            async with stdio_server(_Lines(reader), _Writer(writer)) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            read_transport.close()
            transport.close()
