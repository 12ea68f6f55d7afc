"""The command line and the messages a new user meets first."""

import subprocess
import sys
from pathlib import Path

import pytest

from webmcp_nb.browser.chromium import extension_path


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_extension_path_points_at_a_loadable_extension():
    out = _cli("extension-path")
    path = Path(out.stdout.strip())
    assert out.returncode == 0 and path == extension_path()
    assert (path / "manifest.json").exists() and (path / "page" / "main" / "bridge.js").exists()


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


def test_concurrent_first_users_agree_on_one_private_secret(tmp_path: Path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from webmcp_nb.link.home import read_secret

    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    with ThreadPoolExecutor(8) as pool:
        found = set(pool.map(lambda _: read_secret(), range(16)))
    assert len(found) == 1 and len(found.pop()) >= 32
    assert oct((tmp_path / "secret").stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]  # no temporary files left behind


def test_the_package_and_the_extension_have_one_version():
    import json
    from importlib.metadata import version

    import webmcp_nb as wm

    manifest = json.loads((extension_path() / "manifest.json").read_text())
    assert manifest["version"] == wm.__version__ == version("webmcp-nb")


@pytest.mark.timeout(300)
def test_the_wheel_ships_the_library_and_the_extension_not_the_benchmark(tmp_path: Path):
    import zipfile

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("webmcp_nb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "webmcp_nb/_extension/manifest.json" in names and "webmcp_nb/_skills/shop/tools.js" in names
    assert "webmcp_nb/py.typed" in names and "webmcp_nb/evals/suites/flights.yaml" in names
    assert not [n for n in names if n.startswith("bench/") or "benchmark" in n or "harness" in n]
