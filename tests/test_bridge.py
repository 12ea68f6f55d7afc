"""The chat-site bridge (``wm.chat_bridge``): the demo chat site (it streams a scripted model's answers into the page
a few characters at a time, renders markdown as chat sites do, re-renders finished replies, has a contenteditable
input) in a real Chromium with the real extension, and MCP servers no one here wrote — ``mcp-server-time``
(Python) and ``@modelcontextprotocol/server-memory`` (Node) — as tool sources. Calls are answered where the user
answers them: in the extension's side panel (Playwright over the DevTools protocol), the notebook panel (a widget's
click) or a cell (``bridge.answer``); results are sent with a real click on the chat's Send. A hostile chat page
(``tests/pages/chat-hostile.js``) writes hidden and visible calls into the assistant's reply, floods it with
openings and draws a decoy over the bar."""

from __future__ import annotations

import contextlib
import html
import json
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cdp import in_service_worker, playwright_context, stop_service_worker
from eventually import eventually
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_peers import node_tool

import webmcp_nb as wm
from webmcp_nb.bridge.sites import Site, load_site, site_names
from webmcp_nb.core import _loop
from webmcp_nb.core.agent_rules import TEXTS, TOOL_CALL, parse_tool_calls
from webmcp_nb.link.grants import origin_of
from webmcp_nb.link.protocol import EXTENSION_ID, Method
from webmcp_nb.testing import ScriptedServer, say

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
UNRULY = [sys.executable, str(Path(__file__).parent / "servers" / "unruly_mcp.py")]
DENIED = TEXTS["denied"]
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"
WAITING = "waits for your answer in the side panel or the notebook panel"


def tool_call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


class Chat:
    """The module's browser, and the same browser as Playwright sees it."""

    def __init__(self, browser: wm.Browser, context: Any, server: Any) -> None:
        self.browser, self.context, self.server = browser, context, server

    def open(self, model: ScriptedServer, page: str = "chat/", query: str = "") -> tuple[wm.Tab, Any]:
        """The chat page answering from ``model``, opened as the user opens it: the library's tab and the page."""
        url = self.server.url(f"{page}?model={model.base_url}{query}")
        seen = self.context.new_page()
        seen.goto(url)
        tab = eventually(lambda: next((t for t in self.browser.tabs if t.url == url), None), 10, "the tab")
        return tab, seen

    def side_panel(self, tab: wm.Tab) -> Any:
        """The extension's side panel, pinned to ``tab``, once it is connected to the worker's hub."""
        page = self.context.new_page()
        page.set_viewport_size({"width": 400, "height": 1000})
        page.goto(f"{PANEL}?tab={tab.id}")
        expect(page.locator("#relay-state")).to_have_attribute("data-ok", "true", timeout=20_000)
        return page


def answer_in_side_panel(side: Any, tool: str, approved: bool = True) -> str:
    """The user's click on a bridged call's card in the side panel, once it shows; the card's id."""
    card = side.locator('#confirmations .card[data-origin="notebook"]:not(.resolved)', has_text=tool).first
    expect(card).to_contain_text("Chat bridge", timeout=60_000)
    request_id = str(card.get_attribute("data-id"))
    card.locator("button.approve" if approved else "button.deny").click()
    expect(side.locator(f'#confirmations .card.resolved[data-id="{request_id}"]')).to_have_count(1, timeout=20_000)
    return request_id


def send_results(page: Any) -> None:
    """The user's own click on the chat's Send, once the results are typed in its input."""
    editor = page.locator("#composer .editor")
    eventually(lambda: editor.inner_text().startswith("<tool_result"), 60, "the results in the chat's input")
    page.click("#composer button.send")
    eventually(lambda: not editor.inner_text().strip(), 10, "the results sent")


def answered(bridge: wm.ChatBridge, timeout: float = 60) -> str:
    """The chat's answer through ``await_answer``, which waits for calls that wait for the user (``approving``
    answers them), where ``wait_answer`` would stop at them."""
    return str(_loop.run(bridge.await_answer(timeout)))


@contextmanager
def approving(bridge: wm.ChatBridge) -> Iterator[list[str]]:
    """A user who answers yes, from a cell (``bridge.answer``), to each call that waits while the block runs; the
    ids they answered."""
    stop = threading.Event()
    approved: list[str] = []

    def answer() -> None:
        while not stop.wait(0.05):
            approved.extend(request_id for request_id in bridge.pending if bridge.answer(request_id, True))

    worker = threading.Thread(target=answer, daemon=True)
    worker.start()
    try:
        yield approved
    finally:
        stop.set()
        worker.join()


@pytest.fixture(scope="module")
def chat(server: Any) -> Iterator[Chat]:
    with (
        wm.launch(args=["--remote-debugging-port=0"]) as browser,
        playwright_context(browser.process.profile_dir) as context,
    ):
        yield Chat(browser, context, server)


@pytest.fixture(scope="module")
def clock() -> Iterator[Any]:
    with wm.mcp.connect(TIME, name="time") as server:
        yield server


@pytest.fixture(scope="module")
def unruly() -> Iterator[Any]:
    with wm.mcp.connect(UNRULY, name="unruly") as server:
        yield server


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Any]:
    command = str(node_tool("mcp-server-memory"))
    with wm.mcp.connect(command, env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}, name="memory") as server:
        yield server


def bar_buttons(page: Any) -> list[dict[str, Any]]:
    """The buttons inside the bridge's closed shadow root, as the DevTools protocol sees them (pierced)."""
    cdp = page.context.new_cdp_session(page)
    try:
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        found: list[dict[str, Any]] = []

        def walk(node: dict[str, Any], inside: bool) -> None:
            inside = inside or node.get("nodeName") == "WEBMCP-NB-BRIDGE"
            if inside and node.get("nodeName") == "BUTTON":
                label = "".join(c.get("nodeValue", "") for c in node.get("children", []))
                names = node.get("attributes", [])[::2]
                box = cdp.send("DOM.getBoxModel", {"nodeId": node["nodeId"]})["model"]["content"]
                found.append(
                    {
                        "label": label,
                        "enabled": "disabled" not in names,
                        "x": sum(box[::2]) / 4,
                        "y": sum(box[1::2]) / 4,
                    }
                )
            for child in [*node.get("children", []), *node.get("shadowRoots", [])]:
                walk(child, inside)

        walk(root, False)
        return found
    finally:
        cdp.detach()


