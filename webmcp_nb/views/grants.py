"""The notebook panel's part of per-site grants: an asking card for each site someone (an MCP client, an agent, the
side panel's chat) wants to read or act on without a grant, answered here or in the side panel (the relay takes
the first answer), and the Sites tab: the grants with Revoke. Site names, client names and tool names are shown as
text (``display.escape``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core import _loop
from ..core.describe import asker, doing
from ..core.display import escape
from ..core.events import Event

if TYPE_CHECKING:
    from ..browser.browser import Browser

__all__ = ["GrantCard", "SitesView", "ANSWERS"]

ANSWERS = {
    "once": ("Once", "Allow this action only"),
    "read": ("Read this site", "It may list tools, call read-only ones and take screenshots here, from now on"),
    "act": ("Act on this site", "It may call every tool here from now on (high-risk ones still ask each time)"),
    "never": ("Never", "Refuse, and never ask again for this site"),
}
"""The answers to an ask, as both panels label them."""
VERDICTS = {"once": "allowed once", "read": "granted: read", "act": "granted: act", "never": "never for this site"}


def _layout() -> W.Layout:
    return W.Layout(width="auto", min_width="0", flex_flow="row wrap", align_items="center")


def _error(error: BaseException) -> str:
    return f'<span style="color:#cf222e">{escape(type(error).__name__)}: {escape(str(error))}</span>'


def _submit(work: Any, done: Callable[[BaseException | None], None]) -> None:
    """Run ``work`` on the library's loop and call ``done(error)`` when it ends; never waits."""
    _loop.submit(work).add_done_callback(lambda f: done(f.exception()))


class GrantCard(W.HBox):
    """An ask (a ``grant.asked`` event): the site, who asks and what; Once, Read this site, Act on this site,
    Never. The first answer, here or in the side panel, wins."""

    def __init__(self, browser: Browser, event: Event) -> None:
        self.browser = browser
        data = event.data
        self.id = str(data.get("id", ""))
        self.site = str(data.get("site", ""))
        needs = "act on" if data.get("need") == "act" else "read"
        self.text = W.HTML(
            f"<b>{escape(asker(data))}</b> asks to <b>{escape(doing(data))}</b> on <code>{escape(self.site)}</code> "
            f"(it needs to {needs} this site, which was never granted)"
        )
        self.buttons = {}
        for answer, (label, tip) in ANSWERS.items():
            button = W.Button(description=label, tooltip=tip, button_style="danger" if answer == "never" else "")
            button.on_click(lambda _, a=answer: self.answer(a))
            self.buttons[answer] = button
        self.note = W.HTML()
        super().__init__([self.text, *self.buttons.values(), self.note], layout=_layout())

    def answer(self, answer: str) -> None:
        """Answer the ask (what each button does): ``once``, ``read``, ``act`` or ``never``."""
        for button in self.buttons.values():
            button.disabled = True

        def done(error: BaseException | None) -> None:
            if error is not None:
                self.note.value = _error(error)
                for button in self.buttons.values():
                    button.disabled = False

        _submit(self.browser._answer_grant(self.id, answer, by="panel"), done)

    def resolved(self, event: Event) -> None:
        """The ask ended (answered in either view, or refused unanswered)."""
        for button in self.buttons.values():
            button.disabled = True
        data = event.data
        if event.kind == "grant.answered":
            by = {"sidepanel": "side panel", "panel": "notebook panel"}.get(str(data.get("origin")), data.get("origin"))
            verdict = f"{VERDICTS.get(str(data.get('answer')), data.get('answer'))} ({by})"
        else:
            verdict = "not granted: " + ("nobody answered in time" if data.get("why") == "timeout" else "withdrawn")
        self.note.value = f"— {escape(verdict)}"


class SitesView(W.VBox):
    """The per-site grants as the relay keeps them, each with Revoke (the site asks again from its next action)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.revoke_buttons: dict[str, W.Button] = {}
        self.message = W.HTML()
        super().__init__(layout=W.Layout(width="auto", min_width="0"))
        self.refresh()

    def refresh(self) -> None:
        state = self.browser._grants
        rows: list[W.Widget] = []
        if state.problem:
            rows.append(W.HTML(f'<div style="color:#cf222e">The grant file is refused: {escape(state.problem)}</div>'))
        if not state.enforced:
            rows.append(
                W.HTML(
                    "<i>This browser was launched by webmcp-nb: grants are not enforced here "
                    "(<code>wm.launch(grants=True)</code> enforces them).</i>"
                )
            )
        self.revoke_buttons = {}
        for site, level in sorted(state.levels.items()):
            button = W.Button(description="Revoke", tooltip=f"Forget {site}'s grant: it asks again")
            button.on_click(lambda _, s=site: self.revoke(s))
            self.revoke_buttons[site] = button
            rows.append(
                W.Box([W.HTML(f"<code>{escape(site)}</code> · <b>{escape(level)}</b>"), button], layout=_layout())
            )
        if not state.levels:
            rows.append(
                W.HTML(
                    "No site is granted: agents, MCP clients and the side panel's chat ask before they read or act on "
                    "a site. <code>wm.grants.allow(origin, 'read')</code> or <code>webmcp-nb grants allow</code> "
                    "grant one."
                )
            )
        self.children = (*rows, self.message)

    def revoke(self, site: str) -> None:
        """Revoke ``site``'s grant (what its button does)."""
        self.message.value = ""

        def done(error: BaseException | None) -> None:
            if error is not None:
                self.message.value = _error(error)

        _submit(self.browser._revoke_grant(site), done)
