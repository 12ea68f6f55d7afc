"""``assert_tools_match(tab, "tools.lock.json")``: a site's own tests check that a page still offers the tools its
lock file holds, and a failure says what changed in the diff's words."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core.display import visible
from .diff import diff
from .lock import ToolLock

if TYPE_CHECKING:
    from ..browser.tab import Tab

__all__ = ["assert_tools_match"]


def assert_tools_match(tab: Tab, lock: str | os.PathLike[str] | ToolLock, *, allow_compatible: bool = False) -> None:
    """Raise ``AssertionError`` when ``tab``'s tools differ from ``lock`` (a lock file, or a ``ToolLock``), listing
    each change as ``webmcp-nb diff`` says it, breaking ones first. ``allow_compatible``: fail on breaking changes
    only (a tool added, a description changed pass)."""
    __tracebackhide__ = True
    expected = lock if isinstance(lock, ToolLock) else ToolLock.read(lock)
    changes = diff(expected, ToolLock.of_tab(tab))
    failing = changes.breaking if allow_compatible else changes.changes
    if failing:
        lines = "\n".join(f"  {line}" for line in changes.lines())
        raise AssertionError(
            visible(
                f"the tools of {tab.url} differ from {expected.source or 'the lock'}: {len(changes.breaking)} "
                f"breaking, {len(changes.compatible)} compatible\n{lines}\nIf the change is meant, write the lock "
                f"again: webmcp-nb tools {tab.url} --json > {expected.source or 'tools.lock.json'}"
            )
        )