def click_in_bar(page: Any, label: str) -> None:
    """A real click (trusted, as a person's) on the newest enabled button of the bar named ``label``."""
    button = eventually(
        lambda: [b for b in bar_buttons(page) if b["label"] == label and b["enabled"]][-1:], 10, f"'{label}' enabled"
    )[0]
    page.mouse.click(button["x"], button["y"])


def bar_html(page: Any) -> str:
    """Everything inside the bar's closed shadow root, as the DevTools protocol sees it (pierced): what the page's
    DOM holds of the bridge."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = [cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]]
        while nodes:
            node = nodes.pop()
            if node.get("nodeName") == "WEBMCP-NB-BRIDGE":
                children = node["shadowRoots"][0].get("children", [])
                return "".join(cdp.send("DOM.getOuterHTML", {"nodeId": c["nodeId"]})["outerHTML"] for c in children)
            nodes += [*node.get("children", []), *node.get("shadowRoots", [])]
        return ""
    finally:
        cdp.detach()


def bar_text(page: Any) -> str:
    """The bar's text as the user reads it (its markup and style left out)."""
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", bar_html(page), flags=re.S))


def user_messages(model: ScriptedServer, index: int = -1) -> list[str]:
    return [m["content"] for m in model.requests[index]["messages"] if m["role"] == "user"]


def kinds(browser: wm.Browser, since: int, *wanted: str) -> list[Any]:
    return [e for e in browser.events.since(since) if e.kind in wanted and e.data.get("origin") == "bridge"]


# ----- the end to end cases of the issue -----


def test_a_two_call_task_end_to_end(chat: Chat, clock: Any, memory: Any, tmp_path: Path) -> None:
    script = [
        say(f"First the time.\n{tool_call('time_get_current_time', timezone='Asia/Tokyo')}"),
        say(
            tool_call(
                "memory_create_entities",
                entities=[{"name": "Tokyo", "entityType": "city", "observations": ["visited"]}],
            )
        ),
        say("Noted: it is morning in Tokyo, and Tokyo is in your memory."),
    ]
    with ScriptedServer(script) as model:
        tab, page = chat.open(model)
        session = wm.Session(chat.browser, directory=tmp_path / "run", evidence="off")
        panel = wm.panel(tab)
        side = chat.side_panel(tab)
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[clock, memory], site="demo-chat", session=session) as bridge:
            assert {"time_get_current_time", "memory_create_entities"} <= set(bridge.tools)
            bridge.send("What time is it in Tokyo? Then remember Tokyo.")
            # Every call asks, the read-only one too: in the side panel, where the page cannot draw or click…
            eventually(lambda: WAITING in bar_text(page), 60, "the bar to say the call waits")
            assert [b["label"] for b in bar_buttons(page)] == ["on"]  # …the bar says it waits, and cannot answer
            answer_in_side_panel(side, "time.get_current_time")
            send_results(page)  # the result waits in the chat's input for the user's Send
            # …or in the notebook panel (a widget's click, as the user's).
            card = eventually(lambda: [c for c in panel.cards.values() if not c.approve.disabled], 60, "the card")[-1]
            assert "memory.create_entities" in card.text.value and "MCP server memory" in card.text.value
            card.approve.click()
            send_results(page)
            answer = bridge.wait_answer(timeout=60)
            calls = [(c.tool, c.status) for c in bridge.calls]
        session.close()
        requests = list(model.requests)
    assert answer == "Noted: it is morning in Tokyo, and Tokyo is in your memory."
    assert calls == [("time_get_current_time", "ok"), ("memory_create_entities", "ok")]
    first = requests[0]["messages"][0]["content"]
    assert (
        first.startswith("What time is it in Tokyo?") and "<tool_call>" in first and "time_get_current_time:" in first
    )
    results = [user_messages(model, i)[-1] for i in (1, 2)]
    assert results[0].startswith('<tool_result tool="time_get_current_time" status="ok" untrusted="true">')
    assert '"timezone": "Asia/Tokyo"' in results[0]
    assert results[1].startswith('<tool_result tool="memory_create_entities" status="ok" untrusted="true">')
    assert [e["name"] for e in memory.call("read_graph").value["entities"]] == ["Tokyo"]

    called = kinds(chat.browser, mark, "tool.called")
    assert [(e.data["tool"], e.data["server"], e.tab_id) for e in called] == [
        ("time.get_current_time", "time", tab.id),
        ("memory.create_entities", "memory", tab.id),
    ]
    answered = kinds(chat.browser, mark, "confirmation.answered")
    assert [(e.data["tool"], e.data["approved"], e.data["by"]) for e in answered] == [
        ("time.get_current_time", True, "sidepanel"),
        ("memory.create_entities", True, "notebook panel"),
    ]
    sent = kinds(chat.browser, mark, "bridge.sent")
    assert [e.data["by"] for e in sent] == ["user", "bridge", "bridge"]  # the user's Send of results is no new turn
    assert any("time.get_current_time" in line for line in panel.operations.recent(30))  # the notebook panel
    side.locator('#log li[data-kind="tool.returned"]', has_text="time.get_current_time").wait_for(timeout=20_000)
    side.close()
    panel.close()

    loaded = wm.Session.load(tmp_path / "run")  # recorded, and replayable on servers of the same names
    assert [e.data["tool"] for e in loaded.filter("tool.called")] == ["time.get_current_time", "memory.create_entities"]
    with wm.mcp.connect(
        str(node_tool("mcp-server-memory")), env={"MEMORY_FILE_PATH": str(tmp_path / "again.jsonl")}, name="memory"
    ) as fresh:
        report = wm.replay_calls(loaded, tab, servers=[clock, fresh], ignore=("datetime",), progress=False)
    assert report.ok and report.steps == 2, str(report)
    tab.close()


def stop_the_worker_with_nothing_else_to_wake_it(chat: Chat, page: Any) -> None:
    """Chrome stops the extension's worker in a browser that shows only the chat, a page that never talks to the
    worker, and with its 30 s alarm (a safety net) cleared: only the bridge's own page side can wake it."""
    for other in chat.context.pages:
        if other is not page:
            other.close()
    assert in_service_worker(chat.browser, "chrome.alarms.clearAll()") is True
    stop_service_worker(chat.browser)


GOES = {
    "reload": (lambda chat, page: page.reload(), "the page went away (navigated)"),
    "worker restart": (stop_the_worker_with_nothing_else_to_wake_it, "the extension restarted"),
}


