"""Per-site grants: which sites of the user's own browser an agent, an MCP client or the side panel's chat may read
or act on. The file ``grants.json`` in the webmcp-nb home is the one source of truth (the relay reads it for every
check; ``webmcp-nb grants`` and ``wm.grants`` write it); nothing else keeps a copy that counts.

A site is an origin: scheme, host and port, no path (:func:`origin_of`), so ``https://bank.example`` never
matches ``https://bank.example.evil.test``. Levels: ``none`` (never, and do not ask), ``read`` (list tools, call
read-only tools, screenshots), ``act`` (every tool; high-risk tools still ask as the agent's policy says). A site
never granted is ``ask``. The file is 0600, written atomically under a lock and never through a symbolic link; one
that is corrupt, a link, not the user's or writable by others is refused with a :class:`GrantFileError` and
counts as no grants at all (nothing is widened), and is not overwritten (nothing the user wrote is lost).
Standard library only: the relay daemon imports it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .home import home, write_private

__all__ = [
    "GRANTS_FILE",
    "LEVELS",
    "NEEDS",
    "ANSWERS",
    "ASK",
    "Grant",
    "GrantError",
    "GrantFileError",
    "GrantStore",
    "GrantsState",
    "Snapshot",
    "grants",
    "origin_of",
    "parse_origin",
    "satisfies",
]

GRANTS_FILE = "grants.json"
LEVELS = ("none", "read", "act")
"""What a site may be granted; ``none`` is a refusal that is never asked again."""
ASK = "ask"
"""The level of a site never granted: an action there asks the user first."""
NEEDS = ("read", "act")
"""What an action needs of its site."""
ANSWERS = ("once", "read", "act", "never")
"""The answers to an ask: this action only, the site for reading, the site for acting, never."""
Level = Literal["none", "read", "act", "ask"]
MAX_FILE_BYTES = 1_000_000
DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_RANK = {"none": 0, ASK: 0, "read": 1, "act": 2}


class GrantError(ValueError):
    """Bad input to the grants: an origin that is not one, a level that does not exist."""


class GrantFileError(OSError):
    """The grant file cannot be trusted (corrupt, a link, not the user's): it counts as no grants."""


def origin_of(url: str) -> str | None:
    """The site of ``url``: ``scheme://host[:port]`` with the host lowercased and the scheme's
    default port dropped; ``file://`` for local files. ``None`` for a URL that belongs to no site (``about:``,
    ``data:``, ``chrome:``…, or one that does not parse), and for one Chrome could read as another site than this
    parser does (a backslash, a control character, an IPv4 address in shorthand, a host not in ASCII — Chrome
    reports its tabs' URLs in the ``xn--`` form, which is how such a site is granted):
    such URLs can never be granted, so a check can never pass for a site Chrome then loads."""
    if not isinstance(url, str) or len(url) > 8192 or "\\" in url or _CONTROL.search(url.strip()):
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme == "file":
        return "file://"
    host = _host(parts.hostname or "") if scheme in DEFAULT_PORTS else None
    if host is None:
        return None
    where = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    return f"{scheme}://{where}"


def _host(host: str) -> str | None:
    """``host`` as Chrome writes it in a URL, or ``None`` when this parser cannot be sure it reads it as Chrome does."""
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]" if "%" not in host else None  # no zone id in URLs
        except ValueError:
            return None
    if not host.isascii():  # Python's IDNA (2003) and Chrome's (UTS 46) map many names apart: the xn-- form only
        return None
    last = host.rstrip(".").rsplit(".", 1)[-1]
    if _NUMERIC_LABEL.match(last):  # an IPv4 address: only its dotted-decimal form, the one Chrome writes
        try:
            return str(ipaddress.IPv4Address(host)) if str(ipaddress.IPv4Address(host)) == host else None
        except ValueError:
            return None
    return host if _HOST.match(host) else None


def parse_origin(text: str) -> str:
    """A site given by a person (``https://bank.example``, a URL of it): its origin, or ``GrantError`` saying what
    a site looks like."""
    site = origin_of(text) if isinstance(text, str) and "://" in text else None
    if site is None:
        raise GrantError(
            f"not a site: {str(text)[:200]!r}. Give its origin, scheme and host (and a port if not the default), "
            "like https://bank.example or http://127.0.0.1:8000 (file:// for local files; a name not in ASCII in "
            "its xn-- form, as the browser's address bar shows it when copied)"
        )
    return site


def satisfies(level: str, need: str) -> bool:
    """Whether a site at ``level`` may do what ``need`` needs (``act`` includes ``read``)."""
    return level in LEVELS and level != "none" and _RANK[level] >= _RANK[need]


