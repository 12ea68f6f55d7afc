"""``webmcp-nb mcp-config``: the entry a desktop MCP client needs to start ``webmcp-nb mcp``, and its merge into
that client's config file.

A desktop app does not run a shell: a virtualenv's ``bin/`` is not on its ``PATH``, and a bare ``webmcp-nb`` fails
to start (``spawn webmcp-nb ENOENT``). So the entry names the installed script by its absolute path (or this
Python with ``-m webmcp_nb`` when there is no script), and carries ``WEBMCP_NB_HOME`` and ``WEBMCP_NB_PORT`` when
they are set here, since the app's environment does not have them either.

Merging keeps everything else in the file: other servers, other settings. The old file is copied aside first; a
file that does not parse is refused, never overwritten; a symlinked file is written where it points.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.scripts import installed_script

__all__ = ["CLIENTS", "DesktopClient", "Launch", "ConfigFileError", "launch_entry", "merge"]

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""An entry's name: what every client accepts as a key (and TOML as a bare key)."""
CARRIED = ("WEBMCP_NB_HOME", "WEBMCP_NB_PORT")
"""The variables the entry carries when they are set here: the app that starts the server has neither."""


class ConfigFileError(ValueError):
    """A client's config file this command will not change (it does not parse, or holds the servers in a form it
    does not edit); nothing was written."""


@dataclass(frozen=True)
class Launch:
    """How ``webmcp-nb mcp`` starts from an app with no shell: an absolute command, its arguments, its env."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


def launch_entry(mcp_args: Sequence[str], environ: Mapping[str, str] | None = None) -> Launch:
    """``webmcp-nb mcp MCP_ARGS`` as an app starts it: the installed script by its absolute path (else this
    Python with ``-m webmcp_nb``), and the webmcp-nb variables set in ``environ`` (default: this process's)."""
    environ = os.environ if environ is None else environ
    script = installed_script("webmcp-nb")
    command, first = (script, ()) if script else (sys.executable, ("-m", "webmcp_nb"))
    env = {key: environ[key] for key in CARRIED if environ.get(key)}
    if "WEBMCP_NB_HOME" in env:
        env["WEBMCP_NB_HOME"] = str(Path(env["WEBMCP_NB_HOME"]).expanduser().absolute())
    return Launch(command, (*first, "mcp", *mcp_args), env)


def _app_data(environ: Mapping[str, str], platform: str, home: Path) -> Path:
    """Where desktop apps keep their settings: Application Support (macOS), %APPDATA% (Windows), else
    $XDG_CONFIG_HOME or ~/.config."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")


@dataclass(frozen=True)
class DesktopClient:
    """A desktop MCP client: its name, where its config file is, and how that file lists servers."""

    key: str
    title: str
    servers_key: str
    """The table of servers in its file: ``mcpServers``, ``servers`` (VS Code) or ``mcp_servers`` (Codex)."""
    toml: bool = False
    stdio_type: bool = False
    """Whether an entry says ``"type": "stdio"`` (VS Code requires it; the Inspector reads it)."""
    restart: str = ""
    """What to do after the file changed, for the entry to start."""

    def default_file(
        self, environ: Mapping[str, str] | None = None, platform: str | None = None, home: Path | None = None
    ) -> Path | None:
        """The client's own config file on this system (``None``: it has none; the Inspector reads the file it is
        given)."""
        environ = os.environ if environ is None else environ
        platform = platform or sys.platform
        home = home or Path.home()
        if self.key == "claude-desktop":
            return _app_data(environ, platform, home) / "Claude" / "claude_desktop_config.json"
        if self.key == "vscode":
            return _app_data(environ, platform, home) / "Code" / "User" / "mcp.json"
        if self.key == "cursor":
            return home / ".cursor" / "mcp.json"
        if self.key == "codex":
            return Path(environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
        return None

    def entry(self, launch: Launch) -> dict[str, Any]:
        """The server's entry as this client writes it."""
        entry: dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        entry |= {"command": launch.command, "args": list(launch.args)}
        if launch.env:
            entry["env"] = dict(launch.env)
        return entry

    def text(self, name: str, launch: Launch) -> str:
        """The whole config this client reads, with only this entry in it: what ``mcp-config`` prints."""
        if self.toml:
            return _toml_table(name, self.entry(launch))
        return json.dumps({self.servers_key: {name: self.entry(launch)}}, indent=2, ensure_ascii=False) + "\n"


