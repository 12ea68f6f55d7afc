"""A frame of a site never granted offers a model nothing, in the user's own Chrome (a relay daemon that keeps the
grants, a Chromium dialing it): site a (127.0.0.1), granted for reading, shows the user's bank (localhost, another
site, never granted) in an iframe, and the bank's frame registers a tool whose description is the bank's own
words. Those words, and the tool's name, reach no model: not the MCP client's ``tools/list``, ``list_page_tools``
or a tab's summary, not the agent's request, not the chat bridge's list. Each listing says how many tools of which
site it held back, and how the user grants it; once the user grants the bank for reading, the tool is offered (the
MCP client is told the list changed). The notebook's own ``tab.tools`` is the user's and shows it all along."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from cdp import configure_chat, playwright_context
from eventually import eventually
from mcp_peers import Daemon, mcp_session, users_chrome

import webmcp_nb as wm
from webmcp_nb.link.grants import origin_of
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.testing import ScriptedServer, call, say

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser]

PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"
TIMEOUT = 20_000  # ms, for every wait on the side panel

WORDS = "The user's balance, in the bank's own words."
"""The description the bank's frame gives its tool (tests/pages/bank.js)."""
NAME = "readBalanceOfTheUser"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """The user's own Chrome: a relay daemon in a throwaway home (it keeps the grants) and a Chromium dialing it."""
    with users_chrome(tmp_path_factory.mktemp("home")) as running:
        yield running


@pytest.fixture
def notebook(daemon: Daemon) -> Iterator[wm.Browser]:
    browser = wm.connect(daemon.port, timeout=40)
    yield browser
    for site in list(wm.grants.snapshot().grants):
        wm.grants.revoke(site)
    browser.close()


def framed_bank(server: Any, notebook: wm.Browser) -> tuple[wm.Tab, str]:
    """Site a, granted for reading, with the bank (never granted) in its frame, loaded; and the bank's site."""
    bank = f"http://localhost:{server.port}/t/bank.html"
    framed = server.url(f"t/site-a.html?frame={bank}")
    wm.grants.allow(framed, "read")
    tab = notebook.open(framed)
    eventually(lambda: NAME in tab.tools and "readGreeting" in tab.tools, 20, "site a and the bank's frame, loaded")
    assert tab.tools[NAME].description == WORDS and tab.tools[NAME].cross_origin  # the user's own view: all of it
    return tab, str(origin_of(bank))


def granted(notebook: wm.Browser, site: str) -> None:
    """As the user: grant ``site`` for reading, and wait until the relay told the notebook."""
    mark = notebook.events.last_seq
    wm.grants.allow(site, "read")
    changed = lambda: [e for e in notebook.events.since(mark + 1) if e.kind == "grant.changed"]  # noqa: E731
    eventually(lambda: any(e.data.get("site") == site for e in changed()), 20, "the grant, told")


def chromium(daemon: Daemon) -> Any:
    assert daemon.chromium is not None
    return daemon.chromium


def texts(result: types.CallToolResult) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_an_mcp_client_is_not_shown_the_tools_of_a_frame_whose_site_was_never_granted(
    server: Any, daemon: Daemon, notebook: wm.Browser, tmp_path: Path
) -> None:
    tab, bank = framed_bank(server, notebook)
    how = f"`webmcp-nb grants allow {bank} read`"

    async def client(errlog: Any) -> None:
        async with mcp_session("--port", str(daemon.port), errlog=errlog, name="a-model") as (mcp, changes):
            selected = await mcp.call_tool("select_tab", {"tab_id": tab.id})  # site a: read, no ask
            assert not selected.is_error, texts(selected)
            summary = json.loads(texts(selected))
            listed = await mcp.list_tools()
            listing = await mcp.call_tool("list_page_tools", {})
            tabs = json.loads(texts(await mcp.call_tool("list_tabs", {})))["tabs"]
            seen = texts(selected) + listed.model_dump_json() + texts(listing) + json.dumps(tabs)
            assert WORDS not in seen and NAME not in seen, "the bank's words reached the client"
            assert "page_readGreeting" in {t.name for t in listed.tools} and summary["page_tools"]
            said = json.loads(texts(listing))
            assert [t["name"] for t in said["tools"]] == ["readGreeting", "showFrame"]
            for hidden in (said["hidden"], summary["hidden"]):
                assert hidden.startswith(f"Not listed: 1 tool of frames of sites not granted to you ({bank} (1))")
                assert how in hidden
            assert [t["tools"] for t in tabs if t["id"] == tab.id] == [2]

            seen_changes = changes.count
            await anyio.to_thread.run_sync(wm.grants.allow, bank, "read")  # the user lets it read the bank too
            await changes.after(seen_changes)  # the client is told the list changed
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            assert WORDS in str(tools[f"page_{NAME}"].description)
            said = json.loads(texts(await mcp.call_tool("list_page_tools", {})))
            assert WORDS in [t["description"] for t in said["tools"]] and "hidden" not in said

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(client, errlog)


