"""What a model takes of a tab is of the site its grant check allowed, in the user's own Chrome (a relay daemon that
keeps the grants, a Chromium dialing it, the SDK's client on ``webmcp-nb mcp``). Hostile fixtures: an open redirect
on site a (127.0.0.1) that sends the tab to the user's bank (localhost: another site, never granted), a page of
site a that shows the bank in an iframe. Site a is the green page, the bank the red one: a picture is known by its
colour.

The race is made certain, not timed: the check of a site never granted waits for the user's answer, and the user
moves the tab through the open redirect before answering, so the tab has committed the bank between the check
(of site a) and the capture."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from eventually import eventually
from mcp_peers import Daemon, mcp_session, users_chrome
from pixels import colour_at, greenish, reddish

import webmcp_nb as wm
from webmcp_nb.link.grants import origin_of
from webmcp_nb.testing import ScriptedServer, call, say

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ACCOUNT = "bank-account-of-the-user"


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


def texts(result: types.CallToolResult) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def image(result: types.CallToolResult) -> bytes:
    (picture,) = [part for part in result.content if isinstance(part, types.ImageContent)]
    return base64.b64decode(picture.data)


def answering(
    panel: Any, count: int, answer: str, first: Callable[[], None] = lambda: None, ended: threading.Event | None = None
) -> Callable[[], str]:
    """As the user, in a thread: once the ``count``-th ask shows in the notebook panel, do ``first`` (move the tab),
    then answer it; returns what the card said ("" if the request ``ended`` without asking)."""

    def run() -> str:
        asked = lambda: len(panel.grant_cards) >= count and list(panel.grant_cards.values())[count - 1]  # noqa: E731
        card = eventually(lambda: asked() or (ended is not None and ended.is_set()), 30, f"ask {count}")
        if card is True:
            return ""
        first()
        card.buttons[answer].click()
        return str(card.text.value)

    return run


def test_a_screenshot_a_listing_and_an_injection_are_of_the_site_that_was_checked(
    server: Any, daemon: Daemon, notebook: wm.Browser, tmp_path: Path
) -> None:
    site_a, bank = server.url("t/site-a.html"), f"http://localhost:{server.port}/t/bank.html?account={ACCOUNT}"
    redirect = server.url(f"t/redirect.html?to={bank}")
    tab = notebook.open(site_a)
    tab.wait_for_tool("readGreeting", timeout=20)
    panel = wm.panel(notebook)

    def through_the_redirect() -> None:
        """The user follows site a's open redirect: the tab commits the bank, and its tools are mirrored."""
        tab.navigate(redirect)
        eventually(lambda: tab.url == bank and "readBalanceOfTheUser" in tab.tools, 20, "the bank, loaded")

    def back_home() -> None:
        tab.navigate(site_a)
        eventually(lambda: "readGreeting" in tab.tools, 20, "site a, loaded")

    async def client(errlog: Any) -> None:
        async with mcp_session("--port", str(daemon.port), errlog=errlog, name="a-model") as (mcp, _):
            async with anyio.create_task_group() as group:  # bound after one ask, answered once
                group.start_soon(anyio.to_thread.run_sync, answering(panel, 1, "once"))
                assert not (await mcp.call_tool("select_tab", {"tab_id": tab.id})).is_error

            for count, (name, arguments) in enumerate(
                [("screenshot", {}), ("list_page_tools", {}), ("inject_skill", {"name": "dom"})], start=2
            ):
                async with anyio.create_task_group() as group:  # checked for site a; the bank by the capture
                    group.start_soon(anyio.to_thread.run_sync, answering(panel, count, "once", through_the_redirect))
                    result = await mcp.call_tool(name, arguments)
                said = texts(result)
                assert not [p for p in result.content if isinstance(p, types.ImageContent)] or not reddish(
                    colour_at(image(result), 0.5, 0.5)
                ), f"{name}: a picture of the bank"
                assert result.is_error and said.startswith("NAVIGATED: "), f"{name}: {said}"
                assert f"no longer shows {origin_of(site_a)}, the site that was checked" in said
                assert ACCOUNT not in said and "localhost" not in said  # the bank is never named
                await anyio.to_thread.run_sync(back_home)

            async with anyio.create_task_group() as group:  # and on site a, as checked: the picture is taken
                group.start_soon(anyio.to_thread.run_sync, answering(panel, 5, "once"))
                shot = await mcp.call_tool("screenshot", {})
            assert not shot.is_error and not reddish(colour_at(image(shot), 0.5, 0.5)), texts(shot)

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(client, errlog)
    panel.close()
    assert "readPage" not in tab.tools  # the dom skill never ran on the bank (nor followed the tab home)


