"""The notebook panel: status and tab picker, tools inspector (schema form, Call, result), chat, skills, the
live operation log and confirmation cards — all fed by the browser's event stream, the same stream the
extension's side panel renders. Updates arrive from the library's loop thread; no cell ever waits for a click.
Every button has a programmatic twin: ``panel.tools.call_button.click()``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from .. import _loop
from ..agent_rules import CONFIRM
from ..display import clip, escape, visible
from ..events import Event
from ..providers import PRESETS
from ..tools import risk_label
from .form import SchemaForm
from .sessions import SessionsView

if TYPE_CHECKING:
    from ..agent import Agent, AgentRun
    from ..browser import Browser
    from ..tab import Tab

__all__ = ["Panel", "panel"]

FULL = W.Layout(width="100%")
LOG_LINES = 200
RISK_COLORS = {"low": "#1a7f37", "medium": "#9a6700", "high": "#cf222e"}
POLICY_LABELS = {
    "high": "high-risk tools",
    "medium": "medium- and high-risk tools",
    "always": "every tool",
    "never": "none (high risk still asks)",
}
"""What the chat's "ask before" choices say (high risk asks unless an agent is made with allow_high_risk=True)."""


def _risk_html(risk: str | None) -> str:
    if risk not in RISK_COLORS:
        return ""
    return f'<span style="color:{RISK_COLORS[risk]};font-weight:600">[{risk_label(risk)}]</span>'


def _submit(coro: Any, done: Callable[[Any, BaseException | None], None]) -> None:
    """Run ``coro`` on the library's loop; call ``done(result, error)`` when it finishes. Never waits."""
    future = _loop.submit(coro)

    def finished(f: Any) -> None:
        error = f.exception()
        done(None if error else f.result(), error)

    future.add_done_callback(finished)


class StatusBar(W.HBox):
    """Relay and browser state, and the tab picker."""

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.state = W.HTML()
        self.picker = W.Dropdown(description="tab", layout=W.Layout(width="60%"))
        self.picker.observe(lambda change: owner.select_tab(change["new"]), names="value")
        super().__init__([self.state, self.picker], layout=FULL)
        self.refresh()

    def refresh(self) -> None:
        browser = self.owner.browser
        relay = f"relay 127.0.0.1:{browser.relay.port}" if browser.relay else "relay daemon"
        state = "connected" if browser.connected else "disconnected"
        color = "#1a7f37" if browser.connected else "#cf222e"
        self.state.value = (
            f'<span style="color:{color}">●</span> {escape(relay)} · browser {state} · {len(browser.tabs)} tabs'
        )
        options = [(visible(clip(f"{t.title or t.url} ({len(t.tools)} tools)", 70)), t.id) for t in browser.tabs]
        if [o[1] for o in self.picker.options] != [o[1] for o in options] or self.picker.options != tuple(options):
            current = self.owner.tab.id if self.owner.tab else None
            self.picker.options = options
            if current in [o[1] for o in options]:
                self.picker.value = current


