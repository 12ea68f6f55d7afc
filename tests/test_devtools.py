"""The DevTools pipe: in a browser the library launched with native WebMCP, the page's own tools are listed and
called through the DevTools protocol on a pipe only this process holds (no port), with every guarantee of the
extension's way — the same tools, frames, titles and origins, a tool bound to its document, cancellation that
reaches the page, results bounded, events and evidence in sessions, grants."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.browser.gate import Asker, check_call
from webmcp_nb.core import _loop
from webmcp_nb.devtools.pipe import CommandError, Oversized, Pipe
from webmcp_nb.link.protocol import Method

LISTEN = "0A"


def piped(browser: wm.Browser, tab: wm.Tab) -> set[tuple[int, str]]:
    """The keys of the tab's tools the relay has from the DevTools pipe (none when the browser has no pipe)."""
    assert browser.relay is not None
    if browser.relay.devtools is None:
        return set()
    (peer,) = browser.relay._browsers.values()
    return set(peer.devtools.get(tab.id, set()))


def calls_through_the_pipe(browser: wm.Browser) -> int:
    assert browser.relay is not None and browser.relay.devtools is not None, "no DevTools pipe"
    return browser.relay.devtools.calls.started  # type: ignore[attr-defined,no-any-return]


# ----- a private pipe -----


