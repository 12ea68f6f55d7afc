"""Test helpers that speak the DevTools protocol to a browser launched with ``--remote-debugging-port=0``: to do to
the browser what Chrome itself does (stop the extension's service worker), or to see it as Playwright does (and
set the side panel chat's endpoint there, as a user does)."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eventually import eventually
from websockets.sync.client import connect

import webmcp_nb as wm
from webmcp_nb.link.protocol import EXTENSION_ID


def devtools(profile_dir: Path) -> tuple[str, str]:
    """The browser's DevTools port and path, once Chromium has written them (``DevToolsActivePort``)."""
    active = Path(profile_dir) / "DevToolsActivePort"
    eventually(lambda: active.exists() and len(active.read_text().split()) == 2, 10, "DevToolsActivePort")
    port, path = active.read_text().split()
    return port, path


@contextmanager
def playwright_context(profile_dir: Path) -> Iterator[Any]:
    """The running Chromium as Playwright sees it, over CDP: its browser context (pages, ``new_page()``)."""
    from playwright.sync_api import sync_playwright

    port, _ = devtools(profile_dir)
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        try:
            yield browser.contexts[0]
        finally:
            browser.close()


def cdp(browser: wm.Browser, method: str, params: dict | None = None) -> dict:
    """One command on the browser target; returns its result."""
    port, path = devtools(browser.process.profile_dir)
    with connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as ws:
        ws.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(ws.recv())
            if reply.get("id") == 1:
                return reply["result"]


def _service_worker(browser: wm.Browser) -> str:
    """The target id of the extension's service worker."""
    targets = cdp(browser, "Target.getTargets")["targetInfos"]
    (worker,) = [t for t in targets if t["type"] == "service_worker" and "worker.js" in t["url"]]
    return str(worker["targetId"])


def stop_service_worker(browser: wm.Browser) -> None:
    """Stop the extension's worker the way Chrome does when it is idle."""
    assert cdp(browser, "Target.closeTarget", {"targetId": _service_worker(browser)})["success"]


def in_service_worker(browser: wm.Browser, expression: str) -> Any:
    """The value of ``expression`` (awaited) evaluated in the extension's service worker."""
    port, path = devtools(browser.process.profile_dir)
    with connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as ws:

        def send(id_: int, method: str, params: dict, session: str | None = None) -> dict:
            routed = {"sessionId": session} if session else {}
            ws.send(json.dumps({"id": id_, "method": method, "params": params, **routed}))
            while True:
                reply = json.loads(ws.recv())
                if reply.get("id") == id_:
                    assert "error" not in reply, reply
                    return dict(reply["result"])

        attached = send(1, "Target.attachToTarget", {"targetId": _service_worker(browser), "flatten": True})
        session = attached["sessionId"]
        evaluate = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        found = send(2, "Runtime.evaluate", evaluate, session)
        send(3, "Target.detachFromTarget", {"sessionId": session})
        return found["result"].get("value")


def configure_chat(context: Any, base_url: str, model: str = "scripted", key: str = "") -> None:
    """Set the side panel chat's endpoint the way a user does: on the extension's options page."""
    from playwright.sync_api import expect

    page = context.new_page()
    page.goto(f"chrome-extension://{EXTENSION_ID}/options/options.html")
    page.fill("#sidecar-base-url", base_url)
    page.fill("#sidecar-model", model)
    page.fill("#sidecar-api-key", key)
    page.click("#sidecar-save")
    expect(page.locator("#sidecar-status")).to_contain_text("Saved", timeout=20_000)
    page.close()
