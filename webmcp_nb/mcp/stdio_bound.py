"""Runs a stdio MCP server's command and passes its messages through, refusing any message longer than a bound:
in its place the client gets a JSON-RPC error for the same request id, so a server that answers with 50 MB costs
the notebook nothing but this bound (the SDK reads a whole line and parses it before anyone can look at its size).

``wm.mcp.connect`` starts it as ``python -I -S stdio_bound.py MAX_BYTES -- COMMAND ARGS…``: standard library only,
so it starts fast and needs nothing from the environment. Messages to the server pass unchanged; its stderr is
the wrapper's. When the client closes stdin the server's stdin closes, and the wrapper exits with the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading

CHUNK = 1 << 16
KEEP = 4096
"""Bytes kept from each end of a refused message, to find its request id."""
TOO_LARGE = -32090
"""The JSON-RPC error code of a refused message (``wm.mcp.connect`` raises ``ResultTooLargeError`` for it)."""

_VALUE = rb'("(?:[^"\\]|\\.)*"|-?\d+)'
_ID_FIRST = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*"[^"]*"\s*,)?\s*"id"\s*:\s*' + _VALUE)
_ID_LAST = re.compile(rb'"id"\s*:\s*' + _VALUE + rb"\s*\}\s*$")


def request_id(head: bytes, tail: bytes) -> object | None:
    """The id of a JSON-RPC message from its first and last bytes: SDKs write it first (after ``jsonrpc``) or
    last; ``None`` when it is in neither place (a notification)."""
    found = _ID_FIRST.match(head) or _ID_LAST.search(tail)
    return json.loads(found.group(1)) if found else None


def refusal(ident: object, size: int, limit: int, message: str | None = None) -> bytes:
    """The JSON-RPC error that stands in for a refused message of ``size`` bytes, answering request ``ident``
    (this transport's and the Streamable HTTP one's, ``http_bound.py``); ``message`` says why, if not its size."""
    message = message or (
        f"the server's message was {size:,} bytes, over the {limit:,}-byte bound of this client "
        "(wm.mcp.connect(max_result_chars=...) raises it)"
    )
    error = {"code": TOO_LARGE, "message": message, "data": {"size": size, "limit": limit}}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode() + b"\n"


def pump_out(source: int, sink: int, limit: int) -> None:
    """Copy ``source`` to ``sink`` line by line; a line over ``limit`` bytes is replaced by its refusal."""
    kept = bytearray()  # the line so far, while it is within the bound
    size = 0
    head = tail = b""  # the ends of a line past the bound (its middle is dropped as it passes)
    while chunk := _read(source):
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            start += len(piece) + (end >= 0)
            if size + len(piece) <= limit:
                kept += piece
            elif size <= limit:  # this piece crosses the bound
                whole = bytes(kept) + piece
                head, tail = whole[:KEEP], whole[-KEEP:]
                kept.clear()
            else:
                tail = (tail + piece)[-KEEP:]
            size += len(piece)
            if end < 0:
                continue
            if size <= limit:
                _write(sink, bytes(kept) + b"\n")
            else:
                sys.stderr.write(f"webmcp-nb: refused a {size:,}-byte message from the MCP server\n")
                sys.stderr.flush()
                ident = request_id(head, tail)
                if ident is not None:  # (a notification answers no request: it is only dropped)
                    _write(sink, refusal(ident, size, limit))
            kept.clear()
            size, head, tail = 0, b"", b""


def pump_in(source: int, child: subprocess.Popen[bytes]) -> None:
    """Copy what the client writes to the server's stdin; close it when the client closes ours."""
    assert child.stdin is not None
    with contextlib.suppress(OSError):
        while chunk := _read(source):
            _write(child.stdin.fileno(), chunk)
    with contextlib.suppress(OSError):
        child.stdin.close()


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: stdio_bound.py MAX_BYTES -- COMMAND [ARGS…]\n")
        return 2
    limit, command = int(argv[1]), argv[3:]
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    except OSError as exc:
        sys.stderr.write(f"webmcp-nb: cannot run {command[0]!r}: {exc.strerror or exc}\n")
        return 127
    assert child.stdout is not None
    threading.Thread(target=pump_in, args=(0, child), daemon=True).start()
    try:
        pump_out(child.stdout.fileno(), 1, limit)
    except (BrokenPipeError, KeyboardInterrupt):
        child.terminate()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
