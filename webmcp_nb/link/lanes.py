"""Lanes: a frame's own WebSocket to the relay, so a tool call skips the extension's service worker.

The worker grants a lane to a frame that has tools: it tells the relay a fresh random key over its
authenticated ``/browser`` socket, and hands the frame's content script, over the frame's runtime port
(which page scripts cannot read), what it needs to prove that key without sending it: the subprotocol
``webmcp-nb.<key id>.<nonce>.<frame proof>`` and the proof the relay must answer with. The relay checks the
frame's proof during the HTTP handshake and binds the socket to that browser, tab and frame; its first
message, ``{"type": "ok", "proof"}``, proves to the content script that this is the relay the worker
trusts, and the content script runs no call before it. Pages can open ``/lane`` too (it carries the page's
``Origin``), but without a granted key their handshake is refused, before they can send a byte of
WebSocket data; and a squatter on the port never learns a key.

Frames on the lane: ``{"type": "call", "id", "name", "input", "maxChars"}`` and ``{"type": "cancel",
"id"}`` from the relay, one or an array of them: calls made while others are in flight leave together
at the end of the loop's turn. Results come back as records, one frame holding those that finished
together: a JSON header line ``{"id", "ok", "n"}`` (or ``{"id", "ok": false, "error", "n": 0}``) and then
``n`` UTF-16 code units of the tool's JSON text, untouched, so a result is never encoded twice. A header with
``"toolsChanged": true`` says the frame's tools changed during the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, AnyStr

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from . import auth
from ._sockets import send_soon, spawn
from .protocol import ErrorCode, error_body

__all__ = ["Lane", "Lanes", "LaneFailure"]

log = logging.getLogger(__name__)

KEY_TIMEOUT = 2.0  # seconds a handshake waits for its key's grant (they travel on different sockets)
MAX_WAITING = 64  # handshakes waiting for a grant at once; more are refused at once
SUBPROTOCOL = "webmcp-nb."
CLOSE_GRACE = 0.1  # seconds a closed lane's calls wait to learn whether the whole browser went away
GRANT_TTL = 30.0  # seconds a granted key stays usable
MAX_GRANTS = 10_000

Settle = Callable[[dict[str, Any] | None, dict[str, Any] | None], None]
"""``settle(result, error)``: exactly one of them is set."""


def time_limit(ms: int) -> str:
    """A call's time limit in words, as the worker words it (extension/worker/calls.js): the wire carries whole
    milliseconds, so a limit under one (``timeout=0.0001``) is "under 1 ms", not "0 ms"; a second or more in s."""
    if ms < 1:
        return "under 1 ms"
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:g} s"


class LaneFailure(Exception):
    """A lane could not take a call (it closed); the caller falls back to the worker."""


@dataclass(frozen=True)
class _Grant:
    key: str
    browser_id: str
    tab_id: int
    frame_id: int
    expires: float
    document_id: str | None = None


@dataclass(frozen=True)
class _Admitted:
    grant: _Grant
    nonce: str


@dataclass
class Lane:
    """One frame's socket, with the calls waiting on it."""

    connection: ServerConnection
    browser_id: str
    tab_id: int
    frame_id: int
    document_id: str | None = None
    """Chrome's id of the document whose content script opened the lane (a lane belongs to one document)."""
    calls: dict[str, tuple[Settle, asyncio.TimerHandle]] = field(default_factory=dict)
    sent: int = 0
    """Calls sent on this lane."""
    frames: int = 0
    """Frames sent on this lane (fewer than ``sent`` when calls were batched)."""
    received: int = 0
    """Result frames received (fewer than the results when results were batched)."""
    _queued: list[str] = field(default_factory=list)

    def call(self, call_id: str, name: str, args: Any, timeout_ms: int, max_chars: int, settle: Settle) -> None:
        """Send a call; ``settle`` gets its result, its error, or ``TIMEOUT`` after ``timeout_ms``.

        With no other call in flight it leaves at once; otherwise it waits for the end of the loop's turn
        and leaves in one frame with the calls made meanwhile. Sending never waits for the page to read:
        a busy page must not hold up the relay."""
        if self.connection.state is not State.OPEN:
            raise LaneFailure("the lane closed")
        message = {"type": "call", "id": call_id, "name": name, "input": args, "maxChars": max_chars}
        try:
            text = json.dumps(message, allow_nan=False)  # JavaScript's JSON.parse refuses NaN: fail alone, now
        except (TypeError, ValueError) as exc:
            settle(None, error_body(ErrorCode.INVALID_ARGS, f"{name}: the arguments are not JSON ({exc})"))
            return
        loop = asyncio.get_running_loop()
        idle = not self.calls and not self._queued
        timer = loop.call_later(timeout_ms / 1000, self._expire, call_id, name, timeout_ms)
        self.calls[call_id] = (settle, timer)
        self.sent += 1
        self._queued.append(text)
        if idle:
            self._flush()
        elif len(self._queued) == 1:
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        texts, self._queued = self._queued, []
        if not texts:
            return
        self.frames += 1
        send_soon(self.connection, texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]")

    def _expire(self, call_id: str, name: str, timeout_ms: int) -> None:
        if self._settle(
            call_id, None, error_body(ErrorCode.TIMEOUT, f'"{name}" did not finish in {time_limit(timeout_ms)}.')
        ):
            send_soon(self.connection, json.dumps({"type": "cancel", "id": call_id}))

    def cancel(self, call_id: str) -> None:
        """The caller gave up on a call: the frame aborts it (its ``AbortSignal``), and nothing waits for it."""
        if self._settle(call_id, None, error_body(ErrorCode.TIMEOUT, "cancelled by the caller")):
            send_soon(self.connection, json.dumps({"type": "cancel", "id": call_id}))

    def _settle(self, call_id: str, result: dict[str, Any] | None, error: dict[str, Any] | None) -> bool:
        entry = self.calls.pop(call_id, None)
        if entry is None:
            return False
        settle, timer = entry
        timer.cancel()
        settle(result, error)
        return True

    def on_frame(self, raw: str | bytes) -> None:
        """Results from the frame: records of a JSON header line and the tool's JSON text."""
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        self.received += 1
        try:
            for header, text in _records(raw):
                self._on_result(header, text)
        except Exception as exc:  # the records before the bad one were settled; the calls after it time out
            log.warning("bad frame on lane %s/%s/%s: %s", self.browser_id, self.tab_id, self.frame_id, exc)

    def _on_result(self, header: dict[str, Any], text: str) -> None:
        call_id = header.get("id")
        if not isinstance(call_id, str):
            return
        if header.get("ok") is True:
            result = {"text": text, "frameId": self.frame_id}
            if header.get("toolsChanged") is True:
                result["toolsChanged"] = True
            self._settle(call_id, result, None)
            return
        error: dict[str, Any] = header["error"] if isinstance(header.get("error"), dict) else {}
        code = error.get("code")
        if not isinstance(code, str) or code not in ErrorCode._value2member_map_ or code in _RELAY_ONLY:
            code = ErrorCode.TOOL_ERROR.value
        self._settle(call_id, None, error_body(code, str(error.get("message", "Tool failed")), error.get("data")))

    def fail_all(self, why: str, code: ErrorCode = ErrorCode.NAVIGATED) -> None:
        for call_id in list(self.calls):
            self._settle(call_id, None, error_body(code, why))


