"""Makes the docs' screenshots in real browsers: both views of one session, and a session's report.

- ``sidepanel.png``: the extension's side panel after a call by hand;
- ``sidepanel-grant.png``: the side panel asking whether an MCP client may act on a site never granted, with the
  Sites list below (a browser launched with ``grants=True`` and a throwaway home, so nothing of yours is read);
- ``notebook-panel.png``, ``notebook-panel-log.png``, ``notebook-panel-empty.png``, ``notebook-panel-narrow.png``:
  the notebook panel in JupyterLab after a Call, its log after an agent run and 30+ events, a tab without tools,
  and a narrow output area;
- ``report-summary.png``, ``report-timeline.png``: a recorded agent run's report (with a refused call and a denied
  confirmation), opened with scripts disabled;
- ``chat-bridge.png``: the demo chat site with the chat-site bridge's bar, after one call (the time server's, run
  unasked by the user's opt-in), while the next waits for the user's answer in a panel;
- ``evals-report.png``, ``evals-report-why.png``, ``evals-run-report.png``, ``evals-jupyterlab.png``,
  ``evals-jupyterlab-runs.png``: an eval of the flight demo under two variants of setFilters' description (the
  shipped scripted model): the report's top (variants, per model, chart, the runs side by side), why runs failed,
  a failed run's session report, and the same report displayed in JupyterLab (its top, and its runs).

.venv/bin/python docs/screenshots.py [sidepanel] [grants] [notebook] [report] [bridge] [evals]     (all by default)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH, DEMO_TASK
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.testing import ScriptedServer, call, say

DOCS = Path(__file__).parent
sys.path.insert(0, str(DOCS.parent / "tests"))
from lab_page import PANEL_CELL, panel_in_jupyterlab, run_cell  # noqa: E402 - the UI test's helper: made the same way

ACTIVITY_CELL = """
from webmcp_nb.testing import ScriptedServer, call, say
tab.wait_for_tool("listFlights")
for _ in range(8):
    tab.call("listFlights")
try:
    tab.call("setFilters", stops="direct")  # refused: stops is a list of numbers
except wm.InvalidArgumentsError:
    pass
script = [
    call("setFilters", say="Keeping direct flights only.", stops=[0]),
    call("listFlights"),
    say("There are 4 direct flights; the cheapest is B6514 at 422 USD."),
]
with ScriptedServer(script) as model:
    agent = wm.Agent(tab, base_url=model.base_url, api_key="offline", model="scripted", confirm="never", session=False)
    agent.run("How many direct flights are there, and which is the cheapest?")
