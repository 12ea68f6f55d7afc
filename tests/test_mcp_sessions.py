"""Several MCP clients on one browser at once: two ``webmcp-nb mcp`` processes join the real relay daemon as
ordinary clients, each bound to its own tab of one Chromium, each seeing only its tab's tools. The side panel and
a notebook list both sessions; what a session does reaches the notebook's event stream; a session closed in the
side panel, or in the notebook panel, ends its server process; Focus brings a session's tab to the front."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from eventually import eventually
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_peers import Daemon, webmcp_nb_mcp

import webmcp_nb as wm
from webmcp_nb.browser.chromium import ChromiumProcess
from webmcp_nb.core.events import Event
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.views.sessions import SessionsView

sync_api = pytest.importorskip("playwright.sync_api")
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    running = Daemon(tmp_path)
    yield running
    running.close()


def side_panel_sessions(chromium: ChromiumProcess, closing: str) -> list[str]:
    """In the side panel: both sessions listed; ``closing``'s Close clicked; what the list shows then."""
    active = chromium.profile_dir / "DevToolsActivePort"
    port = eventually(lambda: active.exists() and active.read_text().split()[0], 10, "DevToolsActivePort")
    with sync_api.sync_playwright() as playwright:
        cdp = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        page = cdp.contexts[0].new_page()
        page.goto(PANEL)
        items = page.locator("#sessions li")
        sync_api.expect(items).to_have_count(2, timeout=20_000)
        sync_api.expect(page.locator("#sessions")).to_contain_text("client-a")
        sync_api.expect(page.locator("#sessions")).to_contain_text("client-b")
        sync_api.expect(page.locator("#sessions-count")).to_have_text("2")
        page.locator("#sessions li", has_text=closing).locator(".session-close").click()
        sync_api.expect(items).to_have_count(1, timeout=20_000)
        shown = items.all_inner_texts()
        cdp.close()
    return shown


def focus_and_close_from_the_notebook(notebook: wm.Browser, tab_id: int) -> None:
    """The notebook panel's MCP sessions tab: Focus brings the session's tab to the front, Close ends it."""
    view = SessionsView(notebook)
    (session_id,) = view.close_buttons
    row = view.children[0]
    for _ in range(5):  # what each MCP call's events do: the row is updated, not made again (nor leaked)
        view.refresh()
    assert view.children[0] is row and view.focus_buttons[session_id] in row.children
    assert not notebook.tab(tab_id).active  # the side panel's page was in front
    view.focus_buttons[session_id].click()
    eventually(lambda: notebook.tab(tab_id).active, 20, "the session's tab in front")
    view.close_buttons[session_id].click()
    eventually(lambda: not notebook.mcp_sessions and "No MCP client" in view.children[0].value, 20, "no session")
    view.close()


async def ended(client: Client) -> None:
    """Return once the client's server, whose session the user closed, has exited: a request to it fails (one sent
    while the server is still learning of the close may be answered first)."""
    with anyio.fail_after(20):
        while True:
            try:
                await client.list_tools()
            except Exception:  # the SDK's error for a dead server varies
                return
            await anyio.sleep(0.1)


def test_two_mcp_clients_drive_two_tabs_of_one_browser(daemon: Daemon, server: Any, tmp_path: Path) -> None:
    wm.grants.allow(server.url(""), "act")  # the daemon holds MCP clients to the user's grants: the test pages' site
    notebook = wm.connect(daemon.port, timeout=40)
    mcp_events: list[Event] = []
    notebook.events.subscribe(lambda e: mcp_events.append(e) if e.data.get("origin") == "mcp" else None)

    async def run(errlog: Any) -> None:
        async with AsyncExitStack() as stack:
            clients = {}
            for name, path in (("client-a", "flights/"), ("client-b", "t/faults.html")):
                transport = stdio_client(webmcp_nb_mcp("--port", str(daemon.port), "--url", server.url(path)), errlog)
                info = types.Implementation(name=name, version="1.0")
                clients[name] = await stack.enter_async_context(Client(transport, client_info=info, cache=None))
            a, b = clients["client-a"], clients["client-b"]
            listed_a = {t.name for t in (await a.list_tools()).tools}
            listed_b = {t.name for t in (await b.list_tools()).tools}
            assert "page_searchFlights" in listed_a and "page_boom" not in listed_a
            assert "page_boom" in listed_b and "page_searchFlights" not in listed_b

            def named() -> list[Any]:  # a session is listed as soon as its server starts, named once its client is,
                sessions = notebook.mcp_sessions  # and shows its tab once the relay has told this notebook of it
                bound = all(s.tab_id is not None for s in sessions)
                return sessions if bound and sorted(s.client for s in sessions) == ["client-a", "client-b"] else []

            sessions = await anyio.to_thread.run_sync(lambda: eventually(named, 20, "2 named sessions, each bound"))
            tabs = {s.client: s.tab_id for s in sessions}
            assert set(tabs) == {"client-a", "client-b"} and tabs["client-a"] != tabs["client-b"]
            taken = await a.call_tool("select_tab", {"tab_id": tabs["client-b"]})
            assert taken.is_error and "TAB_IN_USE" in taken.content[0].text

            result = await a.call_tool("page_searchFlights", DEMO_SEARCH)
            assert not result.is_error
            called = await anyio.to_thread.run_sync(
                lambda: eventually(lambda: [e for e in mcp_events if e.kind == "tool.returned"], 20, "an mcp event")
            )
            assert called[0].data["tool"] == "searchFlights" and called[0].tab_id == tabs["client-a"]

            shown = await anyio.to_thread.run_sync(side_panel_sessions, daemon.chromium, "client-a")
            assert "client-b" in shown[0] and "client-a" not in shown[0]
            await ended(a)
            assert [s.client for s in notebook.mcp_sessions] == ["client-b"]
            assert {t.name for t in (await b.list_tools()).tools} == listed_b
            await anyio.to_thread.run_sync(focus_and_close_from_the_notebook, notebook, tabs["client-b"])
            await ended(b)

    try:
        with open(tmp_path / "servers.log", "w") as errlog:
            anyio.run(run, errlog)
    finally:
        notebook.close()
    kinds = [e.kind for e in notebook.events.events if e.kind.startswith("mcp.session.")]
    assert kinds.count("mcp.session.started") == 2 and "mcp.session.ended" in kinds
    said = (tmp_path / "servers.log").read_text()  # what the MCP clients' logs got: the browser was there throughout
    assert said.count("the session was closed by the user; exiting") == 2 and "waiting for browser" not in said, said
