"""The notebook panel: status and tab picker, tools inspector (schema form, Call, result), chat, skills, the
live operation log, confirmation and asking cards, the sites granted — all fed by the browser's event stream, the
same stream the extension's side panel renders. Updates arrive from the library's loop thread; no cell ever waits
for a click. Every button has a programmatic twin: ``panel.tools.call_button.click()``.

Widths follow the output area (JupyterLab and Notebook 7, wide or narrow): widgets stretch (``width: auto``)
instead of taking 100 % plus ipywidgets' margins, and rows wrap. Every empty state says what to do next."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..agent.providers import PRESETS
from ..browser.tools import Tool, risk_label
from ..core import _loop
from ..core.agent_rules import CONFIRM, default_provider
from ..core.describe import FAMILIES, PROBLEMS, QUIET, actor, counted, describe, family, stamp
from ..core.describe import line as plain_line
from ..core.display import clip, escape, visible
from ..core.events import Event, EventStream, acting_as
from .form import SchemaForm
from .grants import GrantCard, SitesView
from .sessions import SessionsView

if TYPE_CHECKING:
    from ..agent.agent import Agent, AgentRun
    from ..browser.browser import Browser
    from ..browser.tab import Tab
    from ..link.protocol import InstalledSkill, SkillStatus

__all__ = ["Panel", "panel"]

LOG_LINES = 200
"""Lines the log shows at most (the stream keeps more: changing the filter finds them)."""
LOG_SLACK = 50
"""Lines past ``LOG_LINES`` before the oldest go, in one step (each removal at the top redraws the list)."""
LOG_FILTERS = ["everything", *dict.fromkeys(FAMILIES.values()), "other", "problems"]
"""What the log's "show" picker offers: every event, a family of kinds (``describe.FAMILIES``; MCP sessions and
chat messages are "other") or problems, as the side panel's picker does."""
LINE = W.Layout(width="auto", min_width="0", margin="0")
"""Every log line's layout (shared: one model, not one per line)."""
KIND_COLORS = {"tool calls": "#0969da", "agent": "#8250df", "page": "#1a7f37", "skills": "#9a6700"}
RISK_COLORS = {"low": "#1a7f37", "medium": "#9a6700", "high": "#cf222e"}
ANSWERED_KEPT = 3
"""Answered confirmation cards kept (folded) above the sections; older ones go (the log keeps every answer)."""


REFRESHING = {
    "tools.changed", "navigation", "skill.injected", "skill.failed", "skills.changed", "override.set",
    "override.cleared",
}  # fmt: skip
"""Events after which the panel shows the tab's tools again."""


def _marks(tool: Tool) -> list[str]:
    """What the tools list says beside a tool's name: its source, its risk, a frame whose origin is not the page's
    own, and whether it is overridden here."""
    marks = [tool.source, tool.risk_label] + ([f"a frame of {tool.origin}"] if tool.cross_origin else [])
    return marks + (["overridden"] if tool.override is not None else [])


def _blank(tab: Tab) -> bool:
    """A tab showing no page (a new tab, ``about:blank``): the tab picker lists it after the pages."""
    return tab.url in ("", "about:blank") or tab.url.startswith(("chrome://newtab", "chrome://new-tab-page"))


def _risk_html(risk: str | None) -> str:
    if risk not in RISK_COLORS:
        return ""
    return f'<span style="color:{RISK_COLORS[risk]};font-weight:600">[{risk_label(risk)}]</span>'


def _fill(**more: str) -> W.Layout:
    """A layout that takes the width it is given and no more (``width: 100%`` plus ipywidgets' 2 px margins
    would run past the output area's edge)."""
    return W.Layout(**{"width": "auto", "min_width": "0", **more})


def _row(**more: str) -> W.Layout:
    """A row whose items wrap onto the next line when the output area is narrow."""
    return W.Layout(**{"width": "auto", "min_width": "0", "flex_flow": "row wrap", "align_items": "center", **more})


def _hint(text: str) -> str:
    """An empty state's words: what is missing and what to do next (``text`` is HTML of ours)."""
    return f'<div style="color:#57606a;padding:.4em 0;line-height:1.5;overflow-wrap:anywhere">{text}</div>'