def _processes_of(pid: int) -> list[int]:
    """The launched Chromium and every process it started (its session: it was started in a new one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[3]) == pid or int(entry.name) == pid:  # its process group (setsid: the group is its pid)
                found.append(int(entry.name))
    return found


def _listening_inodes() -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN:
                inodes.add(fields[9])
    return inodes


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux /proc")
def test_the_pipe_is_private_no_port_is_opened(native_browser: wm.Browser) -> None:
    process = native_browser.process
    assert process is not None
    pids = _processes_of(process.process.pid)
    assert len(pids) > 1  # the browser and its helpers (renderers, GPU, network)
    command = (Path("/proc") / str(process.process.pid) / "cmdline").read_bytes().split(b"\0")
    assert b"--remote-debugging-pipe" in command
    for pid in pids:
        flags = (Path("/proc") / str(pid) / "cmdline").read_bytes()
        assert b"--remote-debugging-port" not in flags and b"--remote-debugging-address" not in flags, pid
    sockets = set()
    for pid in pids:
        with_fds = Path("/proc") / str(pid) / "fd"
        for fd in with_fds.iterdir() if with_fds.exists() else ():
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("socket:["):
                sockets.add(link[8:-1])
    assert not sockets & _listening_inodes(), "a process of the launched browser listens on a TCP port"
    assert not (process.profile_dir / "DevToolsActivePort").exists()
    assert native_browser.relay is not None and native_browser.relay.devtools is not None


# ----- listing -----


def test_native_tools_come_through_the_pipe_with_their_frames_origins_and_titles(
    native_browser: wm.Browser, server: Any
) -> None:
    tab = native_browser.open(server.url("t/cross-frame.html"))
    try:
        tab.wait_for_tool("sendPin")
        tools = tab.tools
        # a tool is never shown before its title is read: no eventually here
        assert tools["frameGreeting"].title == "webmcp-nb: list_tabs (read-only, safe)"
        assert tools["hostTool"].title is None
        keys = {(t.frame_id, t.name) for t in tools.values()}
        assert keys == piped(native_browser, tab) and len(keys) == 3  # every one from the pipe, none from the extension
        frame = tools["frameGreeting"]
        assert frame.frame_id != 0 and frame.cross_origin and frame.origin == f"http://localhost:{server.port}"
        assert frame.info.frame_url == f"http://localhost:{server.port}/t/cross-frame-inner.html"
        assert tools["hostTool"].info.document_id != frame.info.document_id
        assert tools["sendPin"].risk == "high"  # consequentialHint, as the page registered it
        before = calls_through_the_pipe(native_browser)
        assert frame(name="Ada").value == f"hello Ada from http://localhost:{server.port}"  # in the frame's own process
        assert tab.call("hostTool").value == "host"
        assert calls_through_the_pipe(native_browser) == before + 2
        assert native_browser.relay is not None and len(native_browser.relay.lanes) == 0  # no frame needed a lane
    finally:
        tab.close()


def test_a_page_too_busy_to_tell_a_title_shows_its_tool_and_the_title_follows(native_browser: wm.Browser, server: Any):
    """A frame that does not answer within TITLE_WAIT does not hold its new tools back: they are shown without their
    titles, which are read once more and follow."""
    tab = native_browser.open(server.url("t/busy-titles.html"))
    try:
        tab.wait_for_tool("slowTitled")
        eventually(lambda: tab.tools["slowTitled"].title == "Read on the second try", what="the title read again")
        assert tab.call("slowTitled").value == "free"
    finally:
        tab.close()


@pytest.mark.parametrize("way", ["native_browser", "worker_browser"])
def test_an_iframe_that_changes_process_both_ways_shows_the_tools_of_its_document(
    way: str, request: pytest.FixtureRequest, server: Any
) -> None:
    """An iframe goes from its host's site to another (out of the host's process, into one of its own) and back,
    twice: after each move the tab lists the tools of the document the frame shows, titled, and calls reach it."""
    browser: wm.Browser = request.getfixturevalue(way)
    tab = browser.open(server.url("t/moving-frame.html"))
    try:
        for host in ["127.0.0.1", "localhost", "127.0.0.1", "localhost"]:
            origin = f"http://{host}:{server.port}"
            tab.call("moveFrame", url=f"{origin}/t/cross-frame-inner.html")

            def shown(origin: str = origin) -> bool:
                tool, pin = tab.tools.get("frameGreeting"), tab.tools.get("sendPin")
                return (
                    tool is not None
                    and pin is not None
                    and tool.origin == pin.origin == origin
                    and tool.title == "webmcp-nb: list_tabs (read-only, safe)"
                )

            eventually(shown, what=f"the frame's tools from {origin}")
            assert tab.tools["frameGreeting"](name="Ada").value == f"hello Ada from {origin}"
    finally:
        tab.close()


@pytest.mark.parametrize("path", ["t/cross-frame.html", "declarative/iframe-host.html", "flights/", "t/faults.html"])
def test_both_ways_show_the_same_tools(native_browser: wm.Browser, worker_browser: wm.Browser, server: Any, path: str):
    """The pipe and the extension show a page's tools alike: names, titles, descriptions, schemas, annotations,
    frames' origins and addresses, and order (frame ids and document ids are each way's own)."""

    def shown(browser: wm.Browser) -> list[tuple[Any, ...]]:
        tab = browser.open(server.url(path))
        try:
            if path.startswith("t/cross-frame"):
                tab.wait_for_tool("sendPin")
            if path.startswith("declarative/iframe"):
                tab.wait_for_tool("frameGreeting")
            return [
                (t.name, t.title or None, t.description, t.input_schema, t.annotations, t.source, t.origin,
                 t.info.frame_url, t.frame_id == 0, t.risk)
                for t in tab.tools.values()
            ]  # fmt: skip
        finally:
            tab.close()

    through_pipe, through_extension = shown(native_browser), shown(worker_browser)
    assert through_pipe == through_extension
    assert native_browser.relay is not None and native_browser.relay.devtools is not None


def test_a_page_back_from_the_back_forward_cache_lists_its_tools_in_registration_order(
    native_browser: wm.Browser, worker_browser: wm.Browser, server: Any
) -> None:
    """The browser announces a restored document's tools all at once, sorted by name, and not its iframe's (they
    are read from the frame): their order is the extension's, whose bridge saw each registration."""

    def restored(browser: wm.Browser) -> list[str]:
        tab = browser.open(server.url("bf/bfcache.html"))
        try:
            tab.navigate(server.url("bf/landing.html"))
            tab.back()
            assert tab.call("wasRestored").value is True
            tab.wait_for_tool("inner_b")  # its iframe's, read from the frame: a loaded machine may take past the
            return list(tab.tools)  # 2 s a navigation's reply waits for the tools (SETTLE_WAIT)
        finally:
            tab.close()

    assert (
        restored(native_browser) == restored(worker_browser) == ["wasRestored", "historyLength", "inner_a", "inner_b"]
    )


