"""``webmcp-nb mcp-config``: the entry it prints starts ``webmcp-nb mcp`` in clients nobody here wrote (the MCP
Inspector's CLI with ``--config``, fastmcp's ``Client`` from the same JSON a desktop app reads) run as a desktop app
runs it — an empty ``PATH``, almost no environment — and ``tools/list`` answers with the fixed tools (no browser is
connected: the server starts its relay and waits for one). ``--write`` merges the entry into each client's file,
keeping every other entry and a backup, and refuses a file it cannot read."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_peers import node_tool
from ports import free_port

from webmcp_nb.mcp.desktop import CLIENTS
from webmcp_nb.mcp.server import FIXED_TOOLS

FIXED = sorted(tool.name for tool in FIXED_TOOLS)
FASTMCP_LIST = """
import asyncio, json, sys
from fastmcp import Client

async def main():
    async with Client(json.load(open(sys.argv[1])), init_timeout=60, timeout=60) as client:
        print(json.dumps(sorted(tool.name for tool in await client.list_tools())))

asyncio.run(main())
"""


def mcp_config(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "webmcp_nb", "mcp-config", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


@pytest.fixture
def setting(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The shell a user runs mcp-config in: a home of its own and a port of its own (the entry carries both); the
    relay the servers start there is stopped afterwards."""
    port = str(free_port())
    env = {**os.environ, "WEBMCP_NB_HOME": str(tmp_path / "home"), "WEBMCP_NB_PORT": port}
    yield env
    pid_file = tmp_path / "home" / f"relay-{port}.pid"
    if pid_file.exists():
        os.kill(int(pid_file.read_text()), signal.SIGTERM)