@pytest.mark.parametrize("how", GOES)
def test_the_bridge_starts_again_when_its_page_side_goes(chat: Chat, clock: Any, how: str) -> None:
    """The page side goes with its page when the user reloads it, and loses its pipe (its bar too) when Chrome
    stops the extension's worker, as it may whenever it likes: the bridge starts it again on the page as it is."""
    go, why = GOES[how]
    now = tool_call("time_get_current_time", timezone="UTC")
    script = [say(now), say("It is noon."), say(now), say("Still noon.")]
    with ScriptedServer(script) as model:
        tab, page = chat.open(model)
        trusting = {
            "auto_run": "read-only",
            "auto_send": True,
        }  # the user's opt-ins: nothing to answer, nothing to send
        with wm.chat_bridge(tab, servers=[clock], site="demo-chat", session=False, **trusting) as bridge:
            bridge.send("What time is it?")
            assert bridge.wait_answer(timeout=60) == "It is noon."
            mark = chat.browser.events.last_seq
            go(chat, page)

            def states() -> list[dict[str, Any]]:
                return [e.data for e in chat.browser.events.since(mark + 1) if e.kind == "bridge.state"]

            eventually(lambda: states() and states()[-1].get("running") is True, 30, "the bridge started again")
            assert [s["why"] for s in states() if s.get("running") is False] == [why]
            eventually(lambda: [b for b in bar_buttons(page) if b["enabled"]], 10, "the bar in the page again")
            bridge.send("And now?")
            assert bridge.wait_answer(timeout=60) == "Still noon."
            assert [(c.tool, c.status) for c in bridge.calls] == [("time_get_current_time", "ok")] * 2


def test_the_bridge_does_not_follow_its_chat_tab_to_another_site(chat: Chat, clock: Any) -> None:
    """The chat tab goes to another site (a link, a redirect, the page itself): the page side is not started there
    (that page would get the tools and could write the calls the bridge runs); back on the chat site, it starts."""
    now = tool_call("time_get_current_time", timezone="UTC")
    with ScriptedServer([say(now), say("It is noon.")]) as model:
        tab, page = chat.open(model)
        home = page.url
        with wm.chat_bridge(
            tab, servers=[clock], site="demo-chat", auto_run="read-only", auto_send=True, session=False
        ) as bridge:
            mark = chat.browser.events.last_seq

            def seen(kind: str) -> list[dict[str, Any]]:
                return [e.data for e in chat.browser.events.since(mark + 1) if e.kind == kind]

            page.goto(home.replace("127.0.0.1", "localhost"))  # the same chat page, on another site
            eventually(lambda: seen("bridge.problem"), 30, "the bridge to give up on the other site")
            assert "not the chat site http://127.0.0.1:" in seen("bridge.problem")[0]["text"], seen("bridge.problem")
            assert not bar_buttons(page) and not bridge.running
            assert [s for s in seen("bridge.state") if s.get("running")] == []
            # The page side's own check, for a tab that moves on between the library's look and the injection:
            opening = {"tabId": tab.id, "bridgeId": "raced", "config": bridge._config(), "origin": bridge._origin}
            elsewhere = r"shows http://localhost:\d+ now, not the chat site"
            with pytest.raises(wm.PermissionDeniedError, match=elsewhere) as raced:
                _loop.run(chat.browser._request(Method.BRIDGE_OPEN, opening, 20))
            assert raced.value.data == {"elsewhere": origin_of(page.url)}  # the bridge knows it left, however late
            assert not bar_buttons(page)
            page.goto(home)
            eventually(lambda: [s for s in seen("bridge.state") if s.get("running")], 30, "the bridge back home")
            eventually(lambda: [b for b in bar_buttons(page) if b["enabled"]], 10, "the bar in the page again")
            bridge.send("What time is it?")
            assert bridge.wait_answer(timeout=60) == "It is noon."
    tab.close()


def test_markup_streamed_across_many_dom_updates_runs_once(chat: Chat, clock: Any) -> None:
    reply = (
        "Let me look that up for you; the tool needs the zone name, so I will write the call in a code block "
        "the way you asked:\n```\n"
        f"{tool_call('time_get_current_time', timezone='Europe/Paris')}\n```\nI will read the result next."
    )
    with ScriptedServer([say(reply), say("It is evening in Paris.")]) as model:
        tab, page = chat.open(model)
        mark = chat.browser.events.last_seq
        with (
            wm.chat_bridge(tab, servers=[clock], site="demo-chat", auto_send=True, session=False) as bridge,
            approving(bridge),
        ):
            bridge.send("Time in Paris?")
            assert answered(bridge) == "It is evening in Paris."
            shown = page.locator("#messages > .message.assistant > .content pre code").first.text_content()
        assert shown.startswith("<tool_call>")  # the markup was a code block, its tags escaped by the site
        assert len(reply) // 3 > 60  # (the page draws three characters at a time: over 60 updates of this reply)
        called = kinds(chat.browser, mark, "tool.called")
        assert [e.data["arguments"] for e in called] == [{"timezone": "Europe/Paris"}]  # once, whole
        assert len(model.requests) == 2
    tab.close()


def test_a_call_denied_in_the_side_panel_is_not_run(chat: Chat, memory: Any) -> None:
    entities = [{"name": "Secret", "entityType": "note", "observations": ["do not keep"]}]
    with ScriptedServer([say(tool_call("memory_create_entities", entities=entities)), say("Understood.")]) as model:
        tab, page = chat.open(model)
        side = chat.side_panel(tab)
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[memory], site="demo-chat", auto_send=True, session=False) as bridge:
            bridge.send("Remember my secret.")
            eventually(lambda: bridge.pending, 30, "the call to wait")
            reach = "() => { const b = document.querySelector('webmcp-nb-bridge'); b.click(); return b.shadowRoot; }"
            assert page.evaluate(reach) is None and bridge.pending  # the page can neither read nor press the bar
            with pytest.raises(wm.ConfirmationRequiredError, match=f"memory_create_entities .*{WAITING}"):
                bridge.wait_answer(timeout=60)  # a cell never waits for a click: it says what waits, and where
            answer_in_side_panel(side, "memory.create_entities", approved=False)
            assert bridge.wait_answer(timeout=60) == "Understood."
            assert [(c.tool, c.status) for c in bridge.calls] == [("memory_create_entities", "denied")]
        sent_back = user_messages(model)[-1]
    assert sent_back == f'<tool_result tool="memory_create_entities" status="error">\n{DENIED}\n</tool_result>'
    assert memory.call("read_graph").value["entities"] == []
    assert not kinds(chat.browser, mark, "tool.called")
    assert [e.data["tool"] for e in kinds(chat.browser, mark, "tool.denied")] == ["memory.create_entities"]
    side.close()
    tab.close()