@pytest.mark.slow
def test_a_first_page_that_ran_before_the_pipe_followed_it_lists_its_and_its_iframes_tools_in_registration_order(
    server: Any,
) -> None:
    """An early Chromium's first tab (``webmcp-nb mcp --launch --url``) registered its tools, and its same-origin
    iframe its own, before the pipe was there to follow it: the browser reports the page's all at once, sorted by
    name, and the iframe's not at all (they are read from the frame); the extension tells their order."""
    from webmcp_nb.browser.early import start_early

    with socket.create_server(("127.0.0.1", 0)) as beacon:
        beacon.settimeout(60)
        early = start_early(server.url(f"t/registered-first.html?beacon={beacon.getsockname()[1]}"), native_webmcp=True)
        try:
            beacon.accept()[0].close()  # the page and its iframe registered their tools: only now is the pipe opened
        except BaseException:
            early.close()
            raise
    with wm.launch(early=early) as browser:
        (tab,) = browser.tabs
        tab.refresh_tools()
        assert list(tab.tools) == ["zulu", "alpha", "mike", "yankee", "bravo"]
        assert piped(browser, tab) == {(0, "zulu"), (0, "alpha"), (0, "mike"), (1, "yankee"), (1, "bravo")}
        assert tab.tools["yankee"].title == "The yankee"
        assert tab.call("bravo").value == "bravo"


def test_tools_added_and_removed_reach_tab_tools_and_a_call_returns_once_they_show(
    native_browser: wm.Browser, server: Any
) -> None:
    tab = native_browser.open(server.url("t/changing.html"))
    try:
        tab.wait_for_tool("inner_b")
        result = tab.call("change", add=["gamma"], remove=["alpha"], describe={"beta": "beta, redescribed"})
        assert result.tools_changed
        names = set(tab.tools)  # right when the call returns: no refresh, no wait
        assert "gamma" in names and "alpha" not in names and tab.tools["beta"].description == "beta, redescribed"
        assert {(t.frame_id, t.name) for t in tab.tools.values()} == piped(native_browser, tab)
        events = [e for e in native_browser.events.of_kind("tools.changed") if e.tab_id == tab.id]
        assert any("gamma" in e.data["added"] for e in events) and any("alpha" in e.data["removed"] for e in events)
    finally:
        tab.close()


# ----- a tool bound to its document -----


def test_a_tool_of_a_page_that_went_is_stale_through_the_pipe(native_browser: wm.Browser, server: Any) -> None:
    tab = native_browser.open(server.url("t/faults.html"))
    try:
        held = tab.tools["received"]
        params = tab._call_params(held, {}, 5.0, None)
        tab.reload()  # the new page registers "received" again, in the same frame
        assert tab.tools["received"].info.document_id != held.info.document_id
        with pytest.raises(wm.StaleToolError):
            held()
        # the pipe refuses by itself a call naming a document its frame no longer shows (a page that moved on
        # between Python's look at the mirror and the call)
        with pytest.raises(wm.StaleToolError, match="no longer shows the document"):
            _loop.run(native_browser._request(Method.TOOL_CALL, params, 10.0))
        assert tab.call("received").value == []  # by name: the tab's tool now
    finally:
        tab.close()


# ----- cancellation -----


