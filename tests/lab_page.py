"""A throwaway JupyterLab server with the panel notebook, opened in headless Chromium with its first cell run:
the JupyterLab UI test and docs/screenshots.py drive the panel the same way (``run_cell`` runs the others)."""

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from ports import free_port

PANEL_CELL = """
import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
server = wm.serve_demo()
browser = wm.launch()
tab = browser.open(server.url("flights/"))
panel = wm.panel(tab)
panel.tools.select("searchFlights")
panel.tools.form.fill(DEMO_SEARCH)
panel
"""


def _wait_for_server(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def run_cell(page: Page, index: int) -> None:
    """Run the notebook's cell ``index`` (as a person would: click into it, Shift+Enter)."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


@contextmanager
def panel_in_jupyterlab(
    root: Path, *, width: int = 1400, height: int = 1000, cells: Sequence[str] = (PANEL_CELL,)
) -> Iterator[Page]:
    """JupyterLab serving ``root`` with panel.ipynb made of ``cells``; yields the page once its first cell was
    sent to the kernel."""
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": cell.strip(), "outputs": [], "execution_count": None}
            for cell in cells
        ],
        "metadata": {"kernelspec": kernelspec},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "panel.ipynb").write_text(json.dumps(notebook))
    port = free_port()
    flags = [
        f"--ServerApp.port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={root / 'workspaces'}",
    ]
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_server(port)
        with sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path="/usr/lib/chromium/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            )
            page = chromium.new_page(viewport={"width": width, "height": height})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/panel.ipynb")
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)  # the kernel is ready
            run_cell(page, 0)
            try:
                yield page
            finally:
                chromium.close()
    finally:
        lab.terminate()
        try:
            lab.wait(10)
        except subprocess.TimeoutExpired:
            lab.kill()
