"""The native-messaging host: Chrome runs it, as the user, when the webmcp-nb extension asks to pair.

``webmcp-nb pair`` installs it (:mod:`webmcp_nb.own_chrome.pairing`). Chrome passes the caller's origin as the first
argument and speaks length-prefixed JSON on stdin/stdout. For our extension only, it answers ``pair`` with the
pairing secret (read from the 0600 file, created if missing), the relay's port and this home, and appends a
record of the pairing (time, extension version, browser) that ``webmcp-nb doctor`` shows; and ``relay`` by
starting the relay daemon on the port the extension dials when nothing listens there (the side panel's chat needs
the relay: it keeps the user's site grants). It imports only the standard library, :mod:`webmcp_nb.link.home` and
:mod:`webmcp_nb.own_chrome.daemon`, so it starts fast.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from .._version import __version__
from ..link.home import home, read_secret, relay_port, write_private
from ..link.identity import EXTENSION_ORIGIN
from .daemon import ensure_daemon

__all__ = ["main", "PAIRINGS_FILE", "MAX_MESSAGE"]

PAIRINGS_FILE = "pairings.jsonl"
MAX_MESSAGE = 64 * 1024
KEEP_RECORDS = 50


def read_message(stream: BinaryIO) -> Any:
    """One message from Chrome: a 32-bit length in native byte order, then that much UTF-8 JSON."""
    head = stream.read(4)
    if len(head) != 4:
        raise EOFError("no message")
    (size,) = struct.unpack("=I", head)
    if size > MAX_MESSAGE:
        raise ValueError(f"a {size}-byte message is too large")
    return json.loads(stream.read(size))


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    stream.write(struct.pack("=I", len(data)) + data)
    stream.flush()


def _browser_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def record_pairing(message: dict[str, Any]) -> None:
    """Append who paired, and when, to ``pairings.jsonl`` (the last few records are kept)."""
    path = home() / PAIRINGS_FILE
    record = {
        "time": time.time(),
        "extensionVersion": str(message.get("extensionVersion", ""))[:40],
        "userAgent": str(message.get("userAgent", ""))[:300],
        "browserPid": os.getppid(),
        "browser": _browser_of(os.getppid()),
    }
    lines = path.read_text().splitlines()[-(KEEP_RECORDS - 1) :] if path.exists() else []
    write_private(path, "\n".join([*lines, json.dumps(record)]) + "\n")


def answer(message: Any, origin: str) -> dict[str, Any]:
    """The reply to one message from ``origin``."""
    if origin.rstrip("/") != EXTENSION_ORIGIN:
        return {"error": f"this host serves the webmcp-nb extension only, not {origin!r}"}
    if isinstance(message, dict) and message.get("type") == "relay":
        port = message.get("port")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            return {"error": "relay needs the port the extension dials"}
        return {"started": ensure_daemon(port), "port": port}
    if not isinstance(message, dict) or message.get("type") != "pair":
        return {"error": "unknown request"}
    record_pairing(message)
    return {"secret": read_secret(), "port": relay_port(), "home": str(home()), "version": __version__}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    origin = args[0] if args else ""
    try:
        message = read_message(sys.stdin.buffer)
    except (EOFError, ValueError) as exc:
        write_message(sys.stdout.buffer, {"error": str(exc)})
        return 1
    try:
        reply = answer(message, origin)
    except OSError as exc:  # a home another account could change, an unsafe secret file: the extension says why
        reply = {"error": f"webmcp-nb cannot pair: {exc}"}
    write_message(sys.stdout.buffer, reply)
    return 0


def pairings() -> list[dict[str, Any]]:
    """The recorded pairings, oldest first."""
    path: Path = home() / PAIRINGS_FILE
    records = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


if __name__ == "__main__":
    raise SystemExit(main())
