"""What ``webmcp-nb mcp`` asks of the site grants (:mod:`webmcp_nb.browser.gate`) before it acts for its MCP client
on the user's own browser, tool by tool:

- ``open_tab``, ``navigate``: ``read`` of the target URL's site, before loading it (``about:blank`` has none: it
  opens without asking);
- ``select_tab``: ``read`` of the tab's site; ``close_tab``: ``act`` on the closed tab's site;
- ``go_back``, ``reload``, ``screenshot``, ``list_page_tools``, ``inject_skill``: ``read`` of the bound tab's site;
- page tools (``page_*``, ``call_page_tool``): ``read`` for read-only tools, ``act`` for the others, of the page's
  site and, for a tool of a cross-origin frame, of the frame's site too;
- ``list_tabs`` shows a tab on a site the client may not read as such (its id, no URL, title or tools), and the
  bound tab's page tools are listed (``tools/list``, ``list_page_tools``, a tab's summary) only while its site may
  be read, and a cross-origin frame's only while the frame's site may be read too
  (:class:`~webmcp_nb.browser.gate.Offer`: the listing says how many are held back, of which sites); neither
  asks.

A refusal is a ``PERMISSION_DENIED`` result the client can show its user. Browsers ``--launch`` started are exempt.

What a check allowed binds the request (:mod:`webmcp_nb.browser.checked`): ``screenshot``, ``list_page_tools`` and
``inject_skill`` act on the site that was checked or are refused (``NAVIGATED``), whatever the tab did since (an
open redirect, the user); a screenshot also needs ``read`` on the site of every frame the page shows, asked for like
any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..browser import checked
from ..browser.gate import Asker, Need, check_call, check_site, shows
from ..browser.tab import PNG
from ..core.errors import NavigatedError, PermissionDeniedError
from ..link.grants import origin_of

if TYPE_CHECKING:
    from ..browser.tab import Tab
    from ..browser.tools import Tool
    from .server import WebMCPServer

__all__ = ["McpSites", "NOT_GRANTED", "READ_BOUND_TAB", "FRAME_ROUNDS"]

NOT_GRANTED = "a site not granted to this client: select_tab asks the user"
READ_BOUND_TAB = {"go_back": "go back", "reload": "reload", "screenshot": "screenshot", "list_page_tools": "list tools"}
"""Fixed tools that read the bound tab's site, and how the asking card says it."""
FRAME_ROUNDS = 3
"""Times a screenshot asks for the sites of frames it found and tries again (a page may keep adding frames)."""


class McpSites:
    """The grant checks of one ``webmcp-nb mcp`` session."""

    def __init__(self, server: WebMCPServer) -> None:
        self.server = server

    def asker(self) -> Asker:
        return Asker("mcp", self.server._client_name or "an MCP client")

    async def _check(self, need: Need, *, tab: Tab | None = None, url: str | None = None, **what: Any) -> None:
        browser = tab.browser if tab is not None else self.server.browser
        await check_site(browser, need, self.asker(), tab=tab, url=url, timeout=self.server.options.ask_timeout, **what)

    async def before(self, name: str, arguments: dict[str, Any]) -> None:
        """Before fixed tool ``name``: the check it needs (see the module), or none. Arguments that do not fit are
        left to the tool, which says what is wrong with them."""
        browser, bound = self.server.browser, self.server.tab
        url, tab_id = arguments.get("url"), arguments.get("tab_id")
        if bound is not None and bound.closed:
            bound = None
        if name in ("open_tab", "navigate"):
            if isinstance(url, str) and url and url.strip().lower() != "about:blank":  # no site, nothing to read
                await self._check("read", url=url, action="open" if name == "open_tab" else "navigate")
        elif name in ("select_tab", "close_tab") and isinstance(tab_id, int) and not isinstance(tab_id, bool):
            if browser is not None:
                need: Need = "read" if name == "select_tab" else "act"
                await self._check(need, tab=browser.tab(tab_id), action=name.replace("_", " "))
        elif name == "close_tab" and bound is not None and tab_id is None:
            await self._check("act", tab=bound, action="close tab")
        elif name in READ_BOUND_TAB and bound is not None:
            await self._check("read", tab=bound, action=READ_BOUND_TAB[name])
        elif name == "inject_skill" and bound is not None:
            skill = arguments.get("name") if isinstance(arguments.get("name"), str) else None
            await self._check("read", tab=bound, action="inject", tool=skill)

    async def before_call(self, tab: Tab, tool: Tool | None, name: str) -> None:
        """Before a page tool's call, given the tool the call goes to: :func:`~webmcp_nb.browser.gate.check_call`
        (a cross-origin frame's tool needs its frame's site too; one not listed needs ``act``)."""
        await check_call(tab, tool, name, self.asker(), timeout=self.server.options.ask_timeout)

    def require_checked(self, tab: Tab, what: str) -> None:
        """``NavigatedError`` unless the tab (as the mirror has it) shows the site this request's check allowed."""
        site = checked.site_of(tab.id)
        if site is not None and origin_of(tab.url) != site:
            raise NavigatedError(f"tab {tab.id} no longer shows {site}, the site that was checked: {what}")

    async def screenshot(self, tab: Tab) -> PNG:
        """The bound tab's picture, of the site that was checked (``before``), with ``read`` on every frame's site
        too: the sites of frames not granted are asked for, then the picture is taken again."""
        for _ in range(FRAME_ROUNDS):
            try:
                return await tab.ascreenshot()
            except PermissionDeniedError as exc:
                frames = exc.data.get("sites") if isinstance(exc.data, dict) else None
                if not isinstance(frames, list) or not frames:
                    raise
                for site in frames:
                    await self._check("read", url=str(site), action="screenshot (a frame of the page)")
        raise PermissionDeniedError(
            f"tab {tab.id} kept showing frames of sites not checked for reading: no screenshot taken"
        )

    def shows(self, tab: Tab) -> bool:
        """Whether the tab's URL, title and own tools may be shown to the client now (no ask; a frame's tools need
        their own site too: :class:`~webmcp_nb.browser.gate.Offer`)."""
        return shows(tab.browser, tab.url)

    async def tabs(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``list_tabs``' entries, with the tabs on sites the client may not read reduced to their id, from the
        grants as the relay reads them now."""
        browser = self.server.browser
        if browser is None or not browser._grants.enforced:
            return entries
        await browser._grants_now()
        shown = []
        for entry in entries:
            tab = next((t for t in browser.tabs if t.id == entry["id"]), None)
            if tab is None or shows(browser, tab.url):
                shown.append(entry)
            else:
                hidden: dict[str, Any] = {k: entry[k] for k in ("id", "bound_here", "held_by") if k in entry}
                shown.append({**hidden, "site": NOT_GRANTED})
        return shown
