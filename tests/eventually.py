"""The one way tests wait for something that happens elsewhere (a browser, a relay, a notebook widget)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(check: Callable[[], T], timeout: float = 20.0, what: str = "the condition") -> T:
    """``check()`` once it returns something truthy. After ``timeout`` seconds, an ``AssertionError`` saying
    what was awaited and what ``check`` last returned: a test never goes on with a falsy value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s (last: {value!r})")
        time.sleep(0.02)