def _submit(coro: Any, done: Callable[[Any, BaseException | None], None]) -> None:
    """Run ``coro`` on the library's loop; call ``done(result, error)`` when it finishes. Never waits."""
    future = _loop.submit(coro)

    def finished(f: Any) -> None:
        error = f.exception()
        done(None if error else f.result(), error)

    future.add_done_callback(finished)


class StatusBar(W.HBox):
    """Relay and browser state as they are now (connected, disconnected, closed; the tabs), and the tab picker."""

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.state = W.HTML(layout=W.Layout(margin="2px 1em 2px 2px"))
        self.picker = W.Dropdown(description="tab", layout=_fill(flex="1 1 18em", max_width="40em"))
        self.picker.observe(lambda change: owner.select_tab(change["new"]), names="value")
        super().__init__([self.state, self.picker], layout=_row())
        self.refresh()

    def refresh(self) -> None:
        browser = self.owner.browser
        tabs = [] if browser.closed else sorted(browser.tabs, key=_blank)  # the pages first, blank tabs after
        if browser.closed:
            text, color = "browser closed: wm.connect() or wm.launch() for another", "#57606a"
        else:
            relay = f"relay 127.0.0.1:{browser.relay.port}" if browser.relay else "relay daemon"
            state = "connected" if browser.connected else "disconnected"
            text = f"{relay} · browser {state} · {counted(len(tabs), 'tab')}"
            color = "#1a7f37" if browser.connected else "#cf222e"
        self.state.value = f'<span style="color:{color}">●</span> {escape(text)}'
        options = [(visible(clip(f"{t.title or t.url} ({counted(len(t.tools), 'tool')})", 70)), t.id) for t in tabs]
        if [o[1] for o in self.picker.options] != [o[1] for o in options] or self.picker.options != tuple(options):
            current = self.owner.tab.id if self.owner.tab else None
            self.picker.options = options
            if current in [o[1] for o in options]:
                self.picker.value = current