CLIENTS = {
    client.key: client
    for client in (
        DesktopClient("claude-desktop", "Claude Desktop", "mcpServers", restart="quit and reopen Claude Desktop"),
        DesktopClient("cursor", "Cursor", "mcpServers", restart="Cursor starts it (Settings → MCP shows it)"),
        DesktopClient(
            "vscode", "VS Code", "servers", stdio_type=True, restart="VS Code starts it (MCP: List Servers shows it)"
        ),
        DesktopClient("codex", "Codex", "mcp_servers", toml=True, restart="start Codex again (/mcp lists it)"),
        DesktopClient("inspector", "the MCP Inspector", "mcpServers", stdio_type=True),
    )
}
"""The clients ``mcp-config`` knows, by the name the command takes."""


# ----- TOML (Codex): written by hand, checked by reading it back -----


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but DEL must be escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{_toml_string(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"


def _toml_table(name: str, entry: Mapping[str, Any]) -> str:
    return f"[mcp_servers.{name}]\n" + "".join(f"{key} = {_toml_value(value)}\n" for key, value in entry.items())


def _read_toml(text: str, file: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise ConfigFileError(
            f"reading {file} safely needs Python 3.11 or later (tomllib); nothing was written: paste the printed "
            "entry into it by hand"
        ) from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{file} is not TOML this command can read ({exc}); nothing was written") from None
    return data


def _without_table(text: str, key: str, name: str) -> str:
    """``text`` without the table ``[key.name]`` and its sub-tables (each up to the next table header)."""
    ours = re.compile(rf"""^\s*\[\s*{key}\s*\.\s*(?:{name}|"{name}"|'{name}')\s*[.\]]""")
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if re.match(r"^\s*\[", line):
            skipping = bool(ours.match(line))
        if not skipping:
            kept.append(line)
    return "".join(kept)


# ----- merging -----


@dataclass(frozen=True)
class Merged:
    """What ``merge`` did: ``added``, ``replaced`` or ``unchanged``; the backup of the old file, if one was made."""

    file: Path
    done: str
    backup: Path | None


def _servers(data: Any, client: DesktopClient, file: Path) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigFileError(f"{file} holds {type(data).__name__}, not an object of settings; nothing was written")
    servers = data.get(client.servers_key, {})
    if not isinstance(servers, dict):
        raise ConfigFileError(
            f"{file}: its {client.servers_key!r} is {type(servers).__name__}, not an object of servers; nothing "
            "was written"
        )
    return servers


def merge(client: DesktopClient, name: str, launch: Launch, file: Path) -> Merged:
    """Put the entry ``name`` into ``file`` (made if missing), keeping every other entry and setting; the old file
    is copied aside first. ``ConfigFileError`` (nothing written) for a file that does not parse as the client's
    format, or whose servers are in a form this does not edit."""
    file = file.expanduser().absolute()
    target = file.resolve()  # a symlinked file (dotfiles) is written where it points, the link kept
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    entry = client.entry(launch)
    if client.toml:
        data = _read_toml(text, file)
        old = _servers(data, client, file).get(name)
        if old == entry:
            return Merged(file, "unchanged", None)
        kept = _without_table(text, client.servers_key, name) if old is not None else text
        new = kept.rstrip("\n") + ("\n\n" if kept.strip() else "") + _toml_table(name, entry)
        wanted = {**data, client.servers_key: {**_servers(data, client, file), name: entry}}
        try:
            placed = _read_toml(new, file) == wanted
        except ConfigFileError:
            placed = False
        if not placed:
            raise ConfigFileError(
                f"{file} defines {client.servers_key}.{name} in a form this command does not edit (an inline or "
                "dotted table); nothing was written: replace it by hand with the printed entry"
            )
    else:
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ConfigFileError(
                f"{file} is not JSON this command can read ({exc.msg} at line {exc.lineno}, column {exc.colno}: "
                "comments and trailing commas are not JSON); nothing was written: fix it, or paste the printed "
                "entry into it by hand"
            ) from None
        old = _servers(data, client, file).get(name)
        if old == entry:
            return Merged(file, "unchanged", None)
        data[client.servers_key] = {**_servers(data, client, file), name: entry}
        new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    backup = _back_up(target) if target.exists() else None
    _write(target, new)
    return Merged(file, "added" if old is None else "replaced", backup)


def _back_up(file: Path) -> Path:
    """A copy of ``file`` beside it, named with the time (an earlier backup is never overwritten)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        backup = file.with_name(f"{file.name}.{stamp}{f'-{n}' if n else ''}.bak")
        if not backup.exists():
            shutil.copy2(file, backup)
            return backup
    raise ConfigFileError(f"no free name for a backup of {file}; nothing was written")


def _write(file: Path, text: str) -> None:
    """Replace ``file`` whole (a reader never sees half of it), keeping its permissions."""
    file.parent.mkdir(parents=True, exist_ok=True)
    mode = file.stat().st_mode & 0o777 if file.exists() else None
    handle, temporary = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
