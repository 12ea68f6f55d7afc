"""``webmcp-nb doctor`` / ``wm.doctor()``: what stands between this notebook and the user's Chrome, each
failing line with the exact fix.

It looks at the home (only this account may change it), the relay (running? who holds its port?), the pairing
(secret, the native-messaging host's launcher and its manifest per browser, the extension's pairing records),
where the extension is loaded (the browsers' Preferences), the connected browsers (versions, the "Allow User
Scripts" toggle, which WebMCP each open tab uses) and the Chromium that ``launch()`` would use. It never starts
anything but the launcher, asked as a stranger would be (it answers with an error and records nothing).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._version import __version__
from ..core._loop import blocking, on_loop
from ..core.display import escape, visible
from ..link.home import SECRET_FILE, UnsafeHomeError, home, relay_port
from ..link.identity import EXTENSION_ID
from ..link.listeners import account_name, find_holder

if TYPE_CHECKING:
    from ..browser.browser import Browser

__all__ = ["Check", "Diagnosis", "adoctor", "doctor", "browser_processes", "browser_name", "no_browser_advice"]

Status = Literal["ok", "warn", "fail", "info"]
MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}
COLORS = {"ok": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "info": "#57606a"}
BROWSER_COMMANDS = ("chrome", "chromium", "chromium-browser", "brave", "msedge", "vivaldi")
EXTENSIONS_PAGE = f"chrome://extensions/?id={EXTENSION_ID}"


@dataclass(frozen=True)
class Check:
    """One line of the diagnosis: what was looked at, what was found, and the fix when it is not right."""

    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class Diagnosis:
    """Every check, in order. ``ok`` is false when any check failed."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def add(self, name: str, status: Status, detail: str, fix: str = "") -> None:
        self.checks.append(Check(name, status, detail, fix))

    def __str__(self) -> str:
        lines = []
        for c in self.checks:
            lines.append(f"{MARKS[c.status]} {c.name}: {c.detail}")
            if c.fix:
                lines.append(f"    fix: {c.fix}")
        return visible("\n".join(lines))

    def __repr__(self) -> str:
        return f"<Diagnosis {'ok' if self.ok else 'failing'}: {len(self.checks)} checks>\n{self}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = "".join(
            f'<tr><td style="color:{COLORS[c.status]};padding:2px 6px">{MARKS[c.status]}</td>'
            f'<td style="padding:2px 6px;text-align:left"><b>{escape(c.name)}</b></td>'
            f'<td style="padding:2px 6px;text-align:left">{escape(c.detail)}'
            + (f'<div style="color:{COLORS["fail"]}">fix: {escape(c.fix)}</div>' if c.fix else "")
            + "</td></tr>"
            for c in self.checks
        )
        head = "webmcp-nb doctor: " + ("all good" if self.ok else "something needs fixing")
        return {
            "text/plain": f"{head}\n{self}",
            "text/html": f'<div><b>{escape(head)}</b><table style="font-size:12px">{rows}</table></div>',
        }


# ----- what the machine says -----


def browser_processes() -> list[tuple[int, str]]:
    """This account's running Chrome-family browsers (main processes only), as ``(pid, executable)``."""
    found = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    for proc in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not proc.name.isdigit():
            continue
        try:
            if uid is not None and proc.stat().st_uid != uid:
                continue
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        exe = args[0].decode(errors="replace") if args else ""
        if Path(exe).name in BROWSER_COMMANDS and not any(a.startswith(b"--type=") for a in args):
            found.append((int(proc.name), exe))
    return found