def test_a_caller_that_gives_up_cancels_the_call_in_the_page(open_tab: Any, mode: str, browser: wm.Browser) -> None:
    """Cancelling ``await tab.acall(...)`` aborts the call's AbortSignal in the page, which fires ``toolcancel``
    (through the pipe: ``WebMCP.cancelInvocation``)."""
    tab = open_tab("t/faults.html")
    before = calls_through_the_pipe(browser) if mode == "native" else 0

    async def give_up() -> None:
        call = asyncio.ensure_future(tab.acall("hang"))
        while (await tab.acall("hanging")).value < 1:  # noqa: ASYNC110 - until the page runs it (nothing to await)
            await asyncio.sleep(0.02)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(give_up())
    told = eventually(lambda: tab.call("cancelled").value == ["hang"] and tab.call("handled").value == ["hang"])
    assert told
    if mode == "native":
        assert calls_through_the_pipe(browser) >= before + 1


# ----- sessions and grants -----


def test_a_session_records_a_call_through_the_pipe_with_its_evidence(
    native_browser: wm.Browser, server: Any, tmp_path: Path
) -> None:
    tab = native_browser.open(server.url("t/faults.html"))
    try:
        session = wm.Session(native_browser, directory=tmp_path / "run", evidence="non-readonly")
        before = calls_through_the_pipe(native_browser)
        tab.call("strict", count=2, code="ABC")
        with pytest.raises(wm.ToolError):
            tab.call("boom")
        session.close()
        assert calls_through_the_pipe(native_browser) == before + 2
        lines = [json.loads(line) for line in session.path.read_text().splitlines()[1:]]
        lines = [e for e in lines if e["kind"].startswith(("tool.", "evidence."))]
        kinds = [(e["kind"], e["data"].get("tool"), e["data"].get("phase")) for e in lines]
        assert kinds == [
            ("tool.called", "strict", None), ("evidence.screenshot", "strict", "before"),
            ("tool.returned", "strict", None), ("evidence.screenshot", "strict", "after"),
            ("tool.called", "boom", None), ("evidence.screenshot", "boom", "before"),
            ("tool.failed", "boom", None), ("evidence.screenshot", "boom", "after"),
        ]  # fmt: skip
        returned = next(e for e in lines if e["kind"] == "tool.returned")
        assert json.loads(returned["data"]["text"]) == {"ok": True, "input": {"count": 2, "code": "ABC"}}
        failed = next(e for e in lines if e["kind"] == "tool.failed")
        assert (failed["data"]["code"], failed["data"]["error"]) == ("TOOL_ERROR", "kaboom 42")
        assert sorted(p.name for p in session.directory.glob("*.png")) == [
            "0001-strict-before.png", "0002-strict-after.png", "0003-boom-before.png", "0004-boom-after.png",
        ]  # fmt: skip
    finally:
        tab.close()


@pytest.mark.slow
@pytest.mark.browser
def test_grants_hold_for_tools_reached_through_the_pipe(server: Any) -> None:
    """``launch(grants=True)``: a native tool's site is the one its frame has, as the pipe reports it."""
    page, frame = server.url("t/cross-frame.html"), f"http://localhost:{server.port}"
    wm.grants.allow(page, "act")
    wm.grants.deny(frame)
    try:
        with wm.launch(native_webmcp=True, grants=True) as browser:
            tab = browser.open(page)
            tab.wait_for_tool("sendPin")
            asker = Asker("agent", "scripted")
            _loop.run(check_call(tab, tab.tools["hostTool"], "hostTool", asker))  # the page's site acts
            with pytest.raises(wm.PermissionDeniedError, match=r"localhost.*the user chose never"):  # denied, not asked
                _loop.run(check_call(tab, tab.tools["frameGreeting"], "frameGreeting", asker, timeout=30))
            assert piped(browser, tab) == {(t.frame_id, t.name) for t in tab.tools.values()}
    finally:
        wm.grants.revoke(page)
        wm.grants.revoke(frame)


# ----- the pipe itself -----


