"""A Chromium :func:`~.early.start_early` started, connected: the relay served on the socket its extension dials, its
DevTools pipe followed, a :class:`~.browser.Browser` bound to it and its first tab's page settled. ``launch()``
imports this (the browser stack) only once Chromium is starting, so the two happen side by side."""

from __future__ import annotations

import asyncio

from ..core.events import origin
from ..devtools.route import DevTools
from ..link.connection import LocalConnection
from ..link.relay import Relay
from .browser import Browser
from .chromium import ChromiumProcess
from .early import EarlyChromium, settle_start_page
from .schema import checker_loading

__all__ = ["connect_started"]


async def connect_started(
    early: EarlyChromium,
    url: str | None,
    *,
    timeout: float,
    call_timeout: float,
    max_result_chars: int,
    grants: bool,
) -> Browser:
    """The browser of ``early``, once its extension is connected; with ``url``, once its first tab shows it (the
    page it was started on, settled, or ``url`` loaded there). Everything is stopped if that fails."""
    try:
        relay = await Relay(early.secret, enforce_grants=grants).start(early.listener)
    except BaseException:
        early.close()
        raise
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
            if early.error is not None:
                raise early.error
            process = early.process
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
                if first is None:
                    await browser.aopen(url)
                elif url == early.url:  # the navigation launch() made, as Tab.anavigate says it
                    browser.events.emit("navigation", tab_id=first.id, url=url, previous="about:blank", origin=origin())
                    await settle_start_page(first, url)
                else:
                    await first.anavigate(url)
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
