"""Where webmcp-nb keeps its per-user files: the relay token (0600) and the daemon's log."""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
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

    Created atomically (written to a private temporary file, then linked into place), so concurrent
    first users agree on one token. A token file that is a symlink, belongs to someone else, or is
    readable by others is refused or re-permissioned before use.
    """
    path = home() / "token"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _create_token(path)
    except OSError as exc:
        raise PermissionError(f"{path}: cannot read the relay token safely ({exc}); delete the file") from None
    with os.fdopen(fd) as f:
        info = os.fstat(f.fileno())
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise PermissionError(f"{path} belongs to another user; delete it")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(f.fileno(), 0o600)
        token = f.read().strip()
    return token or _create_token(path, replace=True)


def _create_token(path: Path, *, replace: bool = False) -> str:
    token = secrets.token_urlsafe(32)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".token-")  # 0600 by construction
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if another process created it first: then use theirs
    except FileExistsError:
        return read_token()
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return token


def relay_port(port: int | None = None) -> int:
    """The port to use: the argument, else ``$WEBMCP_NB_PORT``, else the documented default."""
    from .protocol import DEFAULT_PORT

    return port or int(os.environ.get("WEBMCP_NB_PORT") or DEFAULT_PORT)
