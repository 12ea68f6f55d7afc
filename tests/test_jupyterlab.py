"""JupyterLab smoke test in the real headless Chromium: the panel renders, and a click on Call updates it
(click → widget comm → kernel → library loop → page tool → widget update from the loop thread → browser)."""

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

playwright = pytest.importorskip("playwright.sync_api")

SETUP = """
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(240)
def test_the_panel_renders_in_jupyterlab_and_call_updates_it(tmp_path: Path):
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": SETUP.strip(), "outputs": [], "execution_count": None}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "panel.ipynb").write_text(json.dumps(notebook))
    port = _free_port()
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
            "--ServerApp.password=",
            f"--ServerApp.root_dir={tmp_path}",
            f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
            "--ServerApp.ip=127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        with playwright.sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path="/usr/lib/chromium/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            )
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/panel.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)  # the kernel is ready
            page.locator(".jp-Notebook .jp-Cell").first.click()
            page.keyboard.press("Shift+Enter")
            call = page.locator(".jupyter-widgets button", has_text="Call")
            try:
                call.wait_for(timeout=90_000)
            except playwright.Error:
                outputs = page.locator(".jp-OutputArea").all_inner_texts()
                page.screenshot(path="/tmp/jupyterlab-failure.png")
                pytest.fail(f"the panel did not render; cell output: {outputs}")
            assert page.locator(".jupyter-widgets .widget-tab, .jupyter-widgets .lm-TabBar").count() > 0
            call.click()
            page.get_by_text("searchFlights → ok").wait_for(timeout=30_000)
            page.screenshot(path=str(tmp_path / "jupyterlab.png"))
            chromium.close()
    finally:
        lab.terminate()
        try:
            lab.wait(10)
        except subprocess.TimeoutExpired:
            lab.kill()