def _records(frame: str) -> Iterator[tuple[dict[str, Any], str]]:
    """The (header, text) records of a result frame; lengths count UTF-16 code units, as JavaScript does."""
    if frame.isascii():  # the common case: code units are characters
        return _scan(frame, "\n", 1, str)
    return _scan(frame.encode("utf-16-le"), "\n".encode("utf-16-le"), 2, lambda b: b.decode("utf-16-le"))


def _scan(
    units: AnyStr, newline: AnyStr, width: int, text: Callable[[AnyStr], str]
) -> Iterator[tuple[dict[str, Any], str]]:
    pos, end = 0, len(units)
    while pos < end:
        cut = units.find(newline, pos)
        while width == 2 and cut >= 0 and cut % 2:  # a newline byte pattern straddling two characters
            cut = units.find(newline, cut + 1)
        if cut < 0:
            raise ValueError("a record without its header line")
        header = json.loads(text(units[pos:cut]))
        size = header.get("n", 0) if isinstance(header, dict) else None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or cut + width + size * width > end:
            raise ValueError("a record with a bad header or length")
        yield header, text(units[cut + width : cut + width + size * width])
        pos = cut + width + size * width


# Codes a page may not claim for itself: they describe the relay's own state.
_RELAY_ONLY = {ErrorCode.NOT_CONNECTED.value, ErrorCode.BROWSER_NOT_FOUND.value, ErrorCode.BAD_REQUEST.value}