def test_a_screenshot_needs_read_on_the_site_of_every_frame(
    server: Any, daemon: Daemon, notebook: wm.Browser, tmp_path: Path
) -> None:
    bank = f"http://localhost:{server.port}/t/bank.html"
    framed = server.url(f"t/site-a.html?frame={bank}")
    wm.grants.allow(framed, "read")  # site a: read; the bank in its frame: never granted
    tab = notebook.open(framed)
    eventually(lambda: "readBalanceOfTheUser" in tab.tools, 20, "the bank's frame, loaded")
    panel = wm.panel(notebook)

    async def client(errlog: Any) -> None:
        async with mcp_session("--port", str(daemon.port), errlog=errlog, name="a-model") as (mcp, _):
            assert not (await mcp.call_tool("select_tab", {"tab_id": tab.id})).is_error  # site a: read, no ask
            asked: list[str] = []
            ended = threading.Event()
            ask = answering(panel, 1, "never", ended=ended)
            async with anyio.create_task_group() as group:
                group.start_soon(anyio.to_thread.run_sync, lambda: asked.append(ask()))
                try:
                    refused = await mcp.call_tool("screenshot", {})
                finally:
                    ended.set()
            pictured = [part for part in refused.content if isinstance(part, types.ImageContent)]
            assert not pictured or not reddish(colour_at(image(refused), 0.25, 0.25)), "the bank's frame, pictured"
            assert refused.is_error and texts(refused).startswith("PERMISSION_DENIED: "), texts(refused)
            assert "the user chose never" in texts(refused)
            assert origin_of(bank) in asked[0] and "screenshot (a frame of the page)" in asked[0], asked[0]

            await anyio.to_thread.run_sync(wm.grants.allow, bank, "read")  # the user lets it read the bank too
            shot = await mcp.call_tool("screenshot", {})
            assert not shot.is_error, texts(shot)
            picture = image(shot)
            assert reddish(colour_at(picture, 0.25, 0.25)) and greenish(colour_at(picture, 0.75, 0.75))

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(client, errlog)
    panel.close()


def test_an_agents_screenshots_are_of_the_sites_its_checks_allowed(
    server: Any, notebook: wm.Browser, tmp_path: Path
) -> None:
    """The agent may act on site a; its tool shows the bank (never granted) in a frame and answers once it has
    loaded there. The evidence after the call would picture the bank: it is refused, saying why."""
    site_a, bank = server.url("t/site-a.html"), f"http://localhost:{server.port}/t/bank.html"
    wm.grants.allow(site_a, "act")
    tab = notebook.open(site_a)
    tab.wait_for_tool("showFrame", timeout=20)
    session = wm.Session(notebook, directory=tmp_path / "run", evidence="all")
    with ScriptedServer([call("showFrame", url=bank), say("shown")]) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", confirm="never")
        agent.run("show the bank's page")
    session.close()
    taken = {e.data["phase"]: e.data["file"] for e in session.events if e.kind == "evidence.screenshot"}
    failed = {e.data["phase"]: e.data["error"] for e in session.events if e.kind == "evidence.failed"}
    pictures = {phase: (tmp_path / "run" / name).read_bytes() for phase, name in taken.items()}
    assert not [phase for phase, png in pictures.items() if reddish(colour_at(png, 0.25, 0.25))], "the bank, pictured"
    assert "before" in pictures  # site a, as checked
    assert f"frames of {origin_of(bank)}, not granted for reading" in failed["after"], failed


def test_an_agent_reads_only_a_page_whose_site_was_checked(server: Any, notebook: wm.Browser) -> None:
    """The agent's first check (read the page, site a never granted) waits for the user, who follows site a's open
    redirect to the bank before answering once: the page's title, address and tools reach the model only if the
    bank's site is allowed too; the user says never, and the model is never asked."""
    site_a, bank = server.url("t/site-a.html"), f"http://localhost:{server.port}/t/bank.html?account={ACCOUNT}"
    tab = notebook.open(site_a)
    tab.wait_for_tool("readGreeting", timeout=20)
    panel = wm.panel(notebook)

    def through_the_redirect() -> None:
        tab.navigate(server.url(f"t/redirect.html?to={bank}"))
        eventually(lambda: tab.url == bank and "readBalanceOfTheUser" in tab.tools, 20, "the bank, loaded")

    asked: list[str] = []
    ended = threading.Event()

    def user() -> None:
        answering(panel, 1, "once", through_the_redirect, ended)()
        asked.append(answering(panel, 2, "never", ended=ended)())

    helper = threading.Thread(target=user)
    helper.start()
    with ScriptedServer([say("I see the page")]) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", session=False)
        try:
            with pytest.raises(wm.PermissionDeniedError, match="the user chose never"):
                agent.run("what is on this page?")
        finally:
            ended.set()
            helper.join(60)
            panel.close()
        seen = json.dumps(model.requests)
    assert "readBalanceOfTheUser" not in seen and ACCOUNT not in seen and "the user's bank" not in seen
    assert model.requests == [] and origin_of(bank) in asked[0], asked
