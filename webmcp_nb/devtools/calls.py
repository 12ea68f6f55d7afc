"""Tool calls through the DevTools protocol: ``WebMCP.invokeTool`` in the frame that registered the tool, answered
by ``WebMCP.toolResponded``, with everything the extension's path does around a call: the document checked
(``STALE_TOOL`` once the frame shows another), the time limit (then ``WebMCP.cancelInvocation``, which aborts the
call's ``AbortSignal`` and fires ``toolcancel`` in the page), a caller that gives up (the same), a frame that
navigates or goes during the call (``NAVIGATED``), results bounded and worded as the bridge words them. A result
is handed back only once the relay has been told every tool change the page made before it answered."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..link.lanes import Settle, time_limit
from ..link.protocol import ErrorCode, error_body
from .pages import Pages, Target
from .pipe import CommandError, Oversized, Pipe
from .tools import Frame, failure, result_text

__all__ = ["Calls"]

NAVIGATED = "The page navigated away or closed during the call"
_INVOCATION = re.compile(rb'"invocationId":"([0-9A-Za-z]+)"')


@dataclass
class _Call:
    key: int
    name: str
    tab_id: int
    target: Target
    frame: Frame
    settle: Settle
    max_chars: int
    candidates: list[Frame] = field(default_factory=list)
    """Further frames that may have it (a tool the mirror left out, called by name)."""
    started: int = 0
    """The frame's change count when the call started."""
    invocation: str | None = None
    timer: asyncio.TimerHandle | None = None
    done: bool = False


