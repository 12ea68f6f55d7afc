"""Who listens on a local TCP port: the user, and the process when this account may see it (Linux ``/proc``).

Used to name the program squatting the relay's port in errors and in ``webmcp-nb doctor``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Holder", "find_holder", "describe_holder"]

LISTEN = "0A"


@dataclass(frozen=True)
class Holder:
    """A listening socket on ``port``: its owner's uid, and its process when visible."""

    port: int
    uid: int
    pid: int | None = None
    command: str = ""

    @property
    def user(self) -> str:
        try:
            import pwd

            return pwd.getpwuid(self.uid).pw_name
        except (ImportError, KeyError):
            return f"uid {self.uid}"

    @property
    def mine(self) -> bool:
        """Whether this account owns it."""
        return hasattr(os, "getuid") and self.uid == os.getuid()

    def __str__(self) -> str:
        who = f"user {self.user}" + ("" if self.mine else ", another account")
        if self.pid is None:
            return f"a process of {who}; its pid is not visible to this account"
        return f"pid {self.pid} ({self.command or '?'}) of {who}"


def find_holder(port: int) -> Holder | None:
    """The socket listening on ``port`` (IPv4 or IPv6), or ``None`` if none is, or this is not Linux."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != LISTEN or int(fields[1].rsplit(":", 1)[1], 16) != port:
                continue
            uid, inode = int(fields[7]), fields[9]
            pid = _pid_of_socket(inode)
            return Holder(port, uid, pid, _command(pid) if pid else "")
    return None


def describe_holder(port: int) -> str:
    """A short description of what holds ``port``, for error messages."""
    if not sys.platform.startswith("linux"):
        return f"see `lsof -nP -iTCP:{port} -sTCP:LISTEN`"
    holder = find_holder(port)
    return str(holder) if holder else "nothing is listening now"


def _pid_of_socket(inode: str) -> int | None:
    target = f"socket:[{inode}]"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) == target:
                    return int(proc.name)
        except OSError:  # another account's process, or one that just ended
            continue
    return None


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200]