def as_desktop_app(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` as a desktop app starts things: no PATH, no virtualenv, a bare environment."""
    bare = {"PATH": "", "HOME": str(cwd)}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=bare, cwd=cwd)


def mcp_servers(client: str, printed: str) -> dict[str, Any]:
    """A client's printed config as the ``mcpServers`` JSON fastmcp and the Inspector read."""
    data = pytest.importorskip("tomllib").loads(printed) if CLIENTS[client].toml else json.loads(printed)
    return {"mcpServers": data[CLIENTS[client].servers_key]}


@pytest.mark.slow
def test_the_printed_config_starts_in_the_inspector_and_fastmcp_with_an_empty_path(
    setting: dict[str, str], tmp_path: Path
) -> None:
    printed = {client: mcp_config(client, env=setting) for client in ("inspector", "claude-desktop", "vscode", "codex")}
    for client, out in printed.items():
        assert out.returncode == 0, out.stderr
        entry = next(iter(mcp_servers(client, out.stdout)["mcpServers"].values()))
        assert Path(entry["command"]).is_absolute() and entry["args"][-1] == "mcp"
        assert entry["env"] == {
            "WEBMCP_NB_HOME": setting["WEBMCP_NB_HOME"],
            "WEBMCP_NB_PORT": setting["WEBMCP_NB_PORT"],
        }
    assert (
        "--write" in printed["claude-desktop"].stderr
        and "claude_desktop_config.json" in printed["claude-desktop"].stderr
    )

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the MCP Inspector cannot run")
    config = tmp_path / "inspector.json"
    config.write_text(printed["inspector"].stdout)
    inspector = [node, str(node_tool("mcp-inspector")), "--cli", "--format", "json", "-q", "--connect-timeout", "60000"]
    listed = as_desktop_app(
        [*inspector, "--config", str(config), "--server", "webmcp-nb", "--method", "tools/list"], tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    assert sorted(tool["name"] for tool in json.loads(listed.stdout)["result"]["tools"]) == FIXED

    script = tmp_path / "fastmcp_list.py"
    script.write_text(FASTMCP_LIST)
    for client in ("claude-desktop", "vscode", "codex"):
        config = tmp_path / f"{client}.json"
        config.write_text(json.dumps(mcp_servers(client, printed[client].stdout)))
        listed = as_desktop_app([sys.executable, str(script), str(config)], tmp_path)
        assert listed.returncode == 0, (client, listed.stderr)
        assert json.loads(listed.stdout) == FIXED, client


def test_the_entry_carries_the_mcp_options_and_refuses_the_ones_that_do_not_fit(
    setting: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "overrides.yaml").write_text("searchFlights:\n  description: Search flights.\n")
    given = ["--launch", "--url", "https://example.com/", "--ask-timeout", "90", "--overrides", "overrides.yaml"]
    out = mcp_config("cursor", *given, "--name", "flights", env=setting, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["flights"]
    assert entry["args"][entry["args"].index("mcp") :] == ["mcp", *given[:-1], str(tmp_path / "overrides.yaml")]
    for args, said in (
        (["--headed"], "--headed needs --launch"),
        (["--name", "my server"], "--name 'my server': use letters, digits"),
        (["--overrides", "nowhere.yaml"], "--overrides"),
        (["--config-file", "x.json"], "--config-file is where --write puts the entry"),
        (["inspector", "--write"], "the MCP Inspector has no config file of its own: give --config-file PATH"),
    ):
        refused = mcp_config(*args, env=setting, cwd=tmp_path)
        assert refused.returncode == 2 and f"webmcp-nb mcp-config: {said}" in refused.stderr, (args, refused.stderr)


def test_write_merges_the_entry_keeping_every_other_entry_and_a_backup(setting: dict[str, str], tmp_path: Path) -> None:
    theirs = {
        "mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}},
        "globalShortcut": "Ctrl+Space",
    }
    file = tmp_path / "claude_desktop_config.json"
    file.write_text(json.dumps(theirs))
    file.chmod(0o600)
    link = tmp_path / "linked.json"  # a dotfiles manager's link: written where it points, the link kept
    link.symlink_to(file)
    ours = json.loads(mcp_config("claude-desktop", env=setting).stdout)["mcpServers"]["webmcp-nb"]

    first = mcp_config("claude-desktop", "--write", "--config-file", str(link), env=setting)
    assert first.returncode == 0, first.stderr
    assert f"added the webmcp-nb entry in {link}; the old file is kept as " in first.stdout
    assert "Next: quit and reopen Claude Desktop." in first.stdout
    data = json.loads(file.read_text())
    assert data == {**theirs, "mcpServers": {**theirs["mcpServers"], "webmcp-nb": ours}}
    assert link.is_symlink() and (file.stat().st_mode & 0o777) == 0o600
    (backup,) = tmp_path.glob("claude_desktop_config.json.*.bak")
    assert json.loads(backup.read_text()) == theirs

    again = mcp_config("claude-desktop", "--write", "--config-file", str(file), env=setting)
    assert again.returncode == 0 and "already has this webmcp-nb entry: nothing changed" in again.stdout
    assert len(list(tmp_path.glob("*.bak"))) == 1
    other = mcp_config("claude-desktop", "--write", "--config-file", str(file), "--launch", env=setting)
    assert other.returncode == 0 and "replaced the webmcp-nb entry" in other.stdout
    assert json.loads(file.read_text())["mcpServers"]["webmcp-nb"]["args"][-2:] == ["mcp", "--launch"]
    assert json.loads(file.read_text())["mcpServers"]["memory"] == theirs["mcpServers"]["memory"]
    assert len(list(tmp_path.glob("*.bak"))) == 2


def test_write_finds_each_clients_own_file_and_edits_codex_toml_in_place(
    setting: dict[str, str], tmp_path: Path
) -> None:
    tomllib = pytest.importorskip("tomllib")
    codex = tmp_path / "codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        textwrap.dedent("""\
        # my settings
        model = "gpt-5"

        [mcp_servers.webmcp-nb]
        command = "webmcp-nb"  # the old README's entry, which did not start
        args = ["mcp"]

        [mcp_servers.webmcp-nb.env]
        FOO = "1"

        [mcp_servers.other]
        command = "other"
        """)
    )
    env = {**setting, "CODEX_HOME": str(codex), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    out = mcp_config("codex", "--write", env=env)
    assert out.returncode == 0 and f"replaced the webmcp-nb entry in {codex / 'config.toml'}" in out.stdout
    text = (codex / "config.toml").read_text()
    data = tomllib.loads(text)
    assert data["model"] == "gpt-5" and data["mcp_servers"]["other"] == {"command": "other"}
    assert (
        data["mcp_servers"]["webmcp-nb"]
        == tomllib.loads(mcp_config("codex", env=env).stdout)["mcp_servers"]["webmcp-nb"]
    )
    assert text.startswith("# my settings\n") and "FOO" not in text

    for client, file in (
        ("claude-desktop", tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"),
        ("vscode", tmp_path / "xdg" / "Code" / "User" / "mcp.json"),
        ("cursor", tmp_path / ".cursor" / "mcp.json"),
    ):
        made = mcp_config(client, "--write", env=env)
        assert made.returncode == 0 and f"added the webmcp-nb entry in {file}" in made.stdout, made.stderr
        servers = json.loads(file.read_text())[CLIENTS[client].servers_key]
        assert servers["webmcp-nb"]["command"] == data["mcp_servers"]["webmcp-nb"]["command"]
    assert json.loads((tmp_path / "xdg" / "Code" / "User" / "mcp.json").read_text())["servers"]["webmcp-nb"]["type"]


@pytest.mark.parametrize(
    ("client", "text", "said"),
    [
        ("vscode", '{\n  // my servers\n  "servers": {}\n}\n', "comments and trailing commas are not JSON"),
        ("cursor", '{"mcpServers": ["a"]}', "its 'mcpServers' is list, not an object of servers"),
        ("claude-desktop", "[1]", "holds list, not an object of settings"),
        ("codex", "[mcp_servers\n", "is not TOML this command can read"),
        ("codex", 'mcp_servers = { webmcp-nb = { command = "x" } }\n', "in a form this command does not edit"),
    ],
)
def test_write_refuses_a_file_it_cannot_read_and_writes_nothing(
    client: str, text: str, said: str, setting: dict[str, str], tmp_path: Path
) -> None:
    file = tmp_path / "config"
    file.write_text(text)
    out = mcp_config(client, "--write", "--config-file", str(file), env=setting)
    assert out.returncode == 2 and said in out.stderr and "nothing was written" in out.stderr, out.stderr
    assert file.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["config"]


def test_each_clients_own_file_on_each_system() -> None:
    home = Path("/home/u")
    where = {
        (key, system): CLIENTS[key].default_file({"APPDATA": "/appdata"} if system == "win32" else {}, system, home)
        for key in CLIENTS
        for system in ("darwin", "win32", "linux")
    }
    support = home / "Library" / "Application Support"
    assert where["claude-desktop", "darwin"] == support / "Claude" / "claude_desktop_config.json"
    assert where["claude-desktop", "win32"] == Path("/appdata") / "Claude" / "claude_desktop_config.json"
    assert where["claude-desktop", "linux"] == home / ".config" / "Claude" / "claude_desktop_config.json"
    assert where["vscode", "darwin"] == support / "Code" / "User" / "mcp.json"
    assert where["vscode", "win32"] == Path("/appdata") / "Code" / "User" / "mcp.json"
    assert {where["cursor", s] for s in ("darwin", "win32", "linux")} == {home / ".cursor" / "mcp.json"}
    assert {where["codex", s] for s in ("darwin", "win32", "linux")} == {home / ".codex" / "config.toml"}
    assert {where["inspector", s] for s in ("darwin", "win32", "linux")} == {None}