class Lanes:
    """The relay's lanes: keys granted by browsers, and the sockets bound with them.

    ``browser_connected(id)`` tells whether a browser's own socket is up (a lane outlives a restarting worker)."""

    def __init__(self, browser_connected: Callable[[str], bool]) -> None:
        self._grants: dict[str, _Grant] = {}
        self._granted = asyncio.Event()  # set (and replaced) whenever a grant arrives
        # handshakes accepted, not yet served (weakly: a handshake may still fail after admission)
        self._admitted: weakref.WeakKeyDictionary[ServerConnection, _Admitted] = weakref.WeakKeyDictionary()
        self._waiting = 0
        self._lanes: dict[tuple[str, int, int], Lane] = {}
        self._browser_connected = browser_connected
        self._ids = itertools.count(1)
        self.refused = 0
        """Handshakes on ``/lane`` refused for a missing or wrong key."""

    def grant(self, browser_id: str, params: dict[str, Any]) -> None:
        """A browser's ``lane.grant``: the key a frame of one of its tabs will present."""
        key, tab_id, frame_id = params.get("key"), params.get("tabId"), params.get("frameId")
        document_id = params.get("documentId") if isinstance(params.get("documentId"), str) else None
        if not (isinstance(key, str) and 32 <= len(key) <= 128):
            return
        if not (isinstance(tab_id, int) and isinstance(frame_id, int)):
            return
        now = time.monotonic()
        if len(self._grants) >= MAX_GRANTS:
            self._grants = {k: g for k, g in self._grants.items() if g.expires > now}
        self._grants[auth.lane_key_id(key)] = _Grant(key, browser_id, tab_id, frame_id, now + GRANT_TTL, document_id)
        self._granted.set()
        self._granted = asyncio.Event()

    def find(self, browser_id: str, tab_id: int, frame_id: int) -> Lane | None:
        return self._lanes.get((browser_id, tab_id, frame_id))

    def next_call_id(self) -> str:
        return f"l{next(self._ids)}"

    def __len__(self) -> int:
        return len(self._lanes)

    @staticmethod
    def key_of(subprotocols: Sequence[str]) -> str | None:
        """The subprotocol ``webmcp-nb.<key id>.<nonce>.<proof>`` a handshake offers, if any."""
        for offered in subprotocols:
            if offered.startswith(SUBPROTOCOL):
                return offered
        return None

    async def admit(self, connection: ServerConnection, subprotocols: Sequence[str]) -> bool:
        """During the handshake: whether this socket proves a granted key (waiting briefly for the grant)."""
        offered = self.key_of(subprotocols)
        parts = offered.removeprefix(SUBPROTOCOL).split(".") if offered else []
        if len(parts) != 3 or self._waiting >= MAX_WAITING:
            self.refused += 1
            return False
        key_id, nonce, proof = parts
        deadline = time.monotonic() + KEY_TIMEOUT
        self._waiting += 1
        try:
            while (grant := self._grants.pop(key_id, None)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._granted.wait(), remaining)
        finally:
            self._waiting -= 1
        if (
            grant is None
            or grant.expires < time.monotonic()
            or not auth.check(auth.lane_proof(grant.key, "frame", nonce), proof)
        ):
            self.refused += 1
            return False
        self._admitted[connection] = _Admitted(grant, nonce)
        return True

    async def serve(self, connection: ServerConnection) -> None:
        """Read an admitted socket's results until it closes (the frame went away)."""
        admitted = self._admitted.pop(connection)
        grant = admitted.grant
        send_soon(connection, json.dumps({"type": "ok", "proof": auth.lane_proof(grant.key, "relay", admitted.nonce)}))
        where = (grant.browser_id, grant.tab_id, grant.frame_id)
        lane = Lane(connection, *where, document_id=grant.document_id)
        previous = self._lanes.get(where)
        self._lanes[where] = lane
        if previous is not None:
            previous.fail_all("the frame opened a new lane")
            spawn(previous.connection.close())
        try:
            async for raw in connection:
                lane.on_frame(raw)
        except ConnectionClosed:
            pass
        finally:
            if self._lanes.get(where) is lane:
                del self._lanes[where]
            # A page that navigated or closed ends its lane alone; a browser that crashed ends it together with
            # its own socket: a moment later the relay knows which, and the calls fail as the worker's would.
            asyncio.get_running_loop().call_later(CLOSE_GRACE, self._closed, lane)

    def _closed(self, lane: Lane) -> None:
        if self._browser_connected(lane.browser_id):
            lane.fail_all("the page navigated away or closed during the call")
        else:
            lane.fail_all("the browser disconnected", ErrorCode.NOT_CONNECTED)