def test_a_message_past_the_pipes_bound_is_dropped_unread_and_said_whose_it_was() -> None:
    """The pipe never holds a message longer than its bound: it keeps the ends, and says whose it was."""

    async def run() -> tuple[list[Oversized], list[Any], list[Any]]:
        theirs, ours = os.pipe()  # the browser writes to ours, we read theirs
        commands_read, commands_write = os.pipe()
        dropped: list[Oversized] = []
        events: list[Any] = []
        replies: list[Any] = []
        pipe = await Pipe(
            theirs, commands_write, on_event=lambda m, p, s: events.append(m), on_oversized=dropped.append,
            max_message=64 * 1024,
        ).open()  # fmt: skip
        pipe.send("Big.reply", None, None, lambda result, error: replies.append(error))
        invocation = '{"method":"WebMCP.toolResponded","params":{"invocationId":"ABC123","output":"'
        messages = [
            (invocation + "x" * 200_000 + '"}}').encode(),
            b'{"id":1,"result":{"blob":"' + b"y" * 100_000 + b'"}}',
            b'{"method":"After.event","params":{}}',
        ]

        def browser() -> None:  # (a thread: the pipe holds less than a message)
            with os.fdopen(ours, "wb") as writer:
                for message in messages:
                    writer.write(message + b"\0")

        await asyncio.get_running_loop().run_in_executor(None, browser)
        await asyncio.sleep(0.1)
        pipe.close()
        os.close(commands_read)
        return dropped, events, replies

    dropped, events, replies = asyncio.run(run())
    (message,) = dropped
    assert message.size > 200_000 and b'"invocationId":"ABC123"' in message.head and len(message.head) <= 4096
    assert len(replies) == 1 and isinstance(replies[0], CommandError) and "over the pipe's bound" in replies[0].message
    assert events == ["After.event"]  # what follows is read as usual


# ----- the side panel, which still shows native tools through the extension -----


@pytest.mark.browser
def test_the_side_panel_shows_and_calls_native_tools_the_pipe_lists(server: Any, tmp_path: Path) -> None:
    """While no side panel is open, frames of a tab the pipe lists report their native tools to the extension only
    when asked; an open panel gets them as they change, and calls them by hand (through the extension)."""
    from cdp import playwright_context
    from test_sidepanel import TIMEOUT, Chromium, expect

    with (
        wm.launch(native_webmcp=True, args=["--remote-debugging-port=0"]) as browser,
        playwright_context(browser.process.profile_dir) as seen,
    ):
        tab = browser.open(server.url("t/changing.html"))
        tab.wait_for_tool("inner_b")
        tab.call("change", add=["early"])  # before any panel: the pipe shows it at once
        assert "early" in tab.tools and piped(browser, tab) == {(t.frame_id, t.name) for t in tab.tools.values()}
        session = wm.Session(browser, directory=tmp_path / "s", evidence="off")
        page = Chromium(browser, seen).panel(tab)
        for name in ("change", "alpha", "early", "inner_a"):
            expect(page.locator(f'#tools li[data-tool="{name}"]')).to_contain_text("native", timeout=TIMEOUT)
        tab.call("change", add=["gamma"], remove=["alpha"])  # with a panel open, frames report as they change
        expect(page.locator('#tools li[data-tool="gamma"]')).to_have_count(1, timeout=TIMEOUT)
        expect(page.locator('#tools li[data-tool="alpha"]')).to_have_count(0, timeout=TIMEOUT)
        page.locator('#tools li[data-tool="gamma"]').click()
        page.fill("#tool-args", "{}")
        page.click("#call-button")
        expect(page.locator("#tool-result.ok")).to_contain_text("gamma", timeout=TIMEOUT)
        called = eventually(
            lambda: [e for e in session.filter("tool.called", tool="gamma") if e.data.get("origin") == "sidepanel"]
        )
        assert called and called[0].tab_id == tab.id
        session.close()
        assert not page.errors
