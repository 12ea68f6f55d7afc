"""The sites the grant checks of the running task allowed (an agent's turn, an MCP client's request): what such a
task then takes of a tab for a model (a screenshot, a skill injected, a listing of its tools) is bound to them,
never to the tab as it is by then. A check reads the relay's copy of the tab's URL, and the tab may move (an
open redirect, a page that navigates itself) between the check and the capture.

:mod:`.gate` notes each site a check allowed; a context variable keeps them, so each task has its own, and a
notebook's own calls (never checked) are bound to nothing."""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["note", "site_of", "sites"]

_allowed: ContextVar[tuple[tuple[int | None, str], ...]] = ContextVar("webmcp_nb_checked", default=())
"""(tab id, site) for each site a check of this task allowed: the tab's site, or a URL's (``None``)."""


def note(site: str, tab_id: int | None = None) -> None:
    """A check of this task allowed ``site``: the site of tab ``tab_id``, or of a URL (a frame's, a target's)."""
    kept = tuple(entry for entry in _allowed.get() if entry[0] != tab_id or (tab_id is None and entry[1] != site))
    _allowed.set((*kept, (tab_id, site)))


def site_of(tab_id: int) -> str | None:
    """The site the last check of tab ``tab_id`` in this task allowed; ``None`` when no check of this task read
    it (the notebook's own calls, a browser that keeps no grants)."""
    return next((site for tab, site in reversed(_allowed.get()) if tab == tab_id), None)


def sites() -> set[str]:
    """Every site a check of this task allowed."""
    return {site for _, site in _allowed.get()}
