"""One rule for every view: what a page says is data. A hostile page (``tests/pages/untrusted.html``: markup,
script, ``javascript:`` links, markdown and TeX tricks, right-to-left overrides and megabytes in its title,
tool metadata, results and errors) is pushed through every view there is — the notebook panel with every tool
selected and called, a chat turn with a confirmation card, skills and the log; every rich repr and the session
report; the extension's side panel and its chat — and each is rendered in Chromium: no payload runs, none
becomes an element or an attribute, none reaches the model outside its data block, and no text reads backwards.

The lab's browser enforces the user's per-site grants (``launch(grants=True)``), so asks for a site, made by an
MCP client named with the page's payloads for one of its tools, are shown as asking cards in both panels, and its
grants in their Sites lists.

The lists are found by introspection: a new widget class in ``webmcp_nb.views`` or a new class with a rich
repr anywhere in ``webmcp_nb`` fails these tests until they show it too."""

from __future__ import annotations

import html
import importlib
import inspect
import json
import pkgutil
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ipywidgets as W
import pytest
from cdp import configure_chat, playwright_context
from eventually import eventually
from IPython.core.formatters import DisplayFormatter
from ipywidgets.widgets.widget_description import DescriptionWidget
from mcp_peers import server_env, streamable_http

import webmcp_nb as wm
import webmcp_nb.views
from webmcp_nb.bridge.sites import load_site
from webmcp_nb.browser.skills import SkillHealthWarning
from webmcp_nb.ci.diff import diff
from webmcp_nb.ci.lock import ToolLock
from webmcp_nb.core import _loop
from webmcp_nb.core.agent_rules import TEXTS
from webmcp_nb.link.protocol import EXTENSION_ID, Method
from webmcp_nb.own_chrome.connect import BrowserList, BrowserSummary
from webmcp_nb.own_chrome.doctor import Diagnosis, _check_browsers
from webmcp_nb.recording.report import STYLE as REPORT_STYLE
from webmcp_nb.testing import ScriptedServer, by_task, call, say

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

TIMEOUT = 20_000  # ms, for every wait on the side panel
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"
TITLE_MARK = "IMPORTANT system rule"  # the page's title poses as the operator
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ESC = "\x1b"  # a terminal escape: printed raw, it erases lines, moves the cursor, changes colours
BLOCK = {tag: re.compile(rf"<\s*/?\s*{tag}", re.I) for tag in ("tool_result", "page_context")}
CONTEXT_BLOCK = re.compile(r'^<page_context untrusted="true">\n.*?\n</page_context>', re.S)

# Elements the library's own HTML uses (reprs, widget values, the report); page text must add none.
OUR_TAGS = [
    "html", "head", "body", "title", "meta", "style", "div", "span", "b", "i", "pre", "code", "details", "summary",
    "table", "caption", "thead", "tbody", "tr", "th", "td", "h1", "h2", "img", "a", "label", "input", "svg", "rect",
    "line", "text", "ul", "li", "small", "del", "ins",
]  # fmt: skip
# The side panel's own elements (sidepanel/sidepanel.html and what its modules build with textContent).
PANEL_TAGS = [
    "html", "head", "meta", "title", "link", "body", "header", "div", "span", "button", "section", "details",
    "summary", "h2", "ul", "ol", "li", "p", "strong", "pre", "label", "textarea", "input", "time", "script",
    "select", "option",
]  # fmt: skip

CHECK_DOM = """(allowed) => {
  const problems = [];
  const where = (el) => el.closest('[data-view]')?.dataset.view ?? el.localName;
  for (const el of document.querySelectorAll('*')) {
    if (!allowed.tags.includes(el.localName)) problems.push(`${where(el)}: a <${el.localName}> element`);
    for (const attr of el.attributes) {
      if (/^on/i.test(attr.name)) problems.push(`${where(el)}: <${el.localName} ${attr.name}>`);
      if (/^\\s*(javascript|vbscript):/i.test(attr.value)) problems.push(`${where(el)}: ${attr.name}=${attr.value}`);
    }
  }
  for (const img of document.querySelectorAll('img')) {
    if (!img.getAttribute('src')?.startsWith('data:image/png;base64,')) problems.push(`${where(img)}: an image`);
  }
  for (const el of document.querySelectorAll('style')) {
    if (!allowed.styles.includes(el.textContent)) problems.push(`${where(el)}: a style of its own`);
  }
  for (const el of document.querySelectorAll('script')) {
    if (!allowed.scripts.includes(el.getAttribute('src'))) problems.push(`${where(el)}: a script`);
  }
  for (const el of document.body.querySelectorAll('meta, link, title, base')) {
    problems.push(`${where(el)}: <${el.localName}>`);
  }
  const titles = [...document.querySelectorAll('[title]')].map((el) => el.title).join('\\n');
  return { problems, pwned: window.__pwned ?? [], text: document.body.innerText, titles };
}"""