def test_markup_outside_the_assistants_messages_is_never_run(chat: Chat, memory: Any) -> None:
    own = tool_call("memory_create_entities", entities=[{"name": "Mine", "entityType": "user", "observations": []}])
    with ScriptedServer([say("There is nothing to call for that.")]) as model:
        tab, page = chat.open(model, "t/chat-fake-bubble.html")
        assert page.locator("#promoted .message.assistant").count() >= 1  # the page's fake bubble, with a call
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[memory], site="demo-chat", session=False) as bridge:
            bridge.send(f"Here is some markup of my own: {own}")
            assert bridge.wait_answer(timeout=60) == "There is nothing to call for that."
            assert bridge.calls == []
        assert page.locator("#promoted .message.assistant").count() >= 2  # another one while the reply streamed
        assert own in user_messages(model)[0]  # the user's markup reached the chat, as their words
    assert not kinds(chat.browser, mark, "tool.called", "tool.refused", "confirmation.requested")
    assert memory.call("read_graph").value["entities"] == []
    tab.close()


def test_a_slow_mcp_tool_times_out(chat: Chat, unruly: Any) -> None:
    with ScriptedServer([say(tool_call("unruly_slow", seconds=5)), say("The tool was too slow.")]) as model:
        tab, _ = chat.open(model)
        opted = {"auto_run": {"unruly": "read-only"}, "auto_send": True}  # the user trusts this chat with this server
        with wm.chat_bridge(tab, servers=[unruly], site="demo-chat", tool_timeout=1, session=False, **opted) as bridge:
            bridge.send("Wait a minute.")
            assert bridge.wait_answer(timeout=60) == "The tool was too slow."
            assert [(c.tool, c.status) for c in bridge.calls] == [("unruly_slow", "error")]
        sent_back = user_messages(model)[-1]
    assert sent_back.startswith('<tool_result tool="unruly_slow" status="error" untrusted="true">\nTIMEOUT: ')
    assert "did not answer a call of slow within 1 s" in sent_back
    tab.close()


def test_a_finished_reply_the_page_redraws_is_not_run_again(chat: Chat, clock: Any) -> None:
    script = [say(tool_call("time_get_current_time", timezone="UTC")), say("Done."), say("Still done.")]
    with ScriptedServer(script) as model:
        tab, page = chat.open(model)
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(
            tab, servers=[clock], site="demo-chat", auto_run="read-only", auto_send=True, session=False
        ) as bridge:
            bridge.send("Time?")
            assert bridge.wait_answer(timeout=60) == "Done."
            for _ in range(3):
                page.click("#rerender")  # every message drawn again: new elements, the same texts
            bridge.send("Anything else?")  # the page is read after the redraws before this answer comes
            assert bridge.wait_answer(timeout=60) == "Still done."
        assert len(kinds(chat.browser, mark, "tool.called")) == 1
        assert len(model.requests) == 3
    tab.close()


def test_a_tool_not_bridged_is_refused_with_a_note_and_results_are_cut(chat: Chat, unruly: Any) -> None:
    script = [
        say(tool_call("delete_everything", really=True)),
        say(tool_call("unruly_blob", size=50_000)),
        say("I could not delete anything, and the blob was long."),
    ]
    with ScriptedServer(script) as model:
        tab, _ = chat.open(model)
        mark = chat.browser.events.last_seq
        with (
            wm.chat_bridge(
                tab, servers=[unruly], site="demo-chat", max_result_chars=1_000, auto_send=True, session=False
            ) as b,
            approving(b),
        ):
            b.send("Delete everything, then fetch a blob.")
            assert answered(b).startswith("I could not delete anything")
            assert [(c.tool, c.status) for c in b.calls] == [("delete_everything", "refused"), ("unruly_blob", "ok")]
        refused, cut = user_messages(model, 1)[-1], user_messages(model, 2)[-1]
    assert refused.startswith('<tool_result tool="delete_everything" status="error">\nThere is no tool named')
    assert "unruly_blob" in refused and "unruly_slow" in refused  # what it may call instead
    assert "… [49000 more characters cut]" in cut and len(cut) < 1_200
    assert [e.data["tool"] for e in kinds(chat.browser, mark, "tool.refused")] == ["delete_everything"]
    tab.close()


def test_a_call_written_without_its_tags_is_offered_in_the_panels(chat: Chat, clock: Any) -> None:
    bare = json.dumps({"name": "time_get_current_time", "arguments": {"timezone": "Asia/Kolkata"}})
    script = [
        say(f"I would call this:\n```json\n{bare}\n```"),
        say("It is afternoon in Kolkata."),
        say(f"Again:\n```json\n{bare}\n```"),
    ]
    with ScriptedServer(script) as model:
        tab, _ = chat.open(model)
        side = chat.side_panel(tab)
        mark = chat.browser.events.last_seq
        # The last fallback: the user runs it from the panels (even read-only, unasked calls opted in: it asks).
        with wm.chat_bridge(
            tab, servers=[clock], site="demo-chat", auto_run="read-only", auto_send=True, session=False
        ) as bridge:
            bridge.send("Time in Kolkata?")
            answer_in_side_panel(side, "time.get_current_time")
            assert bridge.wait_answer(timeout=60) == "It is afternoon in Kolkata."
            bridge.send("And again?")
            answer_in_side_panel(side, "time.get_current_time", approved=False)  # not a call: the reply is the answer
            assert bridge.wait_answer(timeout=60).startswith("Again:")
        offered = kinds(chat.browser, mark, "bridge.offered")
        assert [e.data["tool"] for e in offered] == ["time_get_current_time"] * 2
        assert '"timezone": "Asia/Kolkata"' in user_messages(model, 1)[-1]
        assert len(model.requests) == 3
    side.close()
    tab.close()


