"""Tools of a frame of another origin say so wherever a page tool is shown or offered in Python: ``Tool.origin``,
``tab.tools`` and a tool's repr and help, the notebook panel's inspector, the agent's descriptions for the model and
its confirmations. Hostile fixture: ``cross-frame.html`` on 127.0.0.1 embeds a frame from localhost (another
origin) whose tools claim to belong to "the page you are on"."""

from __future__ import annotations

import json
import threading
from typing import Any

from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.core.display import escape
from webmcp_nb.testing import ScriptedServer, call, say


def origins(server: Any) -> tuple[str, str, str]:
    """The page's origin, the frame's, and how every view names the frame's tools."""
    page, frame = f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}"
    return page, frame, f"a frame of {frame}, not the page's own origin ({page})"


def test_a_cross_origin_frames_tools_name_their_origin_everywhere(open_tab, server) -> None:
    page, frame, marked = origins(server)
    tab = open_tab("t/cross-frame.html")
    tab.wait_for_tool("sendPin", timeout=10)
    host, inner = tab.tools["hostTool"], tab.tools["frameGreeting"]
    assert tab.origin == page and host.origin == page and not host.cross_origin and host.provenance == page
    assert inner.origin == frame and inner.cross_origin and inner.provenance == marked
    assert marked in repr(inner) and f"from {marked}" in inner.__doc__
    shown = tab.tools._repr_mimebundle_()
    assert f"[in {marked}]" in shown["text/plain"] and escape(marked) in shown["text/html"]

    panel = wm.panel(tab)
    labels = dict((name, label) for label, name in panel.tools.list.options)
    assert f"a frame of {frame}" in labels["frameGreeting"] and "a frame of" not in labels["hostTool"]
    panel.tools.select("frameGreeting")
    assert f"from {escape(marked)}" in panel.tools.details.value
    panel.close()

    asked: list[wm.ConfirmationRequest] = []
    with ScriptedServer([call("sendPin", pin="1234"), say("sent")]) as model:
        agent = wm.Agent(
            tab,
            base_url=model.base_url,
            api_key="test",
            model="scripted",
            on_confirm=lambda request: asked.append(request) or False,
        )
        agent.run("send the PIN")
        offered = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
    assert offered["sendPin"].endswith(f"(from {marked}; risk: high)")
    assert offered["hostTool"].endswith(f"(from {page}; risk: low, read-only)")
    assert asked[0].tool == "sendPin" and asked[0].provenance == marked
    requested = [e for e in agent.events.events if e.kind == "confirmation.requested"]
    assert requested[-1].data["provenance"] == marked


def test_a_cross_origin_frames_tool_needs_the_grant_of_its_own_site(server) -> None:
    """The page's grant does not cover a frame of another site (it acts there, with that site's cookies): an agent
    is offered the frame's tools only while the frame's site may be read, and calls one only as that site allows
    (here read: the user is asked for act, and says never); the page's own tools as the page's grant allows. A site
    said never offers nothing more: the next request says only that its tools are held back."""
    page, frame, _ = origins(server)
    script = [call("sendPin", pin="1234"), call("hostTool"), say("done"), say("it is gone")]
    asked: list[str] = []
    with wm.launch(grants=True) as browser, ScriptedServer(script) as model:
        tab = browser.open(server.url("t/cross-frame.html"))
        tab.wait_for_tool("sendPin", timeout=10)
        panel = wm.panel(tab)

        def user() -> None:
            card = eventually(lambda: list(panel.grant_cards.values()), 30, "the ask for the frame's site")[0]
            asked.append(card.text.value)
            card.buttons["never"].click()

        wm.grants.allow(page, "act")
        wm.grants.allow(frame, "read")
        helper = threading.Thread(target=user)
        helper.start()
        try:
            agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", confirm="never")
            agent.run("send the PIN")
            helper.join(30)
            agent.run("send it again")
        finally:
            panel.close()
            wm.grants.revoke(page)
            wm.grants.revoke(frame)
        offered = [[t["function"]["name"] for t in request["tools"]] for request in model.requests]
        results = [m["content"] for m in model.requests[2]["messages"] if m["role"] == "tool"]
        called = [e.data["tool"] for e in browser.events.of_kind("tool.called")]
        last = json.dumps(model.requests[-1])
    assert offered[0] == ["hostTool", "frameGreeting", "sendPin"] and offered[-1] == ["hostTool"]
    assert frame in asked[0] and "sendPin" in asked[0], asked
    assert "PERMISSION_DENIED" in results[0] and frame in results[0] and "never" in results[0], results[0]
    assert 'status="ok"' in results[1] and "host" in results[1]
    assert called == ["hostTool"]  # the frame never saw the call
    assert "Greets from the frame" not in last
    assert f"Not listed: 2 tools of frames of sites not granted to you ({frame} (2))" in last