def arguments(tool: str, p: list[str]) -> dict[str, Any]:
    """Valid arguments for ``tool`` of the hostile page, made of its payloads ``p``."""
    return {"inspectMe": {p[0]: {p[2]: p[1]}}, "transfer": {"to": p[0], "note": p[3]}}.get(tool, {})


@dataclass
class Lab:
    """A launched browser with the extension on the hostile page, and the same browser seen by Playwright."""

    browser: wm.Browser
    context: Any
    tab: wm.Tab
    payloads: list[str]

    @property
    def everything(self) -> str:
        return " ".join(self.payloads)

    def render(self, markup: str) -> dict[str, Any]:
        """``markup`` as a page of its own: what it turned into, whether anything in it ran or fetched."""
        page = self.context.new_page()
        fetched: list[str] = []
        page.on("request", lambda request: request.url.startswith("data:") or fetched.append(request.url))
        page.evaluate("window.__pwned = []")  # set_content writes into this document: the global stays
        page.set_content(markup, wait_until="load")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 50)))")
        seen = page.evaluate(CHECK_DOM, {"tags": OUR_TAGS, "styles": [REPORT_STYLE], "scripts": []})
        page.close()
        seen["fetched"] = fetched
        return seen


def violations(seen: dict[str, Any], what: str) -> list[str]:
    """What went wrong in a rendered view: elements or attributes from page text, payloads that ran, fetches,
    text that reads backwards — or no page text shown at all (then the view was not tested)."""
    found = [f"{what}: {problem}" for problem in seen["problems"]]
    found += [f"{what}: a payload ran ({tag})" for tag in seen["pwned"]]
    found += [f"{what}: fetched {url}" for url in seen.get("fetched", [])]
    if BIDI.search(seen["text"] + seen["titles"]):
        found.append(f"{what}: a bidi control reached the text")
    if "<img src=x onerror=" not in seen["text"]:
        found.append(f"{what}: the page's text is not shown (as text) at all")
    return found


@pytest.fixture(scope="module")
def lab(server: Any) -> Iterator[Lab]:
    with (
        wm.launch(args=["--remote-debugging-port=0"], grants=True) as browser,
        playwright_context(browser.process.profile_dir) as seen,
    ):
        tab = browser.open(server.url("t/untrusted.html"))
        try:
            yield Lab(browser, seen, tab, tab.call("payloads").value)
        finally:
            wm.grants.revoke(tab.url)  # what the run granted, in the suite's home


def hostile_ask(lab: Lab, url: str | None = None) -> Any:
    """An ask made by an MCP client whose name, and the tool it asks for, are the page's payloads (on the lab's
    tab, or on ``url``'s site); its future gives the relay's answer."""
    params: dict[str, Any] = {"need": "act", "who": {"kind": "mcp", "name": lab.everything}, "action": "call"}
    params |= {"tool": lab.payloads[0], "risk": "high", "timeoutMs": 60_000}
    params |= {"url": url} if url is not None else {"tabId": lab.tab.id}
    return _loop.submit(lab.browser._check_grant(params, 70))


@pytest.fixture(scope="module")
def hostile_session(lab: Lab) -> Iterator[str]:
    """An MCP session in the lab's relay whose client calls itself by the page's payloads, bound to the hostile
    tab: the panels list it with the client's name and the tab's title."""
    request = lab.browser._relay_request
    reply = _loop.run(request(Method.SESSION_REGISTER, {"client": lab.everything, "pid": 4242}))
    session_id = reply["session"]["id"]
    _loop.run(request(Method.SESSION_BIND, {"browserId": lab.browser.id, "tabId": lab.tab.id}))
    yield session_id
    _loop.run(request(Method.SESSION_CLOSE, {"sessionId": session_id}))