@dataclass(frozen=True)
class Grant:
    """One site's grant: its level, since when, and who gave it (``side panel``, ``cli``…)."""

    origin: str
    level: str
    since: float
    by: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"origin": self.origin, "level": self.level, "since": self.since, "by": self.by}


@dataclass(frozen=True)
class Snapshot:
    """The grants as the file says them now, or none and the reason the file was refused."""

    grants: dict[str, Grant]
    problem: str | None = None

    def level(self, url: str) -> str:
        """``none``, ``read``, ``act``, or ``ask`` (never granted); ``none`` for a page of no site."""
        site = origin_of(url)
        if site is None:
            return "none"
        found = self.grants.get(site)
        return found.level if found is not None else ASK


@dataclass(frozen=True)
class GrantsState:
    """The grants as a relay told a client or a browser (``grants.updated``, ``grants.list``): whether it enforces
    them, each site's level, why the file was refused if it was, and the asks waiting."""

    enforced: bool = True
    levels: dict[str, str] = field(default_factory=dict)
    problem: str | None = None
    path: str = ""
    asks: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_wire(cls, raw: Any) -> GrantsState:
        """From the relay's message; anything malformed counts as enforced with no grants (nothing widened)."""
        if not isinstance(raw, dict):
            return cls()
        levels = {}
        for grant in raw.get("grants") or []:
            if isinstance(grant, dict) and isinstance(grant.get("origin"), str) and grant.get("level") in LEVELS:
                levels[grant["origin"]] = grant["level"]
        problem = raw.get("problem") if isinstance(raw.get("problem"), str) else None
        asks = tuple(a for a in raw.get("asks") or [] if isinstance(a, dict))
        return cls(raw.get("enforced") is not False, levels, problem, str(raw.get("path") or ""), asks)

    def level(self, url: str) -> str:
        """``exempt`` when grants are not enforced; else ``none``, ``read``, ``act`` or ``ask``."""
        if not self.enforced:
            return "exempt"
        site = origin_of(url)
        return "none" if site is None else self.levels.get(site, ASK)

    def allows(self, url: str, need: str) -> bool:
        level = self.level(url)
        return level == "exempt" or satisfies(level, need)


