"""A page tool is bound to the document that registered it: a ``Tool`` held from before a navigation refuses
(``StaleToolError``) even when the new page, of another origin, registers a tool of the same name; the browser
refuses a call that names a document its frame no longer shows, on the worker's path and on a lane; an agent's
model acts only on the tools it was shown. Hostile fixture: ``elsewhere-a.html`` on 127.0.0.1 answers one call,
then sends its own tab to ``elsewhere-b.html`` on localhost, which registers ``send_message`` too."""

from __future__ import annotations

from typing import Any

import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.core import _loop
from webmcp_nb.link.protocol import Method
from webmcp_nb.testing import ScriptedServer, calls, say


def moved_to_b(tab: wm.Tab) -> bool:
    """The tab shows page b (localhost) and b's ``send_message`` is mirrored."""
    tool = tab.tools.get("send_message")
    return tab.url.startswith("http://localhost:") and tool is not None and tool.origin == origin_of(tab.url)


def origin_of(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def test_a_tool_held_from_before_a_navigation_never_reaches_the_next_page(open_tab, browser) -> None:
    tab = open_tab("t/elsewhere-a.html")
    held = tab.tools["send_message"]
    assert held.info.document_id and held.origin == origin_of(tab.url)
    assert held(text="hello a").value == {"to": "a", "text": "hello a"}  # then page a sends its tab to b
    eventually(lambda: moved_to_b(tab), 20, "page b's send_message")

    with pytest.raises(wm.StaleToolError, match="the page changed since you listed it") as stale:
        held(text="meant for a")
    assert isinstance(stale.value, wm.ToolNotFoundError) and "tab.tools" in str(stale.value)
    refused = [e for e in browser.events.events if e.kind == "tool.refused" and e.tab_id == tab.id]
    assert refused[-1].data["code"] == "STALE_TOOL"
    assert tab.call("inbox").value == []  # b never saw it

    fresh = tab.tools["send_message"]  # what the tab offers now: b's, which works
    assert fresh.info.document_id != held.info.document_id
    assert fresh(text="for b").value == {"to": "b", "text": "for b"}

    # The browser enforces it too (a Tool checked an instant before the page changed): a call naming a
    # document the frame no longer shows is refused there, on the worker's path and on a frame's lane.
    params = {"tabId": tab.id, "name": "send_message", "frameId": 0, "args": {"text": "raced"}}
    with pytest.raises(wm.StaleToolError, match="no longer shows the document"):
        _loop.run(browser._request(Method.TOOL_CALL, {**params, "documentId": held.info.document_id}, 10))
    assert tab.call("inbox").value == ["for b"]


def test_an_agents_model_acts_only_on_the_tools_it_was_shown(open_tab) -> None:
    """The model asks for two calls in one reply; the first sends the tab to page b; the second, of the tool the
    model was shown (page a's), is refused as stale instead of running b's tool of the same name."""
    tab = open_tab("t/elsewhere-a.html")
    asked: list[wm.ConfirmationRequest] = []

    async def confirm(request: wm.ConfirmationRequest) -> bool:
        asked.append(request)
        if len(asked) == 2:  # answer the second call only once page b is there
            await tab.browser._wait_until(lambda: moved_to_b(tab), 20, "page b")
        return True

    script: list[Any] = [
        calls(("send_message", {"text": "first"}), ("send_message", {"text": "second, meant for a"})),
        say("done"),
    ]
    with ScriptedServer(script) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted", on_confirm=confirm)
        result = agent.run("send two messages")
    first, second = result.steps
    assert first.result == {"to": "a", "text": "first"}
    assert second.error is not None and "STALE_TOOL" in second.error and second.result is None
    assert tab.call("inbox").value == []