class ToolsInspector(W.VBox):
    """The tab's tools; the selected one's description, schema, a generated form, Call and the result."""

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.list = W.Select(rows=8, layout=FULL)
        self._refreshing = False
        self._wanted: str | None = None  # the user's choice, kept while the page re-registers its tools
        self._shown: str | None = None
        self._form_tool: tuple[str, str] | None = None
        self.list.observe(self._on_select, names="value")
        self.details = W.HTML()
        self.form_box = W.VBox(layout=FULL)
        self.form: SchemaForm | None = None
        self.call_button = W.Button(description="Call", button_style="primary", disabled=True)
        self.call_button.on_click(lambda _: self.call())
        self.result = W.HTML()
        super().__init__([self.list, self.details, self.form_box, self.call_button, self.result], layout=FULL)

    def refresh(self) -> None:
        tab = self.owner.tab
        tools = list(tab.tools.values()) if tab else []
        options = [(visible(f"{t.name}  [{t.source}, {t.risk_label}]"), t.name) for t in tools]
        if tuple(options) != self.list.options:
            target = self._wanted if self._wanted in [o[1] for o in options] else None
            self._refreshing = True  # the page's tools changed: keep the user's choice, its form and result
            try:
                self.list.options = options
                self.list.value = target
            finally:
                self._refreshing = False
            if target != self._shown:
                self._show(target)

    def _on_select(self, change: dict[str, Any]) -> None:
        if not self._refreshing:
            self._wanted = change["new"]
            self._show(change["new"])

    def select(self, name: str) -> None:
        """Select tool ``name`` (what clicking it in the list does)."""
        self.list.value = name

    def _show(self, name: str | None) -> None:
        tab = self.owner.tab
        tool = tab.tools.get(name) if tab and name else None
        self.call_button.disabled = tool is None
        self._shown = tool.name if tool else None
        if tool is None:
            self.details.value, self.form_box.children = "", ()
            return
        schema = json.dumps(tool.input_schema, indent=1)
        self.details.value = (
            f"<b>{escape(tool.name)}</b> <i>{escape(tool.source)}</i> {_risk_html(tool.risk)}"
            f"<div>{escape(tool.description)}</div>"
            f"<details><summary>input schema</summary><pre>{escape(clip(schema, 8000))}</pre></details>"
        )
        if self._form_tool != (tool.name, json.dumps(tool.input_schema, sort_keys=True)):
            self._form_tool = (tool.name, json.dumps(tool.input_schema, sort_keys=True))
            self.form = SchemaForm(tool.input_schema)  # a tool that comes back unchanged keeps its form and result
            self.result.value = ""
        self.form_box.children = (self.form,)

    def call(self) -> None:
        """Call the selected tool with the form's arguments; the result shows when it arrives."""
        tab, name = self.owner.tab, self.list.value
        if tab is None or name is None or self.form is None:
            return
        try:
            arguments = self.form.value
        except ValueError as exc:
            self.result.value = f'<span style="color:#cf222e">The JSON is not valid: {escape(str(exc))}</span>'
            return
        self.result.value = f"<i>calling {escape(name)}…</i>"
        self.call_button.disabled = True

        def done(result: Any, error: BaseException | None) -> None:
            self.call_button.disabled = False
            if error is not None:
                self.result.value = (
                    f'<span style="color:#cf222e">{escape(type(error).__name__)}: {escape(str(error))}</span>'
                )
            else:
                self.result.value = result._repr_mimebundle_()["text/html"]

        _submit(tab.acall(name, arguments), done)