def test_the_agent_and_the_bridge_offer_no_tool_of_a_frame_whose_site_was_never_granted(
    server: Any, notebook: wm.Browser
) -> None:
    tab, bank = framed_bank(server, notebook)
    script = [call(NAME), say("I have no such tool."), say("Now I have it.")]
    with ScriptedServer(script) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", session=False)
        agent.run("what is my balance?")  # a model that guesses the name reaches nothing either
        first = json.dumps(model.requests[0])
        assert WORDS not in first and NAME not in [t["function"]["name"] for t in model.requests[0]["tools"]]
        assert "readGreeting" in first and f"not granted to you ({bank} (1))" in first  # told what it held back
        assert not [e for e in notebook.events.of_kind("tool.called") if e.data.get("tool") == NAME]
        assert f'There is no tool named "{NAME}"' in model.requests[1]["messages"][-1]["content"]

        chat = notebook.open(server.url(f"chat/?model={model.base_url}"))
        with wm.chat_bridge(chat, servers=[tab], site="demo-chat", session=False) as bridge:
            assert NAME not in bridge.tools and WORDS not in bridge.instructions() and "readGreeting" in bridge.tools
            granted(notebook, bank)  # the user lets models read the bank
            eventually(lambda: NAME in bridge.tools, 10, "the bank's tool, offered to the chat")
            assert WORDS in bridge.instructions()
        chat.close()

        agent.run("and now?")
        assert WORDS in json.dumps(model.requests[2]) and "Not listed" not in json.dumps(model.requests[2])


def test_the_side_panels_chat_offers_a_frames_tools_only_as_its_site_allows(
    server: Any, daemon: Daemon, notebook: wm.Browser
) -> None:
    """``cross-frame.html`` (the page: act) embeds a frame of localhost (never granted): the chat is not offered its
    tools; granted read, it is, and calling one that changes something asks the user for act on the frame's site
    (the page's grant does not cover it), who says never: the frame never sees the call."""
    page, frame = server.url("t/cross-frame.html"), f"http://localhost:{server.port}"
    wm.grants.allow(page, "act")
    tab = notebook.open(page)
    tab.wait_for_tool("sendPin", timeout=20)
    words = "Greets from the frame."
    script = [call("frameGreeting"), say("No such tool."), call("frameGreeting"), say("Refused.")]
    with ScriptedServer(script) as model, playwright_context(chromium(daemon).profile_dir) as seen:
        configure_chat(seen, model.base_url)
        panel = seen.new_page()
        panel.goto(f"{PANEL}?tab={tab.id}")
        expect(panel.locator("#relay-state")).to_have_attribute("data-ok", "true", timeout=TIMEOUT)
        answers = panel.locator("#chat-transcript .message.assistant")

        def ask(text: str, answer: str) -> None:
            panel.fill("#chat-input", text)
            panel.click("#chat-send")
            expect(answers.last).to_contain_text(answer, timeout=TIMEOUT)

        ask("Greet me.", "No such tool.")
        first = json.dumps(model.requests[0])
        assert words not in first and "frameGreeting" not in first and "sendPin" not in first
        assert f"Not listed: 2 tools of frames of sites not granted to you ({frame} (2))" in first
        assert "There is no tool named" in model.requests[1]["messages"][-1]["content"]

        wm.grants.allow(frame, "read")  # the user lets models read the frame's site: the chat is offered its tools
        row = panel.locator(f'#grants li[data-site="{frame}"]')
        expect(row).to_have_attribute("data-level", "read", timeout=TIMEOUT)
        panel.fill("#chat-input", "Greet me again.")
        panel.click("#chat-send")
        card = panel.locator("#confirmations .card.grant:not(.resolved)")
        expect(card.locator(".site")).to_have_text(frame, timeout=TIMEOUT)  # act on the frame's site: asked
        card.locator("button.grant-never").click()
        expect(answers.last).to_contain_text("Refused.", timeout=TIMEOUT)
    assert words in json.dumps(model.requests[2]["tools"])
    refused = model.requests[3]["messages"][-1]["content"]
    assert "PERMISSION_DENIED" in refused and frame in refused and "never" in refused, refused
    called = [e for e in notebook.events.of_kind("tool.called") if e.data.get("tool") == "frameGreeting"]
    assert not called  # the frame never saw the call
