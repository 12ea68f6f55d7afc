"""Per-site grants in the user's own Chromium, paired through the relay daemon as a user pairs it (``webmcp-nb
pair``, the extension loaded in their profile, ``wm.connect()``): a hostile MCP client (the SDK's client on
``webmcp-nb mcp``) that tries to list, select, open, navigate to, inject into, call on and close a site it was not
granted, and loses a grant mid-session; an agent and the side panel's chat asking, answered in the side panel (a
real Chromium, Playwright over CDP) and in the notebook panel, first answer winning, revoked in the side panel's
Sites list; an eval refused; a launched browser exempt. Every ask, answer and refusal reaches the notebook's
stream, its session and the side panel's log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from cdp import configure_chat, playwright_context
from conftest import PAGES
from eventually import eventually
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_peers import webmcp_nb_mcp
from test_own_chrome import Home, account  # noqa: F401 - the fixture: this test's account, home and relay port

import webmcp_nb as wm
from webmcp_nb.demo.server import DEMO_PAGES, DemoServer
from webmcp_nb.link.grants import origin_of
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.mcp.sites import NOT_GRANTED
from webmcp_nb.testing import ScriptedServer, call, say

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

pytestmark = [pytest.mark.browser]

TIMEOUT = 20_000  # ms, for every wait on the side panel
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"
MARKER = "inbox-of-the-user"
ASK_TIMEOUT = 2.0  # the hostile client's asks: nobody answers most of them


@pytest.fixture
def bank() -> Iterator[DemoServer]:
    """Another site: the same pages on another port, so another origin (the user's bank, never granted)."""
    with DemoServer({"/": DEMO_PAGES, "/t/": PAGES}) as server:
        yield server


def texts(result: types.CallToolResult) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def denied(result: types.CallToolResult, why: str) -> None:
    assert result.is_error and texts(result).startswith("PERMISSION_DENIED: ") and why in texts(result), texts(result)


def kinds(browser: wm.Browser, who: str) -> list[str]:
    return [e.kind for e in browser.events.events if e.kind.startswith("grant.") and e.data.get("who") == who]


def test_a_hostile_mcp_client_gets_nothing_of_a_site_it_was_not_granted(
    account: Home,  # noqa: F811
    server: Any,
    bank: DemoServer,
    tmp_path: Path,
) -> None:
    mine, theirs = server.url("t/risk.html"), bank.url(f"t/risk.html?private={MARKER}")
    account.pair()
    chromium = account.chromium(theirs)  # the user's own Chromium, on their bank
    try:
        notebook = wm.connect(account.port, timeout=60)
        (bank_tab,) = [t for t in notebook.tabs if t.url == theirs]
        eventually(lambda: "readNote" in bank_tab.tools, 20, "the bank's tools")
        wm.grants.allow(mine, "read")  # the user grants their own site for reading, and nothing else
        mine_tab = notebook.open(mine)
        panel = wm.panel(notebook)

        def answer(count: int, answer: str) -> str:
            """As the user: answer the ``count``-th ask in the notebook panel."""
            card = eventually(lambda: len(panel.grant_cards) >= count and list(panel.grant_cards.values())[count - 1])
            card.buttons[answer].click()
            return card.id

        async def hostile(errlog: Any) -> None:
            params = webmcp_nb_mcp("--port", str(account.port), "--ask-timeout", str(ASK_TIMEOUT))
            info = types.Implementation(name="hostile-desktop", version="6.6.6")
            async with Client(stdio_client(params, errlog), client_info=info, cache=None) as client:
                # list: the bank's tab is there, as a site not granted: its id, no URL, title or tools
                listed = await client.call_tool("list_tabs", {})
                tabs = {t["id"]: t for t in json.loads(texts(listed))["tabs"]}
                assert tabs[bank_tab.id] == {"id": bank_tab.id, "bound_here": False, "site": NOT_GRANTED}
                assert tabs[mine_tab.id]["url"] == mine and tabs[mine_tab.id]["tools"] == 4
                assert MARKER not in texts(listed) and str(bank.port) not in texts(listed)

                # select: asks the user; nobody answers; refused after the ask's time
                denied(await client.call_tool("select_tab", {"tab_id": bank_tab.id}), "nobody answered the ask")
                # open: asks; the user says never in the notebook panel; then refused at once, without asking
                async with anyio.create_task_group() as group:
                    group.start_soon(anyio.to_thread.run_sync, answer, 2, "never")
                    denied(await client.call_tool("open_tab", {"url": theirs}), "the user chose never")
                for tool in ("select_tab", "close_tab"):
                    denied(await client.call_tool(tool, {"tab_id": bank_tab.id}), "chose never")
                assert not [t for t in notebook.tabs if t.url == theirs and t is not bank_tab]  # nothing was opened

                # its own site, granted read: bound, its tools listed, read-only tools called; acting asks
                selected = json.loads(texts(await client.call_tool("select_tab", {"tab_id": mine_tab.id})))
                assert selected["url"] == mine and "page_readNote" in selected["page_tools"]
                assert "page_setNote" in {t.name for t in (await client.list_tools()).tools}
                assert not (await client.call_tool("page_readNote", {})).is_error
                async with anyio.create_task_group() as group:
                    group.start_soon(anyio.to_thread.run_sync, answer, 3, "once")
                    assert not (await client.call_tool("page_setNote", {"text": "once"})).is_error
                denied(await client.call_tool("page_setNote", {"text": "twice"}), "nobody answered")  # once was once
                denied(await client.call_tool("navigate", {"url": theirs}), "chose never")
                # a URL Chrome reads as the bank and a lax parser as this site (a backslash ends Chrome's host)
                sneaky = f"http://127.0.0.1:{bank.port}\\@127.0.0.1:{server.port}/t/risk.html"
                denied(await client.call_tool("navigate", {"url": sneaky}), "not a site that can be granted")
                injected = await client.call_tool("inject_skill", {"name": "dom"})
                assert not injected.is_error, texts(injected)

                # the user takes the bound tab to the bank: the client may do nothing more there
                await anyio.to_thread.run_sync(mine_tab.navigate, theirs)
                assert not [t for t in (await client.list_tools()).tools if t.name.startswith("page_")]
                listed = texts(await client.call_tool("list_tabs", {}))  # not even as the bound tab's address
                assert MARKER not in listed and str(bank.port) not in listed, listed
                denied(await client.call_tool("reload", {}), "chose never")
                await anyio.to_thread.run_sync(mine_tab.navigate, mine)

                # the user revokes the grant mid-session: the next call asks again, the page tools are gone
                await anyio.to_thread.run_sync(wm.grants.revoke, mine)
                denied(await client.call_tool("list_page_tools", {}), "nobody answered")
                denied(await client.call_tool("inject_skill", {"name": "dom"}), "nobody answered")
                denied(await client.call_tool("call_page_tool", {"name": "readNote"}), "nobody answered")
                for _ in range(200):  # the relay sees the file change within a second and says so
                    if not [t for t in (await client.list_tools()).tools if t.name.startswith("page_")]:
                        break
                    await anyio.sleep(0.05)
                else:
                    raise AssertionError("the page tools of a revoked site are still listed")
                tabs = {t["id"]: t for t in json.loads(texts(await client.call_tool("list_tabs", {})))["tabs"]}
                assert tabs[mine_tab.id] == {"id": mine_tab.id, "bound_here": True, "site": NOT_GRANTED}
                blank = await client.call_tool("open_tab", {"url": "about:blank"})  # no site: nothing to ask
                assert not blank.is_error, texts(blank)

        with open(tmp_path / "server.log", "w") as errlog:
            anyio.run(hostile, errlog)
        assert not bank_tab.closed and bank_tab.call("readNote").value == {"note": ""}  # untouched
        called = [e.data for e in notebook.events.events if e.kind == "tool.called" and e.data["origin"] == "mcp"]
        assert [(c["tool"], c["arguments"]) for c in called] == [("readNote", {}), ("setNote", {"text": "once"})]
        seen = kinds(notebook, "hostile-desktop")
        assert seen.count("grant.asked") == 7 and seen.count("grant.answered") == 2  # never (open), once (setNote)
        assert seen.count("grant.refused") == 5 + 4 + 1  # 5 asks nobody answered, 4 refused at once (never), 1 no site
        refused = [e for e in notebook.events.events if e.kind == "grant.refused" and e.data.get("why") == "never"]
        assert sorted(e.data["action"] for e in refused) == ["close tab", "navigate", "reload", "select tab"]
        assert wm.grants.level(theirs) == "none" and wm.grants.level(mine) == "ask"
        panel.close()
        notebook.close()
    finally:
        chromium.close()


def test_asks_are_answered_in_the_side_panel_and_the_notebook_panel_and_revoked_in_the_sites_list(
    account: Home,  # noqa: F811
    bank: DemoServer,
    tmp_path: Path,
) -> None:
    theirs = bank.url("t/risk.html")
    site = origin_of(theirs)
    account.pair()
    chromium = account.chromium(theirs, args=["--remote-debugging-port=0"])
    try:
        browser = wm.connect(account.port, timeout=60)
        tab = eventually(lambda: next((t for t in browser.tabs if t.url == theirs), None), 20, "the tab")  # (loading)
        eventually(lambda: "readNote" in tab.tools, 20, "the page's tools")
        notebook = wm.panel(browser)
        with playwright_context(chromium.profile_dir) as seen:
            page = seen.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.set_viewport_size({"width": 400, "height": 1000})
            page.goto(f"{PANEL}?tab={tab.id}")
            expect(page.locator("#relay-state")).to_have_attribute("data-ok", "true", timeout=TIMEOUT)
            expect(page.locator("#grants-empty")).to_be_visible()
            card = page.locator("#confirmations .card.grant:not(.resolved)")

            # An agent on a site never granted: the turn asks to read the page; both views show the ask; the side
            # panel answers "act on this site"; the notebook panel's answer, later, is refused (the first won).
            script = [call("readNote"), call("setNote", text="paid"), say("done")]
            with ScriptedServer(script) as model:
                agent = wm.Agent(tab, base_url=model.base_url, api_key="k", model="scripted", confirm="never")
                run = agent.start("Read the note, then set it")
                expect(card).to_contain_text("agent any:scripted", timeout=TIMEOUT)
                expect(card.locator(".site")).to_have_text(site)
                expect(card).to_contain_text("read the page")
                ask = eventually(lambda: list(notebook.grant_cards.values()))[0]
                assert site in ask.text.value and "agent any:scripted" in ask.text.value
                card.locator("button.grant-act").click()
                result = run.result(timeout=60)
            assert result.answer == "done" and [s.error for s in result.steps] == [None, None]
            assert tab.call("readNote").value == {"note": "paid"}
            eventually(lambda: "(side panel)" in ask.note.value, 10, "the notebook panel's card resolved")
            ask.answer("never")  # too late: the side panel's answer won
            eventually(lambda: "no ask" in ask.note.value, 10, "the notebook panel told its answer was refused")
            assert wm.grants.level(theirs) == "act"
            assert json.loads(wm.grants.path.read_text())["grants"][site]["by"] == "side panel"
            session_kinds = [e.kind for e in agent.session.events if e.kind.startswith("grant.")]
            assert session_kinds[:3] == ["grant.asked", "grant.answered", "grant.changed"]

            # The Sites list shows it; Revoke there: the next turn asks again; the notebook panel says never.
            row = page.locator(f'#grants li[data-site="{site}"]')
            expect(row).to_have_attribute("data-level", "act", timeout=TIMEOUT)
            eventually(lambda: site in notebook.sites.revoke_buttons, 10, "the notebook panel's Sites tab")
            row.locator("button.grant-revoke").click()
            expect(row).to_have_count(0, timeout=TIMEOUT)
            assert wm.grants.level(theirs) == "ask"
            with ScriptedServer([call("readNote"), say("done")]) as model:
                agent = wm.Agent(tab, base_url=model.base_url, api_key="k", model="scripted", confirm="never")
                run = agent.start("Read it again")
                ask = eventually(lambda: len(notebook.grant_cards) == 2 and list(notebook.grant_cards.values())[1])
                expect(card).to_have_count(1, timeout=TIMEOUT)
                ask.buttons["never"].click()
                with pytest.raises(wm.PermissionDeniedError, match="the user chose never"):
                    run.result(timeout=60)
            expect(page.locator("#confirmations .card.grant.resolved").last).to_contain_text("(notebook panel)")
            expect(row).to_have_attribute("data-level", "none", timeout=TIMEOUT)

            # Evals in the user's own browser are bound too: a site said never is refused, and not tried again.
            native = {"format": "webmcp-nb-evals", "name": "own", "start_url": theirs}
            suite = wm.evals.suite.parse({**native, "tasks": [{"name": "read", "prompt": "Read the note"}]})
            with ScriptedServer([call("readNote"), say("done")]) as model:
                report = wm.evals.run(
                    suite, models=[wm.Model("any", "m", base_url=model.base_url)], browser=browser,
                    output=tmp_path / "evals", progress=False,
                )  # fmt: skip
                assert not model.requests  # the model never saw the page
            (record,) = report.runs
            assert record.status == "error" and record.error_kind == "setup" and "chose never" in record.error

            # The side panel's chat is bound too: asked in its own panel, answered once.
            notebook.sites.revoke(site)
            eventually(lambda: wm.grants.level(theirs) == "ask", 10, "the revoke from the notebook panel")
            with ScriptedServer([call("readNote"), say("The note says paid.")]) as model:
                configure_chat(seen, model.base_url)
                page.fill("#chat-input", "What does the note say?")
                page.click("#chat-send")
                expect(card).to_contain_text("side panel chat scripted", timeout=TIMEOUT)
                card.locator("button.grant-once").click()
                expect(page.locator("#chat-transcript .message.assistant").last).to_contain_text(
                    "The note says paid.", timeout=TIMEOUT
                )
            assert wm.grants.level(theirs) == "ask"  # once: nothing kept
            chat = [e for e in browser.events.events if e.kind == "grant.asked" and e.data["origin"] == "sidepanel"]
            assert chat and chat[0].data["who"] == "scripted" and chat[0].data["need"] == "read"
            for kind in ("grant.asked", "grant.answered", "grant.changed"):
                expect(page.locator(f'#log li[data-kind="{kind}"]').first).to_be_visible()
            lines = notebook.operations.recent(100)  # the notebook panel's log says the same
            assert any(f"grant.refused {site}: not granted to agent any:m (read the page)" in line for line in lines)
            assert not errors
        notebook.close()
        browser.close()
    finally:
        chromium.close()


def test_a_browser_the_library_launched_is_exempt(polyfill_browser: wm.Browser, server: Any, tmp_path: Path) -> None:
    tab = polyfill_browser.open(server.url("t/risk.html"))
    try:
        assert not polyfill_browser._grants.enforced
        mark = polyfill_browser.events.last_seq
        with ScriptedServer([call("setNote", text="launched"), say("done")]) as model:
            agent = wm.Agent(tab, base_url=model.base_url, api_key="k", model="m", confirm="never", session=False)
            assert agent.run("Set the note").answer == "done"
        assert tab.call("readNote").value == {"note": "launched"}
        assert not [e for e in polyfill_browser.events.since(mark) if e.kind.startswith("grant.")]  # nothing asked
    finally:
        tab.close()


def test_the_side_panels_chat_starts_the_relay_that_keeps_the_grants(account: Home, bank: DemoServer) -> None:  # noqa: F811
    theirs = bank.url("t/risk.html")
    account.pair()
    chromium = account.chromium(theirs, args=["--remote-debugging-port=0"])
    try:
        assert account.daemon_pid() is None  # no notebook, no relay: the side panel on its own
        with (
            playwright_context(chromium.profile_dir) as seen,
            ScriptedServer([call("readNote"), say("Empty.")]) as model,
        ):
            configure_chat(seen, model.base_url)
            page = seen.new_page()
            page.goto(PANEL)
            find = "async (url) => (await chrome.tabs.query({})).find((t) => t.url === url)?.id"
            tab_id = eventually(lambda: page.evaluate(find, theirs), 20, "the page's tab")
            page.goto(f"{PANEL}?tab={tab_id}")
            expect(page.locator('#tools li[data-tool="readNote"]')).to_be_visible(timeout=TIMEOUT)
            page.fill("#chat-input", "What does the note say?")
            page.click("#chat-send")  # its first check needs the relay: the native host starts the daemon
            card = page.locator("#confirmations .card.grant:not(.resolved)")
            expect(card).to_contain_text("side panel chat scripted", timeout=TIMEOUT)
            assert account.daemon_pid() is not None
            expect(page.locator("#relay-state")).to_have_attribute("data-ok", "true")
            card.locator("button.grant-once").click()
            expect(page.locator("#chat-transcript .message.assistant").last).to_contain_text("Empty.", timeout=TIMEOUT)
    finally:
        chromium.close()
