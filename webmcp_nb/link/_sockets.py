"""Sending on a relay socket without waiting: the relay must not stall on a peer that reads slowly, and a
peer that went away is not an error here (its reader notices). Tasks started and not awaited are kept until done
(asyncio itself keeps only weak references to them)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

__all__ = ["send_soon", "spawn"]

_running: set[asyncio.Task[Any]] = set()


def spawn(work: Coroutine[Any, Any, Any]) -> None:
    """Run ``work`` on the running loop without waiting for it; its task is kept until it is done."""
    task = asyncio.ensure_future(work)
    _running.add(task)
    task.add_done_callback(_running.discard)


def send_soon(connection: ServerConnection, text: str) -> None:
    """Queue ``text`` on ``connection`` from the running loop."""
    spawn(_send_quietly(connection, text))


async def _send_quietly(connection: ServerConnection, text: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await connection.send(text)
