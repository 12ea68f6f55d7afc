"""A Chromium started before the rest of webmcp-nb is imported, connected later.

``launch()`` starts it first, on its page, and imports the browser stack (:mod:`.started`) while it starts;
``webmcp-nb mcp --launch`` starts it first thing, so the browser and its extension start while the server imports
the MCP SDK and the client initialises. ``alaunch(early=...)`` then serves the relay on the socket the browser
was told to dial (bound and listening here already: the extension's first connection waits in its backlog, never
refused). Standard library only, besides :mod:`.chromium`: nothing here may delay the browser's start.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import secrets
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .chromium import ChromiumProcess

if TYPE_CHECKING:
    from .browser import Browser
    from .tab import Tab

__all__ = ["EarlyChromium", "start_early", "connect_soon", "settle_start_page"]


@dataclass
class EarlyChromium:
    """A Chromium told to dial a relay that is not served yet, or why it did not start."""

    secret: str
    """The pairing secret its extension proves (the relay's)."""
    listener: socket.socket
    """The relay's socket: bound to 127.0.0.1, listening."""
    url: str
    """What its first tab was started on (``about:blank`` when nothing was asked)."""
    lanes: str
    process: ChromiumProcess | None = None
    error: Exception | None = None
    """Why Chromium did not start: raised by ``alaunch(early=...)``, so the caller says it where it says any
    failure to launch (the MCP server: on the client's first call)."""
    connecting: concurrent.futures.Future[Browser] | None = None
    """Its ``alaunch(early=...)`` on the library's loop, once :func:`connect_soon` started it."""

    def close(self) -> None:
        """Stop the browser and free the socket (when no relay took them over)."""
        if self.process is not None:
            self.process.close()
        with contextlib.suppress(OSError):
            self.listener.close()


def start_early(
    url: str | None = None,
    *,
    headless: bool = True,
    native_webmcp: bool = False,
    lanes: str = "loopback",
    executable: str | None = None,
    args: tuple[str, ...] | list[str] = (),
    user_scripts: bool = True,
    devtools: bool = True,
) -> EarlyChromium:
    """Bind the relay's socket and start Chromium with the extension dialling it, its first tab on ``url``; the
    options are ``launch()``'s (``devtools``: the page's native tools through the DevTools pipe, with
    ``native_webmcp``).

    Never raises for the browser itself: a Chromium that cannot start is kept as ``error``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    early = EarlyChromium(secrets.token_urlsafe(32), listener, url or "about:blank", lanes)
    try:
        early.process = ChromiumProcess(
            f"ws://127.0.0.1:{listener.getsockname()[1]}/browser",
            secret=early.secret,
            url=early.url,
            headless=headless,
            native_webmcp=native_webmcp,
            executable=executable,
            args=args,
            user_scripts=user_scripts,
            lanes=lanes,
            devtools=native_webmcp and devtools,
        )
    except Exception as exc:  # said by the caller at its first use (BrowserNotFoundError, an OSError of Popen)
        early.error = exc
    return early


def connect_soon(early: EarlyChromium, *, headless: bool = True, native_webmcp: bool = False) -> None:
    """Start ``alaunch(early=...)`` on the library's loop (``early.connecting``): the relay takes the extension's
    connection while this thread goes on importing (the MCP SDK). The argument checker is loaded first, on this
    thread's time: two threads importing at once can fail on CPython 3.11 (see ``schema.checker_loading``), and
    nothing else is imported on the loop's side from here to a first call."""
    from ..core import _loop
    from .launch import alaunch
    from .schema import load_checker

    importlib.import_module(".started", __package__)  # the browser stack: on this thread, not the loop's
    with contextlib.suppress(Exception):  # a load that failed is left for the argument check to raise
        load_checker().result()

    async def connect() -> Browser:
        return await alaunch(headless=headless, native_webmcp=native_webmcp, early=early)

    early.connecting = _loop.submit(connect())


async def settle_start_page(tab: Tab, url: str) -> Tab:
    """The first tab of an early Chromium started on ``url``, once that page has loaded and its frames sent their
    tools again (what a navigation's reply waits for). A tab that shows no page with WebMCP then (a load that
    failed, a page that is not a secure context) is sent to ``url`` as any navigation, so a failure is said as a
    navigation's."""
    from ..core.errors import WebMCPError  # (imported by then: not at the top, which must stay light)
    from .tab import NAVIGATION_TIMEOUT

    browser = tab.browser
    loaded = lambda: tab.closed or tab._info.status == "complete"  # noqa: E731
    await browser._wait_until(loaded, NAVIGATION_TIMEOUT, f"tab {tab.id} to load", quiet=True)
    if not tab.closed and tab._info.status == "complete":
        with contextlib.suppress(WebMCPError):
            await tab.arefresh_tools()
            if tab.webmcp:
                return tab
    return await tab.anavigate(url)