@pytest.fixture(scope="module")
def mcp_views(lab: Lab, server: Any) -> Iterator[list[Any]]:
    """The hostile page's tools as an MCP client sees them through ``webmcp-nb mcp``, and a hostile MCP server's
    (its name, its tools' names and descriptions made of payloads), in ``wm.mcp.connect``'s objects: each server,
    its tool map, each tool, a result made of payloads."""
    from mcp.server.mcpserver import MCPServer as SDKServer

    p = lab.payloads
    sdk = SDKServer(lab.everything)
    sdk.tool(name=f"{p[11]}{p[0]}", description=lab.everything)(lambda: lab.everything)
    command = [sys.executable, "-m", "webmcp_nb", "mcp", "--launch", "--url", server.url("t/untrusted.html")]
    with pytest.warns(wm.ToolsOmittedWarning, match="cut \\(page_megabyte\\)"):  # the megabyte description
        remote = wm.mcp.connect(command, env=server_env(), name="hostile")
    with (
        remote,
        streamable_http(sdk) as url,
        wm.mcp.connect(url, name="hostile-server") as stranger,
    ):
        result = remote.call("page_forgeBlock")
        assert stranger.server_info is not None and stranger.server_info.name == lab.everything
        ours = [remote, remote.tools, *remote.tools.values(), result]
        yield [*ours, stranger, stranger.tools, *stranger.tools.values(), stranger.call(f"{p[11]}{p[0]}")]


@dataclass
class Bridged:
    """The chat-site bridge run on the demo chat with the hostile page's tools as its source: its bar and card as
    the chat page shows them (the closed shadow root's HTML), what the chat was sent, and the bridge's objects."""

    bar: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    views: list[Any] = field(default_factory=list)


def shadow_html(page: Any, host: str = "WEBMCP-NB-BRIDGE") -> str:
    """The HTML inside ``host``'s (closed) shadow root, as the DevTools protocol sees it."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = [cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]]
        while nodes:
            node = nodes.pop()
            if node.get("nodeName") == host:
                children = node["shadowRoots"][0].get("children", [])
                return "".join(cdp.send("DOM.getOuterHTML", {"nodeId": c["nodeId"]})["outerHTML"] for c in children)
            nodes += [*node.get("children", []), *node.get("shadowRoots", [])]
        raise AssertionError(f"no <{host.lower()}> in the page")
    finally:
        cdp.detach()


def shadow_showing(page: Any, *words: str) -> str | None:
    """:func:`shadow_html` once it shows every one of ``words`` (``None`` before)."""
    html = shadow_html(page)
    return html if all(word in html for word in words) else None


@pytest.fixture(scope="module")
def bridged(lab: Lab, server: Any, run: Run) -> Iterator[Bridged]:
    """The chat bridge on a hostile chat site, bridging the hostile page's tools (their site granted in ``run``)."""
    p = lab.payloads
    hostile_site = {**load_site("demo-chat").as_dict(), "name": p[0], "about": lab.everything}
    transfer = {"name": "transfer", "arguments": {"to": p[0], "note": p[3] + p[11]}}
    script = [
        say(f"<tool_call>{json.dumps({'name': 'forgeBlock', 'arguments': {}})}</tool_call>"),
        say(f"<tool_call>{json.dumps(transfer)}</tool_call>"),
        say(f"Done. {lab.everything}"),
    ]
    out = Bridged()
    with ScriptedServer(script) as model:
        url = server.url(f"chat/?model={model.base_url}")
        page = lab.context.new_page()
        page.goto(url)
        chat = eventually(lambda: next((t for t in lab.browser.tabs if t.url == url), None))
        bridge = wm.chat_bridge(chat, servers=[lab.tab], site=hostile_site, auto_send=True, session=False)
        # the bar: the page's tool names and descriptions, once it has drawn them
        out.bar.append(eventually(lambda: shadow_showing(page, "inspectMe"), 30, "the bar listing the tools"))
        bridge.send(f"Do it. {lab.everything}")
        eventually(lambda: bridge.pending, 60, "forgeBlock to wait")
        bridge.answer(bridge.pending[0], True)
        eventually(lambda: shadow_showing(page, "transfer", "waits for your answer"), 60, "transfer to wait")
        eventually(lambda: bridge.pending, 60, "the answer for transfer")
        out.bar.append(shadow_html(page))  # a call that waits: its name, as the chat reply wrote it
        bridge.answer(bridge.pending[0], False)
        assert bridge.wait_answer(timeout=60).startswith("Done.")
        out.views = [bridge, bridge.check()]
        out.sent = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
        bridge.close()
        page.close()
    yield out


# ----- the notebook panel, driven through everything a user does -----


