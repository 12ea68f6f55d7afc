"""The one gate every face that acts for a model calls before it acts on a site of the user's own browser: agents
(``wm.Agent``, and so evals), ``webmcp-nb mcp``, and the chat-site bridge. The side panel's chat calls the same
check through its worker (``grants.check``). A notebook user's own calls (``tab.call``, ``tab.tools[...]()``, the
panels' Call buttons) are the user acting and never come here.

    from webmcp_nb.browser.gate import Asker, check_site, need_of

    who = Asker("bridge", "chat.example.com")          # kind: agent, mcp, sidepanel, bridge; name: what it is
    await check_site(tab.browser, "read", who, tab=tab, action="read")              # the page's title, URL, tools
    await check_call(tab, tool, tool.name, who)                   # a page tool: its page's site and its frame's
    await check_site(browser, "read", who, url=target, action="open")                # before opening a site
    offer = Offer(tab)                      # what of the tab's page tools a model is offered now
    tools = offer.select(tab.tools.values())                         # and offer.note(): what it hides, unnamed

It returns when the site's grant allows ``need`` (``read``: list tools, call read-only tools, screenshots; ``act``:
every tool), and raises :class:`~webmcp_nb.core.errors.PermissionDeniedError` (``PERMISSION_DENIED``) with a
message the caller can show its user when it does not: the site is ``none``, or nobody answered the ask in time,
or the answer did not allow it. A site never granted makes the relay ask the user (a card in the side panel and the
notebook panel naming the site, who asks and what) and the call waits for the answer, up to ``timeout`` seconds.
The relay decides from the grant file as it is at that moment, so a revoke counts from the next check. An answer
of ``once`` allows the rest of the current task (one MCP request, one agent turn) for that need and site, held in a
context variable. Browsers the library launched are exempt unless ``launch(grants=True)``: the check returns at
once without a round trip.

What a model is shown of a page's tools follows one rule, :class:`Offer`, in every face that offers them (the MCP
server's ``tools/list``, ``list_page_tools`` and tab summaries, the agent's tool list, the bridge's; the side panel's
chat applies its twin, ``offeredTools`` in ``extension/chat/agent-core.js``): none while the page's site may not be
read, and a tool a cross-origin frame registered only while that frame's site may be read too (``read`` or ``act``
granted, or allowed in this task). A frame of a site never granted offers nothing: its tools' names and
descriptions are that site's text, and reach no model; the listing says only how many tools of which sites are
hidden, and how the user grants them. It never asks (a listing waits for nobody). A call to such a tool by a name
the model guessed still passes :func:`check_call`, which asks.

The relay checks its copy of the tab's URL, and the tab can move before the task acts on what it was allowed. So
each site a check allowed binds the task (:mod:`.checked`): a screenshot, a skill injected, a listing it then takes
of the tab shows that site or is refused; a page tool's call goes to the document that registered the tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from ..core.agent_rules import hidden_note
from ..core.errors import NavigatedError, PermissionDeniedError, ProtocolError
from ..link.grant_asks import ASK_TIMEOUT
from ..link.grants import origin_of, satisfies
from . import checked
from .browser import Browser

if TYPE_CHECKING:
    from .tab import Tab
    from .tools import Tool

__all__ = [
    "Asker",
    "Offer",
    "check_call",
    "check_page",
    "check_site",
    "need_of",
    "shows",
    "Need",
    "ASK_TIMEOUT",
]

Need = Literal["read", "act"]
REPLY_MARGIN = 10.0
"""Seconds the caller waits for the relay beyond the ask's own time limit."""

_held: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("webmcp_nb_grants_held", default=())
"""What answers of ``once`` allowed in this task: (site, need) pairs."""


@dataclass(frozen=True)
class Asker:
    """Who asks, as the asking card names it: ``kind`` (``agent``, ``mcp``, ``sidepanel``, ``bridge``) and ``name``
    (the model, the MCP client's name, the chat site)."""

    kind: str
    name: str


def need_of(tool: Tool | Any) -> Need:
    """What calling ``tool`` needs of its site: ``read`` for a read-only tool, ``act`` for any other."""
    return "read" if getattr(tool, "risk", "medium") == "low" else "act"


def _held_for(site: str | None) -> str | None:
    held = [need for where, need in _held.get() if where == site]
    return "act" if "act" in held else (held[0] if held else None)


def shows(browser: Browser | Any, url: str, need: Need = "read") -> bool:
    """Whether what ``url`` shows (title, address, tools) may be shown to a model now, without asking: the grants
    as the relay last pushed them, what ``once`` allowed in this task, and for ``read`` any site a check of this
    task allowed (an answer the relay gave before its new grants reached this process). For listings; acts use
    :func:`check_site`."""
    if not isinstance(browser, Browser):
        return True
    site = origin_of(url)
    held = _held_for(site)
    if browser._grants.allows(url, need) or (held is not None and satisfies(held, need)):
        return True
    return need == "read" and site is not None and site in checked.sites()


class _Registered(Protocol):
    """A page tool as a listing has it (a ``Tool``, or its ``ToolInfo``): the origin of the frame that registered it."""

    @property
    def origin(self) -> str | None: ...


T = TypeVar("T", bound=_Registered)


