"""Sending on a relay socket without waiting: the relay must not stall on a peer that reads slowly, and a
peer that went away is not an error here (its reader notices)."""

from __future__ import annotations

import asyncio
import contextlib

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

__all__ = ["send_soon"]

_sending: set[asyncio.Task[None]] = set()  # asyncio keeps only weak references to running tasks


def send_soon(connection: ServerConnection, text: str) -> None:
    """Queue ``text`` on ``connection`` from the running loop; the task is kept until it is done."""
    task = asyncio.ensure_future(_send_quietly(connection, text))
    _sending.add(task)
    task.add_done_callback(_sending.discard)


async def _send_quietly(connection: ServerConnection, text: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await connection.send(text)
