"""``launch()``: an in-process relay plus a fresh Chromium with the extension, for headless work,
tests and sharing. Everything it starts is stopped by ``browser.close()``."""

from __future__ import annotations

import asyncio
import secrets
from typing import Literal

from ..core._loop import blocking, on_loop
from ..devtools.route import DevTools
from ..link.connection import LocalConnection
from ..link.relay import Relay
from .browser import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS, Browser
from .chromium import ChromiumProcess
from .early import EarlyChromium
from .schema import checker_loading

__all__ = ["alaunch", "launch"]


@on_loop
async def alaunch(
    url: str | None = None,
    *,
    headless: bool = True,
    native_webmcp: bool = False,
    executable: str | None = None,
    args: tuple[str, ...] | list[str] = (),
    timeout: float = 30.0,
    call_timeout: float = DEFAULT_CALL_TIMEOUT,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    user_scripts: bool = True,
    lanes: Literal["loopback", "all", "off"] = "loopback",
    grants: bool = False,
    devtools: bool = True,
    early: EarlyChromium | None = None,
) -> Browser:
    """Start Chromium (a plain subprocess) with the extension and a temporary profile.

    ``native_webmcp`` turns on the browser's own WebMCP (``--enable-features=WebMCP``); without it
    pages get the extension's polyfill. With ``url``, the first tab loads it before this returns.
    ``args`` are extra command-line flags. ``user_scripts=False`` leaves Chrome's "Allow User Scripts"
    toggle off, as in a browser where the user has not turned it on (skills then cannot run).

    ``lanes`` picks the frames whose tool calls skip the extension's service worker on a socket of their
    own (:mod:`webmcp_nb.link.lanes`): pages on loopback (the default; Chrome's Local Network Access lets them
    reach 127.0.0.1 without asking), ``"all"`` pages (this turns that check off for WebSockets in this
    browser, so any page may open one to a local port), or ``"off"``. Other calls take the worker path.

    ``grants=True`` holds agents, MCP clients and the side panel's chat in this browser to your per-site grants
    (``wm.grants``), as in your own Chrome; by default a browser the library launched (a fresh profile) is exempt.

    With ``native_webmcp``, the page's own tools are listed and called through the browser's DevTools protocol, on
    a pipe only this process holds (``--remote-debugging-pipe``: no port is opened), which is the shortest way;
    the extension still serves skills, the side panels and everything else. ``devtools=False`` takes the
    extension's way for them too, as in your own Chrome (the same tools, results and errors; for testing that
    way).

    ``early`` is a Chromium :func:`~webmcp_nb.browser.early.start_early` started before (``webmcp-nb mcp
    --launch``): the relay is served on the socket it dials. Its own options (headless, native WebMCP and its
    DevTools pipe, lanes, its first tab's page) are those it was started with.
    """
    if lanes not in ("loopback", "all", "off"):
        raise ValueError(f"lanes must be 'loopback', 'all' or 'off', not {lanes!r}")
    secret = early.secret if early is not None else secrets.token_urlsafe(32)
    relay = await Relay(secret, enforce_grants=grants).start(early.listener if early is not None else None)
    process: ChromiumProcess | None = None
    pipe: DevTools | None = None
    connection = LocalConnection(relay)

    async def shut_down() -> None:
        if pipe is not None:
            pipe.close()
        if process is not None:
            await asyncio.get_running_loop().run_in_executor(None, process.close)  # waits for the exit
        await relay.close()

    async with checker_loading():
        try:
            if early is not None:
                if early.error is not None:
                    raise early.error
                process = early.process
            else:
                process = ChromiumProcess(
                    f"ws://127.0.0.1:{relay.port}/browser",
                    secret=secret,
                    headless=headless,
                    native_webmcp=native_webmcp,
                    executable=executable,
                    args=args,
                    user_scripts=user_scripts,
                    lanes=lanes,
                    devtools=native_webmcp and devtools,
                )
            assert process is not None
            if process.devtools is not None:
                (reads, writes), process.devtools = process.devtools, None  # the pipe's now
                pipe = DevTools(reads, writes, relay.devtools_changed, relay.tool_order)
                relay.devtools = await pipe.open()
            browser = Browser(
                connection, call_timeout=call_timeout, max_result_chars=max_result_chars, on_close=shut_down
            )
            browser._watch(process)
            browser.relay = relay
            await connection.open()
            await browser._wait_bound(timeout, lambda: _why_not(process))
            if url is not None:
                first = browser.tabs[0] if browser.tabs else None
                await (first.anavigate(url) if first is not None else browser.aopen(url))
        except BaseException:
            await connection.close()
            await shut_down()
            raise
    return browser


def _why_not(process: ChromiumProcess | None) -> str:
    if process is None:
        return ""
    state = "Chromium is running" if process.running else f"Chromium exited ({process.process.returncode})"
    return f"{state}; the end of its log:\n{process.log_tail()}"


launch = blocking(alaunch)