def test_the_user_types_and_sends_and_results_wait_for_them_when_auto_send_is_off(chat: Chat, clock: Any) -> None:
    with ScriptedServer([say(tool_call("time_get_current_time", timezone="UTC")), say("It is noon in UTC.")]) as model:
        tab, page = chat.open(model)
        with (
            wm.chat_bridge(tab, servers=[clock], site="demo-chat", auto_send=False, session=False) as bridge,
            approving(bridge),
        ):
            page.click("#composer .editor")
            page.keyboard.type("What time is it?")
            page.keyboard.press("Enter")  # the user's own Enter: the instructions join the message, then it goes
            editor = page.locator("#composer .editor")
            eventually(lambda: editor.inner_text().startswith('<tool_result tool="time_get_current_time"'), 60)
            assert len(model.requests) == 1  # the result waits in the input for the user
            eventually(lambda: "press Send" in bar_text(page), 10, "the bar to say to press Send")
            page.click("#composer .editor")
            page.keyboard.press("Enter")
            assert answered(bridge) == "It is noon in UTC."
        first, second = user_messages(model)
    assert first.startswith("What time is it?\n\n---\n[webmcp-nb: this chat can use tools")
    assert second.startswith('<tool_result tool="time_get_current_time" status="ok" untrusted="true">')
    assert "[webmcp-nb" not in second  # told once per conversation
    tab.close()


def test_calls_past_the_limit_are_refused_with_the_agents_words(chat: Chat, clock: Any) -> None:
    script = [say(tool_call("time_get_current_time", timezone=zone)) for zone in ("UTC", "Asia/Tokyo")]
    with ScriptedServer([*script, say("Enough.")]) as model:
        tab, _ = chat.open(model)
        with wm.chat_bridge(
            tab,
            servers=[clock],
            site="demo-chat",
            max_tool_calls=1,
            auto_run="read-only",
            auto_send=True,
            session=False,
        ) as bridge:
            bridge.send("Two times, please.")
            assert bridge.wait_answer(timeout=60) == "Enough."
            assert [c.status for c in bridge.calls] == ["ok", "refused"]
        refused = user_messages(model)[-1]
    assert refused == (
        '<tool_result tool="time_get_current_time" status="error">\n'
        f"{TEXTS['call_limit'].format(limit=1)}\n</tool_result>"
    )
    tab.close()


def test_check_says_which_selector_fails_on_the_live_page(chat: Chat, clock: Any) -> None:
    with ScriptedServer([say("Hello.")]) as model:
        tab, _ = chat.open(model)
        wrong = {**load_site("demo-chat").as_dict(), "name": "wrong", "send": "#composer button.submit-now"}
        with (
            pytest.warns(wm.ChatSiteWarning, match="send: nothing on the page matches #composer button.submit-now"),
            wm.chat_bridge(tab, servers=[clock], site=wrong, session=False) as bridge,
        ):
            check = bridge.check()
        assert not check.ok and list(check.failures) == ["send"]
        with wm.chat_bridge(tab, servers=[clock], site="generic", session=False) as bridge:
            check = bridge.check()  # the generic adapter finds the demo chat by its candidates
        assert check.ok and check.found["input"]["selector"] == "[contenteditable='true'][role='textbox']"
        assert "every selector works" in repr(check)
    tab.close()


# ----- a chat page that attacks the bridge (tests/pages/chat-hostile.js) -----


def test_text_the_user_cannot_see_in_a_reply_is_never_read_as_a_call(chat: Chat, clock: Any) -> None:
    """The chat page's own script writes a call into every assistant reply in each way text can be hidden (no font,
    no colour or the background's — a gradient's, in oklch() —, display:none, visibility:hidden, opacity, off the
    page, clipped or cut to a sliver, in a scrolling box too low for a line, no size, scaled or zoomed to nothing,
    squeezed flat, blended, masked, blurred, slotted into a shadow tree that hides it, SVG text in the bubble's
    colour): none is read, though the user says yes to every call that asks."""
    script = [say(f"Let me look.\n{tool_call('time_get_current_time', timezone='UTC')}"), say("It is noon in UTC.")]
    with ScriptedServer(script) as model:
        tab, page = chat.open(model, "t/chat-hostile.html", "&attack=hidden")
        hidden = page.evaluate("Object.values(window.HIDDEN)")
        with (
            wm.chat_bridge(tab, servers=[clock], site="demo-chat", auto_send=True, session=False) as bridge,
            approving(bridge),
        ):
            bridge.send("What time is it?")
            answer = None
            with contextlib.suppress(TimeoutError):  # a hidden call read keeps the chat calling: said below
                answer = answered(bridge)
            calls = [c.arguments for c in bridge.calls]
        written = page.locator("#messages > .message.assistant").last.locator("[data-attack]")
        assert written.count() == len(hidden) == 23  # the page did write them all into the reply
    assert calls == [{"timezone": "UTC"}], [c["timezone"] for c in calls if c["timezone"] in hidden]
    assert answer == "It is noon in UTC."  # the reply as the user sees it
    tab.close()


def test_every_call_asks_by_default_even_one_the_page_wrote_in_plain_view(chat: Chat, clock: Any) -> None:
    """A call the page itself writes into the reply, visible, of a read-only tool: by default it runs only if the
    user says so in a panel (here the user refuses, in the side panel), and what goes back waits for their Send."""
    with ScriptedServer([say("Hello!"), say("Understood.")]) as model:
        tab, page = chat.open(model, "t/chat-hostile.html", "&attack=visible")
        side = chat.side_panel(tab)
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[clock], site="demo-chat", session=False) as bridge:
            bridge.send("Hi.")
            answer_in_side_panel(side, "time.get_current_time", approved=False)
            send_results(page)
            assert bridge.wait_answer(timeout=60).startswith("Understood.")
            assert [(c.arguments, c.status) for c in bridge.calls] == [({"timezone": "Antarctica/Troll"}, "denied")]
        assert not kinds(chat.browser, mark, "tool.called")
        assert (
            user_messages(model)[-1]
            == f'<tool_result tool="time_get_current_time" status="error">\n{DENIED}\n</tool_result>'
        )
    side.close()
    tab.close()