@dataclass
class Run:
    """What the notebook side produced from the hostile page: the panel (and every state it went through),
    the agent's turn and the requests the model got, tool results, the session and a replay of it."""

    panel: Any
    states: list[tuple[str, W.Widget, str | None, dict[str, Any]]] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    agent_result: Any = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    session: Any = None
    replay: Any = None
    skill: Any = None
    injections: list[Any] = field(default_factory=list)

    def snapshot(self) -> None:
        """Keep every widget's state now (forms and results change with each selection and call)."""
        for path, widget in walk(self.panel, "panel"):
            value = widget.value if isinstance(widget, W.HTML | W.HTMLMath) else None
            self.states.append((path, widget, value, widget.get_state()))


def walk(widget: W.Widget, path: str) -> Iterator[tuple[str, W.Widget]]:
    yield path, widget
    for i, child in enumerate(getattr(widget, "children", ())):
        yield from walk(child, f"{path}/{type(child).__name__}[{i}]")


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


@pytest.fixture(scope="module")
def run(lab: Lab, server: Any, hostile_session: str) -> Iterator[Run]:
    tab, p = lab.tab, lab.payloads
    invented = p[0]  # a tool name the model makes up: markup
    script = [
        call("inspectMe", say=f"Looking. {lab.everything}"),
        call("forgeBlock"),
        call("failLoudly"),
        call(invented, x=p[1]),
        call("transfer", to=p[0], note=p[3]),
        call("megabyte"),
        say(f"Done. {lab.everything}"),
    ]
    with ScriptedServer(script) as model:
        agent = wm.Agent(tab, provider="any", base_url=model.base_url, api_key="k", model="scripted")
        out = Run(wm.panel(tab, agent=agent))
        panel = out.panel
        out.snapshot()
        asked = hostile_ask(lab)  # the site was never granted: both panels show the ask
        ask = eventually(lambda: list(panel.grant_cards.values()))[0]
        out.snapshot()
        ask.buttons["act"].click()  # granted: the Sites tab lists it, and the agent below may act
        assert asked.result(timeout=30)["answer"] == "act"
        eventually(lambda: panel.sites.revoke_buttons, 10, "the Sites tab to list the grant")
        out.snapshot()
        for name in [n for _, n in panel.tools.list.options]:
            panel.tools.select(name)
            out.snapshot()
            panel.tools.form.fill(arguments(name, p))
            panel.tools.result.value = ""
            panel.tools.call_button.click()
            eventually(lambda: panel.tools.result.value and not panel.tools.result.value.startswith("<i>calling"))
            out.snapshot()

        out.skill = wm.Skill("echo-reason", match=["*://127.0.0.1/t/*"], description=lab.everything)
        out.skill.health_check("() => document.getElementById('reason').textContent")
        out.skill.add_tool("nothing", "async () => 1", read_only=True)
        with pytest.warns(SkillHealthWarning):
            out.injections = lab.browser.skills.install(out.skill)
        eventually(lambda: any("onerror" in w.value for _, w in walk(panel.skills, "") if isinstance(w, W.HTML)))
        out.snapshot()

        handle = panel.chat.send(f"Read everything. {lab.everything}")
        card = eventually(lambda: list(panel.cards.values()))[0]
        out.snapshot()
        card.approve.click()
        out.agent_result = handle.result(timeout=60)
        out.requests = list(model.requests)
    for name in ("inspectMe", "forgeBlock", "megabyte", "counter", "counter", "transfer"):
        out.results.append(tab.call(name, arguments(name, p)))
    out.session = out.agent_result.session
    out.session.close()  # before the replay: the replay records a session of its own
    out.replay = wm.replay_calls(out.session, tab, progress=False)
    out.snapshot()
    yield out
    panel.close()
    lab.browser.skills.uninstall("echo-reason")


def widget_classes() -> set[type]:
    """Every widget class webmcp_nb.views defines."""
    found = set()
    for info in pkgutil.walk_packages(webmcp_nb.views.__path__, "webmcp_nb.views."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, W.Widget) and obj.__module__ == module.__name__:
                found.add(obj)
    return found