class ToolsInspector(W.VBox):
    """The tab's tools; the selected one's description, schema, a generated form, Call and the result."""

    children: tuple[Any, ...]  # ipywidgets' trait, typed for mypy

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.list = W.Select(rows=8, layout=_fill())
        self._refreshing = False
        self._wanted: str | None = None  # the user's choice, kept while the page re-registers its tools
        self._shown: str | None = None
        self._form_tool: tuple[str, str] | None = None
        self.list.observe(self._on_select, names="value")
        self.hint = W.HTML(layout=_fill())
        self.inject_dom = W.Button(
            description="Give it the dom skill",
            tooltip="tab.inject(wm.Skill.builtin('dom'))",
            layout=W.Layout(width="auto", align_self="flex-start"),
        )
        self.inject_dom.on_click(lambda _: self.give_dom_skill())
        self.details = W.HTML(layout=_fill())
        self.form_box = W.VBox(layout=_fill())
        self.form: SchemaForm | None = None
        self.call_button = W.Button(description="Call", button_style="primary", disabled=True)
        self.call_button.on_click(lambda _: self.call())
        self.result = W.HTML(layout=_fill())
        super().__init__(
            [self.hint, self.list, self.details, self.form_box, self.call_button, self.result], layout=_fill()
        )

    def refresh(self) -> None:
        tab = None if self.owner.browser.closed else self.owner.tab
        tools = list(tab.tools.values()) if tab else []
        options = [(visible(f"{t.name}  [{', '.join(_marks(t))}]"), t.name) for t in tools]
        if tuple(options) != self.list.options:
            target = self._wanted if self._wanted in [o[1] for o in options] else None
            self._refreshing = True  # the page's tools changed: keep the user's choice, its form and result
            try:
                self.list.options = options
                self.list.rows = min(8, max(2, len(options)))
                self.list.value = target
            finally:
                self._refreshing = False
            if target != self._shown:
                self._show(target)
        if self._shown is not None:
            self._show(self._shown)  # its text may have changed (an override): the form stays unless its schema did
        self._say_what_next(len(options))

    def _say_what_next(self, count: int) -> None:
        """The empty states: no tab, a page without tools, no tool chosen yet."""
        tab = None if self.owner.browser.closed else self.owner.tab
        if self.owner.browser.closed:
            text = "The browser is closed: nothing to inspect or call here."
        elif tab is None:
            text = "No tab to inspect. Open a page with <code>tab = browser.open(url)</code>, then pick it above."
        elif not count:
            where = escape(clip(tab.url, 120))
            text = (
                f"<b>This page has no WebMCP tools</b> ({where}).<br>If it registers them later (after a search, a "
                "click, a login), they appear here by themselves; <code>tab.wait_for_tool(name)</code> waits for "
                "one.<br>A page without WebMCP gets tools from a <b>skill</b>: the <code>dom</code> skill (read, "
                "click, fill, extract on any page), or one you write (<code>notebooks/02-prototype-a-skill</code>)."
            )
        elif self._shown is None:
            text = f"{count} tool{'s' if count != 1 else ''}: pick one to see what it takes, fill its form, Call."
        else:
            text = ""
        self.hint.value = _hint(text) if text else ""
        self.hint.layout.display = None if text else "none"
        if count:
            children = (self.hint, self.list, self.details, self.form_box, self.call_button, self.result)
        else:  # nothing to pick or call: the way forward, and what injecting a skill said
            children = (self.hint, *((self.inject_dom,) if tab is not None else ()), self.result)
        if self.children != children:
            self.children = children

    def forget(self) -> None:
        """Another tab was picked: nothing of the last tab's tool stays (its form, its result)."""
        self._wanted = self._form_tool = None
        self.form = None
        self._show(None)
        self.result.value = ""

    def give_dom_skill(self) -> None:
        """Inject the shipped ``dom`` skill into the tab (what the empty state's button does)."""
        from ..browser.skills import Skill

        tab = self.owner.tab
        if tab is None:
            return
        self.inject_dom.disabled = True
        self.result.value = "<i>injecting the dom skill…</i>"

        def done(result: Any, error: BaseException | None) -> None:
            self.inject_dom.disabled = False
            self.result.value = (
                f'<span style="color:#cf222e">{escape(type(error).__name__)}: {escape(str(error))}</span>'
                if error is not None
                else ""
            )

        _submit(acting_as("panel", tab.ainject(Skill.builtin("dom"))), done)

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
        self._say_what_next(len(self.list.options))
        if tool is None:
            self.details.value, self.form_box.children = "", ()
            return
        schema = json.dumps(tool.input_schema, indent=1)
        override = tool.override
        note = (
            f"<div style='color:#8250df'>Overridden here ({escape(', '.join(override.fields))}): models and views see "
            "this text; calls reach the page's own tool, checked against its own schema."
            f"{''.join(f'<br>⚠ {escape(d)}' for d in tool.differences)}</div>"
            if override is not None
            else ""
        )
        source = escape(tool.provenance or "an unknown origin")
        self.details.value = (
            f"<b>{escape(tool.name)}</b> <i>{escape(tool.source)}</i> {_risk_html(tool.risk)}{note}"
            f'<div style="color:#57606a;overflow-wrap:anywhere">from {source}</div>'
            f'<div style="overflow-wrap:anywhere">{escape(tool.description)}</div>'
            f"<details><summary>input schema</summary>"
            f'<pre style="white-space:pre-wrap;overflow-wrap:anywhere">{escape(clip(schema, 8000))}</pre></details>'
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

        _submit(acting_as("panel", tab.acall(name, arguments)), done)


class Chat(W.VBox):
    """A chat with an agent on the panel's tab: streaming transcript, input, model picker (keys from the
    kernel's environment only: a widget would carry them into the notebook file)."""

    def __init__(self, owner: Panel, agent: Agent | None) -> None:
        self.owner = owner
        self.agent = agent
        self.run: AgentRun | None = None
        field = _fill(flex="1 1 14em", max_width="24em")
        self.provider = W.Dropdown(
            options=list(PRESETS), value=default_provider(os.environ), description="provider", layout=field
        )
        self.model = W.Text(placeholder="default of the preset", description="model", layout=field)
        self.base_url = W.Text(placeholder="preset's URL", description="base URL", layout=field)
        self.confirm = W.Dropdown(
            options=[(CONFIRM["labels"][p], p) for p in CONFIRM["policies"]],
            value=agent.confirm if agent is not None else CONFIRM["default"],
            description="ask before",
            layout=_fill(flex="1 1 24em", min_width="min(24em, 100%)", max_width="30em"),
        )  # wide enough for its longest label ("medium- and high-risk tools"), however the row shares its width
        self.confirm.observe(self._on_policy, names="value")
        self.key_note = W.HTML(layout=_fill())
        self.provider.observe(lambda _: self._note_key(), names="value")
        self.transcript = W.HTML(layout=_fill(max_height="24em", overflow="auto"))
        self.input = W.Text(placeholder="Ask the agent to do something on this page", layout=_fill(flex="1 1 16em"))
        self.send_button = W.Button(description="Send", button_style="primary")
        self.send_button.on_click(lambda _: self.send())
        self._lines: list[str] = []
        self._streaming = ""
        settings = W.Box([self.provider, self.model, self.base_url, self.confirm], layout=_row())
        ask = W.Box([self.input, self.send_button], layout=_row())
        super().__init__([settings, self.key_note, self.transcript, ask], layout=_fill())
        self._note_key()
        self._render()

    def _note_key(self) -> None:
        """Which key the chosen preset reads, and whether the kernel has it (never the key itself)."""
        if self.agent is not None:
            self.key_note.value = _hint(f"Chatting with the agent you passed: {escape(repr(self.agent))}.")
            return
        variable = PRESETS[self.provider.value].api_key_env
        if variable is None:
            text = "This preset needs no key (a local server); give its base URL if it is not the preset's."
        elif os.environ.get(variable):
            text = f"The key comes from <code>{escape(variable)}</code> in the kernel's environment."
        else:
            text = (
                f"No key: set <code>{escape(variable)}</code> in the kernel's environment "
                f"(<code>os.environ[{escape(repr(variable))}] = …</code>); keys never go into a widget, which "
                "would save them in the notebook."
            )
        self.key_note.value = _hint(text)

    def _agent(self) -> Agent:
        from ..agent.agent import Agent

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
        try:
            self.run = self._agent().start(text)
        except Exception as exc:  # a missing key, a turn still running: say it here, do not raise into the UI
            self._add("error", f"{type(exc).__name__}: {exc}")
            return None
        self.input.value = ""
        self._add("user", text)
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
        empty = "" if self._lines or streaming else _hint("Ask for something on this page; the agent uses its tools.")
        self.transcript.value = "".join(self._lines[-100:]) + streaming + empty


NO_SKILLS = (
    "No skills installed. A skill gives pages tools they lack: <code>tab.inject(wm.Skill.builtin('dom'))</code> "
    "works on any page (read, click, fill, extract); write your own from cells as in "
    "<code>notebooks/02-prototype-a-skill</code>."
)


class SkillRow(W.Box):
    """One installed skill: its switch, a reload button and its health on the panel's tab.

    The switch follows the skill's state when that state moves, not on every redraw: a click stands until the
    browser reports the change it asked for, so a redraw from older state (a tools list arriving first) never
    flips the switch back under the user's hand."""

    def __init__(self, view: SkillsView, name: str) -> None:
        self.view, self.name = view, name
        self.toggle = W.Checkbox(value=True, indent=False)
        self.toggle.observe(self._clicked, names="value")
        self.reload = W.Button(description="reload")
        self.reload.on_click(self._reload)
        self.note = W.HTML()
        self._shown: bool | None = None
        self._following = False
        super().__init__([self.toggle, self.reload, self.note], layout=_row())

    def show(self, skill: InstalledSkill, health: SkillStatus | None, reloadable: bool) -> None:
        self.toggle.description = f"{skill.name} {skill.version}"
        if skill.enabled != self._shown:
            self._shown = skill.enabled
            self._following = True
            try:
                self.toggle.value = skill.enabled
            finally:
                self._following = False
        self.reload.disabled = not reloadable
        note = "" if health is None else ("ok" if health.ok else f"not active here: {health.reason}")
        self.note.value = escape(note)

    def forget(self) -> None:
        """Show the skill's state at the next redraw, whatever the switch says (a click the browser refused)."""
        self._shown = None

    def _clicked(self, change: dict[str, Any]) -> None:
        if not self._following:
            self.view.set_enabled(self.name, change["new"])

    def _reload(self, _: Any) -> None:
        source = self.view.owner.browser.skills.source(self.name)
        if source is not None:
            _submit(source.areload(), lambda r, e: None)


class SkillsView(W.VBox):
    """Installed skills: enable/disable, reload, and their health on the panel's tab. Rows stay the same widgets
    from one redraw to the next (a redraw follows every tools change)."""

    def __init__(self, owner: Panel) -> None:
        self.owner = owner
        self.rows: dict[str, SkillRow] = {}
        self._lock = threading.Lock()
        super().__init__(layout=_fill())

    @property
    def toggles(self) -> dict[str, W.Checkbox]:
        """Each installed skill's switch, by name."""
        return {name: row.toggle for name, row in self.rows.items()}

    def refresh(self) -> None:
        browser, tab = self.owner.browser, self.owner.tab
        health = {s.name: s for s in (tab.skills if tab else [])}
        installed = {name: browser.skills[name] for name in list(browser.skills)}
        with self._lock:
            for name in [n for n in self.rows if n not in installed]:
                self.rows.pop(name).close()
            for name, skill in installed.items():
                row = self.rows.get(name)
                if row is None:
                    row = self.rows[name] = SkillRow(self, name)
                row.show(skill, health.get(name), browser.skills.source(name) is not None)
            self.children = list(self.rows.values()) or [W.HTML(_hint(NO_SKILLS))]

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Switch a skill on or off; if the browser refuses, the switch shows the skill's state again."""
        registry = self.owner.browser.skills
        _submit(registry.aenable(name) if enabled else registry.adisable(name), lambda r, e: self._settled(name, e))

    def _settled(self, name: str, error: BaseException | None) -> None:
        if error is None:
            return
        if name in self.rows:
            self.rows[name].forget()
        self.refresh()


NO_EVENTS = (
    "Nothing yet. Tool calls (with their arguments, result and time), agent steps, confirmations, navigation, "
    "tool lists that change and skills appear here as they happen, newest at the bottom."
)


class OperationLog(W.VBox):
    """The live log: one line per event, newest at the bottom and in view — it stays where it is while the
    user reads further up — filtered by kind. Each line says what happened, how long it took and who acted.

    Lines are widgets of their own in a box that scrolls from its end (``column-reverse``): a new line adds a
    view without redrawing the others, so the browser keeps the reader's place (scroll anchoring), and at the
    bottom the newest stays in view, with no script."""

    def __init__(self, stream: EventStream) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self.show = W.Dropdown(
            options=LOG_FILTERS, value="everything", description="show", layout=W.Layout(width="16em", max_width="100%")
        )
        self.show.observe(lambda _: self.rebuild(), names="value")
        self.lines = W.VBox(layout=W.Layout(width="100%", flex="0 0 auto"))
        self.scroller = W.Box(
            [self.lines],
            layout=_fill(
                display="flex",
                flex_flow="column-reverse",
                overflow="hidden auto",
                max_height="24em",
                border="1px solid #d0d7de",
                padding="2px 4px",
            ),
        )
        self.empty = W.HTML(_hint(NO_EVENTS), layout=_fill())
        super().__init__([self.show, self.empty, self.scroller], layout=_fill())
        self.rebuild()

    @property
    def value(self) -> str:
        """The lines shown, as HTML, oldest first."""
        return "".join(line.value for line in self.lines.children)

    def recent(self, count: int = 5) -> list[str]:
        """The last ``count`` lines the filter shows, as plain text (from the stream, as the widget has them)."""
        return [plain_line(e) for e in list(self.stream.events) if self._shows(e)][-count:]

    def _shows(self, event: Event) -> bool:
        wanted: str = self.show.value
        if event.kind in QUIET:
            return False
        if wanted == "everything":
            return True
        if wanted == "problems":
            return event.kind in PROBLEMS
        return family(event.kind) == wanted

    def add(self, event: Event) -> None:
        """Show ``event`` (when the filter lets it through)."""
        if not self._shows(event):
            return
        with self._lock:
            lines = (*self.lines.children, W.HTML(_log_line(event), layout=LINE))
            if len(lines) > LOG_LINES + LOG_SLACK:
                for old in lines[:-LOG_LINES]:
                    old.close()
                lines = lines[-LOG_LINES:]
            self.lines.children = lines
        self._empty()

    def rebuild(self) -> None:
        """Show the stream's latest events that pass the filter (after a change of filter)."""
        with self._lock:
            old = self.lines.children
            shown = [e for e in list(self.stream.events) if self._shows(e)][-LOG_LINES:]
            self.lines.children = tuple(W.HTML(_log_line(e), layout=LINE) for e in shown)
            for line in old:
                line.close()
        self._empty()

    def _empty(self) -> None:
        self.empty.layout.display = "none" if self.lines.children else None
        if not self.lines.children and self.show.value != "everything":
            self.empty.value = _hint(f"No {escape(self.show.value)} events yet.")
        elif not self.lines.children:
            self.empty.value = _hint(NO_EVENTS)


def _log_line(event: Event) -> str:
    """One line of the log: time, kind, what happened, its duration and who acted."""
    problem = event.kind in PROBLEMS
    color = "#cf222e" if problem else KIND_COLORS.get(family(event.kind), "#57606a")
    took = f" · {event.duration_ms:,.0f} ms" if event.duration_ms is not None else ""
    who = actor(event)
    by = f" · {escape(who)}" if who else ""
    background = "background:#fff1f0;" if problem else ""
    return (
        f'<div style="{background}font-size:12px;line-height:1.45;overflow-wrap:anywhere;padding:1px 2px">'
        f'<span style="color:#57606a;font-family:monospace">{stamp(event.ts)}</span> '
        f'<b style="color:{color}">{escape(event.kind)}</b> {escape(clip(describe(event), 400))}'
        f'<span style="color:#57606a">{took}{by}</span></div>'
    )


class ConfirmationCard(W.HBox):
    """A tool call waiting for a yes or no; either view may answer, the first answer wins. Answered, it folds to
    one line (the verdict; the request inside)."""

    def __init__(self, owner: Panel, event: Event) -> None:
        self.owner = owner
        self.id = event.data["id"]
        self.risk = event.data.get("risk")
        self.tool = str(event.data.get("tool"))
        self.answered = False
        source = event.data.get("provenance")
        where = f" <i>from {escape(clip(str(source), 200))}</i>" if source else ""
        self.request = (
            f"Allow <b>{escape(self.tool)}</b>"
            f"({escape(clip(json.dumps(event.data.get('arguments')), 200))}){where}? {_risk_html(self.risk)}"
        )
        self.text = W.HTML(self.request, layout=_fill(flex="1 1 20em"))
        self.approve = W.Button(description="Approve", button_style="success", layout=W.Layout(width="auto"))
        self.deny = W.Button(description="Deny", button_style="danger", layout=W.Layout(width="auto"))
        self.approve.on_click(lambda _: self.answer(True))
        self.deny.on_click(lambda _: self.answer(False))
        buttons = W.HBox([self.approve, self.deny], layout=W.Layout(flex="0 0 auto"))  # they wrap together
        super().__init__([self.text, buttons], layout=_row(border_left="3px solid #bf8700", padding="2px 6px"))

    def answer(self, approved: bool) -> None:
        self.owner.browser._answer_confirmation(self.id, approved, by="notebook panel")

    def resolved(self, event: Event) -> None:
        """Fold the card to its verdict (the request it answered inside)."""
        approved = bool(event.data.get("approved"))
        verdict = f"{'✓ approved' if approved else '✗ denied'} {self.tool} ({event.data.get('by', '')})"
        self.answered = True
        self.approve.disabled = self.deny.disabled = True
        self.text.value = (
            f'<details style="color:#57606a"><summary style="cursor:pointer">{escape(verdict)}</summary>'
            f"{self.request}</details>"
        )
        self.children = (self.text,)
        self.layout.border_left = f"3px solid {'#1a7f37' if approved else '#cf222e'}"


class Panel(W.VBox):
    """``wm.panel(browser)``: the notebook's view of the session."""

    def __init__(self, browser: Browser, tab: Tab | None = None, agent: Agent | None = None) -> None:
        self.browser = browser
        pages = sorted(browser.tabs, key=_blank)
        self.tab = tab or browser.active_tab or (pages[0] if pages else None)
        self.status = StatusBar(self)
        self.tools = ToolsInspector(self)
        self.chat = Chat(self, agent)
        self.skills = SkillsView(self)
        self.operations = OperationLog(browser.events)
        self.confirmations = W.VBox(layout=_fill())
        self.cards: dict[str, ConfirmationCard] = {}
        self.sessions = SessionsView(browser)
        self.sites = SitesView(browser)
        self.grant_cards: dict[str, GrantCard] = {}
        """Asks for a site's grant, by id (answered here or in the side panel: the first answer wins)."""
        self.sections = W.Tab(
            children=[self.tools, self.chat, self.skills, self.operations, self.sessions, self.sites], layout=_fill()
        )
        for i, title in enumerate(["Tools", "Chat", "Skills", "Log", "MCP sessions", "Sites"]):
            self.sections.set_title(i, title)
        super().__init__([self.status, self.confirmations, self.sections], layout=_fill())
        self.refresh()
        self._unsubscribe = browser.events.subscribe(self._on_event)
        self._unwatch = browser.on_change(self._on_change)
        self._closed_shown = browser.closed

    def select_tab(self, tab_id: int | None) -> None:
        if tab_id is not None and (self.tab is None or self.tab.id != tab_id):
            self.tab = self.browser.tab(tab_id)
            self.tools.forget()
            self.refresh()

    def refresh(self) -> None:
        self.status.refresh()
        self.tools.refresh()
        self.skills.refresh()

    def _on_change(self) -> None:
        """The browser's state moved (a tab, the connection): the status says it; its closing empties the tools."""
        self.status.refresh()
        if self.browser.closed != self._closed_shown:
            self._closed_shown = self.browser.closed
            self.tools.refresh()
            if self.browser.closed:  # nothing is left to answer, and no answer is worth keeping in view
                self._drop(list(self.confirmations.children))

    def _on_event(self, event: Event) -> None:
        self.operations.add(event)
        self.chat.on_event(event)
        if event.kind == "confirmation.requested":
            card = self.cards[event.data["id"]] = ConfirmationCard(self, event)
            self.confirmations.children = (*self.confirmations.children, card)
        elif event.kind == "confirmation.answered" and event.data.get("id") in self.cards:
            self.cards[event.data["id"]].resolved(event)
            answered = [card for card in self.cards.values() if card.answered]
            self._drop(answered[:-ANSWERED_KEPT])
        elif event.kind == "grant.asked":
            ask = self.grant_cards[str(event.data.get("id"))] = GrantCard(self.browser, event)
            self.confirmations.children = (*self.confirmations.children, ask)
        elif event.kind in ("grant.answered", "grant.refused") and str(event.data.get("id")) in self.grant_cards:
            self.grant_cards[str(event.data.get("id"))].resolved(event)
        elif event.kind == "grant.changed":
            self.sites.refresh()
        if event.kind in REFRESHING:
            self.refresh()

    def _drop(self, cards: list[W.Widget]) -> None:
        """Take ``cards`` (confirmation or asking cards) out of the panel."""
        gone = {id(card) for card in cards}
        self.confirmations.children = tuple(c for c in self.confirmations.children if id(c) not in gone)
        for store in (self.cards, self.grant_cards):
            for key in [k for k, card in store.items() if id(card) in gone]:
                del store[key]
        for card in cards:
            card.close()

    def close(self) -> None:
        self._unsubscribe()
        self._unwatch()
        self.sessions.close()
        super().close()


def panel(target: Browser | Tab, *, agent: Agent | None = None) -> Panel:
    """The panel for a browser (its active tab) or for one tab. ``agent``: answer chat with this agent
    instead of one made from the chat's model picker (keys come from the kernel's environment)."""
    from ..browser.browser import Browser

    if isinstance(target, Browser):
        return Panel(target, agent=agent)
    return Panel(target._browser, target, agent=agent)
