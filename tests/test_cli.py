"""The command line and the messages a new user meets first."""

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port
from session_files import write_session

from webmcp_nb import __version__
from webmcp_nb.browser.chromium import extension_path


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                yield from _parsers(command)


def test_every_command_and_option_says_what_it_does_in_plain_text():
    from webmcp_nb.cli import parser

    missing, markup = [], []
    for command in _parsers(parser()):
        if not command.description:
            missing.append(f"{command.prog}: no description")
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{command.prog} {a.dest}: no help" for a in action._choices_actions if not a.help]
            elif not action.help:
                missing.append(f"{command.prog} {'/'.join(action.option_strings) or action.dest}: no help")
        if "``" in command.format_help():
            markup.append(command.prog)
    assert not missing, "\n".join(missing)
    assert not markup, f"reStructuredText markup in the help of: {markup}"


def test_without_a_command_it_prints_its_help_and_starts_nothing():
    out = _cli()
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: webmcp-nb") and "COMMAND --help" in out.stdout
    commands = ("demo", "replay", "eval", "relay", "mcp", "mcp-config", "pair", "grants", "doctor", "browsers")
    for command in (*commands, "serve-demo"):
        assert f"\n    {command} " in out.stdout, command
    assert "listFlights" not in out.stdout and not out.stderr  # no demo ran
    version = _cli("--version")
    assert version.returncode == 0 and version.stdout == f"webmcp-nb {__version__}\n"


def test_browsers_fails_when_no_relay_runs(tmp_path: Path):
    port = free_port()  # nothing listens there
    env = {**os.environ, "WEBMCP_NB_HOME": str(tmp_path), "WEBMCP_NB_PORT": str(port)}
    out = _cli("browsers", env=env)
    assert out.returncode == 1 and f"no relay is running on 127.0.0.1:{port}" in out.stderr, out


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


def test_replay_runs_the_calls_made_by_hand_before_the_turn_they_set_up(polyfill_browser, server, tmp_path: Path):
    """A session whose agent turn counted the flights the user had searched and filtered by hand: replayed in agent
    mode (the default) it said "0 steps, 1 diverged … stopped 3 call(s) short", the turn run on a fresh page without
    the calls that set it up. Those run first, as the recording made them."""
    import webmcp_nb as wm
    from webmcp_nb.demo.run import DEMO_SEARCH
    from webmcp_nb.testing import ScriptedServer, call, say

    tab = polyfill_browser.open(server.url("flights/"))
    try:
        with wm.Session(polyfill_browser, directory=tmp_path / "s", evidence="off") as session:
            tab.call("searchFlights", **DEMO_SEARCH)
            tab.call("setFilters", stops=[0])
            with ScriptedServer([call("listFlights"), say("4 direct flights")]) as model:
                agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", session=session)
                agent.run("how many flights are left?")
    finally:
        tab.close()
    out = _cli("replay", str(tmp_path / "s"), "--url", server.url("flights/"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "replay: 3 steps (2 of them made by hand), every result as recorded" in out.stdout, out.stdout


@pytest.mark.slow
def test_replay_with_allow_high_risk_runs_a_high_risk_call(server, tmp_path: Path):
    """`webmcp-nb replay --allow-high-risk` said it lets the replay run high-risk tools, but its default --confirm
    high asked about them, nobody answers in a shell, and sendPayment was denied (exit 1). It runs now; with a
    --confirm that asks about high risk, the two options contradict each other and it says so."""
    paid = [
        ("tool.called", {"tool": "sendPayment", "arguments": {"amount": 5}, "origin": "notebook"}),
        ("tool.returned", {"tool": "sendPayment", "text": '{"sent": 5}'}),
    ]
    folder = write_session(tmp_path / "paid", server.url("t/risk.html"), paid, name="paid")

    denied = _cli("replay", str(folder))
    assert denied.returncode == 1 and "not run: sendPayment" in denied.stdout, denied.stdout + denied.stderr
    allowed = _cli("replay", str(folder), "--allow-high-risk")
    assert allowed.returncode == 0 and "replay: 1 steps, every result as recorded" in allowed.stdout, allowed
    both = _cli("replay", str(folder), "--allow-high-risk", "--confirm", "high")
    assert both.returncode == 2 and "--allow-high-risk with --confirm high runs no high-risk call" in both.stderr


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


@pytest.mark.parametrize("option", ["--headed", "--native-webmcp"])
def test_mcp_refuses_a_launch_option_without_launch(option: str):
    """They were accepted and ignored: the server used the relay's browser, neither headed nor native."""
    out = subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "mcp", option, "--port", str(free_port())],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert f"webmcp-nb mcp: {option} needs --launch:" in out.stderr and "Add --launch, or leave it out" in out.stderr


@pytest.mark.parametrize("option", [("--port", "17830"), ("--browser-id", "b1")])
def test_mcp_refuses_a_relay_option_with_launch(option: tuple[str, str]):
    """They were accepted and ignored: --launch starts its own relay and Chromium."""
    out = subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "mcp", "--launch", *option],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert f"webmcp-nb mcp: {option[0]} does nothing with --launch:" in out.stderr
    assert "Leave it out, or drop --launch." in out.stderr