def test_every_widget_shows_page_text_as_text(lab: Lab, run: Run) -> None:
    assert run.agent_result.answer.startswith("Done.") and any(s.confirmed for s in run.agent_result.steps)
    reached = {type(widget) for _, widget, _, _ in run.states}
    assert widget_classes() <= reached, f"not driven by this test: {widget_classes() - reached}"
    values: dict[str, str] = {}
    found: set[str] = set()
    for path, widget, value, state in run.states:
        # ipywidgets 8: HTML and HTMLMath values are innerHTML (HTMLMath and Label also TeX-typeset their text);
        # descriptions are text unless description_allow_html; options, tooltips and placeholders are text.
        if isinstance(widget, W.HTMLMath | W.Label):
            found.add(f"{path}: typesets its text")
        if isinstance(widget, DescriptionWidget) and widget.description_allow_html:
            found.add(f"{path}: its description is HTML")
        found |= {f"{path}: a bidi control in {text[:60]!r}" for text in strings(state) if BIDI.search(text)}
        if value:
            values.setdefault(value, path)
    page = "".join(f'<div data-view="{html.escape(path)}">{value}</div>' for value, path in values.items())
    seen = lab.render(f"<!doctype html><html><head><title>widgets</title></head><body>{page}</body></html>")
    bad = sorted(found) + violations(seen, "notebook panel")
    assert not bad, "\n".join(bad)
    nested = lab.payloads[0] + "*"  # the nested object's title in inspectMe's form (finding 1)
    assert nested in seen["text"] and "<U+202E>" in seen["text"]