class Offer:
    """What of ``tab``'s page tools may be offered to a model now (see the module): the page's own tools while its
    site may be read, a cross-origin frame's while that frame's site may be read too. ``readable(url)`` says
    whether a site may be read; by default :func:`shows` (the grants as the relay last pushed them, and what this
    task was allowed). Each tool held back is counted in :attr:`hidden` by its frame's site."""

    def __init__(self, tab: Tab | Any, readable: Callable[[str], bool] | None = None) -> None:
        browser = getattr(tab, "browser", None)
        self._readable = readable or (lambda url: shows(browser, url))
        self._origin = getattr(tab, "origin", "") or ""
        self._frames: dict[str, bool] = {}
        self.page = self._readable(getattr(tab, "url", ""))
        """Whether the page's own site may be read (nothing of the page is offered otherwise)."""
        self.hidden: dict[str, int] = {}
        """Tools held back because their frame's site may not be read, by that site (``null``: a frame of no
        site, such as a sandboxed one)."""

    def offers(self, origin: str | None) -> bool:
        """Whether a tool its frame registered from ``origin`` (``Tool.origin``) may be offered; counts it in
        :attr:`hidden` if not (ask once per tool)."""
        if not self.page:
            return False
        if not origin or not self._origin or origin == self._origin:  # the page's own (``Tool.cross_origin``)
            return True
        readable = self._frames.get(origin)
        if readable is None:
            readable = self._frames[origin] = self._readable(origin)
        if not readable:
            site = origin_of(origin) or "null"
            self.hidden[site] = self.hidden.get(site, 0) + 1
        return readable

    def select(self, tools: Iterable[T]) -> list[T]:
        """The tools that may be offered, in their order."""
        return [tool for tool in tools if self.offers(tool.origin)]

    def note(self) -> str | None:
        """What a listing says of the tools held back (:func:`~webmcp_nb.core.agent_rules.hidden_note`: how many,
        of which sites, how the user grants one; never their text); ``None`` when none was."""
        return hidden_note(self.hidden)


async def check_site(
    browser: Browser | Any,
    need: Need,
    asker: Asker,
    *,
    tab: Tab | None = None,
    url: str | None = None,
    action: str,
    tool: str | None = None,
    risk: str | None = None,
    timeout: float = ASK_TIMEOUT,
) -> str:
    """Return if ``asker`` may do ``action`` (which needs ``need``) on ``url``'s site, or ``tab``'s; ask the user
    when the site was never granted; raise ``PermissionDeniedError`` when it may not (see the module). Returns the
    site's level as the relay found it: ``read`` or ``act`` (granted), ``ask`` (allowed once, by the user's
    answer or one held in this task), ``exempt`` (a browser that keeps no grants)."""
    if not isinstance(browser, Browser) or not browser._grants.enforced:
        return "exempt"  # a mock browser (evals' local mode) has no sites; a launched browser is exempt by default
    where = url if url is not None else (tab.url if tab is not None else "")
    site = origin_of(where)
    params: dict[str, Any] = {
        "need": need,
        "who": {"kind": asker.kind, "name": asker.name},
        "action": action,
        "timeoutMs": int(timeout * 1000),
    }
    params |= {"url": url} if url is not None or tab is None else {"tabId": tab.id}
    held = _held_for(site)
    params |= {k: v for k, v in (("tool", tool), ("risk", risk), ("held", held)) if v is not None}
    params |= {"heldSite": site} if held is not None else {}
    try:
        reply = await browser._check_grant(params, timeout + REPLY_MARGIN)
    except ProtocolError as exc:  # an older relay daemon, still running, that knows no grants: refuse
        raise PermissionDeniedError(
            f"the relay could not check this site's grant ({exc.message}); if it is an older webmcp-nb relay, stop "
            "it (`webmcp-nb doctor` shows its pid) and connect again"
        ) from None
    answered = reply.get("site")  # the site the relay checked: the tab may have moved since `site` was read
    if isinstance(answered, str):
        checked.note(answered, tab.id if tab is not None and url is None else None)  # what this task may capture
        if reply.get("answer") == "once":
            _held.set((*_held.get(), (answered, need)))
    return str(reply.get("level", "ask"))


async def check_page(
    tab: Tab, need: Need, asker: Asker, *, action: str, timeout: float = ASK_TIMEOUT, rounds: int = 3
) -> None:
    """:func:`check_site` of ``tab``, before what is read of it next (its title, address, tools): when the tab, as
    the mirror has it, shows another site than the one the relay checked (it moved in between: an open redirect,
    the user), that site is checked too, and so on ``rounds`` times; then ``NavigatedError``."""
    for _ in range(rounds):
        await check_site(tab.browser, need, asker, tab=tab, action=action, timeout=timeout)
        allowed = checked.site_of(tab.id)
        if allowed is None or origin_of(tab.url) == allowed:
            return
    raise NavigatedError(f"tab {tab.id} kept moving to other sites while its site was checked")


async def check_call(tab: Tab, tool: Tool | None, name: str, asker: Asker, *, timeout: float = ASK_TIMEOUT) -> None:
    """Before a page tool's call: ``read`` for a read-only tool, ``act`` for any other (or one not listed), of the
    page's site, and of the frame's own site for a tool a cross-origin frame registered (it acts there, with that
    site's cookies)."""
    need = need_of(tool) if tool is not None else "act"
    what: dict[str, Any] = {"action": "call", "tool": name, "risk": tool.risk if tool is not None else None}
    await check_site(tab.browser, need, asker, tab=tab, timeout=timeout, **what)
    if tool is not None and tool.cross_origin and tool.origin:
        await check_site(tab.browser, need, asker, url=tool.origin, timeout=timeout, **what)
