"""``connect()``: attach to the user's own Chrome through the relay daemon, starting the daemon on demand.
The daemon outlives kernel restarts and exits by itself after an idle period. ``browsers()`` lists the
browsers connected to it.

Nothing here waits silently or long: a port held by another program fails within seconds, naming it; while
waiting for a browser, progress says what for; and when none comes, the error says why (no browser running,
the extension not loaded, not paired) and what to do next.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..browser.browser import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS, Browser
from ..browser.schema import checker_loading
from ..core._loop import blocking, on_loop
from ..core.display import table, visible
from ..core.errors import BrowserNotFoundError, Hint, NotConnectedError, PortInUseError
from ..link.connection import Connection
from ..link.home import home, read_secret, relay_port
from ..link.protocol import Method
from .daemon import DAEMON_IDLE_EXIT, start_daemon
from .doctor import browser_name, no_browser_advice

__all__ = [
    "aconnect",
    "connect",
    "aopen_relay",
    "abrowsers",
    "browsers",
    "BrowserSummary",
    "start_daemon",
    "DAEMON_IDLE_EXIT",
]

DAEMON_START_TIMEOUT = 20.0
"""Seconds a freshly started daemon has to answer (it imports the library first)."""
EXIT_GRACE = 2.0
"""Seconds to go on trying after a daemon we started exited: another process's daemon may have won the port."""
RESTART_INTERVAL = 10.0
"""At most one daemon restart per this many seconds when the relay disappears under a connected client."""


def _restarter(port: int) -> Callable[[], subprocess.Popen[bytes] | None]:
    """Restart the daemon when a connected client finds the relay gone (at most every few seconds); returns the
    daemon it started, so requests wait for it to come up."""
    last = [0.0]

    def restart() -> subprocess.Popen[bytes] | None:
        if time.monotonic() - last[0] <= RESTART_INTERVAL:
            return None
        last[0] = time.monotonic()
        return start_daemon(port)

    return restart


@dataclass(frozen=True)
class BrowserSummary:
    """A browser connected to the relay: what ``connect(browser_id=...)`` takes, and what it is."""

    id: str
    name: str
    extension_version: str
    tabs: int
    user_scripts: bool

    @classmethod
    def from_state(cls, raw: dict[str, Any]) -> BrowserSummary:
        """From a browser's state as ``hello`` and ``relay.status`` carry it."""
        return cls(
            id=str(raw.get("id")),
            name=browser_name(str(raw.get("userAgent", ""))),
            extension_version=str(raw.get("extensionVersion", "")),
            tabs=len(raw.get("tabs") or []),
            user_scripts=bool(raw.get("userScripts")),
        )

    def __str__(self) -> str:
        return f"{self.id}: {self.name}, extension {self.extension_version or '?'}, {self.tabs} tabs"


