"""The MCP clients' sessions (``webmcp-nb mcp``) on a browser, in the notebook panel: which client, the tab it is
bound to, its last activity and calls; **Focus** brings the tab to the front, **Close** ends the session (its
server process stops). Client names come from MCP clients and tab titles from pages: shown escaped."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from .. import _loop
from ..display import clip, escape
from ..events import Event

if TYPE_CHECKING:
    from ..browser import Browser
    from ..protocol import SessionInfo

__all__ = ["SessionsView"]


class SessionsView(W.VBox):
    """One row per session, kept up to date from the browser's event stream. ``focus[id]`` and ``close[id]``
    are the rows' buttons (``view.close_buttons[id].click()`` ends a session from code)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.focus_buttons: dict[str, W.Button] = {}
        self.close_buttons: dict[str, W.Button] = {}
        self.note = W.HTML()
        super().__init__(layout=W.Layout(width="100%"))
        self.refresh()
        self._unsubscribe = browser.events.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.kind.startswith("mcp.session.") or event.data.get("origin") == "mcp":
            self.refresh()

    def refresh(self) -> None:
        sessions = self.browser.mcp_sessions
        self.focus_buttons, self.close_buttons = {}, {}
        rows: list[W.Widget] = [self._row(s) for s in sessions]
        self.children = [*rows, self.note] if rows else [W.HTML("<i>No MCP client is connected.</i>"), self.note]

    def _row(self, session: SessionInfo) -> W.Widget:
        tab = next((t for t in self.browser.tabs if t.id == session.tab_id), None)
        where = (
            "no tab bound"
            if session.tab_id is None
            else clip(tab.title or tab.url, 60)
            if tab
            else f"tab {session.tab_id}"
        )
        seen = time.strftime("%H:%M:%S", time.localtime(session.last_activity)) if session.last_activity else "—"
        text = W.HTML(
            f"<b>{escape(session.client or 'MCP client')}</b> (pid {session.pid}) · {escape(where)} · "
            f"last activity {seen} · {session.calls} calls"
        )
        focus = self.focus_buttons[session.id] = W.Button(description="Focus", disabled=tab is None)
        close = self.close_buttons[session.id] = W.Button(description="Close", button_style="warning")
        if tab is not None:
            focus.on_click(lambda _: self._do(tab.aactivate()))
        close.on_click(lambda _, sid=session.id: self._do(self.browser.aclose_mcp_session(sid)))
        return W.HBox([text, focus, close])

    def _do(self, work: Any) -> None:
        def done(future: Any) -> None:
            error = future.exception() if not future.cancelled() else None
            self.note.value = "" if error is None else f"<i>{escape(str(error))}</i>"

        _loop.submit(work).add_done_callback(done)

    def close(self) -> None:
        self._unsubscribe()
        super().close()
