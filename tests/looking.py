"""A page the suite wrote (a report), looked at in a real browser: served from its folder, opened, and measured by a
read-only skill tool whose code runs in the page (layout, what a click shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import webmcp_nb as wm
from webmcp_nb.demo.server import DemoServer


def look(browser: wm.Browser, folder: Path, page: str, code: str) -> Any:
    """What ``code`` (a tool's handler: ``async () => value``) returns in ``folder/page``, opened in ``browser``; the
    skill and the tab are gone afterwards."""
    checker = wm.Skill("look-at-a-page")
    checker.add_tool("look", code, read_only=True)
    with DemoServer({"/": folder}) as files:
        tab = browser.open(files.url(page))
        try:
            tab.inject(checker)
            return tab.call("look").value
        finally:
            browser.skills.uninstall(checker.name)
            tab.close()
