"""The MCP clients' sessions (``webmcp-nb mcp``) on a browser, in the notebook panel: which client, the tab it is
bound to, its last activity and calls; **Focus** brings the tab to the front, **Close** ends the session (its
server process stops). Client names come from MCP clients and tab titles from pages: shown escaped."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core import _loop
from ..core.display import clip, escape
from ..core.events import Event

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab
    from ..link.protocol import SessionInfo

__all__ = ["SessionsView"]


class SessionsView(W.VBox):
    """One row per session, kept up to date from the browser's event stream: rows are made when a session
    starts, closed when it ends, and their text updated in place on its activity. ``focus_buttons[id]`` and
    ``close_buttons[id]`` are the rows' buttons (``view.close_buttons[id].click()`` ends a session from code)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.focus_buttons: dict[str, W.Button] = {}
        self.close_buttons: dict[str, W.Button] = {}
        self._rows: dict[str, tuple[W.HTML, W.HBox]] = {}
        self.note = W.HTML()
        self._empty = W.HTML("<i>No MCP client is connected.</i>")
        super().__init__(layout=W.Layout(width="100%"))
        self.refresh()
        self._unsubscribe = browser.events.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.kind.startswith("mcp.session.") or event.data.get("origin") == "mcp":
            self.refresh()

    def refresh(self) -> None:
        sessions = self.browser.mcp_sessions
        for gone in set(self._rows) - {s.id for s in sessions}:
            text, row = self._rows.pop(gone)
            for widget in (text, self.focus_buttons.pop(gone), self.close_buttons.pop(gone), row):
                widget.close()
        for session in sessions:
            if session.id not in self._rows:
                self._rows[session.id] = self._row(session)
            tab = self._tab(session)
            self._rows[session.id][0].value = self._text(session, tab)
            self.focus_buttons[session.id].disabled = tab is None
        rows = [self._rows[s.id][1] for s in sessions]
        self.children = (*rows, self.note) if rows else (self._empty, self.note)  # (the same: no message)

    def _tab(self, session: SessionInfo) -> Tab | None:
        return next((t for t in self.browser.tabs if t.id == session.tab_id), None)

    def _text(self, session: SessionInfo, tab: Tab | None) -> str:
        where = (
            "no tab bound"
            if session.tab_id is None
            else clip(tab.title or tab.url, 60)
            if tab
            else f"tab {session.tab_id}"
        )
        seen = time.strftime("%H:%M:%S", time.localtime(session.last_activity)) if session.last_activity else "—"
        return (
            f"<b>{escape(session.client or 'MCP client')}</b> (pid {session.pid}) · {escape(where)} · "
            f"last activity {seen} · {session.calls} calls"
        )

    def _row(self, session: SessionInfo) -> tuple[W.HTML, W.HBox]:
        text = W.HTML()
        focus = self.focus_buttons[session.id] = W.Button(description="Focus")
        close = self.close_buttons[session.id] = W.Button(description="Close", button_style="warning")
        focus.on_click(lambda _, sid=session.id: self._focus(sid))
        close.on_click(lambda _, sid=session.id: self._do(self.browser.aclose_mcp_session(sid)))
        return text, W.HBox([text, focus, close])

    def _focus(self, session_id: str) -> None:
        session = next((s for s in self.browser.mcp_sessions if s.id == session_id), None)
        tab = self._tab(session) if session is not None else None
        if tab is not None:  # the tab it is bound to now
            self._do(tab.aactivate())

    def _do(self, work: Any) -> None:
        def done(future: Any) -> None:
            error = future.exception() if not future.cancelled() else None
            self.note.value = "" if error is None else f"<i>{escape(str(error))}</i>"

        _loop.submit(work).add_done_callback(done)

    def close(self) -> None:
        self._unsubscribe()
        for text, row in self._rows.values():
            text.close()
            row.close()
        for button in (*self.focus_buttons.values(), *self.close_buttons.values(), self._empty, self.note):
            button.close()
        super().close()
