"""The library's private event loop, on a daemon thread, and the twins built on it.

Async methods are the implementation and always run on this loop. Each public ``aname`` coroutine
can be awaited from any loop (Jupyter's included); its blocking twin ``name`` waits on a future from
the caller's thread, so it works even while that thread runs its own loop (no nest-asyncio).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["loop", "run", "on_loop", "blocking"]

P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


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


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the private loop and wait for it from this (non-loop) thread."""
    if _on_private_loop():
        coro.close()
        raise RuntimeError("blocking webmcp-nb calls cannot be made from its own loop; await the a* twin")
    future = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def on_loop(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Awaitable[T]]:
    """Decorate an async method so that awaiting it from any loop runs its body on the private loop."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        if _on_private_loop():
            return await fn(*args, **kwargs)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(fn(*args, **kwargs), loop()))

    return wrapper


def blocking(afn: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """The blocking twin of an :func:`on_loop` coroutine function ``aname``: same signature and docs."""
    impl = afn.__wrapped__  # type: ignore[attr-defined]

    @functools.wraps(afn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return run(impl(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = afn.__name__.removeprefix("a")
    return wrapper
