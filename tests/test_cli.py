"""The command line and the messages a new user meets first."""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import webmcp_nb as wm
from webmcp_nb.chromium import extension_path


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_extension_path_points_at_a_loadable_extension():
    out = _cli("extension-path")
    path = Path(out.stdout.strip())
    assert out.returncode == 0 and path == extension_path()
    assert (path / "manifest.json").exists() and (path / "bridge.js").exists()


def test_demo_lists_and_calls_the_flight_tools(tmp_path: Path):
    out = _cli("demo", "--report", str(tmp_path / "report.html"))
    assert out.returncode == 0, out.stderr
    assert "searchFlights(*, origin: str" in out.stdout
    assert "listFlights()  [polyfill, read-only]" in out.stdout
    assert "listFlights → 15 flights" in out.stdout
    assert "readCart()  [shop, read-only]" in out.stdout
    assert "readCart → 2 × Headlamp, total 37.50" in out.stdout
    assert "replay: 3 steps, every result as recorded" in out.stdout
    assert "listFlights" in (tmp_path / "report.html").read_text()


def test_connect_without_a_browser_says_how_to_load_the_extension(tmp_path: Path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    try:
        with pytest.raises(wm.BrowserNotFoundError) as info:
            wm.connect(port, timeout=1)
        message = str(info.value)
        assert "chrome://extensions" in message and "Load unpacked" in message
        assert str(extension_path()) in message and str(port) in message
    finally:
        pid_file = tmp_path / f"relay-{port}.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_concurrent_first_users_agree_on_one_private_token(tmp_path: Path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from webmcp_nb.home import read_token

    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    with ThreadPoolExecutor(8) as pool:
        tokens = set(pool.map(lambda _: read_token(), range(16)))
    assert len(tokens) == 1 and len(tokens.pop()) >= 32
    assert oct((tmp_path / "token").stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir()] == ["token"]  # no temporary files left behind