class Calls:
    """The calls in flight, by invocation."""

    def __init__(self, pipe: Pipe, pages: Pages) -> None:
        self._pipe = pipe
        self._pages = pages
        self._running: dict[int, _Call] = {}
        self._invocations: dict[str, _Call] = {}
        self._ids = itertools.count(1)
        self.started = 0
        """Calls started this way (in the page: ``WebMCP.invokeTool`` sent)."""

    def call(self, tab_id: int, params: dict[str, Any], settle: Settle) -> Callable[[], None] | None:
        """Start a ``tool.call`` (the relay's params) in a tab whose page the protocol reaches; ``settle`` gets its
        outcome. Returns what cancels it, or ``None`` when this tab is not reached this way (the worker takes it)."""
        target = self._pages.target_of(tab_id)
        timeout_ms, max_chars = params.get("timeoutMs", 30_000), params.get("maxResultChars", 4_000_000)
        if target is None or not all(_count(n) for n in (timeout_ms, max_chars)):
            return None
        name, number, document = params.get("name"), params.get("frameId"), params.get("documentId")
        args = params.get("args") or {}
        if not isinstance(name, str):
            return None
        if number is not None:
            frame = target.numbers.get(number)
            if document is not None and (frame is None or frame.document != document):
                settle(None, error_body(ErrorCode.STALE_TOOL, _stale(tab_id, name)))
                return _nothing
            frames = [frame] if frame is not None else []
        else:
            frames = sorted(target.frames.values(), key=lambda f: f.number)
        listed = next((f for f in frames if name in f.tools), None)
        candidates = [listed] if listed is not None else [f for f in frames if name in f.left_out]
        if not candidates:
            settle(None, error_body(ErrorCode.TOOL_NOT_FOUND, f'Tab {tab_id} has no tool named "{name}"'))
            return _nothing
        key = next(self._ids)
        call = _Call(key, name, tab_id, target, candidates[0], settle, max_chars, candidates[1:])
        try:
            self._invoke(key, call, args)
        except ValueError as exc:  # JavaScript's JSON refuses NaN: fail alone, now
            settle(None, error_body(ErrorCode.INVALID_ARGS, f"{name}: the arguments are not JSON ({exc})"))
            return _nothing
        self._running[key] = call
        call.timer = asyncio.get_running_loop().call_later(timeout_ms / 1000, self._expire, key, timeout_ms)
        return lambda: self._give_up(key)

    def _invoke(self, key: int, call: _Call, args: Any) -> None:
        frame = call.frame
        call.started = frame.changes

        def invoked(result: dict[str, Any] | None, error: CommandError | None) -> None:
            invocation = (result or {}).get("invocationId")
            if call.done:
                if isinstance(invocation, str):  # given up before the page started it: stop it there
                    self._pipe.send("WebMCP.cancelInvocation", {"invocationId": invocation}, frame.session)
                return
            if error is not None:
                if "not found" in error.message.lower() and "tool" in error.message.lower() and call.candidates:
                    call.frame = call.candidates.pop(0)
                    self._invoke(key, call, args)
                elif error.code == -1:
                    self._finish(key, None, error_body(ErrorCode.NOT_CONNECTED, "the browser disconnected"))
                elif "tool" in error.message.lower():
                    self._finish(
                        key,
                        None,
                        error_body(ErrorCode.TOOL_NOT_FOUND, f'Tab {call.tab_id} has no tool named "{call.name}"'),
                    )
                else:
                    self._finish(key, None, error_body(ErrorCode.NAVIGATED, NAVIGATED))
                return
            if isinstance(invocation, str):
                call.invocation = invocation
                self._invocations[invocation] = call

        params = {"frameId": frame.id, "toolName": call.name, "input": args}
        self._pipe.send("WebMCP.invokeTool", params, frame.session, invoked)  # (ValueError: arguments not JSON)
        self.started += 1

    def responded(self, params: dict[str, Any]) -> None:
        """``WebMCP.toolResponded``: the call's outcome, handed back once the relay has seen what the page changed
        before it (a change made during the call is flagged ``toolsChanged``)."""
        call = self._invocations.pop(str(params.get("invocationId")), None)
        if call is None or call.done:
            return
        key = call.key
        status = params.get("status")
        if status == "Completed":
            text = result_text(params.get("output"))
            if len(text) > call.max_chars:
                message = f'The result of "{call.name}" is {len(text)} characters, over the {call.max_chars} limit'
                self._shown(call, key, None, error_body(ErrorCode.RESULT_TOO_LARGE, message, _size(len(text), call)))
                return
            result: dict[str, Any] = {"text": text, "frameId": call.frame.number}
            if call.frame.changes != call.started:  # and the list the client holds shows it when this arrives
                result.update(toolsChanged=True, toolsShown=True)
            self._shown(call, key, result, None)
        elif status == "Error":
            exception = params.get("exception")
            if isinstance(exception, dict) and isinstance(exception.get("objectId"), str):
                self._pipe.send("Runtime.releaseObject", {"objectId": exception["objectId"]}, call.frame.session)
            self._shown(call, key, None, failure(params))
        else:  # cancelled by the browser, not by us (we settle first)
            self._shown(call, key, None, error_body(ErrorCode.NAVIGATED, NAVIGATED))

    def gone(self, frames: set[str]) -> None:
        """The documents of ``frames`` went (navigation, a closed tab, a removed iframe): their calls fail."""
        for key, call in list(self._running.items()):
            if call.frame.id in frames:
                self._finish(key, None, error_body(ErrorCode.NAVIGATED, NAVIGATED))

    def oversized(self, message: Oversized) -> None:
        """A result too long to take: its call fails with its size, nothing of it kept."""
        match = _INVOCATION.search(message.head)
        call = self._invocations.pop(match.group(1).decode(), None) if match is not None else None
        if call is None or call.done:
            return
        text = f'The result of "{call.name}" is about {message.size} characters, over the {call.max_chars} limit'
        self._finish(call.key, None, error_body(ErrorCode.RESULT_TOO_LARGE, text, _size(message.size, call)))

    def closed(self) -> None:
        for key in list(self._running):
            self._finish(key, None, error_body(ErrorCode.NOT_CONNECTED, "the browser disconnected"))

    # ----- ending a call -----

    def _shown(self, call: _Call, key: int, result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
        """End the call once the relay was told what the page changed before it answered."""

        def finish() -> None:
            self._finish(key, result, error)

        self._pages.when_shown(call.target, finish)

    def _expire(self, key: int, timeout_ms: int) -> None:
        call = self._running.get(key)
        if call is not None and self._finish(
            key, None, error_body(ErrorCode.TIMEOUT, f'"{call.name}" did not finish in {time_limit(timeout_ms)}.')
        ):
            self._cancel(call)

    def _give_up(self, key: int) -> None:
        """The caller gave up: the page's call is cancelled, and nothing waits for it."""
        call = self._running.get(key)
        if call is not None and self._finish(key, None, error_body(ErrorCode.TIMEOUT, "cancelled by the caller")):
            self._cancel(call)

    def _cancel(self, call: _Call) -> None:
        if call.invocation is not None:
            self._pipe.send("WebMCP.cancelInvocation", {"invocationId": call.invocation}, call.frame.session)

    def _finish(self, key: int, result: dict[str, Any] | None, error: dict[str, Any] | None) -> bool:
        call = self._running.pop(key, None)
        if call is None or call.done:
            return False
        call.done = True
        if call.timer is not None:
            call.timer.cancel()
        if call.invocation is not None:
            self._invocations.pop(call.invocation, None)
        call.settle(result, error)
        return True


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _stale(tab_id: int, name: str) -> str:
    return f'Tab {tab_id} no longer shows the document that registered "{name}": the page changed since you listed it.'


def _size(size: int, call: _Call) -> dict[str, int]:
    return {"size": size, "limit": call.max_chars}


def _nothing() -> None:
    pass