class Chat(W.VBox):
    """A chat with an agent on the panel's tab: streaming transcript, input, model picker (keys from the
    kernel's environment only: a widget would carry them into the notebook file)."""

    def __init__(self, owner: Panel, agent: Agent | None) -> None:
        self.owner = owner
        self.agent = agent
        self.run: AgentRun | None = None
        self.provider = W.Dropdown(options=list(PRESETS), value="openai", description="provider")
        self.model = W.Text(placeholder="default of the preset", description="model")
        self.base_url = W.Text(placeholder="preset's URL", description="base URL")
        self.confirm = W.Dropdown(
            options=[(POLICY_LABELS[p], p) for p in CONFIRM["policies"]],
            value=agent.confirm if agent is not None else CONFIRM["default"],
            description="ask before",
        )
        self.confirm.observe(self._on_policy, names="value")
        self.transcript = W.HTML(layout=W.Layout(width="100%", max_height="24em", overflow="auto"))
        self.input = W.Text(placeholder="Ask the agent to do something on this page", layout=W.Layout(width="80%"))
        self.send_button = W.Button(description="Send", button_style="primary")
        self.send_button.on_click(lambda _: self.send())
        self._lines: list[str] = []
        self._streaming = ""
        settings = W.VBox([W.HBox([self.provider, self.model, self.base_url]), self.confirm])
        super().__init__([settings, self.transcript, W.HBox([self.input, self.send_button])], layout=FULL)

    def _agent(self) -> Agent:
        from ..agent import Agent

        tab = self.owner.tab
        if tab is None:
            raise ValueError("the panel has no tab to chat about")
        if self.agent is None or self.agent.tab is not tab:
            self.agent = Agent(
                tab,
                provider=self.provider.value,
                model=self.model.value or None,
                base_url=self.base_url.value or None,
                confirm=self.confirm.value,
            )
        return self.agent

    def _on_policy(self, change: dict[str, Any]) -> None:
        if self.agent is not None:
            self.agent.confirm = change["new"]

    def send(self, text: str | None = None) -> AgentRun | None:
        """Send ``text`` (default: the input box) to the agent; returns the running turn's handle."""
        text = (text if text is not None else self.input.value).strip()
        if not text or self.owner.tab is None:
            return None
        self.input.value = ""
        try:
            agent = self._agent()
        except Exception as exc:  # a missing key, an unknown preset: say it here, do not raise into the UI
            self._add("error", f"{type(exc).__name__}: {exc}")
            return None
        self._add("user", text)
        self.run = agent.start(text)
        return self.run

    def on_event(self, event: Event) -> None:
        if self.agent is None or event.tab_id != self.agent.tab.id:
            return
        if event.kind == "model.delta":
            self._streaming += event.data.get("text", "")
            self._render()
        elif event.kind == "model.response":
            self._streaming = ""
            if event.data.get("content"):
                self._add("assistant", event.data["content"])
            for call in event.data.get("tool_calls") or []:
                self._add("tool", f"→ {call.get('name')}({clip(json.dumps(call.get('arguments')), 200)})")
        elif event.kind == "agent.limit":
            self._add("error", f"stopped: {event.data.get('limit')}")
        elif event.kind == "agent.error":
            self._add("error", event.data.get("message", ""))

    def _add(self, role: str, text: str) -> None:
        color = {"user": "#0969da", "assistant": "#1b1f24", "tool": "#8250df", "error": "#cf222e"}[role]
        self._lines.append(f'<div style="color:{color}"><b>{role}</b> {escape(text)}</div>')
        self._render()

    def _render(self) -> None:
        streaming = f"<div><b>assistant</b> {escape(self._streaming)}…</div>" if self._streaming else ""
        self.transcript.value = "".join(self._lines[-100:]) + streaming


class SkillsView(W.VBox):
    """Installed skills: enable/disable, reload, and their health on the panel's tab."""

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.toggles: dict[str, W.Checkbox] = {}
        super().__init__(layout=FULL)

    def refresh(self) -> None:
        browser, tab = self.owner.browser, self.owner.tab
        health = {s.name: s for s in (tab.skills if tab else [])}
        rows = []
        for name, skill in browser.skills.items():
            toggle = W.Checkbox(value=skill.enabled, description=f"{name} {skill.version}", indent=False)
            toggle.observe(lambda change, n=name: self.set_enabled(n, change["new"]), names="value")
            self.toggles[name] = toggle
            source = browser.skills.source(name)
            reload = W.Button(description="reload", disabled=source is None)
            if source is not None:
                reload.on_click(lambda _, s=source: _submit(s.areload(), lambda r, e: None))
            status = health.get(name)
            note = "" if status is None else ("ok" if status.ok else f"not active here: {status.reason}")
            rows.append(W.HBox([toggle, reload, W.HTML(escape(note))]))
        self.children = rows or [W.HTML("<i>No skills installed.</i>")]

    def set_enabled(self, name: str, enabled: bool) -> None:
        registry = self.owner.browser.skills
        _submit(registry.aenable(name) if enabled else registry.adisable(name), lambda r, e: None)


class OperationLog(W.HTML):
    """The live log: one line per event, newest last."""

    def __init__(self) -> None:
        super().__init__(layout=W.Layout(width="100%", max_height="20em", overflow="auto"))
        self.lines: list[str] = []

    def add(self, event: Event) -> None:
        if event.kind == "model.delta":
            return
        data = event.data
        detail = data.get("tool") or data.get("task") or data.get("skill") or data.get("text") or ""
        if "error" in data:
            detail = f"{detail} — {data['error']}"
        took = f" {event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
        origin = " (side panel)" if data.get("origin") == "sidepanel" else ""
        stamp = time.strftime("%H:%M:%S", time.localtime(event.ts))
        self.lines.append(
            f"<div><code>{stamp}</code> <b>{escape(event.kind)}</b> "
            f"{escape(clip(str(detail), 160))}{took}{origin}</div>"
        )
        del self.lines[:-LOG_LINES]
        self.value = "".join(self.lines)


