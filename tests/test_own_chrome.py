"""The user's own Chrome, as a person sets it up and as another account attacks it: pairing through native
messaging, the daemon and the browser restarting, a squatter and a forged browser run as ``nobody``, a port
held by something else, the user-scripts toggle, several browsers, and what ``connect()`` says when no browser
comes. Browsers here are real Chromium processes with the packaged extension; the daemon is the real one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from cdp import playwright_context
from eventually import eventually
from ports import free_port

import webmcp_nb as wm
from webmcp_nb.browser.chromium import ChromiumProcess, extension_path
from webmcp_nb.browser.skills import Skill
from webmcp_nb.core import _loop
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link import listeners
from webmcp_nb.link.home import UnsafeHomeError, read_secret
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.link.relay import MAX_UNAUTHENTICATED
from webmcp_nb.own_chrome.connect import relay_status, start_daemon

SEARCH = {**DEMO_SEARCH, "tripType": "one-way", "passengers": 1}
NOBODY = 65534
SQUATTER = Path(__file__).parent / "squatter.py"


class Home:
    """This test's account: a webmcp-nb home, a config folder with a Chromium user-data folder, a relay port."""

    def __init__(self, root: Path) -> None:
        self.home = root / "state"
        self.config = root / "config"
        self.profile = self.config / "chromium"  # where `webmcp-nb pair` and doctor look for Chromium
        self.profile.mkdir(parents=True)  # as after the user started Chromium once
        self.port = free_port()
        self.env = {**os.environ, "WEBMCP_NB_HOME": str(self.home), "XDG_CONFIG_HOME": str(self.config)}

    def cli(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "webmcp_nb", *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def as_chrome(self, message: dict) -> dict:
        """Run the launcher `pair` wrote as Chrome runs it for the extension: in Chrome's environment (no
        WEBMCP_NB_*), with the extension's origin, one length-prefixed message in, one out."""
        data = json.dumps(message).encode()
        chrome = {k: v for k, v in os.environ.items() if not k.startswith("WEBMCP_NB_")}
        out = subprocess.run(
            [str(self.home / "native-host"), f"chrome-extension://{EXTENSION_ID}/"],
            input=struct.pack("=I", len(data)) + data,
            env=chrome,
            capture_output=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout[4:])

    def pair(self) -> None:
        out = self.cli("pair", "--port", str(self.port))
        assert out.returncode == 0, out.stderr
        assert str(self.profile) in out.stdout

    def chromium(self, url: str, **options) -> ChromiumProcess:
        """The user's own Chromium: the packaged extension, no config file, this profile (kept across restarts)."""
        return ChromiumProcess(None, profile=self.profile, url=url, **options)

    def daemon_pid(self) -> int | None:
        try:
            return int((self.home / f"relay-{self.port}.pid").read_text())
        except (OSError, ValueError):
            return None

    def pairings(self) -> int:
        path = self.home / "pairings.jsonl"
        return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.fixture
def account(tmp_path: Path, monkeypatch) -> Iterator[Home]:
    home = Home(tmp_path)
    monkeypatch.setenv("WEBMCP_NB_HOME", str(home.home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home.config))
    yield home
    pid = home.daemon_pid()
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


# ----- as a user sets it up -----


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_pairing_the_users_own_chromium_from_scratch(account: Home, server):
    from playwright.sync_api import expect

    account.pair()  # `webmcp-nb pair`: the host manifest in Chromium's folder, the launcher in the home
    chromium = account.chromium("about:blank", args=["--remote-debugging-port=0"])
    try:
        browser = wm.connect(account.port, timeout=60)  # starts the daemon; the extension pairs by itself
        flights = browser.open(server.url("flights/"))
        assert flights.call("searchFlights", SEARCH).value["count"] > 0
        assert account.pairings() == 1  # the native host gave the extension its secret, once
        assert not (extension_path() / "config.json").exists()  # nothing was copied by hand or by us

        with playwright_context(chromium.profile_dir) as seen:  # the options page says so; it can forget and pair
            page = seen.new_page()
            page.goto(f"chrome-extension://{EXTENSION_ID}/options/options.html")
            state = page.locator("#connection-state")
            expect(state).to_have_attribute("data-status", "connected", timeout=15_000)
            expect(state).to_contain_text(f"ws://127.0.0.1:{account.port}")
            expect(page.locator("#pairing-state")).to_contain_text("Paired with this computer")
            page.click("#forget-pairing")
            expect(state).to_have_attribute("data-status", "unpaired", timeout=15_000)
            eventually(lambda: not browser.connected, 15, "the forgotten browser to disconnect")
            page.click("#pair-now")
            expect(state).to_have_attribute("data-status", "connected", timeout=15_000)
        eventually(lambda: browser.connected, 20, "the browser to reconnect after pairing again")
        assert account.pairings() == 2

        # The daemon dies: the client restarts it, the extension reconnects, the call goes through.
        old = account.daemon_pid()
        os.kill(old, signal.SIGTERM)
        eventually(lambda: not browser.connected, 10, "the client to notice")  # a call in flight then would fail
        assert flights.call("searchFlights", SEARCH).value["count"] > 0
        assert account.daemon_pid() not in (None, old)

        # Chrome restarts: the stored pairing is used (no new pairing), a new connect() finds the new browser.
        chromium.close()
        chromium = account.chromium("about:blank")
        eventually(lambda: len(wm.browsers(account.port)) == 1, 30, "the restarted Chromium to connect")
        again = wm.connect(account.port, timeout=30)
        flights = again.open(server.url("flights/"))
        assert flights.call("searchFlights", SEARCH).value["count"] > 0
        assert account.pairings() == 2

        # The secret is rotated: the next connections need the new one; the extension, whose proof no longer
        # matches, asks the host once for it and carries on.
        old_secret = read_secret()
        rotated = account.cli("pair", "--rotate", "--port", str(account.port))
        assert rotated.returncode == 0 and read_secret() != old_secret
        os.kill(account.daemon_pid(), signal.SIGTERM)
        eventually(lambda: not again.connected, 10, "the client to notice")
        assert flights.call("searchFlights", SEARCH).value["count"] > 0
        assert account.pairings() == 3

        diagnosis = wm.doctor(account.port)
        lines = {c.name: c for c in diagnosis.checks}
        assert lines["relay"].status == "ok" and lines["host for Chromium"].status == "ok"
        assert lines["extension in Chromium, profile Default"].status == "ok"
        assert any(name.startswith("browser ") and c.status == "ok" for name, c in lines.items())
        (webmcp,) = [c for name, c in lines.items() if name.startswith("WebMCP in ")]
        flights_line = [part for part in webmcp.detail.split("; ") if "/flights/" in part]
        assert "native WebMCP off" in webmcp.detail and flights_line[0].endswith("the extension's polyfill")
        again.close()
        browser.close()
    finally:
        chromium.close()


@pytest.mark.timeout(120)
def test_pair_and_doctor_for_a_folder_named_and_the_port_in_the_environment(account: Home, tmp_path: Path):
    folder = tmp_path / "another browser"  # a user-data folder pair does not find by itself
    typo = account.cli("pair", "--user-data-dir", str(tmp_path / "another browsr"))
    assert typo.returncode == 2 and f"--user-data-dir {tmp_path / 'another browsr'} is not a folder that exists" in (
        typo.stderr
    )  # it used to make the folder, install there and exit 0
    assert "chrome://version" in typo.stderr and not (tmp_path / "another browsr").exists(), typo.stdout
    folder.mkdir()  # as after that browser's first start
    paired = account.cli("pair", "--user-data-dir", str(folder), WEBMCP_NB_PORT=str(account.port))  # no --port
    assert paired.returncode == 0, paired.stderr
    reply = account.as_chrome({"type": "pair", "extensionVersion": wm.__version__})  # the extension pairs
    assert reply["port"] == account.port and reply["secret"] == read_secret()
    doctor = account.cli("doctor", "--user-data-dir", str(folder), WEBMCP_NB_PORT=str(account.port))
    assert f"✓ host for {folder}: installed" in doctor.stdout, doctor.stdout
    assert "not installed" not in doctor.stdout and re.search(r"· last pairing: \d+ s ago", doctor.stdout)
    assert "✓ host launcher" in doctor.stdout


@pytest.mark.timeout(120)
def test_doctor_says_when_the_host_launcher_is_out_of_date(account: Home):
    account.pair()
    launcher = account.home / "native-host"
    script = launcher.read_text()
    assert "-m webmcp_nb.own_chrome.native_host" in script
    launcher.write_text(script.replace("webmcp_nb.own_chrome.native_host", "webmcp_nb.native_host"))  # an old layout
    line = {c.name: c for c in wm.doctor(account.port).checks}["host launcher"]
    assert line.status == "fail" and "No module named webmcp_nb.native_host" in line.detail, line
    assert "run `webmcp-nb pair" in line.fix and "again" in line.fix
    account.pair()
    assert {c.name: c for c in wm.doctor(account.port).checks}["host launcher"].status == "ok"


# ----- a home only this account may change -----


@pytest.mark.timeout(120)
def test_a_home_another_account_could_change_is_refused(tmp_path: Path, monkeypatch):
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("giving a folder to another account needs root; the suite is not root here")
    squatted = tmp_path / "webmcp-nb"  # made first by another account, with a launcher of its own
    squatted.mkdir(mode=0o755)
    planted = squatted / "native-host"
    planted.write_text("#!/bin/sh\n# theirs\n")
    for path in (squatted, planted):
        os.chown(path, NOBODY, NOBODY)
    browser = tmp_path / "browser"
    browser.mkdir()
    env = {**os.environ, "WEBMCP_NB_HOME": str(squatted)}
    out = subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "pair", "--user-data-dir", str(browser)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and f"{squatted} belongs to another account (nobody)" in out.stderr, out
    assert "set WEBMCP_NB_HOME to a folder of your own" in out.stderr
    assert planted.read_text() == "#!/bin/sh\n# theirs\n" and not any(browser.iterdir())  # nothing written

    monkeypatch.setenv("WEBMCP_NB_HOME", str(squatted))
    with pytest.raises(UnsafeHomeError):
        read_secret()
    with pytest.raises(UnsafeHomeError):
        wm.connect(free_port(), timeout=5)
    checks = wm.doctor().checks
    assert checks[-1].name == "home" and checks[-1].status == "fail" and "nobody" in checks[-1].detail
    assert not (squatted / "secret").exists()

    loose = tmp_path / "loose"  # this account's, but anyone may write in it
    loose.mkdir()
    loose.chmod(0o777)
    monkeypatch.setenv("WEBMCP_NB_HOME", str(loose))
    with pytest.raises(UnsafeHomeError) as info:
        read_secret()
    assert "writable by other accounts (mode 777)" in str(info.value) and f"chmod 700 {loose}" in info.value.fix

    theirs = tmp_path / "theirs"  # a folder of ours inside another account's: it could swap ours
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    monkeypatch.setenv("WEBMCP_NB_HOME", str(theirs / "home"))
    with pytest.raises(UnsafeHomeError) as info:
        read_secret()
    assert f"inside {theirs}, which belongs to nobody" in str(info.value)


@pytest.mark.timeout(120)
def test_nothing_is_written_through_a_symlink_in_the_home(account: Home, tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    account.home.mkdir(mode=0o700)
    links = ["native-host", "pairings.jsonl", f"relay-{account.port}.pid"]
    for name in links:
        (account.home / name).symlink_to(victim)
    account.pair()  # the launcher
    assert account.as_chrome({"type": "pair"})["port"] == account.port  # the pairing record
    start_daemon(account.port)  # the daemon's pid file
    eventually(lambda: account.daemon_pid() is not None, 20, "the daemon")
    assert victim.read_text() == "untouched\n"
    assert not [name for name in links if (account.home / name).is_symlink()]  # each replaced by a file of ours
    os.kill(account.daemon_pid(), signal.SIGTERM)

    (account.home / "relay.log").unlink()
    (account.home / "relay.log").symlink_to(victim)
    with pytest.raises(PermissionError) as info:
        start_daemon(account.port)
    assert "relay.log: cannot open it safely (it is a symlink, which is refused); delete it" in str(info.value)
    assert victim.read_text() == "untouched\n"


# ----- as another account attacks it -----


def _as_nobody(*args: str, **popen) -> subprocess.Popen:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("running the attacker as another account needs root (setpriv); the suite is not root here")
    if not shutil.which("setpriv") or not Path("/usr/bin/python3").exists():
        pytest.skip("setpriv or /usr/bin/python3 is missing: cannot run the attacker as nobody")
    folder = Path(tempfile.mkdtemp(prefix="webmcp-nb-attacker-"))
    folder.chmod(0o755)
    script = folder / "squatter.py"
    shutil.copy(SQUATTER, script)
    script.chmod(0o644)
    command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "/usr/bin/python3"]
    return subprocess.Popen([*command, str(script), *args], stdout=subprocess.PIPE, text=True, **popen)


def _records(process: subprocess.Popen) -> list[dict]:
    out, _ = process.communicate(timeout=30)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_a_squatter_of_another_account_gets_no_tab_data_no_secret_and_nothing_replayable(account: Home, server):
    account.pair()
    squatter = _as_nobody("listen", str(account.port), "12")
    assert squatter.stdout is not None
    assert json.loads(squatter.stdout.readline()) == {"listening": account.port, "uid": NOBODY}
    chromium = account.chromium(server.url("flights/?private=inbox-of-the-user"))
    try:
        started = time.monotonic()
        with pytest.raises(wm.PortInUseError) as info:
            wm.connect(account.port, timeout=30)
        took = time.monotonic() - started
        print(f"connect() refused the squatter in {took:.2f} s: {info.value}")
        # (a hang, as before this design, would end in pytest's timeout or connect()'s own NotConnectedError)
        assert f"port {account.port}" in str(info.value) and "another account" in str(info.value)
        time.sleep(4)  # the extension, paired, dials the squatter a few times meanwhile
        records = _records(squatter)
    finally:
        chromium.close()
        squatter.kill()
    secret = read_secret()
    messages = [json.loads(r["message"]) for r in records if "message" in r]
    roles = {m["params"]["role"] for m in messages}
    assert roles == {"browser", "client"}, records  # both the extension and the notebook knocked
    assert {m["method"] for m in messages} == {"auth.hello"}  # and said nothing else: no hello, no proof
    assert all(set(m["params"]) == {"role", "nonce", "version"} for m in messages)
    everything = json.dumps(records)
    assert secret not in everything and "inbox-of-the-user" not in everything and "searchFlights" not in everything
    assert "authorization" not in everything.lower()


@pytest.mark.timeout(120)
def test_a_squatter_cannot_make_the_notebook_take_in_a_big_message(account: Home):
    squatter = _as_nobody("listen", str(account.port), "6", "big")  # answers auth.hello with 64 MB
    assert squatter.stdout is not None
    assert json.loads(squatter.stdout.readline()) == {"listening": account.port, "uid": NOBODY}
    try:
        with pytest.raises(wm.PortInUseError) as info:
            wm.connect(account.port, timeout=30)
        records = _records(squatter)
    finally:
        squatter.kill()
    # Cut off at its header: until a listener has proved the secret, 4 KiB per message is all it may send.
    assert "message too big" in str(info.value) and "limit of 4096 bytes" in str(info.value), info.value
    assert [json.loads(r["message"])["method"] for r in records if "message" in r] == ["auth.hello"]


@pytest.mark.timeout(120)
def test_a_forged_browser_of_another_account_is_never_bound(account: Home):
    start_daemon(account.port)
    eventually(lambda: account.daemon_pid() is not None, 20, "the daemon")
    time.sleep(0.3)
    forged = _as_nobody("browser", str(account.port))
    records = _records(forged)
    assert records[0]["http"].startswith("HTTP/1.1 403") and records[0]["uid"] == NOBODY  # turned away at the door
    assert not [r for r in records if "message" in r] and records[-1] == {"gone": True}  # not even a nonce
    with pytest.raises(wm.BrowserNotFoundError) as info:
        wm.connect(account.port, timeout=2)
    assert "turned away 1 connection(s) of other accounts on this machine: nobody (1)" in str(info.value)
    assert wm.browsers(account.port) == []
    lines = {c.name: c for c in wm.doctor(account.port).checks}
    assert lines["relay: other accounts"].status == "warn" and "nobody (1)" in lines["relay: other accounts"].detail


@pytest.mark.timeout(120)
def test_another_account_cannot_keep_the_authentication_places_taken(account: Home):
    start_daemon(account.port)
    eventually(lambda: account.daemon_pid() is not None, 20, "the daemon")
    filler = _as_nobody("fill", str(account.port), "30")  # holds every place it gets, re-taking each one freed
    assert filler.stdout is not None
    try:
        assert json.loads(filler.stdout.readline()) == {"filling": account.port, "uid": NOBODY}
        tries = [json.loads(filler.stdout.readline())["status"] for _ in range(MAX_UNAUTHENTICATED)]
        # Every place would be taken now (for the relay's 5 s time limit, then again): this account's client.
        status = _loop.run(relay_status(account.port))
        tries.append(json.loads(filler.stdout.readline())["status"])  # (the filler was still at it)
    finally:
        filler.kill()
        filler.communicate(timeout=30)
    assert {t.split(" ", 2)[1] for t in tries} == {"403"}, tries  # no place taken: refused at the door
    assert status is not None, "this account's client was refused: the relay was busy authenticating others"
    assert status["authFailures"] == {} and status["otherAccounts"][str(NOBODY)] >= MAX_UNAUTHENTICATED, status


# ----- a set-up that never hangs or misleads -----


def test_a_chromium_for_a_relay_without_the_secret_is_refused_not_left_unconnected():
    with pytest.raises(wm.ConfigurationError) as info:
        ChromiumProcess("ws://127.0.0.1:9/browser")
    assert "needs secret=" in str(info.value)


@pytest.mark.timeout(120)
def test_doctor_reports_a_secret_others_can_read(account: Home):
    read_secret()
    start_daemon(account.port)
    eventually(lambda: account.daemon_pid() is not None, 20, "the daemon")
    secret = account.home / "secret"
    secret.chmod(0o644)
    # The daemon re-permissions the secret when doctor's client authenticates: doctor looks at it first.
    lines = {c.name: c for c in wm.doctor(account.port).checks}
    assert lines["relay"].status == "ok", lines["relay"]
    assert lines["pairing secret"].status == "fail" and "mode 644" in lines["pairing secret"].detail
    assert lines["pairing secret"].fix == f"chmod 600 {secret}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_the_port_holder_is_named_while_its_other_descriptors_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy process opens and closes descriptors while ``/proc`` is read: one closed between listing its
    descriptors and reading them must not hide the socket among the rest (it did under load)."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    mine, real, gone = f"/proc/{os.getpid()}/fd/", os.readlink, []

    def readlink(path: Any, *args: Any, **kwargs: Any) -> str:
        if str(path).startswith(mine) and not gone:  # the first of this process's descriptors has just closed
            gone.append(path)
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(listeners.os, "readlink", readlink)
    try:
        holder = listeners.find_holder(held.getsockname()[1])
    finally:
        held.close()
    assert gone and holder is not None and holder.pid == os.getpid()


@pytest.mark.timeout(120)
def test_a_port_held_by_another_program_fails_fast_and_doctor_names_it(account: Home):
    silent = socket.socket()
    silent.bind(("127.0.0.1", account.port))
    silent.listen(8)  # accepts, never answers
    try:
        started = time.monotonic()
        with pytest.raises(wm.PortInUseError) as info:
            wm.connect(account.port, timeout=30)
        took = time.monotonic() - started
        print(f"silent listener: {took:.2f} s: {info.value}")
        assert f"port {account.port}" in str(info.value)
        assert f"pid {os.getpid()}" in str(info.value) and "WEBMCP_NB_PORT" in str(info.value)
        relay = {c.name: c for c in wm.doctor(account.port).checks}["relay"]
        assert relay.status == "fail" and f"pid {os.getpid()}" in relay.detail
        second = account.cli("relay", "--port", str(account.port))
        assert second.returncode == 1 and f"port {account.port} is in use by another program" in second.stderr
        assert f"pid {os.getpid()}" in second.stderr
    finally:
        silent.close()

    http = HTTPServer(("127.0.0.1", account.port), SimpleHTTPRequestHandler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        with pytest.raises(wm.PortInUseError) as info:
            wm.connect(account.port, timeout=30)
        assert "HTTP" in str(info.value)
    finally:
        http.shutdown()
        http.server_close()

    start_daemon(account.port)  # our own daemon already there: a second one says which process it is
    eventually(lambda: account.daemon_pid() is not None, 20, "the daemon")
    second = account.cli("relay", "--port", str(account.port))
    assert second.returncode == 1 and f"already running there (pid {account.daemon_pid()})" in second.stderr


@pytest.mark.timeout(60)  # a hang guard; the figure is printed, not asserted
def test_a_listener_that_goes_mute_after_the_handshake_is_hung_up_on(account: Home):
    mute = subprocess.Popen(
        [sys.executable, str(SQUATTER), "listen", str(account.port), "30", "mute"], stdout=subprocess.PIPE, text=True
    )
    assert mute.stdout is not None
    assert json.loads(mute.stdout.readline())["listening"] == account.port
    try:
        started = time.monotonic()
        with pytest.raises(wm.PortInUseError) as info:
            wm.connect(account.port, timeout=30)
        print(f"a mute listener refused in {time.monotonic() - started:.2f} s: {info.value}")
    finally:
        mute.kill()
    records = _records(mute)
    message = str(info.value)
    assert f"port {account.port}" in message and "did not prove this account's pairing secret" in message
    assert [json.loads(r["message"])["method"] for r in records if "message" in r] == ["auth.hello"]
    # It never proved the secret: the client hung up without offering a closing handshake it would wait for.
    assert {"peer": 1, "gone": True} in records and not [r for r in records if r.get("closed")], records


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_a_call_with_the_relay_gone_fails_fast_with_the_next_step(account: Home, server):
    relay_url = f"ws://127.0.0.1:{account.port}/browser"
    chromium = ChromiumProcess(relay_url, secret=read_secret(), url=server.url("flights/"))
    try:
        browser = wm.connect(account.port, timeout=30)
        flights = eventually(  # connect() returns once the browser is there, maybe before its tab has loaded
            lambda: next((t for t in browser.tabs if t.url == server.url("flights/")), None), 20, "the flights tab"
        )
        browser._connection._on_refused = None  # as with start_relay=False: nobody restarts the daemon
        os.kill(account.daemon_pid(), signal.SIGKILL)
        eventually(lambda: not browser.connected, 10, "the client to notice")
        started = time.monotonic()
        with pytest.raises(wm.NotConnectedError) as info:  # not ToolTimeoutError: no waiting out the call
            flights.call("searchFlights", SEARCH, timeout=30)
        took = time.monotonic() - started
        print(f"a call with the relay gone failed in {took:.2f} s: {info.value}")
        assert "wm.connect()" in str(info.value) and "webmcp-nb doctor" in str(info.value)
        browser.close()
    finally:
        chromium.close()


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_several_browsers_are_listed_and_must_be_chosen(account: Home, server):
    secret = read_secret()
    relay_url = f"ws://127.0.0.1:{account.port}/browser"
    first = ChromiumProcess(relay_url, secret=secret, url=server.url("flights/"))
    second = ChromiumProcess(relay_url, secret=secret, url=server.url("early-draft/"))
    try:
        start_daemon(account.port)
        eventually(lambda: len(wm.browsers(account.port)) == 2, 40, "both browsers")
        listed = wm.browsers(account.port)
        assert all(b.extension_version == wm.__version__ and b.tabs >= 1 and "Chrom" in b.name for b in listed)
        with pytest.raises(wm.BrowserNotFoundError) as info:
            wm.connect(account.port, timeout=5)
        assert "2 browsers are connected" in str(info.value) and all(b.id in str(info.value) for b in listed)
        with pytest.raises(wm.BrowserNotFoundError) as info:
            wm.connect(account.port, timeout=1, browser_id="no-such-browser")
        assert "no-such-browser" in str(info.value) and all(b.id in str(info.value) for b in listed)
        chosen = wm.connect(account.port, browser_id=listed[1].id, timeout=10)
        assert chosen.id == listed[1].id and chosen.tabs
        chosen.close()
    finally:
        first.close()
        second.close()


def test_connect_says_why_no_browser_came(account: Home, polyfill_browser):
    # A Chromium is running (the fixture's, connected elsewhere): what is missing is said, step by step.
    def why() -> str:
        with pytest.raises(wm.BrowserNotFoundError) as info:
            wm.connect(account.port, timeout=1)
        return str(info.value)

    assert polyfill_browser.process is not None
    first = why()
    assert "running, but no webmcp-nb extension connected" in first and "run `webmcp-nb pair`" in first
    account.pair()
    second = why()
    assert "never asked to pair" in second and "Load unpacked" in second and str(extension_path()) in second
    (account.home / "pairings.jsonl").write_text(json.dumps({"time": time.time(), "browser": "chromium"}) + "\n")
    assert "paired before but is not connected" in why()


def _inject_once_allowed(tab: wm.Tab, skill: Skill) -> wm.InjectionResult | None:
    """The injection, or ``None`` while Chrome has not yet given the running worker ``chrome.userScripts``."""
    try:
        return tab.inject(skill)
    except wm.PermissionDeniedError:
        return None


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_turning_user_scripts_on_takes_effect_without_restarting_chrome(server):
    skill = Skill.load(Path(__file__).resolve().parents[1] / "skills" / "shop")
    with pytest.warns(wm.UserScriptsWarning):
        browser = wm.launch(user_scripts=False, args=["--remote-debugging-port=0"])
    try:
        tab = browser.open(server.url("shop/"))
        with pytest.raises(wm.PermissionDeniedError, match="Allow User Scripts"):
            tab.inject(skill)
        assert "shop" not in browser.skills  # a failed inject leaves nothing installed

        with playwright_context(browser.process.profile_dir) as seen:  # what the user does: the extension's toggle
            page = seen.new_page()
            page.goto(f"chrome://extensions/?id={EXTENSION_ID}")
            page.evaluate(
                """(id) => new Promise((resolve) => chrome.developerPrivate.updateExtensionConfiguration(
                     {extensionId: id, userScriptsAccess: true}, resolve))""",
                EXTENSION_ID,
            )
        result = eventually(lambda: _inject_once_allowed(tab, skill), 30, "the toggle to reach the running worker")
        assert result.ok and "readCart" in tab.tools  # the same browser, the same worker: no restart
        eventually(lambda: browser.info.user_scripts, 10, "the browser to report user scripts on")
        assert any(e.kind == "browser.updated" and e.data["user_scripts"] for e in browser.events.events)
    finally:
        browser.close()
