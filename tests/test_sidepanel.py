"""The extension's side panel (extension/sidepanel/sidepanel.html) in a real browser, driven with Playwright over CDP.

The panel is opened as a normal tab with ``?tab=<id>``, which pins the page under test. It talks to the
worker's hub like a real side panel: calls by hand are recorded in the notebook's session, a notebook
agent's confirmation can be answered in it, and its own chat (chat-loop.js) runs a tool-using turn against
the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cdp import configure_chat, playwright_context
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.browser.skills import SkillHealthWarning
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.testing import ScriptedServer, call, calls, fail, say

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

TIMEOUT = 20_000  # ms, for every wait on the panel
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"
DENIED = "The user denied this action. Do not retry it; ask the user what to do instead."
RESULTS_QUERY = "&".join(f"{k}={v}" for k, v in DEMO_SEARCH.items())  # opens the flight demo on its results


class Chromium:
    """A launched browser (the library's) and the same browser seen by Playwright."""

    def __init__(self, browser: wm.Browser, context: Any) -> None:
        self.browser = browser
        self.context = context

    def panel(self, tab: wm.Tab, *, clock: bool = False) -> Any:
        """The side panel page, pinned to ``tab``, once it is connected to the worker's hub. ``clock``: with
        Playwright's clock installed, so a test can move the panel's time forward (``page.clock.fast_forward``)."""
        page = self.context.new_page()
        if clock:
            page.clock.install()
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
        configure_chat(self.context, base_url, model, key)


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    with (
        wm.launch(args=["--remote-debugging-port=0"]) as browser,
        playwright_context(browser.process.profile_dir) as seen,
    ):
        yield Chromium(browser, seen)


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
        expect(item.locator(".badge.risk")).to_have_text("medium risk")  # searchFlights changes the page

        item.click()
        expect(page.locator("#tool-description")).to_contain_text("Searches for flights")
        template = json.loads(page.locator("#tool-args").input_value())
        required = tab.tools["searchFlights"].input_schema["required"]
        assert list(template)[: len(required)] == required  # required first
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
        expect(listed.locator(".badge.risk-low")).to_have_text("read-only", timeout=TIMEOUT)

        called = eventually(
            lambda: [
                e for e in session.filter("tool.called", tool="searchFlights") if e.data.get("origin") == "sidepanel"
            ]
        )
        assert called and called[0].data["arguments"] == DEMO_SEARCH and called[0].tab_id == tab.id
        returned = eventually(lambda: session.filter("tool.returned", tool="searchFlights"))
        assert returned and json.loads(returned[0].data["text"])["count"] == shown["count"]
        assert not page.errors
    finally:
        session.close()


def test_the_log_follows_the_newest_line_says_who_acted_and_filters(chromium: Chromium, server: Any) -> None:
    tab = chromium.browser.open(server.url("t/faults.html"))
    page = chromium.panel(tab)
    for _ in range(40):  # the notebook calls: the side panel shows them as they happen
        tab.call("received")
    with pytest.raises(wm.InvalidArgumentsError):
        tab.call("strict", {"n": "not a number"})
    expect(page.locator('#log li[data-kind="tool.refused"]')).to_contain_text(
        "refused before the page saw it", timeout=TIMEOUT
    )
    assert page.locator('#log li[data-kind="tool.refused"] .origin').text_content() == "notebook"
    at_bottom = "(l) => l.scrollTop + l.clientHeight >= l.scrollHeight - 2"
    assert page.eval_on_selector("#log", at_bottom)  # the newest line is in view
    page.eval_on_selector("#log", "(l) => { l.scrollTop = 0; }")  # the reader scrolls up: new lines leave them there
    tab.call("received")
    expect(page.locator('#log li[data-kind="tool.returned"]')).to_have_count(41, timeout=TIMEOUT)
    assert page.eval_on_selector("#log", "(l) => l.scrollTop") == 0
    page.select_option("#log-filter", "problems")
    expect(page.locator("#log li")).to_have_count(1)
    expect(page.locator("#log li.bad")).to_contain_text("strict(n=")
    page.select_option("#log-filter", "all")
    assert page.locator("#log li").count() > 80


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
    assert eventually(lambda: not browser.skills["panel-demo"].enabled)
    row.locator("input[type=checkbox]").check()
    expect(page.locator('#tools li[data-tool="pageUrl"]')).to_have_count(1, timeout=TIMEOUT)

    row.locator('button.tool-toggle[data-tool="pageUrl"]').click()
    expect(page.locator('#tools li[data-tool="pageUrl"]')).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator('#tools li[data-tool="pageHeading"]')).to_have_count(1)
    assert eventually(lambda: browser.skills["panel-demo"].disabled_tools == ["pageUrl"])
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
        finished = eventually(lambda: [e for e in browser.events.events if e.kind == "agent.turn.finished"])
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
    with ScriptedServer(script, quirks="deepseek") as model:  # an unknown host: tool_choice is sent, refused once
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
        assert len(model.requests) == 4  # the 400 for tool_choice and the 429 were retried
        assert model.refusals == ["tool_choice is not supported"]
        assert not any("tool_choice" in r for r in model.requests[1:])
        assert tool_messages(model.requests[-1]) == [
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
        expect(page.locator('#log li[data-kind="agent.turn.finished"]')).to_contain_text("stopped (cancelled)")
        expect(page.locator('#log li[data-kind="tool.called"]')).to_have_count(0)
        assert len(model.requests) == 1


def framed(tool: str, text: str, status: str = "error") -> str:
    return f'<tool_result tool="{tool}" status="{status}">\n{text}\n</tool_result>'


def chat(page: Any, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#chat-send")


def turns_done(page: Any, n: int) -> None:
    """Wait until the chat finished its ``n``-th turn."""
    expect(page.locator('#log li[data-kind="agent.turn.finished"]')).to_have_count(n, timeout=TIMEOUT)
    expect(page.locator("#chat-send")).to_be_visible()


def test_sidecar_every_stop_then_the_next_turn(chromium: Chromium, server: Any) -> None:
    """One conversation in the side panel's chat through every way a turn stops — Stop, a model failure, the
    time limit, a denial, the call limit — each followed by a turn the strict scripted server accepts."""
    browser = chromium.browser
    tab = browser.open(server.url("t/risk.html"))
    script = [
        calls(("sendPayment", {"amount": 5}), ("readNote", {})),  # 1: stopped while the card waits
        call("setNote", text="a"),  # 2: approved, runs; then the model fails
        fail(400, "scripted refusal"),
        call("setNote", text="b"),  # 3: nobody answers before the time limit
        calls(("setNote", {"text": "c"}), ("readNote", {})),  # 4: denied
        say("I will not change it."),
        *[call("readNote")] * 11,  # 5: the call limit
        say("Enough."),
        say("Bye."),  # 6
    ]
    with ScriptedServer(script) as model:
        chromium.configure_chat(model.base_url, "scripted", "")
        page = chromium.panel(tab, clock=True)
        waiting = page.locator('#confirmations .card[data-origin="chat"]:not(.resolved)')

        chat(page, "Pay 5 and read the note.")
        expect(waiting).to_contain_text("sendPayment", timeout=TIMEOUT)
        expect(waiting).to_have_attribute("data-risk", "high")
        page.click("#chat-stop")
        turns_done(page, 1)
        expect(page.locator("#chat-transcript .message.notice").last).to_have_text("Stopped.")

        chat(page, "Set the note to a.")
        waiting.locator("button.approve").click(timeout=TIMEOUT)
        turns_done(page, 2)
        expect(page.locator("#chat-transcript .message.error").last).to_contain_text("scripted refusal")

        chat(page, "Set the note to b.")
        expect(waiting).to_contain_text("setNote", timeout=TIMEOUT)
        page.clock.fast_forward(61_000)
        turns_done(page, 3)
        expect(page.locator("#chat-transcript .message.notice").last).to_have_text(
            "Stopped after 60 s, before an answer."
        )

        chat(page, "Set the note to c and read it.")
        waiting.locator("button.deny").click(timeout=TIMEOUT)
        turns_done(page, 4)

        chat(page, "Read the note again and again.")
        turns_done(page, 5)

        chat(page, "Bye?")
        turns_done(page, 6)
        expect(page.locator("#chat-transcript .message.assistant").last).to_have_text("Bye.")
        assert model.refusals == [] and len(model.requests) == len(script)
        last = model.requests[-1]

    stopped = "Not run: it was waiting for the user's confirmation when the user stopped the turn."
    timed_out = "Not run: it was waiting for the user's confirmation when the turn reached its time limit of 60 s."
    results = tool_messages(last)
    assert results[:6] == [
        framed("sendPayment", stopped),
        framed("readNote", "Not run: the user stopped the turn before it started."),
        framed("setNote", '{"note":"a"}', "ok"),
        framed("setNote", timed_out),
        framed("setNote", DENIED),
        framed(
            "readNote",
            "Not run: the user denied setNote just before, in the same reply. Ask the user what to do instead.",
        ),
    ]
    assert all(r == framed("readNote", '{"note":"a"}', "ok") for r in results[6:16])
    assert results[16].startswith('<tool_result tool="readNote" status="error">\nRefused: the limit of 10 tool calls')
    notes = [m["content"] for m in last["messages"] if m["role"] == "user" and m["content"].startswith("[")]
    assert notes == [
        "[The user stopped the previous turn before an answer.]",
        "[The previous turn failed before an answer: The model endpoint answered 400: scripted refusal]",
        "[The previous turn was stopped after 60 s (its time limit), before an answer.]",
    ]
    assert tab.call("readNote").value == {"note": "a"}  # only the approved call ran

    def panel_events(kind: str) -> list[Any]:
        return [e for e in browser.events.events if e.kind == kind and e.data.get("origin") == "sidepanel"]

    finished = eventually(lambda: len(panel_events("agent.turn.finished")) == 6 and panel_events("agent.turn.finished"))
    assert [e.data["stopped"] for e in finished] == ["cancelled", "error", "turn_timeout", None, "max_tool_calls", None]
    usages = [e.data["usage"] for e in panel_events("model.response")]
    assert usages == model.usages and all(u["total_tokens"] > 0 for u in usages)  # usage reported per request
    first_turn = finished[0].data["usage"]
    assert first_turn == model.usages[0]  # and per turn
    assert all(r["stream_options"] == {"include_usage": True} for r in model.requests)


def test_sidecar_risk_levels_and_policies(chromium: Chromium, server: Any) -> None:
    browser = chromium.browser
    tab = browser.open(server.url("t/risk.html"))
    script = [
        calls(("setNote", {"text": "x"}), ("sendPayment", {"amount": 5})),
        say("Paid."),
        call("readNote"),
        say("Read."),
    ]
    with ScriptedServer(script) as model:
        chromium.configure_chat(model.base_url, "scripted", "")
        page = chromium.panel(tab)
        for name, text in [
            ("readNote", "read-only"),
            ("setNote", "medium risk"),
            ("sendPayment", "high risk"),
            ("publishNote", "high risk"),
        ]:
            expect(page.locator(f'#tools li[data-tool="{name}"] .badge.risk')).to_have_text(text, timeout=TIMEOUT)
        expect(page.locator("#chat-confirm")).to_have_value("medium")

        page.select_option("#chat-confirm", "never")  # high risk still asks
        chat(page, "Change the note and pay 5.")
        card = page.locator('#confirmations .card[data-origin="chat"]')
        expect(card).to_contain_text("sendPayment", timeout=TIMEOUT)
        expect(card).to_have_attribute("data-risk", "high")
        expect(card.locator(".badge.risk")).to_have_text("high risk")
        expect(card).to_have_count(1)  # setNote (medium) ran without asking
        card.locator("button.approve").click()
        turns_done(page, 1)
        assert tab.call("readNote").value == {"note": "x"}

        page.select_option("#chat-confirm", "always")
        chat(page, "Read the note.")
        asked = page.locator('#confirmations .card[data-origin="chat"]:not(.resolved)')
        expect(asked).to_contain_text("readNote", timeout=TIMEOUT)
        expect(asked).to_have_attribute("data-risk", "low")
        asked.locator("button.approve").click()
        turns_done(page, 2)
        assert model.refusals == []

        again = chromium.panel(tab)  # the choice is kept
        expect(again.locator("#chat-confirm")).to_have_value("always")

    requested = eventually(
        lambda: [e.data for e in browser.events.events if e.kind == "confirmation.requested" and e.data.get("origin")]
    )
    assert [(d["tool"], d["risk"]) for d in requested] == [("sendPayment", "high"), ("readNote", "low")]

    with ScriptedServer([call("publishNote"), say("Published.")]) as model:  # a notebook agent's card
        agent = wm.Agent(tab, base_url=model.base_url, api_key="x", model="m", confirm="never", evidence="off")
        run = agent.start("publish")
        notebook = page.locator('#confirmations .card[data-origin="notebook"]')
        expect(notebook).to_have_attribute("data-risk", "high", timeout=TIMEOUT)
        expect(notebook.locator(".badge.risk")).to_have_text("high risk")
        notebook.locator("button.approve").click()
        assert run.result(timeout=30).answer == "Published."
    assert not page.errors


def test_a_cross_origin_frames_tools_are_marked_and_confirmations_say_whose(chromium: Chromium, server: Any) -> None:
    """A page on 127.0.0.1 with a frame from localhost: the panel marks the frame's tools, its chat tells the model
    where each tool comes from, and every confirmation card (the chat's, a notebook agent's) names the source."""
    page_origin, frame = f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}"
    marked = f"a frame of {frame}, not the page's own origin ({page_origin})"
    tab = chromium.browser.open(server.url("t/cross-frame.html"))
    tab.wait_for_tool("sendPin", timeout=10)
    page = chromium.panel(tab)
    inner = page.locator('#tools li[data-tool="sendPin"]')
    expect(inner.locator(".badge.cross-origin")).to_have_text(f"frame of {frame}", timeout=TIMEOUT)
    expect(page.locator('#tools li[data-tool="hostTool"] .badge.cross-origin')).to_have_count(0)
    inner.click()
    expect(page.locator("#tool-marks")).to_contain_text(f"from {marked}")

    with ScriptedServer([call("sendPin", pin="1234"), say("Not sent.")]) as model:
        chromium.configure_chat(model.base_url, "scripted", "sk-test")
        page.fill("#chat-input", "send my PIN")
        page.click("#chat-send")
        card = page.locator('#confirmations .card[data-origin="chat"]')
        expect(card).to_contain_text(f"from {marked}", timeout=TIMEOUT)
        card.locator("button.deny").click()
        expect(page.locator("#chat-transcript .message.assistant").last).to_have_text("Not sent.", timeout=TIMEOUT)
        offered = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
    assert offered["sendPin"].endswith(f"(from {marked}; risk: high)")
    assert offered["hostTool"].endswith(f"(from {page_origin}; risk: low, read-only)")

    with ScriptedServer([call("sendPin", pin="1234"), say("Not sent.")]) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="x", model="m", evidence="off")
        run = agent.start("send my PIN")
        card = page.locator('#confirmations .card[data-origin="notebook"]')
        expect(card).to_contain_text(f"from {marked}", timeout=TIMEOUT)
        card.locator("button.deny").click()
        assert run.result(timeout=30).steps[0].confirmed is False
    assert not page.errors
