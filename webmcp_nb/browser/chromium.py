"""Chromium as a plain subprocess with the extension loaded and a throwaway profile.

For ``launch()`` the extension is copied next to the profile with a ``config.json`` naming the relay to dial
and the secret to prove (the folder is private to this account), and the profile's Preferences turn on "Allow
User Scripts" for it, so skills can run on strict-CSP pages. Without a relay URL the extension is loaded as a
user loads it, from the package, and pairs through native messaging like in the user's own Chrome.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BrowserNotFoundError, ConfigurationError
from ..link.identity import EXTENSION_ID

__all__ = ["extension_path", "find_chromium", "ChromiumProcess", "ProcessExit", "BASE_FLAGS"]

CANDIDATES = (
    "/usr/lib/chromium/chromium",  # Debian's real binary (/usr/bin/chromium is a wrapper script)
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)

BASE_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--disable-gpu",
)


def extension_path() -> Path:
    """The unpacked extension: inside the installed package, or ``extension/`` in a source checkout."""
    packaged = Path(__file__).resolve().parents[1] / "_extension"
    if (packaged / "manifest.json").exists():
        return packaged
    return Path(__file__).resolve().parents[2] / "extension"


def find_chromium(executable: str | os.PathLike[str] | None = None) -> str:
    """The browser binary to run: ``executable``, ``$WEBMCP_NB_CHROMIUM``, or a known Chromium path."""
    wanted = executable or os.environ.get("WEBMCP_NB_CHROMIUM")
    if wanted:
        if Path(wanted).exists() or shutil.which(str(wanted)):
            return str(wanted)
        raise BrowserNotFoundError(f"no browser at {wanted}")
    for path in CANDIDATES:
        if Path(path).exists():
            return path
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    raise BrowserNotFoundError(
        "Chromium was not found. On Debian/Ubuntu: sudo apt-get install chromium; or pass "
        "executable=... (branded Google Chrome ignores --load-extension; use Chromium)."
    )


@dataclass(frozen=True)
class ProcessExit:
    """How a launched Chromium ended."""

    pid: int
    returncode: int
    """The exit status; negative when a signal ended it (``-9``: SIGKILL)."""
    at: float
    """When it was seen to end (Unix time, seconds)."""
    log_tail: str
    """The last lines Chromium wrote to its log."""
    closed: bool
    """Whether ``close()`` stopped it; ``False`` means it crashed or something else killed it."""

    @property
    def signal(self) -> str | None:
        """The name of the signal that ended it (``SIGSEGV``, ``SIGKILL``, ...), if one did."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def __str__(self) -> str:
        how = f"killed by {self.signal}" if self.signal else f"exited with status {self.returncode}"
        return f"Chromium (pid {self.pid}) {how}" + ("" if self.closed else " without being closed")


