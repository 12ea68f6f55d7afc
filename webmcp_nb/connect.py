"""``connect()``: attach to the user's own Chrome through the relay daemon, starting the daemon on
demand. The daemon outlives kernel restarts and exits by itself after an idle period."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from ._loop import blocking, on_loop
from .browser import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS, Browser
from .chromium import extension_path
from .connection import Connection
from .errors import NotConnectedError
from .home import home, read_token, relay_port

__all__ = ["aconnect", "connect", "start_daemon", "DAEMON_IDLE_EXIT"]

DAEMON_IDLE_EXIT = 600.0
"""Seconds a daemon stays up with no client connected."""


def start_daemon(port: int, idle_exit: float = DAEMON_IDLE_EXIT) -> subprocess.Popen[bytes]:
    """Start ``webmcp-nb relay`` detached from this process, logging to ``<home>/relay.log``."""
    log = open(home() / "relay.log", "ab")  # noqa: SIM115 - handed to the child
    with log:
        return subprocess.Popen(
            [sys.executable, "-m", "webmcp_nb", "relay", "--port", str(port), "--idle-exit", str(idle_exit)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def _advice(port: int) -> str:
    return (
        "To connect your own Chrome/Chromium: open chrome://extensions, turn on Developer mode, "
        f"click 'Load unpacked' and choose {extension_path()} (also printed by `webmcp-nb extension-path`). "
        f"The extension dials ws://127.0.0.1:{port}; if you use another port, set it in the extension's options. "
        "Chrome wakes the extension within 30 s, or at once when you load a page."
    )


@on_loop
async def aconnect(
    port: int | None = None,
    *,
    timeout: float = 40.0,
    browser_id: str | None = None,
    start_relay: bool = True,
    call_timeout: float = DEFAULT_CALL_TIMEOUT,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> Browser:
    """Connect to the relay daemon on ``port`` (starting it if needed) and to a browser through it.

    The token comes from the user-only file in :func:`webmcp_nb.home.home`. Raises
    ``BrowserNotFoundError``, saying how to load the extension, when no browser joins within ``timeout``.
    """
    port = relay_port(port)
    connection = Connection(f"ws://127.0.0.1:{port}", read_token())
    browser = Browser(connection, browser_id=browser_id, call_timeout=call_timeout, max_result_chars=max_result_chars)
    try:
        await connection.open()
    except NotConnectedError:
        if not start_relay:
            raise
        start_daemon(port)
        for _ in range(100):
            await asyncio.sleep(0.05)
            try:
                await connection.open()
                break
            except NotConnectedError:
                continue
        else:
            raise NotConnectedError(
                f"started a relay on port {port} but could not reach it; see {home() / 'relay.log'}"
            ) from None
    try:
        await browser._wait_bound(timeout, lambda: _advice(port))
    except BaseException:
        await connection.close()
        raise
    return browser


connect = blocking(aconnect)
