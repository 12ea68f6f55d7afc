"""Pairing the user's own Chrome: installing the native-messaging host that hands the extension its secret.

Chrome's native messaging is how a desktop program and an extension trust each other without copy-paste: a
host manifest in the browser's user-data folder names a program and the one extension allowed to start it;
Chrome starts it as the user and talks to it over pipes. Our host (:mod:`webmcp_nb.own_chrome.native_host`) reads the
0600 secret, which no other account can, and gives it to our extension only. ``webmcp-nb pair`` writes the
launcher (``<home>/native-host``) and the manifest into every Chromium-family browser found, or into the
folder given with ``--user-data-dir``.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..link.home import home, write_private
from ..link.identity import EXTENSION_ORIGIN, HOST_NAME

__all__ = [
    "BrowserFolder",
    "browser_folders",
    "install",
    "uninstall",
    "launcher_path",
    "launcher_problem",
    "manifest_path",
]

LAUNCHER = "native-host"
PROBE_ORIGIN = "webmcp-nb-doctor:"
"""The origin ``launcher_problem`` runs the launcher with: not the extension's, so the host only refuses it."""

# Where each browser keeps its user data, per platform: its NativeMessagingHosts folder lives there.
_LINUX = {
    "Google Chrome": "google-chrome",
    "Google Chrome Beta": "google-chrome-beta",
    "Google Chrome Dev": "google-chrome-unstable",
    "Chromium": "chromium",
    "Brave": "BraveSoftware/Brave-Browser",
    "Microsoft Edge": "microsoft-edge",
    "Vivaldi": "vivaldi",
}
_MACOS = {
    "Google Chrome": "Google/Chrome",
    "Google Chrome Beta": "Google/Chrome Beta",
    "Chromium": "Chromium",
    "Brave": "BraveSoftware/Brave-Browser",
    "Microsoft Edge": "Microsoft Edge",
    "Vivaldi": "Vivaldi",
}


@dataclass(frozen=True)
class BrowserFolder:
    """A browser's user-data folder, and whether our host is installed there."""

    name: str
    path: Path

    @property
    def manifest(self) -> Path:
        return manifest_path(self.path)

    @property
    def exists(self) -> bool:
        return self.path.is_dir()

    @property
    def paired(self) -> bool:
        """Whether our host manifest is there and names the launcher this installation writes."""
        try:
            return bool(json.loads(self.manifest.read_text()).get("path") == str(launcher_path()))
        except (OSError, ValueError, AttributeError):
            return False


def browser_folders() -> list[BrowserFolder]:
    """Every Chromium-family browser's default user-data folder on this platform (present or not)."""
    if sys.platform == "darwin":
        base, names = Path.home() / "Library" / "Application Support", _MACOS
    else:
        base, names = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"), _LINUX
    return [BrowserFolder(name, base / folder) for name, folder in names.items()]


def launcher_path() -> Path:
    return home() / LAUNCHER


def manifest_path(user_data_dir: Path) -> Path:
    return user_data_dir / "NativeMessagingHosts" / f"{HOST_NAME}.json"


def _write_launcher(port: int | None) -> Path:
    """A script that runs the host with this Python and this home (Chrome's environment may differ)."""
    env = {"WEBMCP_NB_HOME": str(home())}
    if port:
        env["WEBMCP_NB_PORT"] = str(port)
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    path = launcher_path()
    script = (
        "#!/bin/sh\n"
        "# webmcp-nb's native-messaging host, written by `webmcp-nb pair`: Chrome runs it for the webmcp-nb\n"
        "# extension, which asks it for the pairing secret.\n"
        f'{assignments} exec {shlex.quote(sys.executable)} -m webmcp_nb.own_chrome.native_host "$@"\n'
    )
    write_private(path, script, 0o700)
    return path


def launcher_problem(timeout: float = 20.0) -> str:
    """What stops the installed launcher from starting this account's host, in words ("" when nothing does): it
    is run as Chrome runs it, for a stranger's origin, which the host refuses without reading the secret or
    recording anything. A launcher written by an older webmcp-nb may name a module or a Python that is gone."""
    from .native_host import read_message

    probe = json.dumps({"type": "probe"}).encode()
    try:
        done = subprocess.run(
            [str(launcher_path()), PROBE_ORIGIN],
            input=struct.pack("=I", len(probe)) + probe,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"did not answer within {timeout:g} s"
    except OSError as exc:
        return f"cannot be run ({exc.strerror})"
    try:
        reply = read_message(io.BytesIO(done.stdout))
    except (EOFError, ValueError):
        reply = None
    if isinstance(reply, dict) and "error" in reply:
        return ""
    said = done.stderr.decode(errors="replace").strip().splitlines() or [f"exit status {done.returncode}"]
    return f"does not start the pairing host: {said[-1][:300]}"


def install(user_data_dirs: list[Path] | None = None, *, port: int | None = None) -> list[Path]:
    """Install the host for each of ``user_data_dirs`` (default: every browser folder that exists);
    returns the manifests written. ``port``: the relay port the extension should dial, if not the default."""
    if sys.platform.startswith("win"):
        raise OSError("pairing on Windows needs a registry entry; it is not supported yet")
    launcher = _write_launcher(port)
    targets = user_data_dirs if user_data_dirs is not None else [f.path for f in browser_folders() if f.exists]
    manifest = {
        "name": HOST_NAME,
        "description": "webmcp-nb: gives the webmcp-nb extension the pairing secret of this account",
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [f"{EXTENSION_ORIGIN}/"],
    }
    written = []
    for folder in targets:
        path = manifest_path(Path(folder))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, indent=2) + "\n")
        written.append(path)
    return written


def uninstall(user_data_dirs: list[Path] | None = None) -> list[Path]:
    """Remove the host's manifests (and the launcher when no folder is named); returns what was removed."""
    targets = user_data_dirs if user_data_dirs is not None else [f.path for f in browser_folders()]
    removed = []
    for folder in targets:
        path = manifest_path(Path(folder))
        if path.exists():
            path.unlink()
            removed.append(path)
    if user_data_dirs is None and launcher_path().exists():
        launcher_path().unlink()
        removed.append(launcher_path())
    return removed