class ChromiumProcess:
    """A running Chromium. ``close()`` stops it and deletes its temporary directory; ``exit`` says how it
    ended, and callbacks given to ``on_exit`` learn it (from a watcher thread) the moment it does.

    With ``relay_url``, its extension dials that relay and proves ``secret`` (required); without, it is the
    packaged extension, which pairs through native messaging as in the user's own Chrome."""

    def __init__(
        self,
        relay_url: str | None,
        *,
        secret: str | None = None,
        url: str = "about:blank",
        headless: bool = True,
        native_webmcp: bool = False,
        executable: str | None = None,
        args: tuple[str, ...] | list[str] = (),
        user_scripts: bool = True,
        lanes: str = "loopback",
        profile: Path | None = None,
        devtools: bool = False,
    ) -> None:
        if relay_url is not None and not secret:
            raise ConfigurationError(
                f"ChromiumProcess({relay_url!r}) needs secret=, the relay's pairing secret: without it the "
                "extension can never prove itself to the relay, and never connects"
            )
        binary = find_chromium(executable)
        if devtools and relay_url is None:
            raise ConfigurationError("the DevTools pipe serves a browser with the library's own relay (launch())")
        self.devtools: tuple[int, int] | None = None
        """This end of the DevTools pipe (``--remote-debugging-pipe``): the fd to read the browser's messages from and
        the one to write commands to; ``None`` without it. Whoever takes them sets this to ``None`` and closes them;
        ``close()`` closes them if nobody did."""
        self.dir = Path(tempfile.mkdtemp(prefix="webmcp-nb-"))
        self.profile_dir = profile or self.dir / "profile"
        """The user-data folder: a throwaway one, or ``profile`` (kept after ``close()``, like a user's own)."""
        try:
            self.extension_dir = self._extension(relay_url, secret, lanes, devtools)
            self._seed_profile(user_scripts)
            self.process = self._start(binary, url, headless, native_webmcp, list(args), lanes, devtools)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(self, _stop, self.process, self.dir)
        self.exit: ProcessExit | None = None
        """How it ended; ``None`` while it runs."""
        self._closing = False
        self._exit_callbacks: list[Callable[[ProcessExit], None]] = []
        self._lock = threading.Lock()
        watcher = threading.Thread(
            target=_watch, args=(self.process, weakref.ref(self)), name="webmcp-nb-chromium-exit", daemon=True
        )
        watcher.start()  # it holds this object weakly: dropping it still stops the browser (the finalizer)

    def on_exit(self, callback: Callable[[ProcessExit], None]) -> None:
        """Call ``callback(exit)`` when the process ends (at once if it has); it runs on a watcher thread."""
        with self._lock:
            if self.exit is None:
                self._exit_callbacks.append(callback)
                return
        callback(self.exit)

    def _ended(self, returncode: int) -> None:
        ended = ProcessExit(self.process.pid, returncode, time.time(), self.log_tail(), self._closing)
        with self._lock:
            self.exit = ended
            callbacks, self._exit_callbacks = self._exit_callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):  # a callback's failure must not hide the others
                callback(ended)

    def _extension(self, relay_url: str | None, secret: str | None, lanes: str, devtools: bool) -> Path:
        """A private copy of the extension that dials ``relay_url`` with ``secret``, or the packaged one. With the
        DevTools pipe, the copy may also name each tab's DevTools target (``chrome.debugger.getTargets``, the
        ``debugger`` permission: only this copy has it, and it never attaches), which the relay needs to know
        whose native tools the pipe reports."""
        if relay_url is None:
            return extension_path()
        folder = self.dir / "extension"
        shutil.copytree(extension_path(), folder)
        config = {"relayUrl": relay_url, "lanes": lanes, "secret": secret, "devtools": devtools}
        (folder / "config.json").write_text(json.dumps(config))
        if devtools:
            manifest = json.loads((folder / "manifest.json").read_text())
            manifest["permissions"] = [*manifest.get("permissions", []), "debugger"]
            (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
        return folder

    def _seed_profile(self, user_scripts: bool) -> None:
        """Chrome's per-extension "Allow User Scripts" toggle, which skills need; no flag sets it."""
        preferences = self.profile_dir / "Default" / "Preferences"
        if preferences.exists():
            return
        prefs = {"extensions": {"settings": {EXTENSION_ID: {"user_scripts_enabled": user_scripts}}}}
        preferences.parent.mkdir(parents=True, exist_ok=True)
        preferences.write_text(json.dumps(prefs))

    def _start(
        self, binary: str, url: str, headless: bool, native_webmcp: bool, args: list[str], lanes: str, devtools: bool
    ) -> subprocess.Popen[bytes]:
        flags = [
            binary,
            *BASE_FLAGS,
            f"--user-data-dir={self.profile_dir}",
            f"--disable-extensions-except={self.extension_dir}",
            f"--load-extension={self.extension_dir}",
        ]
        if headless:
            flags.append("--headless=new")
        if native_webmcp:
            flags.append("--enable-features=WebMCP")
        if lanes == "all":  # pages outside loopback may then open WebSockets to 127.0.0.1 without asking
            flags.append("--disable-features=LocalNetworkAccessChecksWebSockets")
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # Chromium refuses to sandbox as root
            flags.append("--no-sandbox")
        if devtools:
            flags.append("--remote-debugging-pipe")
        flags += [*args, "--", url]  # (after "--" an address is never read as a switch)
        self.log_path = self.dir / "chromium.log"
        with open(self.log_path, "wb") as log:
            if not devtools:
                return subprocess.Popen(
                    flags,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,  # only calls a function resolved before the fork
                )
            return self._start_with_pipe(flags, log.fileno())

    def _start_with_pipe(self, flags: list[str], log: int) -> subprocess.Popen[bytes]:
        """Chromium with the DevTools pipe: it reads commands from its fd 3 and writes to its fd 4."""
        commands, replies = os.pipe(), os.pipe()  # (read, write) each: commands to the browser, its replies to us
        held = _hold_low_fds()
        try:
            process = subprocess.Popen(
                flags,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                pass_fds=(3, 4),
                preexec_fn=_child_with_pipe(commands[0], replies[1]),
            )
        except BaseException:
            for fd in (*commands, *replies):
                os.close(fd)
            raise
        finally:
            for fd in held:
                os.close(fd)
        os.close(commands[0])
        os.close(replies[1])
        self.devtools = (replies[0], commands[1])
        return process

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        self._closing = True
        self._finalizer()
        if self.devtools is not None:  # nobody took this end of the pipe (launch() failed before it could)
            for fd in self.devtools:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _watch(process: subprocess.Popen[bytes], owner: weakref.ref[ChromiumProcess]) -> None:
    returncode = process.wait()
    if (chromium := owner()) is not None:
        chromium._ended(returncode)


def _parent_death_signal() -> Callable[[], None] | None:
    """On Linux, a function for the child to ask for SIGKILL when its parent dies, so a killed kernel leaves
    no browser behind. Resolved here, before any fork: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


_die_with_parent = _parent_death_signal()


def _hold_low_fds() -> list[int]:
    """Make sure this process has fds 3 and 4 open while the browser starts (``pass_fds`` keeps them in the child,
    where they become the DevTools pipe, and fails on an fd that is not open here): what it opened to do so."""
    held = []
    for fd in (3, 4):
        try:
            os.fstat(fd)
        except OSError:
            held.append(os.open(os.devnull, os.O_RDONLY))  # the lowest free fd: this one
    return held


def _child_with_pipe(reads: int, writes: int) -> Callable[[], None]:
    """What the child runs before Chromium: its fd 3 becomes ``reads`` and its fd 4 ``writes`` (moved out of the way
    first, so neither overwrites the other), and it dies with its parent as without the pipe."""

    def setup() -> None:
        if _die_with_parent is not None:
            _die_with_parent()
        high = (fcntl.fcntl(reads, fcntl.F_DUPFD, 10), fcntl.fcntl(writes, fcntl.F_DUPFD, 10))
        os.dup2(high[0], 3)
        os.dup2(high[1], 4)

    return setup


def _stop(process: subprocess.Popen[bytes], directory: Path) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
    shutil.rmtree(directory, ignore_errors=True)