class BrowserList(list[BrowserSummary]):
    """The connected browsers, shown as a table."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [[b.id, b.name, b.extension_version, b.tabs, "on" if b.user_scripts else "off"] for b in self]
        caption = f"{len(self)} browser(s) connected"
        return {
            "text/plain": visible("\n".join([caption, *(f"  {b}" for b in self)])),
            "text/html": table(["id", "browser", "extension", "tabs", "user scripts"], rows, caption),
        }


def _listing(browsers: list[dict[str, Any]]) -> str:
    return "; ".join(str(BrowserSummary.from_state(b)) for b in browsers) or "none"


class _Waiting:
    """A progress line for a wait that may take a while, shown once it has lasted a second: what for, how long.
    In a notebook or a terminal it is a live line; when stderr is a file or a pipe (an MCP client's log), plain
    lines, one per change of what it waits for (a live line there is one giant line of ``\r``)."""

    DELAY = 1.0

    def __init__(self) -> None:
        from tqdm.auto import tqdm
        from tqdm.std import tqdm as plain

        self._started = self._shown = time.monotonic()
        self._said = ""
        self._bar = None
        if tqdm is not plain or _is_terminal(sys.stderr):
            self._bar = tqdm(total=None, bar_format="{desc} [{elapsed}]", delay=self.DELAY, leave=False)

    def say(self, text: str) -> None:
        now = time.monotonic()
        if self._bar is None:
            if now - self._started >= self.DELAY and text != self._said:
                self._said = text
                print(f"webmcp-nb: {text}", file=sys.stderr, flush=True)
            return
        changed = text != self._bar.desc
        self._bar.set_description_str(text, refresh=False)
        if now - self._started >= self.DELAY and (changed or now - self._shown >= self.DELAY):
            self._shown = now
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


async def _open(connection: Connection, port: int, start_relay: bool, waiting: _Waiting) -> None:
    """Open the connection, starting the daemon when nothing listens; fails within seconds otherwise."""
    daemon: subprocess.Popen[bytes] | None = None
    deadline = 0.0
    exited: float | None = None  # when the daemon we started was seen to have exited
    while True:
        try:
            await connection.open()
            return
        except PortInUseError:
            raise
        except NotConnectedError:
            if daemon is None:
                if not start_relay:
                    raise NotConnectedError(
                        f"no relay is running on 127.0.0.1:{port}; connect(start_relay=True) starts one, "
                        "or run `webmcp-nb relay`"
                    ) from None
                waiting.say(f"starting the relay on port {port}")
                daemon, deadline = start_daemon(port), time.monotonic() + DAEMON_START_TIMEOUT
            elif daemon.poll() is not None:  # it may have lost the port to another process's daemon: try a while
                exited = exited or time.monotonic()
                if time.monotonic() > exited + EXIT_GRACE:
                    raise NotConnectedError(
                        f"the relay daemon exited ({daemon.returncode}) without serving port {port}; "
                        f"see {home() / 'relay.log'}, or run `webmcp-nb doctor`"
                    ) from None
            elif time.monotonic() > deadline:
                raise NotConnectedError(
                    f"started a relay on port {port} but it did not answer within {DAEMON_START_TIMEOUT:g} s; "
                    f"see {home() / 'relay.log'}"
                ) from None
        await asyncio.sleep(0.1)


async def _wait_for_browser(browser: Browser, connection: Connection, timeout: float, waiting: _Waiting) -> None:
    started = time.monotonic()
    pid = connection.relay_info.get("pid")
    while not browser.connected:
        elapsed = time.monotonic() - started
        if browser.id is None and len(browser.available) > 1:
            raise BrowserNotFoundError(
                f"{len(browser.available)} browsers are connected: {_listing(list(browser.available.values()))}.",
                hint=Hint("choose_browser"),
            )
        if elapsed >= timeout:
            if browser.id is not None and browser.available:
                raise BrowserNotFoundError(
                    f"no browser {browser.id!r} is connected; connected: {_listing(list(browser.available.values()))}"
                )
            status = None
            with contextlib.suppress(NotConnectedError):
                status = await connection.request(Method.RELAY_STATUS.value, {}, 5.0)
            raise BrowserNotFoundError(no_browser_advice(connection.port, status, timeout))
        what = f"browser {browser.id}" if browser.id else "a browser with the webmcp-nb extension"
        waiting.say(
            f"waiting for {what} (relay pid {pid} on port {connection.port}; `webmcp-nb doctor` if it never comes)"
        )
        await browser._wait_until(lambda: browser.connected or len(browser.available) > 1, 0.5, "", quiet=True)
    browser._warn_if_skills_off()


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

    The relay and this client prove to each other that they know the pairing secret (the user-only file in
    :func:`webmcp_nb.link.home.home`). Raises ``PortInUseError`` within seconds when another program holds the
    port, and ``BrowserNotFoundError``, saying why and what to do, when no browser joins within ``timeout``
    (or when several are connected and ``browser_id`` does not say which: :func:`browsers` lists them).
    """
    async with checker_loading():  # (not for aopen_relay: webmcp-nb mcp answers its client at once)
        return await _relay_browser(
            relay_port(port),
            browser_id=browser_id,
            start_relay=start_relay,
            call_timeout=call_timeout,
            max_result_chars=max_result_chars,
            wait=timeout,
        )


connect = blocking(aconnect)


async def aopen_relay(port: int | None = None, *, browser_id: str | None = None) -> Browser:
    """A ``Browser`` on the relay daemon (started if needed) that waits for nothing: it binds a browser when one
    connects (``browser.connected``), the one named ``browser_id`` or the only one. ``webmcp-nb mcp`` uses it to
    answer its client while no browser is there. Raises what :func:`aconnect` raises about the relay itself."""
    return await _relay_browser(
        relay_port(port),
        browser_id=browser_id,
        start_relay=True,
        call_timeout=DEFAULT_CALL_TIMEOUT,
        max_result_chars=DEFAULT_MAX_RESULT_CHARS,
        wait=None,
    )


async def _relay_browser(
    port: int,
    *,
    browser_id: str | None,
    start_relay: bool,
    call_timeout: float,
    max_result_chars: int,
    wait: float | None,
) -> Browser:
    """A ``Browser`` through the relay daemon, once the relay answers; with ``wait``, once a browser is bound too."""
    connection = Connection(port, read_secret, on_refused=_restarter(port) if start_relay else None)
    browser = Browser(connection, browser_id=browser_id, call_timeout=call_timeout, max_result_chars=max_result_chars)
    waiting = _Waiting()
    try:
        await _open(connection, port, start_relay, waiting)
        if wait is not None:
            await _wait_for_browser(browser, connection, wait, waiting)
    except BaseException:
        await connection.close()
        raise
    finally:
        waiting.close()
    return browser


async def relay_status(port: int, secret: Callable[[], str] = read_secret) -> dict[str, Any] | None:
    """What the relay on ``port`` says of itself (``relay.status``; its ``browsers`` as ``hello`` has them), or
    ``None`` when no relay runs there (nothing is started). ``PortInUseError`` when another program holds it,
    ``NotConnectedError`` when the relay is there but cannot be reached now (busy authenticating others)."""
    connection = Connection(port, secret)
    try:
        try:
            await connection.open(timeout=4.0)
        except NotConnectedError:
            if connection.refused:
                return None
            raise
        return dict(await connection.request(Method.RELAY_STATUS.value, {}, 5.0))
    finally:
        await connection.close()


@on_loop
async def abrowsers(port: int | None = None) -> BrowserList:
    """The browsers connected to the relay on ``port`` (empty when no relay runs; nothing is started)."""
    status = await relay_status(relay_port(port))
    return BrowserList(BrowserSummary.from_state(b) for b in (status or {}).get("browsers") or [])


browsers = blocking(abrowsers)
