"""``launch()``: an in-process relay plus a fresh Chromium with the extension, for headless work,
tests and sharing. Everything it starts is stopped by ``browser.close()``.

Chromium is started first, on the page, and the browser stack (:mod:`.started`) is imported while it starts: this
module imports only what starting it takes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..core._loop import blocking, on_loop
from .defaults import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS
from .early import EarlyChromium, start_early

if TYPE_CHECKING:
    from .browser import Browser

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
    if early is None:  # Chromium first, on the page: it starts while the rest is imported
        early = start_early(
            url,
            headless=headless,
            native_webmcp=native_webmcp,
            lanes=lanes,
            executable=executable,
            args=args,
            user_scripts=user_scripts,
            devtools=devtools,
        )
    try:
        from .started import connect_started
    except BaseException:
        early.close()
        raise
    return await connect_started(
        early, url, timeout=timeout, call_timeout=call_timeout, max_result_chars=max_result_chars, grants=grants
    )


launch = blocking(alaunch)
