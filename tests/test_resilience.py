"""Faults: the worker dies mid-call, the browser crashes, sockets stay half-open, the model endpoint is
unreachable or talks nonsense. Every failure is a typed error, in bounded time; nothing hangs."""

import os
import signal
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from cdp import stop_service_worker
from eventually import eventually
from lane_wait import lane_of

import webmcp_nb as wm
from webmcp_nb.testing import Reply, ScriptedServer, call, say


@pytest.fixture
def own_browser():
    """A browser of this test's own (these tests break it)."""
    browser = wm.launch(args=["--remote-debugging-port=0"])
    yield browser
    browser.close()


@pytest.mark.browser
def test_worker_killed_mid_call_fails_the_call_and_the_next_works(server):
    with wm.launch(args=["--remote-debugging-port=0"], lanes="off") as browser:  # calls go through the worker
        tab = browser.open(server.url("t/faults.html"))
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(tab.call, "hang", timeout=30)
            eventually(lambda: tab.call("hanging").value == 1, 5, "the call to reach the page")
            stop_service_worker(browser)
            error = pending.exception(timeout=25)  # before the call's own 30 s: the port's closing failed it
        assert isinstance(error, wm.NotConnectedError), error
        assert tab.call("received").value == []  # the restarted worker serves the next call


def test_a_call_on_a_lane_outlives_the_worker(own_browser, server):
    tab = own_browser.open(server.url("t/lanes.html"))
    assert lane_of(own_browser, tab) is not None
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(tab.call, "later", ms=1500, tag="mine")
        eventually(lambda: tab.call("waiting").value == 1, 5, "the call to reach the page")
        stop_service_worker(own_browser)  # the call is not the worker's: it goes on and returns
        assert pending.result(timeout=20).value == {"tag": "mine"}
    assert tab.call("echo", text="next").value == {"text": "next"}


@pytest.mark.browser
@pytest.mark.parametrize("lanes", ["loopback", "off"])  # calls on the page's lane, or through the worker
def test_a_crashed_browser_fails_every_pending_call_says_how_it_ended_and_a_new_one_works(server, lanes):
    browser = wm.launch(lanes=lanes)
    try:
        tab = browser.open(server.url("t/faults.html"))
        assert (lane_of(browser, tab, timeout=2) is not None) == (lanes == "loopback")
        with ThreadPoolExecutor(3) as pool:
            pending = [pool.submit(tab.call, "hang", timeout=30) for _ in range(3)]
            eventually(lambda: tab.call("hanging").value == 3, 5, "the calls to reach the page")
            os.killpg(browser.process.process.pid, signal.SIGKILL)  # every process of the browser, as a crash
            errors = [call.exception(timeout=20) for call in pending]
        assert all(isinstance(error, wm.BrowserCrashedError) for error in errors), errors
        assert isinstance(errors[0], wm.NotConnectedError) and "SIGKILL" in str(errors[0])
        assert browser.exit.signal == "SIGKILL" and not browser.exit.closed and errors[0].exit == browser.exit
        (event,) = browser.events.of_kind("browser.crashed")
        assert event.data["signal"] == "SIGKILL" and event.data["returncode"] == -9
        with pytest.raises(wm.BrowserCrashedError):  # at once: no waiting for a browser that cannot come back
            tab.call("received")
        assert not browser.connected and "crashed" in repr(browser)
        line = {c.name: c for c in wm.doctor(browser=browser).checks}["launched Chromium"]
        assert line.status == "fail" and "SIGKILL" in line.detail and "wm.launch()" in line.fix
    finally:
        browser.close()
    with wm.launch(lanes=lanes) as again:  # the same process carries on
        assert again.open(server.url("t/faults.html")).call("received").value == []
        assert again.exit is None


def test_a_half_open_socket_does_not_stop_the_relay(polyfill_browser, server):
    relay = polyfill_browser.relay
    lurker = socket.create_connection(("127.0.0.1", relay.port))  # connects, never says a word
    try:
        tab = polyfill_browser.open(server.url("t/faults.html"))
        assert tab.call("received").value == []  # everyone else is served meanwhile
        tab.close()
        lurker.settimeout(20)
        assert lurker.recv(1024) == b""  # and the relay drops it after its handshake timeout
    finally:
        lurker.close()


def test_an_unreachable_model_endpoint_is_a_model_error(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("flights/"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nobody listens here once the socket closes
    try:
        agent = wm.Agent(
            tab, base_url=f"http://127.0.0.1:{dead}/v1", api_key="k", model="m", max_retries=1, evidence="off"
        )
        with pytest.raises(wm.ModelError, match=f"the model endpoint http://127.0.0.1:{dead}/v1 cannot be reached"):
            agent.run("anything")
        assert any(e.kind == "agent.error" for e in list(polyfill_browser.events.events)[-5:])
    finally:
        tab.close()


def test_a_misbehaving_model_gets_clear_errors(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("flights/"))
    try:
        script = [
            Reply(tool_calls=(("searchFlights", "not json"),)),  # arguments that are not JSON
            call("noSuchTool"),  # a tool that does not exist
            say("giving up"),
        ]
        with ScriptedServer(script, quirks="glm") as model:  # glm quirk: arguments sent as they are
            result = wm.Agent(
                tab, base_url=model.base_url, api_key="k", model="m", confirm="never", evidence="off"
            ).run("go")
        assert result.answer == "giving up"
        assert "not a JSON object" in result.steps[0].error and 'no tool named "noSuchTool"' in result.steps[1].error
        with ScriptedServer(lambda request: Reply(status=500, error="boom", retry_after_ms=1)) as broken:
            agent = wm.Agent(tab, base_url=broken.base_url, api_key="k", model="m", max_retries=2, evidence="off")
            with pytest.raises(wm.ModelError, match="InternalServerError"):
                agent.run("go")
        assert len(broken.requests) == 3  # one try and two retries, then a typed error
    finally:
        tab.close()
