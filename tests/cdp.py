"""Test helpers that speak the DevTools protocol to a browser launched with ``--remote-debugging-port=0``:
to do to the browser what Chrome itself does (stop the extension's service worker)."""

import json

from websockets.sync.client import connect

import webmcp_nb as wm


def cdp(browser: wm.Browser, method: str, params: dict | None = None) -> dict:
    """One command on the browser target; returns its result."""
    port, path = (browser.process.profile_dir / "DevToolsActivePort").read_text().split()
    with connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as ws:
        ws.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(ws.recv())
            if reply.get("id") == 1:
                return reply["result"]


def stop_service_worker(browser: wm.Browser) -> None:
    """Stop the extension's worker the way Chrome does when it is idle."""
    targets = cdp(browser, "Target.getTargets")["targetInfos"]
    (worker,) = [t for t in targets if t["type"] == "service_worker" and "worker.js" in t["url"]]
    assert cdp(browser, "Target.closeTarget", {"targetId": worker["targetId"]})["success"]