def test_read_only_calls_run_unasked_only_from_the_sources_the_user_opted_in(
    chat: Chat, clock: Any, memory: Any
) -> None:
    """``auto_run={"time": "read-only"}``: the time server's read-only calls run unasked (the page could write
    them too: the opt-in says the user trusts this chat with them); the memory server's calls still ask."""
    entities = [{"name": "Kyoto", "entityType": "city", "observations": []}]
    script = [
        say(tool_call("time_get_current_time", timezone="Asia/Tokyo")),
        say(tool_call("memory_create_entities", entities=entities)),
        say("Done."),
    ]
    with ScriptedServer(script) as model:
        tab, _ = chat.open(model)
        mark = chat.browser.events.last_seq
        opted = {"auto_run": {"time": "read-only"}, "auto_send": True}
        with wm.chat_bridge(tab, servers=[clock, memory], site="demo-chat", session=False, **opted) as bridge:
            bridge.send("Time in Tokyo, then remember Kyoto.")
            eventually(lambda: bridge.pending, 60, "the memory call to wait")
            bridge.answer(bridge.pending[0], True)  # from a cell
            assert bridge.wait_answer(timeout=60) == "Done."
        asked = [e.data["tool"] for e in kinds(chat.browser, mark, "confirmation.requested")]
        assert asked == ["memory.create_entities"]
        for wrong, why in [("always", "auto_run must be one of never, read-only"), ({"tme": "read-only"}, "'tme'")]:
            with pytest.raises(wm.ConfigurationError, match=why):
                wm.chat_bridge(tab, servers=[clock], site="demo-chat", auto_run=wrong, session=False)
    tab.close()


def test_a_decoy_over_the_bar_wins_no_click_and_the_page_cannot_restyle_it(chat: Chat, memory: Any) -> None:
    """The page restyles the bar's host (opacity 0, hidden, filtered, scaled, clipped, clicks off: inline, in a
    sheet, in a layer, all ``!important``, again and again) and draws a decoy over it in the top layer that lets
    clicks through. The host's style holds; the bar offers nothing to answer a waiting call with; the user's real
    click on the switch through the decoy does not count — once the decoy is gone, it does."""
    entities = [{"name": "Decoy", "entityType": "note", "observations": []}]
    with ScriptedServer([say(tool_call("memory_create_entities", entities=entities)), say("Understood.")]) as model:
        tab, page = chat.open(model, "t/chat-hostile.html", "&attack=clickjack")
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[memory], site="demo-chat", auto_send=True, session=False) as bridge:
            switch = eventually(lambda: [b for b in bar_buttons(page) if b["label"] == "on"], 10, "the switch")[0]
            pinned = ["opacity", "visibility", "filter", "transform", "clipPath", "pointerEvents"]
            held = f"(h) => {json.dumps(pinned)}.map((k) => getComputedStyle(h)[k])"
            assert page.locator("webmcp-nb-bridge").evaluate(held) == ["1", "visible", "none", "none", "none", "auto"]
            bridge.send("Remember this.")
            eventually(lambda: WAITING in bar_text(page), 60, "the bar to say the call waits")
            assert [b["label"] for b in bar_buttons(page)] == ["on"]  # nothing in the page answers it
            page.mouse.click(switch["x"], switch["y"])  # the user's real click, through the decoy, on the switch
            problems = eventually(lambda: kinds(chat.browser, mark, "bridge.problem"), 10, "the click refused")
            assert "did not count" in problems[0].data["text"] and bridge.enabled and bridge.pending
            assert "did not count" in bar_text(page)
            bridge.answer(bridge.pending[0], False)
            assert bridge.wait_answer(timeout=60) == "Understood."
            page.evaluate("clickjack(false)")  # the decoy goes: the bar is seen, and then the click counts

            def switched() -> bool:
                if [b["label"] for b in bar_buttons(page)] == ["on"]:
                    page.mouse.click(switch["x"], switch["y"])
                return [b["label"] for b in bar_buttons(page)] == ["off"]

            eventually(switched, 20, "a click on the uncovered switch to count")
            eventually(lambda: not bridge.enabled, 10, "the bridge switched off")
        states = [e.data for e in kinds(chat.browser, mark, "bridge.state")]
        assert states == [{"enabled": False, "by": "chat page", "origin": "bridge"}]
        assert memory.call("read_graph").value["entities"] == []
    tab.close()


def test_a_flood_of_openings_in_the_reply_hides_no_call(chat: Chat, clock: Any) -> None:
    """The page writes 30,000 characters of ``<tool_call>`` openings before the reply's own text, every time the
    page draws it: the reply's call is still read (a block is the last opening before its closing tag), once,
    and the turn ends. (The parser's linearity is measured by ``test_a_flood_of_openings_is_read_in_one_pass``.)"""
    script = [say(f"Sure.\n{tool_call('time_get_current_time', timezone='Asia/Dubai')}"), say("It is evening.")]
    with ScriptedServer(script) as model:
        tab, _ = chat.open(model, "t/chat-hostile.html", "&attack=flood&size=30000")
        with (
            wm.chat_bridge(tab, servers=[clock], site="demo-chat", auto_send=True, session=False) as bridge,
            approving(bridge) as approved,
        ):
            bridge.send("What time is it in Dubai?")
            answer = answered(bridge)
            calls = [(c.tool, c.arguments, c.status) for c in bridge.calls]
    assert calls == [("time_get_current_time", {"timezone": "Asia/Dubai"}, "ok")] and len(approved) == 1
    assert answer.startswith("<tool_call>" * 100) and answer.endswith("It is evening.")
    tab.close()


def test_the_page_is_told_origins_never_urls_nor_a_waiting_calls_arguments(chat: Chat, memory: Any) -> None:
    """What the bar puts in the chat page's DOM (a closed shadow root the page can still search, e.g. with
    ``window.find``): the bridged tools by origin, not the address of the tab that offers them (which can hold a
    token), and a waiting call's name, not its arguments."""
    secret = "s3cr3t-4f9a"
    source = chat.context.new_page()
    address = chat.server.url(f"flights/?inbox=1&token={secret}")
    source.goto(address)
    flights = eventually(lambda: next((t for t in chat.browser.tabs if t.url == address), None), 10, "the tab")
    eventually(lambda: "searchFlights" in flights.tools, 10, "the flights page's tools")
    entities = [{"name": "Argument-7f3e", "entityType": "note", "observations": []}]
    with ScriptedServer([say(tool_call("memory_create_entities", entities=entities)), say("Understood.")]) as model:
        tab, page = chat.open(model)
        with wm.chat_bridge(tab, servers=[flights, memory], site="demo-chat", auto_send=True, session=False) as b:
            listed = eventually(lambda: "searchFlights" in bar_html(page) and bar_html(page), 10, "the tools listed")
            assert f"page tool of {origin_of(address)}" in listed and "MCP server memory" in listed
            for kept in (secret, "inbox=1", "/flights/"):
                assert kept not in listed, kept
            assert page.evaluate(f"() => window.find({secret!r})") is False
            b.send("Remember it.")
            eventually(lambda: WAITING in bar_text(page), 60, "the bar to say the call waits")
            assert "Argument-7f3e" not in bar_html(page)  # the waiting call's name, never its arguments
            b.answer(b.pending[0], False)
            assert b.wait_answer(timeout=60) == "Understood."
    source.close()
    tab.close()


