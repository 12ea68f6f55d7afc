"""Who holds a local TCP socket: the account, and the process when this account may see it (Linux ``/proc``).

Used to name the program squatting the relay's port in errors and in ``webmcp-nb doctor``, and by the relay to
learn which account a loopback peer belongs to before it may take one of the few pre-authentication slots.
"""

from __future__ import annotations

import ipaddress
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Holder", "find_holder", "describe_holder", "socket_owner", "account_name"]

LISTEN = "0A"
TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


@dataclass(frozen=True)
class Holder:
    """A listening socket on ``port``: its owner's uid, and its process when visible."""

    port: int
    uid: int
    pid: int | None = None
    command: str = ""

    @property
    def user(self) -> str:
        return account_name(self.uid)

    @property
    def mine(self) -> bool:
        """Whether this account owns it."""
        return hasattr(os, "getuid") and self.uid == os.getuid()

    def __str__(self) -> str:
        who = f"user {self.user}" + ("" if self.mine else ", another account")
        if self.pid is None:
            return f"a process of {who}; its pid is not visible to this account"
        return f"pid {self.pid} ({self.command or '?'}) of {who}"


def account_name(uid: int) -> str:
    """The login name of ``uid``, or ``uid N`` when it has none here."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def find_holder(port: int) -> Holder | None:
    """The socket listening on ``port`` (IPv4 or IPv6), or ``None`` if none is, or this is not Linux."""
    for fields in _sockets():
        if fields[3] != LISTEN or int(fields[1].rsplit(":", 1)[1], 16) != port:
            continue
        uid, inode = int(fields[7]), fields[9]
        pid = _pid_of_socket(inode)
        return Holder(port, uid, pid, _command(pid) if pid else "")
    return None


def socket_owner(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The uid of the account whose TCP socket goes from ``local`` to ``remote`` (host, port) on this machine,
    or ``None`` when that cannot be told (not Linux, or no such socket). For a loopback peer, ``local`` is its
    address as the server sees it and ``remote`` the server's own: the row is the peer's end of the connection."""
    suffix, ends = f":{local[1]:04X}", (_normal(local), _normal(remote))
    for fields in _sockets():
        if fields[1].endswith(suffix) and (_address(fields[1]), _address(fields[2])) == ends:
            return int(fields[7])
    return None


def _sockets() -> list[list[str]]:
    """Every TCP socket's row in this network namespace (IPv4, then IPv6); none when ``/proc`` cannot tell."""
    rows = []
    for table in TABLES:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        rows += [fields for fields in (line.split() for line in lines) if len(fields) >= 10]
    return rows


def _address(text: str) -> tuple[str, int]:
    """``/proc/net/tcp``'s ``0100007F:1F90`` (the address in 32-bit words of host byte order) as a (host, port)."""
    host, port = text.rsplit(":", 1)
    words = [int(host[i : i + 8], 16) for i in range(0, len(host), 8)]
    return _normal((str(ipaddress.ip_address(struct.pack(f"={len(words)}I", *words))), int(port, 16)))


def _normal(address: tuple[str, int]) -> tuple[str, int]:
    """An address with an IPv4-mapped IPv6 host written as IPv4, so both tables' rows compare alike."""
    ip = ipaddress.ip_address(address[0].split("%", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return (str(mapped or ip), int(address[1]))


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
            fds = list((proc / "fd").iterdir())
        except OSError:  # another account's process, or one that just ended
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    return int(proc.name)
            except OSError:  # closed since the listing: the others are still worth reading
                continue
    return None


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200]
