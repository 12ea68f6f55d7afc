"""Where webmcp-nb keeps its per-user files: the relay token (0600) and the daemon's log."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["home", "read_token", "relay_port"]


def home() -> Path:
    """``$WEBMCP_NB_HOME``, else ``$XDG_STATE_HOME/webmcp-nb``, else ``~/.local/state/webmcp-nb`` (0700)."""
    explicit = os.environ.get("WEBMCP_NB_HOME")
    base = (
        Path(explicit)
        if explicit
        else Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "webmcp-nb"
    )
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    return base


def read_token() -> str:
    """The relay token, created on first use in a file only this user can read.

    A token file that others can read is re-permissioned to 0600 before it is used.
    """
    path = home() / "token"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(0o600)
        token = path.read_text().strip()
        if token:
            return token
        path.unlink()
        return read_token()
    with os.fdopen(fd, "w") as f:
        token = secrets.token_urlsafe(32)
        f.write(token + "\n")
    return token


def relay_port(port: int | None = None) -> int:
    """The port to use: the argument, else ``$WEBMCP_NB_PORT``, else the documented default."""
    from .protocol import DEFAULT_PORT

    return port or int(os.environ.get("WEBMCP_NB_PORT") or DEFAULT_PORT)