class GrantStore:
    """The grant file (``<home>/grants.json``, or ``path``): read for every check (one ``lstat`` when it has not
    changed), written atomically under a lock. ``wm.grants`` is the user's store."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._seen: tuple[Any, ...] | None = None
        self._snapshot = Snapshot({})

    @property
    def path(self) -> Path:
        """Where the grants are kept (the home is looked up when not given, as ``WEBMCP_NB_HOME`` says now)."""
        return self._path if self._path is not None else home() / GRANTS_FILE

    # ----- reading -----

    def snapshot(self) -> Snapshot:
        """The grants now; a file that cannot be trusted gives none, and says why. Never raises."""
        try:
            path = self.path  # (an unsafe home is refused here: UnsafeHomeError)
            info = os.lstat(path)
            seen: tuple[Any, ...] = (str(path), info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)
            seen += (info.st_mode, info.st_uid)
        except FileNotFoundError:
            seen = (str(path), None)
        except OSError as exc:
            return Snapshot({}, f"{self._path or GRANTS_FILE}: {exc.strerror or exc}")
        if seen != self._seen:
            try:
                self._snapshot = Snapshot(self.read())
            except GrantFileError as exc:
                self._snapshot = Snapshot({}, str(exc))
            self._seen = seen
        return self._snapshot

    def read(self) -> dict[str, Grant]:
        """Every grant in the file; ``GrantFileError`` for a file that is corrupt, a link, or not the user's."""
        path = self.path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return {}
        if stat.S_ISLNK(info.st_mode):
            raise GrantFileError(f"{path} is a symbolic link: refused, so no site is granted. Delete it.")
        if not stat.S_ISREG(info.st_mode):
            raise GrantFileError(f"{path} is not a regular file: refused, so no site is granted. Delete it.")
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise GrantFileError(f"{path}: cannot read the grants safely ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as f:
            opened = os.fstat(f.fileno())
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise GrantFileError(f"{path} changed while it was read: try again")
            if hasattr(os, "getuid") and opened.st_uid != os.getuid():
                raise GrantFileError(f"{path} belongs to another user: refused, so no site is granted. Delete it.")
            if stat.S_IMODE(opened.st_mode) & 0o022:
                raise GrantFileError(
                    f"{path} is writable by others (mode {stat.S_IMODE(opened.st_mode):o}): refused, so no site is "
                    f"granted. Check it, then chmod 600 {path}"
                )
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise GrantFileError(f"{path} is over {MAX_FILE_BYTES:,} bytes: refused, so no site is granted")
        return _parse(path, raw)

    def level(self, url: str) -> str:
        """``url``'s site's level now: ``none``, ``read``, ``act`` or ``ask``."""
        return self.snapshot().level(url)

    # ----- writing -----

    def allow(self, origin: str, level: str, *, by: str = "notebook") -> Grant:
        """Grant ``origin`` (a site, or a URL of it) ``read`` or ``act`` (or ``none``: never, without asking)."""
        if level not in LEVELS:
            raise GrantError(f"level must be one of {', '.join(LEVELS)}, not {str(level)[:40]!r}")
        site = parse_origin(origin)
        grant = Grant(site, level, time.time(), str(by)[:200])
        with self._changing() as grants:
            grants[site] = grant
        return grant

    def deny(self, origin: str, *, by: str = "notebook") -> Grant:
        """Never let anything act for a model on ``origin``, and never ask (level ``none``)."""
        return self.allow(origin, "none", by=by)

    def revoke(self, origin: str) -> bool:
        """Forget ``origin``'s grant (it asks again); ``False`` when it had none."""
        site = parse_origin(origin)
        with self._changing() as grants:
            return grants.pop(site, None) is not None

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Grant]]:
        """The grants to change, under the lock; written back atomically. A file that cannot be trusted is never
        written over: its ``GrantFileError`` says what to do."""
        path = self.path
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            lock = os.open(path.with_name(path.name + ".lock"), flags, 0o600)
        except OSError as exc:
            raise GrantFileError(f"{path}: cannot lock the grants ({exc.strerror or exc})") from None
        try:
            with contextlib.suppress(ImportError):
                import fcntl

                fcntl.flock(lock, fcntl.LOCK_EX)
            grants = self.read()
            before = dict(grants)
            yield grants
            if grants != before:
                _write(path, grants)
        finally:
            os.close(lock)

    # ----- display -----

    def __iter__(self) -> Iterator[Grant]:
        return iter(sorted(self.snapshot().grants.values(), key=lambda g: g.origin))

    def __len__(self) -> int:
        return len(self.snapshot().grants)

    def __repr__(self) -> str:
        return f"<grants in {self.path}: {len(self)} sites>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from ..core.display import table, visible

        snapshot = self.snapshot()
        rows = [[g.origin, g.level, time.strftime("%Y-%m-%d %H:%M", time.localtime(g.since)), g.by] for g in self]
        caption = f"Site grants ({self.path})" + (f": {snapshot.problem}" if snapshot.problem else "")
        text = [caption] + [f"  {r[0]}  {r[1]}  (since {r[2]}, by {r[3]})" for r in rows]
        if not rows:
            text.append("  no grants yet: every site asks first")
        return {
            "text/plain": visible("\n".join(text)),
            "text/html": table(["site", "level", "since", "by"], rows, caption),
        }


def _parse(path: Path, raw: bytes) -> dict[str, Grant]:
    def corrupt(why: str) -> GrantFileError:
        return GrantFileError(f"{path} is not a grant file ({why}): refused, so no site is granted. Fix or delete it.")

    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise corrupt(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("grants"), dict):
        raise corrupt('it must be {"version": 1, "grants": {...}}')
    found = {}
    for site, entry in data["grants"].items():
        if origin_of(site) != site:
            raise corrupt(f"{site[:100]!r} is not a site's origin")
        if not isinstance(entry, dict) or entry.get("level") not in LEVELS:
            raise corrupt(f"{site}: level must be one of {', '.join(LEVELS)}")
        since, by = entry.get("since", 0), entry.get("by", "")
        if not isinstance(since, int | float) or isinstance(since, bool) or not isinstance(by, str):
            raise corrupt(f"{site}: since must be a number and by a string")
        found[site] = Grant(site, entry["level"], float(since), by[:200])
    return found


def _write(path: Path, grants: dict[str, Grant]) -> None:
    """Write atomically: a new 0600 file renamed over the old one (a rename replaces a link rather than writing
    through it, and ``read`` has refused links already)."""
    entries = {site: {k: v for k, v in g.as_dict().items() if k != "origin"} for site, g in grants.items()}
    write_private(path, json.dumps({"version": 1, "grants": entries}, indent=1, sort_keys=True) + "\n")


grants = GrantStore()
"""The user's grants (``wm.grants``): ``allow(origin, "read"|"act")``, ``deny``, ``revoke``, ``level(url)``; shown
as a table."""