def rich_classes() -> set[type]:
    """Every class in webmcp_nb with a rich repr (what Jupyter's formatter would show), widgets aside."""
    found = set()
    for info in pkgutil.walk_packages(wm.__path__, "webmcp_nb."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            ours = inspect.isclass(obj) and obj.__module__ == module.__name__ and not issubclass(obj, W.Widget)
            if ours and any(name.startswith("_repr_") and name.endswith("_") for name in dir(obj)):
                found.add(obj)
    return found


def diagnostics(lab: Lab) -> list[Any]:
    """``doctor`` and ``browsers()`` as they would show this tab through the relay: the tab's URL, and page
    text in every field a check or a browser line holds."""
    text = lab.everything
    tabs = [
        {
            "id": lab.tab.id,
            "url": f"{lab.tab.url}?{text}",
            "tools": [t.info.model_dump() for t in lab.tab.tools.values()],
        }
    ]
    state = {"id": text, "userAgent": text, "extensionVersion": text, "userScripts": False, "tabs": tabs}
    diagnosis = Diagnosis()
    _check_browsers(diagnosis, {"browsers": [state]})  # the relay's status: its browsers as hello carries them
    diagnosis.add(text, "fail", text, text)
    return [diagnosis, BrowserList([BrowserSummary.from_state(state)])]


def evals_views(lab: Lab, folder: Path) -> tuple[list[Any], str]:
    """An eval of the hostile page (its tools called with its payloads, a model answering with them, its text
    read by page checks): the report, a comparison, and the report's HTML file."""
    p = lab.payloads
    suite = wm.evals.suite.parse(
        {
            "format": "webmcp-nb-evals",
            "name": f"suite {lab.everything}",
            "start_url": lab.tab.url,
            "tasks": [
                {
                    "name": f"task {lab.everything}",
                    "prompt": f"[hostile] {lab.everything}",
                    "expectedCall": [{"functionName": p[0], "arguments": {"x": p[1]}}],
                    "expect_answer": {"$contains": p[2]},
                    "expect_state": [
                        {"selector": "body", "text": {"$contains": p[3]}},
                        {"tool": "payloads", "arguments": {}, "result": {"$type": "array"}},
                    ],
                }
            ],
        }
    )
    script = [
        call("inspectMe", **arguments("inspectMe", p)),
        call("failLoudly"),
        call(p[0], x=p[1]),
        say(f"Done. {lab.everything}"),
    ]
    variants = {"page": {}, "hostile": {"inspectMe": {"description": lab.everything, "title": p[1]}}}
    with ScriptedServer(by_task({"[hostile]": script})) as model:
        report = wm.evals.run(
            suite, models=[wm.Model("any", "m", base_url=model.base_url)], browser=lab.browser, output=folder,
            progress=False, variants=variants,
        )  # fmt: skip
    run = report.runs[0]
    assert run.status == "fail" and len(run.checks) == 3 and run.answer and lab.everything in run.answer
    assert report.runs[1].overrides["inspectMe"]["description"]["variant"] == lab.everything
    return [report, report.compare(report), report.compare_variants()], report.html()


def ci_views(lab: Lab) -> list[Any]:
    """The CI gate's views of the hostile page: lint's report (its tools' texts quoted in findings, its names as
    the tools) and a diff whose changes carry the page's enum values and names."""
    p = lab.payloads
    linted = wm.lint(lab.tab, second_load=False, sample_calls=False)
    assert {"markup", "hidden-characters", "padding"} <= {f.rule for f in linted.findings}
    locked = ToolLock.of_tab(lab.tab)
    text = locked.text() + linted.json_text()  # JSON that page text cannot make read backwards or steer a terminal
    assert not BIDI.search(text) and ESC not in text and "\x9b" not in text and "\\u202e" in text
    assert json.loads(locked.text()) == locked.to_json()
    narrowed = {"type": "object", "properties": {p[5]: {"type": "string", "enum": [p[1]]}, p[11]: {"const": p[0]}}}
    changed = ToolLock.of(
        replace(e, name=e.name + p[4], input_schema=narrowed)
        if e.name == "inspectMe"
        else replace(e, title=p[2], annotations={"readOnlyHint": False})
        for e in locked.tools
    )
    changes = diff(locked, changed)
    assert changes.breaking and any(p[0] in c.what for c in changes.changes)
    return [linted, changes]


def test_every_rich_repr_and_the_report_show_page_text_as_text(
    lab: Lab, run: Run, mcp_views: list[Any], bridged: Bridged, tmp_path: Path
) -> None:
    tab = lab.tab
    shown = [lab.browser, tab, tab.tools, *tab.tools.values(), *run.results, run.agent_result, run.session]
    shown += mcp_views + bridged.views
    report = run.session.report()
    shown += [run.replay, run.skill, lab.browser.skills, tab.screenshot(), *diagnostics(lab), report, wm.grants]
    shown += run.injections  # one with the page's reason for refusing the skill
    eval_views, eval_report = evals_views(lab, tmp_path)
    shown += eval_views
    p = lab.payloads  # an override of the page's text, made of the page's text: its table of differences
    tab.tools.override("inspectMe", description=lab.everything, input_schema={"properties": {p[0]: {"type": p[1]}}})
    shown.append(tab.tools.overrides)
    shown += [tab.tools["inspectMe"], tab.tools]
    assert tab.tools["inspectMe"].differences
    shown += ci_views(lab)
    assert not run.replay.ok  # the counter diverged: its diff (payloads in it) is shown
    missing = rich_classes() - {type(o) for o in shown}
    assert not missing, f"not shown by this test: {missing}"
    formatter = DisplayFormatter()
    parts = []
    plain = []  # the text fallback (a terminal, `webmcp-nb eval`'s output, help()): controls shown, not obeyed
    for i, obj in enumerate(shown):
        bundle, _ = formatter.format(obj)
        assert set(bundle) <= {"text/plain", "text/html", "image/png"}, f"{type(obj)}: check {set(bundle)} here"
        texts = {"text/plain": bundle["text/plain"], "str": str(obj), "help": getattr(obj, "__doc__", "") or ""}
        plain += [f"{type(obj).__name__}: {k}" for k, text in texts.items() if BIDI.search(text) or ESC in text]
        if "image/png" in bundle:
            assert bundle["image/png"].startswith(b"\x89PNG")
        if "text/html" in bundle:
            parts.append(f'<div data-view="{i}:{type(obj).__name__}">{bundle["text/html"]}</div>')
    seen = lab.render(f"<!doctype html><html><head><title>reprs</title></head><body>{''.join(parts)}</body></html>")
    bad = violations(seen, "rich reprs") + violations(lab.render(report.html), "session report")
    bad += violations(lab.render(eval_report), "eval report")
    tab.tools.clear_overrides()
    assert not bad + plain, "\n".join(bad + sorted(set(plain)))
    assert TITLE_MARK in seen["text"]  # the tab's title is shown, as text
    assert report.html.count("src='data:image/png;base64,") >= 2  # the confirmed transfer, before and after
    assert any(not r.ok and "<img src=x onerror=" in str(r) for r in run.injections)  # the page's reason, as text


# ----- what the model gets -----


def one_block(text: str, tag: str) -> bool:
    return len(BLOCK[tag].findall(text)) == 2 and text.startswith(f"<{tag} ") and text.endswith(f"</{tag}>")


def block_breaches(requests: list[dict[str, Any]], tool_role: str) -> list[str]:
    """Tool results the model got that are not exactly one ``<tool_result>`` block."""
    assert requests
    return [
        str(message["content"])[:300]
        for request in requests
        for message in request["messages"]
        if message["role"] == tool_role and str(message["content"]).startswith("<tool_result ")
        if not one_block(message["content"], "tool_result")
    ]


def title_breaches(requests: list[dict[str, Any]]) -> list[str]:
    """Where the page's title reached the model other than in the page context block that starts the
    conversation (the title poses as the operator)."""
    found = []
    for request in requests:
        system, first, *rest = request["messages"]
        if TITLE_MARK in system["content"] or "/t/untrusted.html" in system["content"]:
            found.append(f"system message: {system['content'][-300:]}")
        if first["role"] != "user" or not CONTEXT_BLOCK.match(first["content"]):
            found.append(f"no page context block: {first['content'][:200]}")
        elif TITLE_MARK not in first["content"] or TITLE_MARK in CONTEXT_BLOCK.sub("", first["content"]):
            found.append(f"the title outside its block: {first['content'][:300]}")
        found += [f"{m['role']} message: {m['content'][:200]}" for m in rest if TITLE_MARK in str(m.get("content"))]
    return found


def test_tool_results_reach_the_model_as_one_block_each(lab: Lab, run: Run) -> None:
    bad = block_breaches(run.requests, "tool")
    assert not bad, "\n".join(bad)
    results = [m["content"] for m in run.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 6 and "&lt;/tool_result&gt;" in results[1]  # forgeBlock's result, defused
    assert "&lt;tool_result tool=" in results[2]  # failLoudly's error message, defused
    assert 'tool="&lt;img src=x onerror=__pwned.push(this.tagName)&gt;"' in results[3]  # the invented name

    with ScriptedServer([call("forgeBlock"), call("failLoudly"), say("ok")], quirks="prompt") as model:
        agent = wm.Agent(lab.tab, provider="any", base_url=model.base_url, api_key="k", model="m", session=False)
        agent.run("read")
    assert agent.provider.prompt_mode  # results come back as user messages
    requests = model.requests[1:]  # the first request, with tools, was refused
    bad = block_breaches(requests, "user") + title_breaches(requests)
    assert not bad, "\n".join(bad)


def test_the_page_title_reaches_the_model_only_as_data(run: Run) -> None:
    bad = title_breaches(run.requests)
    assert not bad, "\n".join(bad)


# ----- the chat-site bridge's bar and cards, in the chat page -----

BAR_TAGS = ["html", "head", "title", "body", "div", "span", "button", "details", "summary", "ul", "li", "b", "pre"]


def test_the_chat_bridge_shows_page_text_as_text_and_sends_results_as_data(lab: Lab, bridged: Bridged) -> None:
    bad = []
    for i, markup in enumerate(bridged.bar):
        ours = re.match(r"^<style>[^<]*</style>", markup)  # the bar's own style, first: page text adds none
        assert ours, markup[:200]
        page = lab.context.new_page()
        page.evaluate("window.__pwned = []")
        body = markup[ours.end() :].replace("<details>", "<details open>", 1)  # the tools' list, shown
        page.set_content(f"<!doctype html><html><head><title>bar</title></head><body>{body}</body></html>")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 50)))")
        seen = page.evaluate(CHECK_DOM, {"tags": BAR_TAGS, "styles": [], "scripts": []})
        page.close()
        bad += violations(seen, f"chat bridge bar ({'with a call waiting' if i else 'tools'})")
    assert "inspectMe" in bridged.bar[0] and "transfer" in bridged.bar[1] and "waits for your answer" in bridged.bar[1]
    results = [m for m in bridged.sent if m.startswith("<tool_result ")]
    bad += [f"sent to the chat: {m[:300]}" for m in results if not one_block(m, "tool_result")]
    assert not bad, "\n".join(bad)
    assert "<U+202E>" in seen["text"]  # failLoudly's description in the tools list: it reads forwards
    assert len(results) == 2 and "&lt;/tool_result&gt;" in results[0]  # forgeBlock's result, defused
    assert results[1] == f'<tool_result tool="transfer" status="error">\n{TEXTS["denied"]}\n</tool_result>'


