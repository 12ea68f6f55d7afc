"""Where webmcp-nb keeps its per-user files: the pairing secret (0600), the daemon's pid and log, pairing
records, the native-messaging host's launcher that Chrome runs as the user.

So the folder must be this account's alone: one that another account owns or may write to (a ``WEBMCP_NB_HOME``
under /tmp that someone else made first) is refused, and files are written there only as new files renamed into
place or opened without following a symlink. Standard library only: the native-messaging host imports this and
must start fast."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from .identity import DEFAULT_PORT
from .listeners import account_name

__all__ = [
    "home",
    "read_secret",
    "peek_secret",
    "rotate_secret",
    "relay_port",
    "write_private",
    "append_private",
    "UnsafeHomeError",
    "SECRET_FILE",
]

SECRET_FILE = "secret"


class UnsafeHomeError(PermissionError):
    """The webmcp-nb home is a folder another account could change; ``why`` says how, ``fix`` what to do."""

    def __init__(self, why: str, fix: str) -> None:
        super().__init__(f"{why}; {fix}")
        self.why, self.fix = why, fix


def home() -> Path:
    """``$WEBMCP_NB_HOME``, else ``$XDG_STATE_HOME/webmcp-nb``, else ``~/.local/state/webmcp-nb`` (made 0700).
    ``UnsafeHomeError`` when another account could change it (see :func:`check_private`)."""
    explicit = os.environ.get("WEBMCP_NB_HOME")
    base = (
        Path(explicit)
        if explicit
        else Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "webmcp-nb"
    )
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_private(base, "WEBMCP_NB_HOME" if explicit else "")
    return base


def check_private(folder: Path, variable: str = "") -> None:
    """Refuse ``folder`` unless only this account can change it: the folder (and a symlink to it) is this
    account's and writable by no one else, and every folder above it is this account's or root's and not writable
    by everyone unless sticky (as /tmp is). ``variable``: the setting that chose it, for the fix."""
    if not hasattr(os, "getuid"):
        return
    me = os.getuid()
    choose = f"set {variable} to a folder of your own, or unset it" if variable else "use a folder of your own"
    link = os.lstat(folder)
    if stat.S_ISLNK(link.st_mode) and link.st_uid not in (me, 0):
        raise UnsafeHomeError(f"{folder} is a symlink of another account ({account_name(link.st_uid)})", choose)
    info = os.stat(folder)
    if info.st_uid != me:
        raise UnsafeHomeError(
            f"{folder} belongs to another account ({account_name(info.st_uid)}), which could replace the files "
            "webmcp-nb keeps there (the native-messaging host Chrome runs as you)",
            choose,
        )
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise UnsafeHomeError(
            f"{folder} is writable by other accounts (mode {stat.S_IMODE(info.st_mode):o}), which could replace the "
            "files webmcp-nb keeps there (the native-messaging host Chrome runs as you)",
            f"`chmod 700 {folder}` and check what is in it, or {choose}",
        )
    for parent in Path(folder).resolve().parents:
        above = os.stat(parent)
        loose = stat.S_IMODE(above.st_mode) & 0o002 and not above.st_mode & stat.S_ISVTX
        if above.st_uid not in (me, 0) or loose:
            owner = f"belongs to {account_name(above.st_uid)}" if above.st_uid not in (me, 0) else "is writable by all"
            raise UnsafeHomeError(f"{folder} is inside {parent}, which {owner} and so could swap the folder", choose)


def write_private(path: Path, text: str, mode: int = 0o600, *, replace: bool = True) -> None:
    """Put ``text`` at ``path`` as a new file of this account (``mode``), renamed into place: whatever was there,
    a symlink included, is replaced, never written through. ``replace=False``: ``FileExistsError`` if something is
    there already."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def append_private(path: Path) -> BinaryIO:
    """``path`` opened to append (created 0600), refused with ``PermissionError`` when it is a symlink or not
    this account's own file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        why = "it is a symlink, which is refused" if exc.errno == errno.ELOOP else exc.strerror
        raise PermissionError(f"{path}: cannot open it safely ({why}); delete it") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        os.close(fd)
        raise PermissionError(f"{path} is not a file of this account; delete it")
    return os.fdopen(fd, "ab")


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
    try:
        write_private(path, secret + "\n", replace=replace)
    except FileExistsError:  # another process created it first: use theirs
        return read_secret()
    return secret


def relay_port(port: int | None = None) -> int:
    """The port to use: the argument, else ``$WEBMCP_NB_PORT``, else the documented default."""
    return port or int(os.environ.get("WEBMCP_NB_PORT") or DEFAULT_PORT)
