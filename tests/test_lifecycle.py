"""Connections that must last: the worker's keepalive, a stopped worker, the relay daemon."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cdp import stop_service_worker
from eventually import eventually
from ports import free_port

import webmcp_nb as wm
from webmcp_nb.browser.chromium import ChromiumProcess
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link.home import read_secret
from webmcp_nb.own_chrome.connect import start_daemon

SEARCH = {**DEMO_SEARCH, "tripType": "one-way", "passengers": 1}


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_keepalive_holds_through_90_s_idle_and_a_stopped_worker_comes_back(server):
    # A plain subprocess browser: nothing attaches to the worker, so only its own keepalive keeps it up.
    with wm.launch(args=["--remote-debugging-port=0"]) as browser:
        tab = browser.open(server.url("t/faults.html"))
        relay = browser.relay
        assert relay.browser_connections == 1
        time.sleep(90)
        assert browser.connected and relay.browser_connections == 1  # same connection, never dropped
        assert tab.call("received").value == []

        others = [browser.open(server.url(page)) for page in ("flights/", "early-draft/", "t/faults.html") * 2]
        stop_service_worker(browser)
        eventually(lambda: relay.browser_connections >= 2, 15, "the restarted worker")
        assert relay.browser_connections == 2  # the restarted worker dialled in again, at the first try
        # Its hello came first and was valid: a refused dial can only be one that ran out of time (a loaded machine).
        out_of_time = ("(TimeoutError)", "(ConnectionClosedOK)", "(ConnectionClosedError)")
        assert all(any(kind in r.reason for kind in out_of_time) for r in relay.refused), relay.refused
        assert tab.call("received").value == []  # and routes calls: it rebuilt its mirror
        assert set(tab.tools) >= {"boom", "strict"}
        assert all(len(other.tools) > 0 for other in others)


CLIENT = textwrap.dedent(
    """
    import json, sys, webmcp_nb as wm
    port, url = int(sys.argv[1]), sys.argv[2]
    browser = wm.connect(port, timeout=40)
    if url != "-":
        browser.open(url)
    print(json.dumps({str(t.id): [t.url, sorted(t.tools)] for t in browser.tabs}))
    """
)


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_daemon_outlives_its_clients_and_keeps_the_state(server, tmp_path: Path, monkeypatch):
    port = free_port()
    env = {**os.environ, "WEBMCP_NB_HOME": str(tmp_path)}
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    # The page loads before any relay exists: the handshake must still carry its tools.
    chromium = ChromiumProcess(f"ws://127.0.0.1:{port}/browser", secret=read_secret(), url=server.url("flights/"))
    pid_file = tmp_path / f"relay-{port}.pid"
    try:

        def run(url: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-c", CLIENT, str(port), url], env=env, capture_output=True, text=True, timeout=90
            )

        first = run(server.url("early-draft/"))  # starts the daemon on demand, opens a tab, exits
        assert first.returncode == 0, first.stderr
        assert pid_file.exists()
        assert oct((tmp_path / "secret").stat().st_mode & 0o777) == "0o600"
        tabs = json.loads(first.stdout)
        assert [server.url("flights/"), ["searchFlights"]] in tabs.values()
        assert [server.url("early-draft/"), ["addTodo", "disableTools", "listTodos", "setMode"]] in tabs.values()

        second = run("-")  # a new process sees the same tabs and tools, from the daemon's mirror
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout) == tabs

        # The daemon dies and another takes its place: this client and the browser both reconnect.
        browser = wm.connect(port, timeout=20)
        (flights,) = [t for t in browser.tabs if t.url == server.url("flights/")]
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
        eventually(lambda: not browser.connected, 10, "the client to notice the daemon is gone")
        start_daemon(port)
        assert flights.call("searchFlights", SEARCH).value["count"] > 0  # waits for the browser to return
        assert browser.connected
        browser.close()
    finally:
        chromium.close()
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


@pytest.mark.browser
def test_a_killed_kernel_leaves_no_browser_behind():
    child = textwrap.dedent(
        """
        import os, webmcp_nb as wm
        browser = wm.launch()
        print(browser.process.process.pid, flush=True)
        os.kill(os.getpid(), 9)
        """
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout.split()[0])

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    try:
        eventually(gone, 10, f"Chromium {pid} to die with the process that launched it")
    finally:
        if not gone():
            os.killpg(pid, signal.SIGKILL)