# ----- the extension's side panel and its chat -----


def open_panel(lab: Lab) -> Any:
    page = lab.context.new_page()
    page.set_viewport_size({"width": 400, "height": 1000})
    page.goto(f"{PANEL}?tab={lab.tab.id}")
    expect(page.locator("#relay-state")).to_have_attribute("data-ok", "true", timeout=TIMEOUT)
    page.evaluate("window.__pwned = []")
    return page


def check_panel(page: Any, what: str) -> None:
    seen = page.evaluate(CHECK_DOM, {"tags": PANEL_TAGS, "styles": [], "scripts": ["main.js"]})
    bad = violations(seen, what)
    assert not bad, "\n".join(bad)


def test_the_side_panel_and_its_chat_show_page_text_as_text(lab: Lab, hostile_session: str, run: Run) -> None:
    # (``run`` granted the lab's site in the notebook panel: the Sites list shows it)
    p = lab.payloads
    page = open_panel(lab)
    expect(page.locator("#tab-title")).to_contain_text(TITLE_MARK)
    expect(page.locator(f'#sessions li[data-session="{hostile_session}"]')).to_contain_text(p[0])
    expect(page.locator("#sessions")).to_contain_text(TITLE_MARK)  # the bound tab, by its title
    check_panel(page, "side panel, MCP sessions")
    names = page.locator("#tools li").evaluate_all("(items) => items.map((li) => li.dataset.tool)")
    assert {"inspectMe", "megabyte", "forgeBlock", "failLoudly", "transfer"} <= set(names)
    for name in names:
        page.locator(f'#tools li[data-tool="{name}"]').click()
        expect(page.locator("#tool-name")).to_contain_text(name)
        if arguments(name, p):
            page.fill("#tool-args", json.dumps(arguments(name, p)))
        page.click("#call-button")
        expect(page.locator("#tool-result")).to_be_visible(timeout=TIMEOUT)
        check_panel(page, f"side panel, {name} called")
    for shown in ("#tab-title", "#tool-description"):  # the last tool's description (transfer) has one too
        assert "<U+202E>" in page.locator(shown).inner_text(), shown

    asked = hostile_ask(lab, "http://localhost:9/")  # a site never granted: an asking card, answered once here
    card = page.locator("#confirmations .card.grant:not(.resolved)")
    expect(card).to_contain_text(p[0], timeout=TIMEOUT)
    expect(page.locator("#grants li")).to_have_count(1)  # the lab's site, granted in the notebook panel
    check_panel(page, "side panel, an asking card and the Sites list")
    card.locator("button.grant-once").click()
    assert asked.result(timeout=30)["answer"] == "once"

    finished = "Finished in the side panel."  # (the transcript also shows the notebook agent's "Done." of ``run``)
    script = [call("forgeBlock"), call(p[0], x=p[1]), call("transfer", to=p[0], note=p[3]), say(f"{finished} {p[0]}")]
    with ScriptedServer(script) as model:
        configure_chat(lab.context, model.base_url)
        page.fill("#chat-input", f"Do it. {lab.everything}")
        page.click("#chat-send")
        card = page.locator('#confirmations .card[data-origin="chat"]:not(.resolved)')
        expect(card).to_contain_text("transfer", timeout=TIMEOUT)
        check_panel(page, "side panel, chat confirmation")
        card.locator("button.approve").click()
        expect(page.locator("#chat-transcript .message.assistant").last).to_contain_text(finished, timeout=TIMEOUT)
    bad = block_breaches(model.requests, "tool") + title_breaches(model.requests)
    assert not bad, "\n".join(bad)
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 3 and "&lt;/tool_result&gt;" in results[0]

    with ScriptedServer([call("transfer", to=p[2], note=p[4]), say("ok")]) as model:
        handle = wm.Agent(lab.tab, base_url=model.base_url, api_key="k", model="m", session=False).start("go")
        card = page.locator('#confirmations .card[data-origin="notebook"]:not(.resolved)')  # not the run's
        expect(card).to_contain_text("transfer", timeout=TIMEOUT)
        check_panel(page, "side panel, notebook confirmation")
        card.locator("button.approve").click()
        assert handle.result(timeout=60).answer == "ok"
    check_panel(page, "side panel, at the end")

    # The hub records what a panel does, and nothing a panel could claim about evidence.
    reply = page.evaluate(
        """() => new Promise((resolve) => {
          const port = chrome.runtime.connect({ name: 'webmcp-nb-panel' });
          port.onMessage.addListener((m) => m.type === 'reply' && resolve(m));
          port.postMessage({ type: 'emit', reqId: 'x', kind: 'evidence.screenshot', tabId: null,
                             data: { tool: 't', phase: 'before', file: '../../../.ssh/id_ed25519' } });
        })"""
    )
    assert reply["ok"] is False and reply["error"]["code"] == "BAD_REQUEST"
    assert not [e for e in lab.browser.events.events if e.kind.startswith("evidence.") and e.data.get("origin")]
    page.close()
