"""The library's private event loop, on a daemon thread, and the twins built on it.

Async methods are the implementation and always run on this loop. Each public ``aname`` coroutine
can be awaited from any loop (Jupyter's included); its blocking twin ``name`` waits on a future from
the caller's thread, so it works even while that thread runs its own loop (no nest-asyncio).

Work crosses between threads through mailboxes: ``call_soon_threadsafe`` wakes the loop (a write to its
self-pipe) for every callback, which with many calls in flight costs more CPU than the calls; a mailbox
wakes its loop once per batch of callbacks posted before the loop got round to them.

The twins are where a user's code meets the library, so they carry what a person sees when something goes
wrong: their frames are marked ``__tracebackhide__`` (IPython's marker; ``WebMCPError`` tracebacks end at the
user's line, see :mod:`webmcp_nb.core.errors`), and warnings the call raised on the loop reach the caller's thread
pointing at the caller's line (:func:`warn`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import logging
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, Protocol, TypeVar

__all__ = ["loop", "run", "submit", "on_loop", "blocking", "warn", "in_package", "answer_first", "settle", "PACKAGE"]

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None

PACKAGE = __name__.partition(".")[0]
"""The package's name: frames of its modules are the library's, every other frame is the user's."""


class Warned:
    """The warnings a public call raised on the loop, kept for its caller's thread until the call returns. A task
    the call started inherits this (its context); what it warns once the call has returned is warned at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: list[tuple[str, type[Warning]]] | None = []

    def keep(self, message: str, category: type[Warning]) -> bool:
        with self._lock:
            if self._kept is None:
                return False
            self._kept.append((message, category))
            return True

    def close(self) -> list[tuple[str, type[Warning]]]:
        with self._lock:
            kept, self._kept = self._kept or [], None
        return kept


_warned: contextvars.ContextVar[Warned | None] = contextvars.ContextVar("webmcp_nb_warned", default=None)
"""Warnings raised on the loop for the public call running there, handed to its caller when it returns."""


def loop() -> asyncio.AbstractEventLoop:
    """The private loop, started on first use."""
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="webmcp-nb-loop", daemon=True).start()
        return _loop


def _on_private_loop() -> bool:
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


class _Mailbox:
    """Callbacks for one loop from other threads, with one wake-up per batch."""

    def __init__(self, target: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(target)  # the mailbox must not keep a finished caller's loop alive
        self._items: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._lock = threading.Lock()

    def post(self, callback: Callable[..., Any], *args: Any) -> None:
        with self._lock:
            target = self._loop()
            if target is None or target.is_closed():  # the caller's loop ended (asyncio.run returned)
                self._items.clear()
                return
            self._items.append((callback, args))
            if len(self._items) > 1:
                return  # a wake-up is already on its way
        target.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            items, self._items = self._items, []
        for callback, args in items:
            try:
                callback(*args)
            except Exception:
                log.exception("webmcp-nb: a callback from another thread failed")


_mailboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Mailbox] = weakref.WeakKeyDictionary()


def _mailbox(target: asyncio.AbstractEventLoop) -> _Mailbox:
    with _lock:
        box = _mailboxes.get(target)
        if box is None:
            box = _mailboxes[target] = _Mailbox(target)
        return box


def _submit(coro: Coroutine[Any, Any, T], settle: Callable[[asyncio.Task[T]], None]) -> Callable[[], None]:
    """Start ``coro`` on the private loop; ``settle(task)`` runs there when it ends. Returns a canceller."""
    task: list[asyncio.Task[T]] = []

    def start() -> None:  # in a context of its own: nothing of whichever thread woke the loop leaks into it
        task.append(contextvars.Context().run(asyncio.ensure_future, coro))
        task[0].add_done_callback(settle)

    def cancel() -> None:
        if task:
            task[0].cancel()

    box = _mailbox(loop())
    box.post(start)
    return lambda: box.post(cancel)


def _copy(task: asyncio.Future[T], future: asyncio.Future[T] | concurrent.futures.Future[T]) -> None:
    if future.done():  # the caller gave up (cancelled): mark the outcome as seen, so asyncio does not warn
        if not task.cancelled():
            task.exception()
        return
    if task.cancelled():
        future.cancel()
    elif (exc := task.exception()) is not None:
        future.set_exception(exc)
    else:
        future.set_result(task.result())


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the private loop from any thread and return at once; the future settles when it ends
    (cancelling the future cancels it). What buttons and background runs use: nothing waits."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    cancel = _submit(coro, lambda task: _copy(task, future))
    future.add_done_callback(lambda f: cancel() if f.cancelled() else None)
    return future


def in_package(frame: Any) -> bool:
    """Whether ``frame`` runs code of this package (the library's) rather than the user's."""
    name = frame.f_globals.get("__name__", "")
    return isinstance(name, str) and (name == PACKAGE or name.startswith(PACKAGE + "."))


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes ``warnings.warn``, called by this module's caller, name the first frame
    outside the package; 2 (that caller) when there is none (a callback on the loop, not a user's call)."""
    frame: types.FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and in_package(frame):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


def warn(message: str, category: type[Warning]) -> None:
    """The one way the library warns: at the user's own line. In the caller's thread, the stack level is the
    first frame outside the package; on the loop, the warning waits for the public call that caused it to
    return and is raised then, in its caller's thread (the loop's stack holds no frame of the user's)."""
    if _on_private_loop():
        pending = _warned.get()
        if pending is None or not pending.keep(message, category):
            warnings.warn(message, category, stacklevel=2)  # the loop's own work: no user's line to point at
        return
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def _raise_warnings(pending: Warned) -> None:
    for message, category in pending.close():
        warnings.warn(message, category, stacklevel=_user_stacklevel())


async def _collecting(coro: Coroutine[Any, Any, T], pending: Warned) -> T:
    """Run ``coro`` (in its own task, on the loop) with its warnings kept in ``pending``."""
    _warned.set(pending)
    return await coro


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the private loop and wait for it from this (non-loop) thread."""
    __tracebackhide__ = True
    if _on_private_loop():
        coro.close()
        raise RuntimeError("blocking webmcp-nb calls cannot be made from its own loop; await the a* twin")
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    pending = Warned()
    cancel = _submit(_collecting(coro, pending), lambda task: _copy(task, future))
    try:
        return future.result()
    except KeyboardInterrupt:
        cancel()
        raise
    finally:
        _raise_warnings(pending)


def on_loop(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Awaitable[T]]:
    """Decorate an async method so that awaiting it from any loop runs its body on the private loop."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        __tracebackhide__ = True
        if _on_private_loop():
            return await fn(*args, **kwargs)
        caller = asyncio.get_running_loop()
        future: asyncio.Future[T] = caller.create_future()
        back = _mailbox(caller)
        pending = Warned()
        cancel = _submit(_collecting(fn(*args, **kwargs), pending), lambda task: back.post(_copy, task, future))
        try:
            return await future
        except asyncio.CancelledError:
            cancel()
            raise
        finally:
            _raise_warnings(pending)

    return wrapper


def blocking(afn: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """The blocking twin of an :func:`on_loop` coroutine function ``aname``: same signature and docs."""
    impl = afn.__wrapped__  # type: ignore[attr-defined]

    @functools.wraps(afn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        __tracebackhide__ = True
        result: T = run(impl(*args, **kwargs))
        return result

    wrapper.__name__ = wrapper.__qualname__ = afn.__name__.removeprefix("a")
    return wrapper


class Question(Protocol):
    """A yes or no the loop waits for (a confirmation), and who gave it."""

    future: asyncio.Future[bool]
    answered_by: str


_answering = threading.Lock()


def answer_first(question: Question, approved: bool, by: str) -> bool:
    """Answer ``question`` from any thread; False when it was answered already. The first answer wins and names who
    gave it, even when another comes before the loop has settled the first (both panels and a cell at once)."""
    with _answering:
        if question.answered_by or question.future.done():
            return False
        question.answered_by = by
    question.future.get_loop().call_soon_threadsafe(settle, question.future, approved)
    return True


def settle(future: asyncio.Future[T], result: T) -> None:
    """Give ``future`` its result unless it has one (on the loop)."""
    if not future.done():
        future.set_result(result)