def test_a_wrong_assistant_selector_is_said_in_the_bar_both_panels_check_and_the_timeout(
    chat: Chat, clock: Any
) -> None:
    """The adapter's ``assistant`` matches nothing in the chat's replies: once a message is sent and the page has
    changed for a few seconds with nothing new matching it, the bar, the side panel and the notebook panel say so,
    ``check()`` names ``assistant`` as failing, and ``wait_answer()``'s timeout names the selector."""
    wrong = {**load_site("demo-chat").as_dict(), "name": "wrong", "assistant": "#messages > .message.bot > .content"}
    with ScriptedServer([say("Hello there.")]) as model:
        tab, page = chat.open(model)
        panel = wm.panel(tab)
        side = chat.side_panel(tab)
        mark = chat.browser.events.last_seq
        with wm.chat_bridge(tab, servers=[clock], site=wrong, session=False) as bridge:
            assert bridge.check().ok  # before any message: nothing is expected yet
            bridge.send("Hello?")
            page.locator("#messages > .message.assistant", has_text="Hello there.").wait_for(timeout=30_000)
            problem = eventually(lambda: kinds(chat.browser, mark, "bridge.problem"), 30, "the problem said")[0]
            assert "assistant selector (#messages > .message.bot > .content)" in problem.data["text"]
            eventually(lambda: "cannot read the reply" in bar_text(page), 10, "the bar to say so")
            expect(side.locator('#log li[data-kind="bridge.problem"]')).to_contain_text("assistant selector")
            assert any("cannot read the reply" in line for line in panel.operations.recent(30))
            check = bridge.check()
            assert list(check.failures) == ["assistant"] and ".message.bot" in check.failures["assistant"]
            assert "FAILS on assistant" in repr(check)
            with pytest.raises(TimeoutError, match=re.escape("assistant selector (#messages > .message.bot")):
                bridge.wait_answer(timeout=1)
    panel.close()
    side.close()
    tab.close()


# ----- no browser: the parser, the adapters -----


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ok <tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>', [{"name": "a", "arguments": {"x": 1}}]),
        ('<tool_call>{"name": "a", "arguments": {"x": 1}', []),  # still streaming: not a call yet
        (
            "&lt;tool_call&gt;{&quot;name&quot;: &quot;a&quot;, &quot;arguments&quot;: {}}&lt;/tool_call&gt;",
            [{"name": "a", "arguments": {}}],
        ),
        ('\\<tool_call\\>{"name": "b", "arguments": {}}\\</tool_call\\>', [{"name": "b", "arguments": {}}]),
        ('<tool_call>\n```json\n{"name": "c", "arguments": {}}\n```\n</tool_call>', [{"name": "c", "arguments": {}}]),
        ('<tool_call>{"name": "d", "arguments": "{\\"y\\": 2}"}</tool_call>', [{"name": "d", "arguments": '{"y": 2}'}]),
    ],
)
def test_the_agents_parser_reads_calls_as_chat_sites_show_them(text: str, expected: list[Any]) -> None:
    assert parse_tool_calls(text) == expected


def test_a_block_that_is_not_a_call_is_an_error_for_the_chat() -> None:
    (bad,) = parse_tool_calls('<tool_call>{"name": "n", "arguments": NaN}</tool_call>')
    assert bad["error"].startswith('The tool call was not a JSON object with a "name" and "arguments"')
    assert len(parse_tool_calls("<tool_call>{}</tool_call>" * 40)) == 16  # at most this many per reply


def test_a_call_nested_deeper_than_the_json_decoder_goes_is_an_error_not_a_crash() -> None:
    """A page (or a model) writes a call, or arguments, nested 100,000 deep: a bad call for the chat, arguments
    that are not an object for the agent — not a ``RecursionError`` out of the parser, which stopped the reply."""
    from webmcp_nb.agent.model_io import parse_arguments

    deep = "[" * 100_000
    (bad,) = parse_tool_calls(f'<tool_call>{{"name": "n", "arguments": {deep}</tool_call>')
    assert bad["error"].startswith('The tool call was not a JSON object with a "name" and "arguments"')
    assert parse_arguments(deep) == deep


OPENINGS = ["<tool_call>", "&lt;tool_call&gt;", "\\<tool_call\\>"]
CLOSINGS = ["</tool_call>", "&lt;/tool_call&gt;", "\\</tool_call\\>"]


def reference_parse(text: str) -> list[dict[str, Any]]:
    """What ``parse_tool_calls`` must find, written plainly (and slowly): the closing tags from left to right; each
    one's block starts at the last opening tag after the closing tag before it (none: no block); 16 blocks at most.
    (The parser also stops after 256 closing tags, more than these replies hold.)"""
    found: list[dict[str, Any]] = []
    start = 0
    for close in re.finditer(TOOL_CALL["close"], text):
        openings = [m for m in re.finditer(TOOL_CALL["open"], text[start : close.start()])]
        body_start, escaped = (start + openings[-1].end(), openings[-1].group().startswith("&")) if openings else (0, 0)
        start = close.end()
        if not openings:
            continue
        body = re.sub(TOOL_CALL["fence"], "", text[body_start : close.start()].strip()).strip()
        body = html.unescape(body) if escaped else body
        try:
            call = json.loads(body, parse_constant=float)
        except ValueError:
            call = None
        if isinstance(body, str) and re.search(r"\b(NaN|Infinity)\b", body):
            call = None
        ok = isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]
        found.append({"name": call["name"], "arguments": call.get("arguments", {})} if ok else {"text": body})
    return found[: TOOL_CALL["max_calls"]]


PIECES = st.sampled_from(
    [
        *OPENINGS,
        *CLOSINGS,
        '{"name": "a", "arguments": {"x": 1}}',
        "{&quot;name&quot;: &quot;b&quot;, &quot;arguments&quot;: {}}",
        "```json\n",
        "\n```",
        "tool_call",
        "<",
        ">",
        " ",
        "\n",
        "text",
        "{",
    ]
)