class ConfirmationCard(W.HBox):
    """A tool call waiting for a yes or no; either view may answer, the first answer wins."""

    def __init__(self, owner: Panel, event: Event) -> None:
        self.owner = owner
        self.id = event.data["id"]
        self.risk = event.data.get("risk")
        self.text = W.HTML(
            f"Allow <b>{escape(str(event.data.get('tool')))}</b>"
            f"({escape(clip(json.dumps(event.data.get('arguments')), 200))})? {_risk_html(self.risk)}"
        )
        self.approve = W.Button(description="Approve", button_style="success")
        self.deny = W.Button(description="Deny", button_style="danger")
        self.approve.on_click(lambda _: self.answer(True))
        self.deny.on_click(lambda _: self.answer(False))
        super().__init__([self.text, self.approve, self.deny])

    def answer(self, approved: bool) -> None:
        self.owner.browser._answer_confirmation(self.id, approved, by="notebook panel")

    def resolved(self, event: Event) -> None:
        verdict = "approved" if event.data.get("approved") else "denied"
        self.approve.disabled = self.deny.disabled = True
        self.text.value += f" — {verdict} ({escape(str(event.data.get('by', '')))})"


class Panel(W.VBox):
    """``wm.panel(browser)``: the notebook's view of the session."""

    def __init__(self, browser: Browser, tab: Tab | None = None, agent: Agent | None = None) -> None:
        self.browser = browser
        self.tab = tab or browser.active_tab or (browser.tabs[0] if browser.tabs else None)
        self.status = StatusBar(self)
        self.tools = ToolsInspector(self)
        self.chat = Chat(self, agent)
        self.skills = SkillsView(self)
        self.operations = OperationLog()
        self.confirmations = W.VBox(layout=FULL)
        self.cards: dict[str, ConfirmationCard] = {}
        self.sessions = SessionsView(browser)
        self.sections = W.Tab(children=[self.tools, self.chat, self.skills, self.operations, self.sessions])
        for i, title in enumerate(["Tools", "Chat", "Skills", "Log", "MCP sessions"]):
            self.sections.set_title(i, title)
        super().__init__([self.status, self.confirmations, self.sections], layout=FULL)
        for event in list(browser.events.events)[-LOG_LINES:]:
            self.operations.add(event)
        self.refresh()
        self._unsubscribe = browser.events.subscribe(self._on_event)

    def select_tab(self, tab_id: int | None) -> None:
        if tab_id is not None and (self.tab is None or self.tab.id != tab_id):
            self.tab = self.browser.tab(tab_id)
            self.refresh()

    def refresh(self) -> None:
        self.status.refresh()
        self.tools.refresh()
        self.skills.refresh()

    def _on_event(self, event: Event) -> None:
        self.operations.add(event)
        self.chat.on_event(event)
        if event.kind == "confirmation.requested":
            card = self.cards[event.data["id"]] = ConfirmationCard(self, event)
            self.confirmations.children = (*self.confirmations.children, card)
        elif event.kind == "confirmation.answered" and event.data.get("id") in self.cards:
            self.cards[event.data["id"]].resolved(event)
        if event.kind in ("tools.changed", "navigation", "skill.injected", "skill.failed", "skills.changed"):
            self.refresh()

    def close(self) -> None:
        self._unsubscribe()
        self.sessions.close()
        super().close()


def panel(target: Browser | Tab, *, agent: Agent | None = None) -> Panel:
    """The panel for a browser (its active tab) or for one tab. ``agent``: answer chat with this agent
    instead of one made from the chat's model picker (keys come from the kernel's environment)."""
    from ..browser import Browser

    if isinstance(target, Browser):
        return Panel(target, agent=agent)
    return Panel(target._browser, target, agent=agent)
