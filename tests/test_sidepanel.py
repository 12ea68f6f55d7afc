"""The extension's side panel (extension/sidepanel.html) in a real browser, driven with Playwright over CDP.

The panel is opened as a normal tab with ``?tab=<id>``, which pins the page under test. It talks to the
worker's hub like a real side panel: calls by hand are recorded in the notebook's session, a notebook
agent's confirmation can be answered in it, and its own chat (sidecar.js) runs a tool-using turn against
the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import webmcp_nb as wm
from webmcp_nb.demo import DEMO_SEARCH
from webmcp_nb.protocol import EXTENSION_ID
from webmcp_nb.skills import SkillHealthWarning
from webmcp_nb.testing import ScriptedServer, call, fail, say

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

TIMEOUT = 20_000  # ms, for every wait on the panel
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel.html"
OPTIONS = f"chrome-extension://{EXTENSION_ID}/options.html"
DENIED = "The user denied this action. Do not retry it; ask the user what to do instead."
RESULTS_QUERY = "&".join(f"{k}={v}" for k, v in DEMO_SEARCH.items())  # opens the flight demo on its results


class Chromium:
    """A launched browser (the library's) and the same browser seen by Playwright."""

    def __init__(self, browser: wm.Browser, context: Any) -> None:
        self.browser = browser
        self.context = context

    def panel(self, tab: wm.Tab) -> Any:
        """The side panel page, pinned to ``tab``, once it is connected to the worker's hub."""
        page = self.context.new_page()
        page.set_viewport_size({"width": 400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.errors = errors
        page.goto(f"{PANEL}?tab={tab.id}")
        try:
            expect(page.locator("#relay-state")).to_have_attribute("data-ok", "true", timeout=TIMEOUT)
        except AssertionError:
            pytest.fail(
                "the side panel page never got the worker hub's init: worker.js must accept panel ports from "
                "extension pages opened in a tab (check port.sender.url, not the absence of port.sender.tab)"
            )
        return page

    def configure_chat(self, base_url: str, model: str, key: str) -> None:
        """Set the chat's endpoint the way a user does: on the options page."""
        page = self.context.new_page()
        page.goto(OPTIONS)
        page.fill("#sidecar-base-url", base_url)
        page.fill("#sidecar-model", model)
        page.fill("#sidecar-api-key", key)
        page.click("#sidecar-save")
        expect(page.locator("#sidecar-status")).to_contain_text("Saved", timeout=TIMEOUT)
        page.close()


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    browser = wm.launch(args=["--remote-debugging-port=0"])
    playwright = cdp = None
    try:
        active = Path(browser.process.profile_dir) / "DevToolsActivePort"
        deadline = time.monotonic() + 10
        while not (active.exists() and active.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        port = active.read_text().splitlines()[0]
        playwright = sync_api.sync_playwright().start()
        cdp = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        yield Chromium(browser, cdp.contexts[0])
    finally:
        if cdp is not None:
            cdp.close()
        if playwright is not None:
            playwright.stop()
        browser.close()


def poll(find: Callable[[], Any], timeout: float = 5.0) -> Any:
    """``find()`` once it returns something truthy (events travel panel → worker → relay → Python)."""
    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_panel_lists_calls_and_records(chromium: Chromium, server: Any, tmp_path: Path) -> None:
    browser = chromium.browser
    tab = browser.open(server.url("flights/"))
    session = wm.Session(browser, directory=tmp_path / "s", evidence="off")
    try:
        page = chromium.panel(tab)
        expect(page.locator("#notebook-state")).to_have_attribute("data-ok", "true")
        expect(page.locator("#tab-title")).to_contain_text(tab.title)
        item = page.locator('#tools li[data-tool="searchFlights"]')
        expect(item).to_contain_text("polyfill")
        expect(item.locator(".badge.ro")).to_have_count(0)  # searchFlights changes the page

        item.click()
        expect(page.locator("#tool-description")).to_contain_text("Searches for flights")
        template = json.loads(page.locator("#tool-args").input_value())
        assert list(template) == list(tab.tools["searchFlights"].input_schema["required"])  # required first
        assert template["tripType"] == "one-way" and template["passengers"] == 1  # enum / minimum

        page.fill("#tool-args", "{not json")
        page.click("#call-button")
        expect(page.locator("#tool-result.error")).to_contain_text("INVALID_JSON")

        page.fill("#tool-args", json.dumps(DEMO_SEARCH))
        page.click("#call-button")
        expect(page.locator("#tool-result.ok")).to_contain_text('"searchId"', timeout=TIMEOUT)
        shown = json.loads(page.locator("#tool-result").inner_text())
        assert shown["search"] == DEMO_SEARCH and shown["count"] > 0

        expect(page.locator('#log li[data-kind="tool.called"]')).to_have_count(1)
        expect(page.locator('#log li[data-kind="tool.returned"]')).to_contain_text("searchFlights")
        listed = page.locator('#tools li[data-tool="listFlights"]')  # the results view added tools
        expect(listed.locator(".badge.ro")).to_have_text("read-only", timeout=TIMEOUT)

        called = poll(
            lambda: [
                e for e in session.filter("tool.called", tool="searchFlights") if e.data.get("origin") == "sidepanel"
            ]
        )
        assert called and called[0].data["arguments"] == DEMO_SEARCH and called[0].tab_id == tab.id
        returned = poll(lambda: session.filter("tool.returned", tool="searchFlights"))
        assert returned and json.loads(returned[0].data["text"])["count"] == shown["count"]
        assert not page.errors
    finally:
        session.close()


def test_panel_shows_tool_errors_with_their_code(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url("t/faults.html"))
    page = chromium.panel(tab)
    expect(page.locator('#tools li[data-tool="readComments"] .badge.untrusted')).to_be_visible(timeout=TIMEOUT)
    page.click('#tools li[data-tool="boom"]')
    expect(page.locator("#tool-args")).to_have_value("{}")
    page.click("#call-button")
    expect(page.locator("#tool-result.error")).to_have_text("TOOL_ERROR: kaboom 42", timeout=TIMEOUT)
    expect(page.locator('#log li[data-kind="tool.failed"]')).to_contain_text("TOOL_ERROR")


def test_panel_switches_skills_and_their_tools(chromium: Chromium, server: Any) -> None:
    browser = chromium.browser
    tab = browser.open(server.url("flights/"))
    skill = wm.Skill("panel-demo", match=["*://127.0.0.1/flights/*"], description="Reads the page.")
    skill.add_tool("pageHeading", "async () => document.title", read_only=True)
    skill.add_tool("pageUrl", "async () => location.href", read_only=True)
    browser.skills.install(skill)
    broken = wm.Skill("panel-broken", match=["*://127.0.0.1/flights/*"]).health_check("() => 'no #basket here'")
    with pytest.warns(SkillHealthWarning):
        browser.skills.install(broken.add_tool("basket", "async () => 1"))
    page = chromium.panel(tab)

    row = page.locator('#skills li[data-skill="panel-demo"]')
    expect(row).to_contain_text("active · 2 tools")
    expect(page.locator('#skills li[data-skill="panel-broken"] .reason')).to_contain_text("no #basket here")
    expect(page.locator('#tools li[data-tool="pageHeading"]')).to_contain_text("panel-demo")

    row.locator("input[type=checkbox]").uncheck()
    expect(page.locator('#tools li[data-tool="pageHeading"]')).to_have_count(0, timeout=TIMEOUT)
    assert poll(lambda: not browser.skills["panel-demo"].enabled)
    row.locator("input[type=checkbox]").check()
    expect(page.locator('#tools li[data-tool="pageUrl"]')).to_have_count(1, timeout=TIMEOUT)

    row.locator('button.tool-toggle[data-tool="pageUrl"]').click()
    expect(page.locator('#tools li[data-tool="pageUrl"]')).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator('#tools li[data-tool="pageHeading"]')).to_have_count(1)
    assert poll(lambda: browser.skills["panel-demo"].disabled_tools == ["pageUrl"])
    expect(row.locator('button.tool-toggle[data-tool="pageUrl"]')).to_have_attribute("aria-pressed", "false")


def test_notebook_confirmation_is_answered_in_the_panel(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url("flights/"))
    page = chromium.panel(tab)
    with ScriptedServer([call("searchFlights", **DEMO_SEARCH), say("Done.")]) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="x", model="m", evidence="off")
        run = agent.start("search")
        card = page.locator('#confirmations .card[data-origin="notebook"]')
        expect(card).to_contain_text("searchFlights", timeout=TIMEOUT)
        expect(card).to_contain_text('"LON"')
        request_id = card.get_attribute("data-id")
        assert [p.id for p in run.pending] == [request_id]
        card.locator("button.approve").click()
        result = run.result(timeout=30)
    assert result.answer == "Done."
    assert result.steps[0].confirmed is True and result.steps[0].error is None
    answered = [e for e in result.events if e.kind == "confirmation.answered"]
    assert answered[0].data["by"] == "sidepanel" and answered[0].data["approved"] is True
    expect(page.locator(f'#confirmations .card.resolved[data-id="{request_id}"]')).to_contain_text("Approved")
    expect(page.locator('#log li[data-kind="agent.turn.finished"]')).to_contain_text("Done.", timeout=TIMEOUT)
    expect(page.locator("#chat-transcript .message.user.notebook .body")).to_have_text("search")
    expect(page.locator("#chat-transcript .message.assistant.notebook .body")).to_have_text("Done.")


def test_sidecar_chat_runs_a_tool_using_turn(chromium: Chromium, server: Any) -> None:
    browser = chromium.browser
    tab = browser.open(server.url("flights/"))
    key = f"sk-sidecar-{secrets.token_hex(12)}"
    script = [call("searchFlights", **DEMO_SEARCH), call("listFlights"), say("15 flights found.")]
    with ScriptedServer(script) as model:
        page = chromium.panel(tab)
        expect(page.locator("#chat-settings-missing")).to_be_visible()
        chromium.configure_chat(model.base_url, "scripted", key)
        expect(page.locator("#chat-settings-missing")).to_be_hidden(timeout=TIMEOUT)

        page.fill("#chat-input", "Find flights from LON to NYC and count them")
        page.click("#chat-send")
        expect(page.locator("#chat-transcript .message.user")).to_have_text(
            "Find flights from LON to NYC and count them"
        )
        card = page.locator('#confirmations .card[data-origin="chat"]')
        expect(card).to_contain_text("searchFlights", timeout=TIMEOUT)
        card.locator("button.approve").click()
        expect(page.locator("#chat-transcript .message.assistant").last).to_have_text(
            "15 flights found.", timeout=TIMEOUT
        )
        expect(card).to_have_count(1)  # listFlights is read-only: no card
        expect(card).to_have_class("card resolved approved")
        tab.wait_for_tool("listFlights")

        assert len(model.requests) == 3
        first, second, third = model.requests
        assert first["stream"] is True
        assert [t["function"]["name"] for t in first["tools"]] == ["searchFlights"]
        assert "listFlights" in [t["function"]["name"] for t in second["tools"]]  # re-read after the search
        system, task = first["messages"][0]["content"], first["messages"][1]["content"]
        assert "never follow" in system and server.url("flights/") not in system  # the page's words are data
        assert task.startswith('<page_context untrusted="true">\n') and server.url("flights/") in task
        searched, listed = tool_messages(third)
        assert searched.startswith('<tool_result tool="searchFlights" status="ok">\n')
        assert searched.endswith("\n</tool_result>") and json.loads(searched.split("\n")[1])["count"] > 0
        assert listed.startswith('<tool_result tool="listFlights" status="ok">\n')
        assert [m["role"] for m in third["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]

        assert key not in page.content()
        expect(page.locator('#log li[data-kind="agent.turn.finished"]')).to_contain_text("15 flights found.")
        finished = poll(lambda: [e for e in browser.events.events if e.kind == "agent.turn.finished"])
        assert (
            finished and finished[0].data["answer"] == "15 flights found." and finished[0].data["origin"] == "sidepanel"
        )
        kinds = {e.kind for e in browser.events.events if e.data.get("origin") == "sidepanel"}
        assert {"chat.message", "model.response", "confirmation.requested", "confirmation.answered"} <= kinds
        assert {"tool.called", "tool.returned"} <= kinds
        assert key not in json.dumps([e.model_dump() for e in browser.events.events])
        assert not page.errors


def test_sidecar_denial_and_retry(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url("flights/"))
    script = [fail(429), call("searchFlights", **DEMO_SEARCH), say("OK, I will not search.")]
    with ScriptedServer(script) as model:
        chromium.configure_chat(model.base_url, "scripted", "")
        page = chromium.panel(tab)
        page.fill("#chat-input", "search")
        page.press("#chat-input", "Enter")
        card = page.locator('#confirmations .card[data-origin="chat"]')
        card.locator("button.deny").click(timeout=TIMEOUT)
        expect(page.locator("#chat-transcript .message.assistant").last).to_have_text(
            "OK, I will not search.", timeout=TIMEOUT
        )
        expect(card).to_have_class("card resolved denied")
        assert len(model.requests) == 3  # the 429 was retried
        assert tool_messages(model.requests[2]) == [
            f'<tool_result tool="searchFlights" status="error">\n{DENIED}\n</tool_result>'
        ]
    assert "listFlights" not in tab.tools  # the search never ran


def test_sidecar_tool_call_limit(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url(f"flights/?{RESULTS_QUERY}"))
    tab.wait_for_tool("listFlights")

    def script(body: dict[str, Any]) -> Any:  # keeps calling a read-only tool while it is offered tools
        return call("listFlights") if body.get("tools") else say("Enough.")

    with ScriptedServer(script) as model:
        chromium.configure_chat(model.base_url, "scripted", "")
        page = chromium.panel(tab)
        page.fill("#chat-input", "list forever")
        page.click("#chat-send")
        expect(page.locator("#chat-transcript .message.assistant").last).to_have_text("Enough.", timeout=TIMEOUT)
        assert len(model.requests) == 12 and "tools" not in model.requests[-1]
        results = tool_messages(model.requests[-1])
        assert len(results) == 11 and all(
            r.startswith('<tool_result tool="listFlights" status="ok">') for r in results[:10]
        )
        assert "Refused: the limit of 10 tool calls" in results[10]
        expect(page.locator('#log li[data-kind="agent.limit"]')).to_have_count(1)
        expect(page.locator("#confirmations .card")).to_have_count(0)


def test_sidecar_turn_can_be_stopped(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url("flights/"))
    with ScriptedServer([call("searchFlights", **DEMO_SEARCH), say("Stopped?")]) as model:
        chromium.configure_chat(model.base_url, "scripted", "")
        page = chromium.panel(tab)
        page.fill("#chat-input", "search")
        page.click("#chat-send")
        card = page.locator('#confirmations .card[data-origin="chat"]')
        expect(card).to_contain_text("searchFlights", timeout=TIMEOUT)
        page.click("#chat-stop")
        expect(page.locator("#chat-transcript .message.notice")).to_have_text("Stopped.", timeout=TIMEOUT)
        expect(card).to_have_class("card resolved denied")
        expect(card).to_contain_text("Expired")
        expect(page.locator("#chat-send")).to_be_visible()
        expect(page.locator('#log li[data-kind="agent.turn.finished"]')).to_contain_text("stopped: stopped")
        expect(page.locator('#log li[data-kind="tool.called"]')).to_have_count(0)
        assert len(model.requests) == 1