def _profiles_with_extension(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """(profile, settings) of each profile in a browser folder where our extension is installed."""
    found = []
    for prefs in sorted(folder.glob("*/Preferences")) + sorted(folder.glob("*/Secure Preferences")):
        try:
            settings = json.loads(prefs.read_text(errors="replace")).get("extensions", {}).get("settings", {})
        except (OSError, ValueError, AttributeError):
            continue
        entry = settings.get(EXTENSION_ID) if isinstance(settings, dict) else None
        if isinstance(entry, dict) and entry.get("path"):
            found.append((prefs.parent.name, entry))
    return found


def _ago(ts: float) -> str:
    seconds = max(0, time.time() - ts)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def browser_name(user_agent: str) -> str:
    for marker, name in (("Edg/", "Edge"), ("OPR/", "Opera"), ("Chrome/", "Chrome/Chromium")):
        if marker in user_agent:
            version = user_agent.split(marker, 1)[1].split(" ", 1)[0]
            return f"{name} {version}"
    return user_agent[:60] or "a browser"


# ----- the checks -----


def _check_versions(d: Diagnosis) -> None:
    from ..browser.chromium import find_chromium

    d.add("webmcp-nb", "info", f"{__version__} on Python {sys.version.split()[0]}")
    try:
        binary = find_chromium()
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        d.add("Chromium for launch()", "ok", f"{out or '?'} at {binary}")
    except Exception as exc:  # launch() is optional: the user's own Chrome works without it
        d.add("Chromium for launch()", "info", str(exc)[:300])


async def _check_relay(d: Diagnosis, port: int) -> dict[str, Any] | None:
    """The relay's line(s); returns its status when this client could authenticate."""
    from ..core.errors import NotConnectedError, PortInUseError
    from ..link.home import peek_secret
    from .connect import relay_status

    try:
        status = await relay_status(port, peek_secret)  # peek: a loose secret is reported, not repaired
    except PortInUseError as exc:
        d.add(
            "relay",
            "fail",
            f"port {port} is held by {exc.holder}, which is not this account's relay",
            "stop that program, or choose another port: WEBMCP_NB_PORT=<port> for notebooks and `webmcp-nb pair "
            "--port <port>` (or the extension's options page) for the extension",
        )
        return None
    except NotConnectedError as exc:  # it answered, but would not take this client now
        d.add("relay", "warn", f"{exc} ({find_holder(port) or 'its process is not visible'})", "run doctor again")
        return None
    except OSError as exc:  # a relay answered, and the secret to check it with is missing or unsafe
        program = find_holder(port) or "the program on that port"
        d.add(
            "relay",
            "fail",
            f"port {port} answers as a relay, but this account's pairing secret cannot be read to check it ({exc})",
            "fix the secret file as the pairing secret line below says; if there is none, that relay was started "
            f"with another WEBMCP_NB_HOME: stop it ({program}), and wm.connect() starts one here",
        )
        return None
    if status is None:
        holder = find_holder(port)
        if holder is None:
            d.add(
                "relay",
                "warn",
                f"no relay is running on 127.0.0.1:{port}",
                "wm.connect() starts it (or run `webmcp-nb relay`)",
            )
        else:
            d.add("relay", "fail", f"port {port} is held by {holder}, which did not answer", "stop that program")
        return None
    version = status.get("relayVersion", "?")
    detail = (
        f"running on 127.0.0.1:{port}, pid {status.get('pid')}, webmcp-nb {version}, {status.get('clients', 0)} clients"
    )
    if version != __version__:
        d.add(
            "relay",
            "warn",
            detail,
            f"it runs another webmcp-nb: `kill {status.get('pid')}`; wm.connect() starts the new one",
        )
    else:
        d.add("relay", "ok", detail)
    failures = status.get("authFailures") or {}
    if failures.get("browser"):
        d.add(
            "relay: refused browsers",
            "warn",
            f"{failures['browser']} browser connection(s) did not prove the pairing secret",
            "if that was your Chrome, pair it again: `webmcp-nb pair`, then the extension's options page → Pair now",
        )
    if others := _other_accounts(status):
        d.add("relay: other accounts", "warn", f"turned away {others} before they could try the pairing secret")
    return status


def _other_accounts(status: dict[str, Any] | None) -> str:
    """The connections of other local accounts the relay turned away, in words (empty when none)."""
    counts = (status or {}).get("otherAccounts") or {}
    if not isinstance(counts, dict) or not counts:
        return ""
    who = ", ".join(f"{account_name(int(uid))} ({n})" for uid, n in counts.items() if str(uid).isdigit())
    total = sum(n for n in counts.values() if isinstance(n, int))
    return f"{total} connection(s) of other accounts on this machine: {who}"


def _check_home(d: Diagnosis) -> bool:
    """The home's line; ``False`` when another account could change it (every later check reads it)."""
    try:
        folder = home()
    except UnsafeHomeError as exc:
        d.add("home", "fail", exc.why, exc.fix)
        return False
    d.add("home", "ok", f"{folder} (only this account can change it)")
    return True


def _check_secret() -> Check:
    """The pairing secret's line. Taken before the relay is asked anything: the daemon re-permissions a loose
    secret when a peer authenticates, which would hide it."""
    secret = home() / SECRET_FILE
    if secret.is_symlink():
        return Check("pairing secret", "fail", f"{secret} is a symlink, which is refused", f"rm {secret}")
    if not secret.exists():
        return Check("pairing secret", "info", f"{secret} is created on first use")
    info = secret.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return Check("pairing secret", "fail", f"{secret} belongs to another user (uid {info.st_uid})", f"rm {secret}")
    mode = info.st_mode & 0o777
    if mode != 0o600:
        return Check("pairing secret", "fail", f"{secret} (mode {mode:o})", f"chmod 600 {secret}")
    return Check("pairing secret", "ok", f"{secret} (mode {mode:o})")


def _check_pairing(d: Diagnosis, user_data_dirs: list[str | Path] | None) -> None:
    from .native_host import pairings
    from .pairing import BrowserFolder, browser_folders, launcher_path, launcher_problem

    if user_data_dirs is not None:
        paths = [Path(f).expanduser() for f in user_data_dirs]
        folders = [BrowserFolder(str(path), path) for path in paths]
        again = "`webmcp-nb pair " + " ".join(f"--user-data-dir {shlex.quote(str(p))}" for p in paths) + "`"
    else:
        folders = [f for f in browser_folders() if f.exists]
        again = "`webmcp-nb pair` (or, for a folder it does not find, `webmcp-nb pair --user-data-dir <folder>`)"
    if not folders:
        d.add(
            "native-messaging host",
            "warn",
            "no Chrome/Chromium user-data folder found in the usual places",
            "start your browser once, then `webmcp-nb pair` (or `webmcp-nb pair --user-data-dir <folder>`); "
            "`webmcp-nb doctor --user-data-dir <folder>` checks that folder",
        )
    launcher = launcher_path()
    if launcher.exists():
        problem = launcher_problem()
        if problem:
            d.add("host launcher", "fail", f"{launcher} {problem}", f"run {again} again: it writes a new one")
        else:
            d.add("host launcher", "ok", f"{launcher} starts this account's pairing host")
    for folder in folders:
        if folder.paired and launcher.exists():
            d.add(f"host for {folder.name}", "ok", f"installed ({folder.manifest})")
        else:
            d.add(f"host for {folder.name}", "fail", "not installed: the extension cannot pair", f"run {again}")
        for profile, entry in _profiles_with_extension(folder.path):
            _check_extension_entry(d, folder.name, profile, entry)
    records = pairings()
    if records:
        last = records[-1]
        d.add(
            "last pairing",
            "info",
            f"{_ago(last.get('time', 0))}: extension {last.get('extensionVersion') or '?'} in "
            f"{last.get('browser') or 'a browser'} (pid {last.get('browserPid')})",
        )
    else:
        d.add("last pairing", "info", "the extension has not paired with this account yet")


def _check_extension_entry(d: Diagnosis, browser: str, profile: str, entry: dict[str, Any]) -> None:
    from ..browser.chromium import extension_path

    where = f"{browser}, profile {profile}"
    path = entry.get("path", "")
    if entry.get("disable_reasons"):
        d.add(
            f"extension in {where}", "fail", f"installed from {path} but disabled", f"turn it on in {EXTENSIONS_PAGE}"
        )
        return
    if Path(path).resolve() != extension_path().resolve():
        d.add(
            f"extension in {where}",
            "warn",
            f"loaded from {path}, but this webmcp-nb ships it at {extension_path()}",
            f"in chrome://extensions remove it and Load unpacked {extension_path()}",
        )
    else:
        d.add(f"extension in {where}", "ok", f"loaded unpacked from {path}")
    if entry.get("user_scripts_enabled") is False:
        d.add(
            f"user scripts in {where}",
            "warn",
            "'Allow User Scripts' is off: skills cannot run",
            f"turn it on in {EXTENSIONS_PAGE}",
        )


API_NAMES = {
    "native": "native WebMCP",
    "testing": "Chrome 146-149's testing API",
    "polyfill": "the extension's polyfill",
}


def _tab_api(tab: dict[str, Any]) -> str:
    return API_NAMES.get(tab.get("webmcp") or "", "no WebMCP seen (not a secure context, or not loaded yet)")


def _check_browsers(d: Diagnosis, status: dict[str, Any] | None) -> None:
    if status is None:
        return
    browsers = status.get("browsers") or []
    if not browsers:
        running = browser_processes()
        detail = "no browser is connected to the relay"
        if running:
            detail += "; running: " + ", ".join(f"{Path(exe).name} (pid {pid})" for pid, exe in running)
        d.add("browsers", "warn", detail, no_browser_fix(running))
        return
    for b in browsers:
        name, tabs = browser_name(b.get("userAgent", "")), b.get("tabs") or []
        detail = f"{name}, extension {b.get('extensionVersion') or '?'}, {len(tabs)} tabs (id {b.get('id')})"
        if b.get("extensionVersion") and b["extensionVersion"] != __version__:
            d.add(
                f"browser {name}",
                "warn",
                detail,
                f"reload the extension in {EXTENSIONS_PAGE} (it is not {__version__})",
            )
        else:
            d.add(f"browser {name}", "ok", detail)
        if not b.get("userScripts"):
            d.add(
                f"user scripts in {name}",
                "warn",
                "'Allow User Scripts' is off: skills cannot run",
                f"turn it on in {EXTENSIONS_PAGE}",
            )
        apis = [_tab_api(t) for t in tabs]
        if API_NAMES["native"] in apis:
            native = "on"
        else:
            native = "off (pages get the polyfill)" if API_NAMES["polyfill"] in apis else "unknown"
        d.add(
            f"WebMCP in {name}",
            "info",
            f"native WebMCP {native}; "
            + "; ".join(
                f"tab {t.get('id')} {str(t.get('url', ''))[:60]}: {api}" for t, api in zip(tabs, apis, strict=True)
            ),
        )


def no_browser_fix(running: list[tuple[int, str]]) -> str:
    """The next step when no browser is connected, from what is running and what is paired."""
    from .native_host import pairings
    from .pairing import browser_folders

    if not running:
        return "start Chrome/Chromium with the webmcp-nb extension loaded (README: Your own Chrome)"
    if not any(f.paired for f in browser_folders() if f.exists):
        return "the extension cannot pair yet: run `webmcp-nb pair`; it pairs within 10 s"
    if not pairings():
        from ..browser.chromium import extension_path

        return (
            f"the extension never asked to pair: is it loaded? chrome://extensions → Load unpacked {extension_path()}"
        )
    return (
        "the extension paired before but is not connected: open any page to wake it, and check its options page "
        "(it says why it is not connected)"
    )


def no_browser_advice(port: int, status: dict[str, Any] | None, waited: float) -> str:
    """What ``connect()`` says when no browser joined within ``waited`` seconds."""
    running = browser_processes()
    if running:
        seen = ", ".join(f"{Path(exe).name} (pid {pid})" for pid, exe in running[:3])
        verb = "is" if len(running) == 1 else "are"
        what = f"{seen} {verb} running, but no webmcp-nb extension connected to the relay on port {port}"
    else:
        what = "no Chrome/Chromium is running"
    refused = ((status or {}).get("authFailures") or {}).get("browser")
    extra = (
        f" The relay refused {refused} browser connection(s) that did not prove the pairing secret." if refused else ""
    )
    if others := _other_accounts(status):
        extra += f" It turned away {others}."
    return (
        f"No browser joined within {waited:g} s: {what}.{extra} Next: {no_browser_fix(running)}. "
        "`webmcp-nb doctor` checks everything."
    )


def _check_launched(d: Diagnosis, browser: Browser) -> None:
    """A browser ``launch()`` started: running, or how it ended (a crash says so, with its log)."""
    if browser.process is None:
        d.add(
            "this browser",
            "ok" if browser.connected else "fail",
            f"{browser!r}",
            "" if browser.connected else "wm.connect() again",
        )
        return
    exit = browser.exit
    if exit is None:
        state = "connected" if browser.connected else "not connected"
        d.add(
            "launched Chromium",
            "ok",
            f"pid {browser.process.process.pid}, {state} (relay port {browser.relay.port if browser.relay else '?'})",
        )
    elif exit.closed:
        d.add("launched Chromium", "info", f"{exit} (closed)")
    else:
        tail = " | ".join(exit.log_tail.splitlines()[-3:])
        d.add(
            "launched Chromium",
            "fail",
            f"{exit}; its log ends: {tail}",
            "start another with wm.launch(); the kernel is fine",
        )


@on_loop
async def adoctor(
    port: int | None = None, *, browser: Browser | None = None, user_data_dirs: list[str | Path] | None = None
) -> Diagnosis:
    """Check everything between this notebook and the user's Chrome (starts nothing, changes nothing).
    ``browser``: also say how that browser is (for one ``launch()`` started: running, or how it ended).
    ``user_data_dirs``: the browser folders to check the pairing of (default: every one found where browsers keep
    them), as ``webmcp-nb pair --user-data-dir`` names them."""
    d = Diagnosis()
    port = relay_port(port)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, _check_versions, d)
    if browser is not None:
        _check_launched(d, browser)
    if not _check_home(d):
        return d
    secret = _check_secret()
    status = await _check_relay(d, port)
    d.checks.append(secret)
    await loop.run_in_executor(None, _check_pairing, d, user_data_dirs)
    _check_browsers(d, status)
    return d


doctor = blocking(adoctor)
