"""Where webmcp-nb keeps its per-user files: the pairing secret (0600), the daemon's pid and log, pairing
records. Standard library only: the native-messaging host imports this and must start fast."""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from .identity import DEFAULT_PORT

__all__ = ["home", "read_secret", "peek_secret", "rotate_secret", "relay_port", "SECRET_FILE"]

SECRET_FILE = "secret"


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


def read_secret() -> str:
    """The pairing secret the relay, its clients and the extension prove they know; created on first use in
    a file only this user can read.

    Created atomically (written to a private temporary file, then linked into place), so concurrent first
    users agree on one secret. A secret file that is a symlink or belongs to someone else is refused; one
    readable by others is re-permissioned before use.
    """
    path = home() / SECRET_FILE
    try:
        secret = _read_secret(path, repair=True)
    except FileNotFoundError:
        return _create_secret(path)
    return secret or _create_secret(path, replace=True)


def peek_secret() -> str:
    """The pairing secret as it is, for checks that must change nothing (``doctor``): never created, nor
    re-permissioned; ``FileNotFoundError`` when there is none, ``PermissionError`` as :func:`read_secret`."""
    return _read_secret(home() / SECRET_FILE, repair=False)


def _read_secret(path: Path, *, repair: bool) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise PermissionError(f"{path}: cannot read the pairing secret safely ({exc}); delete the file") from None
    with os.fdopen(fd) as f:
        info = os.fstat(f.fileno())
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise PermissionError(f"{path} belongs to another user; delete it")
        if repair and stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(f.fileno(), 0o600)
        return f.read().strip()


def rotate_secret() -> str:
    """Replace the secret: peers that knew the old one must pair again (the extension does so by itself)."""
    return _create_secret(home() / SECRET_FILE, replace=True)


def _create_secret(path: Path, *, replace: bool = False) -> str:
    secret = secrets.token_urlsafe(32)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # 0600 by construction
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if another process created it first: then use theirs
    except FileExistsError:
        return read_secret()
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return secret


def relay_port(port: int | None = None) -> int:
    """The port to use: the argument, else ``$WEBMCP_NB_PORT``, else the documented default."""
    return port or int(os.environ.get("WEBMCP_NB_PORT") or DEFAULT_PORT)