# The session browsers of this worker keep running: websockets draws its keepalive pings' payloads from the global
# `random` module in their threads, which Hypothesis takes for the strategies' own use (as in test_fuzz.py).
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@given(st.lists(PIECES, max_size=40))
@settings(max_examples=400, deadline=None)
def test_the_parser_finds_the_block_of_each_closing_tag_from_the_last_opening_before_it(pieces: list[str]) -> None:
    """Every way a reply can hold tags (escaped, nested, unclosed, stray): the parser finds what the plain
    reference finds. A block is the last opening tag before its closing tag: openings a page adds before a real
    call (or a model's unclosed one) never swallow it."""
    text = "".join(pieces)
    found = [call if "name" in call else {"text": call["text"]} for call in parse_tool_calls(text)]
    assert found == reference_parse(text)


class Counted:
    """A compiled pattern that counts the characters each scan is given (what the parser makes it examine)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.chars = pattern, 0

    def _span(self, text: str, pos: int, endpos: int) -> None:
        self.chars += max(0, min(endpos, len(text)) - pos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        self._span(text, pos, endpos)
        return self.pattern.finditer(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        self._span(text, pos, endpos)
        return self.pattern.match(text, pos, endpos)


@pytest.mark.parametrize(
    ("flood", "after", "expected"),
    [
        (50_000, "", []),  # the old parser took 1.5 s on this (26 s on 200,000 characters), holding the loop
        (200_000, tool_call("time_get_current_time", timezone="UTC"), [("time_get_current_time", {"timezone": "UTC"})]),
        (200_000, "</tool_call>" * 20_000, [("error", "")]),  # one empty block; the other closing tags close nothing
    ],
)
def test_a_flood_of_openings_is_read_in_one_pass(
    monkeypatch: pytest.MonkeyPatch, flood: int, after: str, expected: list[Any]
) -> None:
    """A page (or a model) writes a wall of ``<tool_call>`` openings into the reply, with a real call after it or
    none: the parser examines each character of the reply at most twice (once looking for closing tags, once for
    the opening before one), and a call after the flood is still the call."""
    from webmcp_nb.core import agent_rules

    scans = {name: Counted(pattern) for name, pattern in getattr(agent_rules, "_SCAN", {}).items()}
    monkeypatch.setattr(agent_rules, "_SCAN", scans, raising=False)
    text = "<tool_call>" * (flood // len("<tool_call>")) + after
    found = parse_tool_calls(text)
    assert [(c["name"], c["arguments"]) if "name" in c else ("error", c["text"]) for c in found] == expected
    examined = sum(scan.chars for scan in scans.values())
    assert 0 < examined <= 2 * len(text), f"{examined} characters examined for a reply of {len(text)}"


def test_site_adapters_are_data_and_bad_ones_name_the_field(tmp_path: Path) -> None:
    assert {"generic", "demo-chat", "chatgpt", "deepseek", "kimi"} <= set(site_names())
    for name in site_names():
        site = load_site(name)
        assert isinstance(site, Site) and load_site(site.as_dict()) == site
        assert site.verified == (name == "demo-chat")  # the real sites' were written without reaching them
    with pytest.raises(wm.ConfigurationError, match=r"site\['assistant'\] must be a CSS selector"):
        load_site({**load_site("generic").as_dict(), "assistant": 42})
    with pytest.raises(wm.ConfigurationError, match=r"site\['input_type'\] must be one of"):
        load_site({**load_site("generic").as_dict(), "input_type": "voice"})
    with pytest.raises(wm.ConfigurationError, match="no chat site 'gemini'"):
        load_site("gemini")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({**load_site("chatgpt").as_dict(), "name": "mine"}))
    assert load_site(path).name == "mine" and load_site(str(path)).selectors == load_site("chatgpt").selectors


def test_page_tools_of_another_site_run_only_as_its_grant_allows(server: Any) -> None:
    """In a browser that keeps grants, the bridge offers another tab's tools only when their site may be read, and
    calls one only when the grant (or the user, asked in the notebook panel) allows what it needs."""
    from webmcp_nb.demo.run import DEMO_SEARCH

    flights = server.url("flights/").replace("127.0.0.1", "localhost")  # a site other than the chat's
    site = flights.rsplit("/flights/", 1)[0]
    search = say(tool_call("searchFlights", **DEMO_SEARCH))
    script = [search, search, say("I may not search there."), search, say("Found them.")]
    with wm.launch(grants=True) as browser, ScriptedServer(script) as model:
        tools_tab = browser.open(flights)
        chat_tab = browser.open(server.url(f"chat/?model={model.base_url}"))
        wm.grants.deny(site)
        try:
            bridged = {"site": "demo-chat", "auto_send": True, "session": False}
            with pytest.raises(wm.PermissionDeniedError, match="never"):
                wm.chat_bridge(chat_tab, servers=[tools_tab], **bridged)
            wm.grants.allow(site, "read")  # the chat may see the flights page's tools, not act on them
            panel = wm.panel(chat_tab)
            with wm.chat_bridge(chat_tab, servers=[tools_tab], **bridged) as b, approving(b) as approved:
                b.send("Find me flights.")
                card = eventually(lambda: list(panel.grant_cards.values()), 30, "the ask in the notebook panel")[0]
                assert card.site == site and "searchFlights" in card.text.value
                card.buttons["never"].click()  # the user refuses, for good: the next call is refused without asking
                assert answered(b) == "I may not search there."
                # The next call is refused at its check, or, once the grants reach the bridge, the tool is no
                # longer offered (a site said never shows the chat nothing).
                assert [c.status for c in b.calls] in (["error", "error"], ["error", "refused"])
                assert len(panel.grant_cards) <= 1
                wm.grants.allow(site, "act")  # the user changes their mind: the same call runs
                b.send("Try again.")
                assert answered(b) == "Found them."
                assert len(b.calls) == 3 and b.calls[2].status == "ok"
                assert len(approved) == 1  # the one call the grants let through asked the user too
                wm.grants.revoke(site)  # the chat is no longer offered the site's tools, nor told its address
                eventually(lambda: "searchFlights" not in b.tools, 10, "the revoked site's tools to leave the chat")
                assert flights not in b.instructions()
            panel.close()
            first, second = user_messages(model, 1)[-1], user_messages(model, 2)[-1]
            for refused in (first, second):
                assert refused.startswith('<tool_result tool="searchFlights" status="error">')
            assert "PERMISSION_DENIED" in first and site in first
            assert ("PERMISSION_DENIED" in second and site in second) or "There is no tool named" in second
            called = [e for e in browser.events.of_kind("tool.called") if e.data.get("tool") == "searchFlights"]
            assert len(called) == 1 and called[0].tab_id == tools_tab.id  # the page saw only the allowed call
        finally:
            wm.grants.revoke(site)
