"""Makes docs/notebook-panel.png and docs/sidepanel.png: both views of one session, in real browsers.

.venv/bin/python docs/screenshots.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

import webmcp_nb as wm
from webmcp_nb.demo import DEMO_SEARCH
from webmcp_nb.protocol import EXTENSION_ID

DOCS = Path(__file__).parent
CHROMIUM = "/usr/lib/chromium/chromium"

NOTEBOOK_CELL = """
import webmcp_nb as wm
from webmcp_nb.demo import DEMO_SEARCH
server = wm.serve_demo()
browser = wm.launch()
tab = browser.open(server.url("flights/"))
panel = wm.panel(tab)
panel.tools.select("searchFlights")
panel.tools.form.fill(DEMO_SEARCH)
panel
"""


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
            page.goto(f"chrome-extension://{EXTENSION_ID}/sidepanel.html?tab={tab.id}")
            page.locator('#tools li[data-tool="listFlights"]').click()
            page.locator("#call-button").click()
            page.locator("#tool-result").wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(DOCS / "sidepanel.png"))
            cdp.close()


def notebook_panel() -> None:
    root = Path(tempfile.mkdtemp())
    cell = {
        "cell_type": "code",
        "metadata": {},
        "source": NOTEBOOK_CELL.strip(),
        "outputs": [],
        "execution_count": None,
    }
    notebook = {
        "cells": [cell],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "panel.ipynb").write_text(json.dumps(notebook))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lab = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--allow-root",
            f"--ServerApp.port={port}",
            "--ServerApp.token=",
            f"--ServerApp.root_dir={root}",
            f"--LabApp.workspaces_dir={root / 'ws'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = chromium.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/panel.ipynb")
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
            page.locator(".jp-Notebook .jp-Cell").first.click()
            page.keyboard.press("Shift+Enter")
            page.locator(".jupyter-widgets button", has_text="Call").click(timeout=90_000)
            page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
            news = page.get_by_role("button", name="No")  # JupyterLab's "news?" toast would cover the panel
            if news.count():
                news.first.click()
            page.locator(".jp-OutputArea-output").first.screenshot(path=str(DOCS / "notebook-panel.png"))
            chromium.close()
    finally:
        lab.terminate()
        lab.wait(10)


if __name__ == "__main__":
    side_panel()
    notebook_panel()
    print(f"wrote {DOCS / 'sidepanel.png'} and {DOCS / 'notebook-panel.png'}")