tab.call("resetFilters")
"""

EMPTY_CELL = """
shop = browser.open(server.url("shop/"))  # a page without WebMCP
wm.panel(shop)
"""

REPORT_SCRIPT = [
    call("searchFlights", say="I'll search for the flights first.", **DEMO_SEARCH),
    call("setFilters", say="Now only the direct flights.", stops="direct"),
    call("setFilters", say="The stops are a list of numbers; trying again.", stops=[0]),
    call("listFlights"),
    call("resetFilters", say="I'll reset the filters to compare with all flights."),
    say("There are 4 direct flights from London to New York on 15 January; the cheapest is B6514 at 422 USD."),
]


def side_panel() -> None:
    with wm.serve_demo() as server, wm.launch(args=["--remote-debugging-port=0"]) as browser:
        tab = browser.open(server.url("flights/"))
        tab.call("searchFlights", DEMO_SEARCH)
        tab.wait_for_tool("listFlights")
        port = (browser.process.profile_dir / "DevToolsActivePort").read_text().split()[0]
        with sync_playwright() as p:
            cdp = p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = cdp.contexts[0].new_page()
            page.set_viewport_size({"width": 400, "height": 900})
            page.goto(f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html?tab={tab.id}")
            page.locator('#tools li[data-tool="listFlights"]').click()
            page.locator("#call-button").click()
            page.locator("#tool-result").wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(DOCS / "sidepanel.png"))
            cdp.close()


def asking_card() -> None:
    os.environ["WEBMCP_NB_HOME"] = tempfile.mkdtemp()  # a throwaway home: your own grants are not shown or changed
    from webmcp_nb.core import _loop

    with wm.serve_demo() as server, wm.launch(args=["--remote-debugging-port=0"], grants=True) as browser:
        wm.grants.allow("https://mail.example", "read", by="side panel")
        wm.grants.allow("https://shop.example", "act", by="cli")
        tab = browser.open(server.url("flights/"))
        port = (browser.process.profile_dir / "DevToolsActivePort").read_text().split()[0]
        with sync_playwright() as p:
            cdp = p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = cdp.contexts[0].new_page()
            page.set_viewport_size({"width": 400, "height": 760})
            page.goto(f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html?tab={tab.id}")
            page.locator("#grants li").first.wait_for()
            who = {"kind": "mcp", "name": "Claude Desktop"}
            ask = {"need": "act", "who": who, "action": "call", "tool": "searchFlights", "risk": "medium"}
            asked = _loop.submit(browser._check_grant({**ask, "tabId": tab.id, "timeoutMs": 60_000}, 70))
            page.locator("#confirmations .card.grant").wait_for()
            for section in ("tools-section", "chat-section"):  # folded: the card and the Sites list in one view
                page.locator(f"#{section} > summary").click()
            time.sleep(0.5)
            page.screenshot(path=str(DOCS / "sidepanel-grant.png"))
            page.locator("#confirmations .card.grant button.grant-once").click()
            asked.result(timeout=30)
            cdp.close()


def notebook_panel() -> None:
    cells = (PANEL_CELL, ACTIVITY_CELL, EMPTY_CELL)
    with panel_in_jupyterlab(Path(tempfile.mkdtemp()), width=1200, cells=cells) as page:
        page.locator(".jupyter-widgets button", has_text="Call").click(timeout=90_000)
        page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
        news = page.get_by_role("button", name="No")  # JupyterLab's "news?" toast would cover the panel
        if news.count():
            news.first.click()
        first = page.locator(".jp-OutputArea-output").first
        first.screenshot(path=str(DOCS / "notebook-panel.png"))

        first.locator(".lm-TabBar-tab", has_text="Log").click()
        run_cell(page, 1)
        page.get_by_text("resetFilters → ").last.wait_for(timeout=60_000)
        time.sleep(0.5)
        first.screenshot(path=str(DOCS / "notebook-panel-log.png"))

        run_cell(page, 2)
        empty = page.get_by_text("This page has no WebMCP tools")
        empty.wait_for(timeout=60_000)
        page.locator(".jp-OutputArea-output", has=empty).screenshot(path=str(DOCS / "notebook-panel-empty.png"))

        page.set_viewport_size({"width": 820, "height": 1100})  # a narrow output area
        first.locator(".lm-TabBar-tab", has_text="Tools").click()
        first.scroll_into_view_if_needed()
        time.sleep(0.5)
        first.screenshot(path=str(DOCS / "notebook-panel-narrow.png"))


def report() -> None:
    folder = Path(tempfile.mkdtemp()) / "run"
    answers = iter([True, True, True, False])  # the user denies the reset
    with wm.serve_demo() as server, wm.launch() as browser, ScriptedServer(REPORT_SCRIPT) as model:
        tab = browser.open(server.url("flights/"))
        session = wm.Session(browser, directory=folder, title="Direct flights, LON → NYC", model="scripted")
        agent = wm.Agent(
            tab,
            base_url=model.base_url,
            api_key="offline",
            model="scripted",
            session=session,
            on_confirm=lambda request: next(answers, True),
        )
        agent.run(DEMO_TASK)
        session.note("The agent retried setFilters after a schema error; the reset was denied on purpose.")
        session.close()
    path = wm.Session.load(folder).report().save(folder / "report.html")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/lib/chromium/chromium", args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1100, "height": 1000}, java_script_enabled=False)
        page.goto(path.as_uri())
        page.screenshot(path=str(DOCS / "report-summary.png"))
        top = page.get_by_role("heading", name="Timeline").bounding_box()
        assert top is not None
        page.screenshot(
            path=str(DOCS / "report-timeline.png"),
            full_page=True,
            clip={"x": 0, "y": top["y"] - 10, "width": 1100, "height": 1000},
        )
        chromium.close()


def chat_bridge() -> None:
    time_server = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    entities = [{"name": "Tokyo", "entityType": "city", "observations": ["visited in May"]}]
    script = [
        say('Let me check the time first.\n<tool_call>{"name": "time_get_current_time", "arguments": '
            '{"timezone": "Asia/Tokyo"}}</tool_call>'),
        say("It is 9:12 in the morning in Tokyo. I'll note the city in your memory:\n<tool_call>"
            + json.dumps({"name": "memory_create_entities", "arguments": {"entities": entities}}) + "</tool_call>"),
    ]  # fmt: skip
    memory = [str(DOCS.parent / "node_modules" / ".bin" / "mcp-server-memory")]
    with (
        wm.serve_demo() as server,
        ScriptedServer(script) as model,
        wm.launch(args=["--remote-debugging-port=0"]) as browser,
        wm.mcp.connect(time_server, name="time") as clock,
        wm.mcp.connect(memory, env={"MEMORY_FILE_PATH": tempfile.mktemp()}, name="memory") as notes,
        sync_playwright() as p,
    ):
        port = (browser.process.profile_dir / "DevToolsActivePort").read_text().split()[0]
        cdp = p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        page = cdp.contexts[0].new_page()
        page.set_viewport_size({"width": 1280, "height": 720})
        url = server.url(f"chat/?model={model.base_url}")
        page.goto(url)
        while not (tab := next((t for t in browser.tabs if t.url == url), None)):
            time.sleep(0.05)
        bridge = wm.chat_bridge(
            tab, servers=[clock, notes], site="demo-chat", auto_run={"time": "read-only"}, auto_send=True, session=False
        )
        bridge.send("What time is it in Tokyo? And remember that I visited it in May.")
        while not bridge.pending:
            time.sleep(0.1)
        time.sleep(0.5)  # the bar draws its line for the waiting call
        page.screenshot(path=str(DOCS / "chat-bridge.png"))
        bridge.close()
        cdp.close()


EVAL_CELL = """
import webmcp_nb as wm
report = wm.evals.EvalReport.load("flights-eval")
report
"""


def evals() -> None:
    root = Path(tempfile.mkdtemp())
    suite = wm.evals.builtin("flights")
    variants = wm.evals.load_variants(wm.evals.suite.SUITES / "flights.variants.yaml")
    done = wm.evals.run(
        suite, models=["scripted:flights"], variants=variants, repeats=4, concurrency=2,
        output=root / "flights-eval", progress=False,
    )  # fmt: skip
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/lib/chromium/chromium", args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1200, "height": 1250}, java_script_enabled=False)
        page.goto((root / "flights-eval" / "report.html").as_uri())
        page.screenshot(path=str(DOCS / "evals-report.png"))
        why = page.get_by_role("heading", name="Why runs did not pass").bounding_box()
        assert why is not None
        page.screenshot(
            path=str(DOCS / "evals-report-why.png"), full_page=True,
            clip={"x": 0, "y": why["y"] - 10, "width": 1200, "height": 520},
        )  # fmt: skip
        failed = next(r for r in done.runs if r.status == "fail")
        page.set_viewport_size({"width": 1100, "height": 900})
        page.goto((done.session_path(failed) / "report.html").as_uri())
        page.screenshot(path=str(DOCS / "evals-run-report.png"))
        chromium.close()
    lab_root = Path(tempfile.mkdtemp())
    shutil.copytree(root / "flights-eval", lab_root / "flights-eval")
    with panel_in_jupyterlab(lab_root, width=1300, height=1300, cells=(EVAL_CELL,)) as page:
        output = page.locator(".jp-OutputArea-output")
        output.get_by_text("Per task: the runs side by side").wait_for(timeout=60_000)
        news = page.get_by_role("button", name="No")
        if news.count():
            news.first.click()
        time.sleep(0.5)
        page.screenshot(path=str(DOCS / "evals-jupyterlab.png"))
        output.get_by_text("Per task: the runs side by side").evaluate("(h) => h.scrollIntoView({block: 'start'})")
        time.sleep(0.5)
        page.screenshot(path=str(DOCS / "evals-jupyterlab-runs.png"))


MAKERS = {
    "sidepanel": side_panel,
    "grants": asking_card,
    "notebook": notebook_panel,
    "report": report,
    "bridge": chat_bridge,
    "evals": evals,
}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(MAKERS):
        MAKERS[name]()
        print(f"made the {name} screenshots in {DOCS}")
