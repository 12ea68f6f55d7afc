"""Waiting for a frame's lane: it opens shortly after the frame first reports its tools."""

from __future__ import annotations

import time

import webmcp_nb as wm
from webmcp_nb.link.lanes import Lane


def lane_of(browser: wm.Browser, tab: wm.Tab, timeout: float = 5.0, frame: int = 0) -> Lane | None:
    """The lane of ``tab``'s ``frame`` once the relay has it, or ``None`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (lane := browser.relay.lanes.find(browser.id, tab.id, frame)) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return lane
