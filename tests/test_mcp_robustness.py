"""``webmcp-nb mcp`` as a user meets it, driven by clients nobody here wrote (the official SDK's client, and the MCP
Inspector's CLI): a ``--url`` that does not load leaves a server that says so and recovers; with no browser on the
relay the fixed tools answer at once and say why, and stderr gets plain lines; ``--url`` reuses a tab showing it,
a session closes the tabs it opened, and a one-shot client without ``--url`` reaches the only (or active) tab's
tools; one session cannot close another's tab without ``force``; errors reach MCP clients in MCP words, and the
sessions show a client's own name."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from eventually import eventually
from mcp_peers import Daemon, inspector_cli, listed_until, mcp_session, server_env, text, users_chrome
from ports import free_port

import webmcp_nb as wm
from webmcp_nb.core.describe import line
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.mcp.server import FIXED_TOOLS
from webmcp_nb.views.sessions import SessionsView

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FIXED = {tool.name for tool in FIXED_TOOLS}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, server: Any) -> Iterator[Daemon]:
    """One relay daemon in a throwaway home, with a Chromium dialing it, for the tests that need a user's Chrome
    (whose grants let MCP clients act on the test pages' site)."""
    with users_chrome(tmp_path_factory.mktemp("home")) as running:
        wm.grants.allow(server.url(""), "act")
        yield running


@pytest.fixture
def notebook(daemon: Daemon) -> Iterator[wm.Browser]:
    browser = wm.connect(daemon.port, timeout=40)
    yield browser
    browser.close()


def in_thread(check: Any, what: str) -> Any:
    """``eventually(check)`` from inside an anyio run (it blocks)."""
    return anyio.to_thread.run_sync(lambda: eventually(check, 20, what))


def test_a_url_that_does_not_load_leaves_a_server_that_says_so_and_recovers(server: Any, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/not-up-yet/"  # a dev server that is not up yet

    async def run(errlog: Any) -> None:
        async with mcp_session("--launch", "--url", dead, errlog=errlog) as (client, changes):
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert listed >= FIXED
            tabs = json.loads(text(await client.call_tool("list_tabs", {})))
            assert f"--url {dead} did not load" in tabs["state"] and "ERR_CONNECTION_REFUSED" in tabs["state"]
            assert [tab["bound_here"] for tab in tabs["tabs"]] == [True]  # the tab stays, on its error page
            page_tools = json.loads(text(await client.call_tool("list_page_tools", {})))
            assert "did not load" in page_tools["problem"]

            went = await client.call_tool("navigate", {"url": server.url("flights/")})  # the dev server is up now
            assert not went.is_error, text(went)
            await listed_until(client, changes, lambda t: "page_searchFlights" in t)
            opened = await client.call_tool("open_tab", {"url": server.url("t/faults.html")})
            assert not opened.is_error and "page_boom" in json.loads(text(opened))["page_tools"]
            assert "did not load" not in json.loads(text(await client.call_tool("list_tabs", {})))["state"]

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)
    said = (tmp_path / "server.log").read_text()
    assert "webmcp-nb mcp: browser" in said and f"--url {dead} did not load" in said


def test_with_no_browser_the_fixed_tools_answer_at_once_and_the_page_tools_follow(
    server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    wm.grants.allow(server.url(""), "act")  # the daemon holds MCP clients to the user's grants
    relay = Daemon(tmp_path, browser=False)  # the relay daemon, and no browser connected to it

    async def run(errlog: Any) -> None:
        args = ("--port", str(relay.port), "--url", server.url("flights/"))
        # A server that waited for a browser would answer only after its 60 s start limit: the SDK's limit of 30 s
        # per request tells it from a slow start of the process on a loaded machine (CI: initialize took over 10 s).
        async with mcp_session(*args, errlog=errlog, read_timeout=30) as (client, changes):
            assert {tool.name for tool in (await client.list_tools()).tools} == FIXED
            tabs = json.loads(text(await client.call_tool("list_tabs", {})))
            assert tabs["tabs"] == []
            assert (
                f"waiting for a browser with the webmcp-nb extension to connect to the relay on port {relay.port}"
                in (tabs["state"])
            )
            shot = await client.call_tool("screenshot", {})
            assert shot.is_error and "waiting for a browser" in text(shot) and "webmcp-nb doctor" in text(shot)
            elsewhere = server.url("flights/").replace("127.0.0.1", "localhost")  # a site never granted
            for name, arguments in (("navigate", {"url": elsewhere}), ("open_tab", {"url": elsewhere})):
                opened = await client.call_tool(name, arguments)  # not an ask nobody can answer (60 s)
                assert opened.is_error and "waiting for a browser" in text(opened), (name, text(opened))

            await anyio.to_thread.run_sync(relay.start_browser)  # the user opens Chrome: the page tools follow
            tools = await listed_until(client, changes, lambda t: "page_searchFlights" in t)
            assert set(tools) >= FIXED

    try:
        with open(tmp_path / "server.log", "w") as errlog:
            anyio.run(run, errlog)
    finally:
        relay.close()
    said = (tmp_path / "server.log").read_text()
    assert "\r" not in said  # plain lines, never a progress bar
    lines = [entry for entry in said.splitlines() if entry.startswith("webmcp-nb mcp: ")]
    waiting = [entry for entry in lines if "waiting for a browser" in entry]
    assert len(waiting) == 1 and any("connected; bound to tab" in entry for entry in lines), lines
    assert len(lines) == len(set(lines))  # one line per change of state


def test_url_reuses_a_tab_showing_it_and_a_session_closes_the_tabs_it_opened(
    daemon: Daemon, notebook: wm.Browser, server: Any, tmp_path: Path
) -> None:
    mine = notebook.open(server.url("flights/"))
    before = {tab.id for tab in notebook.tabs}

    async def run(errlog: Any) -> None:
        port = ("--port", str(daemon.port))
        async with mcp_session(*port, "--url", server.url("flights/"), errlog=errlog) as (reuser, _):
            tabs = json.loads(text(await reuser.call_tool("list_tabs", {})))["tabs"]
            assert [tab["id"] for tab in tabs if tab["bound_here"]] == [mine.id]
            assert {tab["id"] for tab in tabs} == before  # no tab was opened for it
        async with mcp_session(*port, "--url", server.url("t/faults.html"), errlog=errlog) as (opener, _):
            tabs = json.loads(text(await opener.call_tool("list_tabs", {})))["tabs"]
            (opened,) = [tab["id"] for tab in tabs if tab["bound_here"]]
            also = json.loads(text(await opener.call_tool("open_tab", {"url": server.url("t/own-tool.html")})))
            assert opened not in before and also["tab"] not in before
        await in_thread(lambda: not {opened, also["tab"]} & {tab.id for tab in notebook.tabs}, "its tabs closed")
        assert mine.id in {tab.id for tab in notebook.tabs}  # the tab it reused stays

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)

    mine.activate()  # a one-shot client without --url: the active tab's page tools

    def inspect(*method: str) -> Any:
        done = inspector_cli(["--port", str(daemon.port)], *method, home=daemon.home)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["result"]

    assert "page_searchFlights" in {tool["name"] for tool in inspect("--method", "tools/list")["tools"]}
    called = inspect(
        "--method", "tools/call", "--tool-name", "page_searchFlights", "--tool-args-json", json.dumps(DEMO_SEARCH)
    )
    assert "Found" in called["content"][0]["text"]


def test_close_tab_refuses_another_sessions_tab_unless_forced(daemon: Daemon, server: Any, tmp_path: Path) -> None:
    async def run(errlog: Any) -> None:
        port = ("--port", str(daemon.port))
        async with (
            mcp_session(*port, "--url", server.url("t/faults.html"), errlog=errlog, name="holder") as (holder, _),
            mcp_session(*port, errlog=errlog, name="other") as (other, _),
        ):
            tabs = json.loads(text(await holder.call_tool("list_tabs", {})))["tabs"]
            (held,) = [tab["id"] for tab in tabs if tab["bound_here"]]
            refused = await other.call_tool("close_tab", {"tab_id": held})
            assert refused.is_error and "TAB_IN_USE" in text(refused) and "holder" in text(refused)
            assert "close_tab with force: true" in text(refused)
            assert held in {tab["id"] for tab in json.loads(text(await other.call_tool("list_tabs", {})))["tabs"]}
            forced = await other.call_tool("close_tab", {"tab_id": held, "force": True})
            assert not forced.is_error, text(forced)

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


def test_another_sessions_tab_is_refused_before_its_site_is_asked_about(
    daemon: Daemon, notebook: wm.Browser, server: Any, tmp_path: Path
) -> None:
    """Closing a tab another session holds is refused (TAB_IN_USE) at once, even on a site not granted: the user
    is not asked about a close that would be refused whatever they answered."""
    elsewhere = server.url("t/faults.html").replace("127.0.0.1", "localhost")  # another site, never granted

    async def run(errlog: Any) -> None:
        port = ("--port", str(daemon.port), "--ask-timeout", "30")
        async with (
            mcp_session(*port, "--url", server.url("t/faults.html"), errlog=errlog, name="holder") as (holder, _),
            mcp_session(*port, errlog=errlog, name="other") as (other, _),
        ):
            tabs = json.loads(text(await holder.call_tool("list_tabs", {})))["tabs"]
            (held,) = [tab["id"] for tab in tabs if tab["bound_here"]]
            # (the notebook's mirror learns of the tab the session opened a moment after the session does)
            await anyio.to_thread.run_sync(lambda: eventually(lambda: held in {t.id for t in notebook.tabs}, 10))
            await anyio.to_thread.run_sync(notebook.tab(held).navigate, elsewhere)  # the user goes elsewhere in it
            asked = len(notebook.events.of_kind("grant.asked"))
            refused = await other.call_tool("close_tab", {"tab_id": held})
            assert refused.is_error and "TAB_IN_USE" in text(refused) and "holder" in text(refused), text(refused)
            assert len(notebook.events.of_kind("grant.asked")) == asked  # nobody was asked

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


def test_errors_reach_mcp_clients_in_their_words_and_sessions_show_the_clients_name(
    daemon: Daemon, notebook: wm.Browser, server: Any
) -> None:
    tab = notebook.open(server.url("flights/"))
    command = [sys.executable, "-m", "webmcp_nb", "mcp", "--port", str(daemon.port), "--url", server.url("flights/")]
    env = {"PYTHONPATH": server_env()["PYTHONPATH"], "WEBMCP_NB_HOME": str(daemon.home)}
    with wm.mcp.connect(command, name="research-notebook", env=env) as pages:
        (session,) = eventually(lambda: [s for s in notebook.mcp_sessions if s.client == "research-notebook"], 20)
        assert session.tab_id == tab.id
        view = SessionsView(notebook)
        assert "<b>research-notebook</b>" in view._rows[session.id][0].value
        view.close()
        said = [line(e) for e in notebook.events.events if e.data.get("session") == session.id]
        assert said and all(f"research-notebook (pid {session.pid})" in words for words in said), said
        assert any(f"tab {tab.id}" in words for words in said) and not any("{" in words for words in said)
        assert all(words.endswith(" · MCP client") for words in said)  # who acted; no JSON dump

        with pytest.raises(wm.ToolError) as invalid:  # the page never sees it; the schema is where to look
            pages.call("call_page_tool", name="searchFlights", arguments={"origin": "London"})
        assert "INVALID_ARGS" in str(invalid.value) and "input schema (tools/list, list_page_tools)" in str(
            invalid.value
        )
        with pytest.raises(wm.ToolError) as missing:
            pages.call("call_page_tool", name="listFlight", arguments={})
        assert "TOOL_NOT_FOUND" in str(missing.value) and "list the tools again in a moment" in str(missing.value)
        for error in (invalid.value, missing.value):
            words = str(error)
            assert not any(face in words for face in ("tab.wait_for_tool", "help(tab.tools", "os.environ", "wm."))
    ended = eventually(lambda: [e for e in notebook.events.events if e.kind == "mcp.session.ended"], 20)
    assert "research-notebook" in line(ended[-1]) and "disconnected" in line(ended[-1])
    tab.close()
