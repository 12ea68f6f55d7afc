"""Makes docs/notebook-panel.png and docs/sidepanel.png: both views of one session, in real browsers.

.venv/bin/python docs/screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import webmcp_nb as wm
from webmcp_nb.demo import DEMO_SEARCH
from webmcp_nb.protocol import EXTENSION_ID

DOCS = Path(__file__).parent
sys.path.insert(0, str(DOCS.parent / "tests"))
from lab_page import panel_in_jupyterlab  # noqa: E402 - the UI test's helper: both views made the same way


def side_panel() -> None:
    with wm.serve_demo() as server, wm.launch(args=["--remote-debugging-port=0"]) as browser:
        tab = browser.open(server.url("flights/"))
        tab.call("searchFlights", DEMO_SEARCH)
        tab.wait_for_tool("listFlights")
        port = (browser.process.profile_dir / "DevToolsActivePort").read_text().split()[0]
        with sync_playwright() as p:
            cdp = p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = cdp.contexts[0].new_page()
            page.set_viewport_size({"width": 400, "height": 900})
            page.goto(f"chrome-extension://{EXTENSION_ID}/sidepanel/sidepanel.html?tab={tab.id}")
            page.locator('#tools li[data-tool="listFlights"]').click()
            page.locator("#call-button").click()
            page.locator("#tool-result").wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(DOCS / "sidepanel.png"))
            cdp.close()


def notebook_panel() -> None:
    with panel_in_jupyterlab(Path(tempfile.mkdtemp()), width=1200) as page:
        page.locator(".jupyter-widgets button", has_text="Call").click(timeout=90_000)
        page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
        news = page.get_by_role("button", name="No")  # JupyterLab's "news?" toast would cover the panel
        if news.count():
            news.first.click()
        page.locator(".jp-OutputArea-output").first.screenshot(path=str(DOCS / "notebook-panel.png"))


if __name__ == "__main__":
    side_panel()
    notebook_panel()
    print(f"wrote {DOCS / 'sidepanel.png'} and {DOCS / 'notebook-panel.png'}")
