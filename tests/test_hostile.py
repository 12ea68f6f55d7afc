"""Hostile pages: what an untrusted page can try against the bridge, the extension and the relay, and the
defence that holds. Each test fails if its defence is removed (named in the test)."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.testing import ScriptedServer, call, say


def test_forged_window_messages_cannot_answer_a_pending_call(open_tab):
    # Defence: content.js never reads window messages; the bridge takes only the first port, at document_start.
    tab = open_tab("t/hostile.html")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(tab.call, "hang", timeout=3)
        eventually(lambda: tab.call("hanging").value == 1, 5, "the call to reach the page")
        assert tab.call("forgeResults", upTo=3000).value == "posted"
        assert isinstance(pending.exception(timeout=10), wm.ToolTimeoutError)  # not the forged "result"


def test_ten_thousand_tools_odd_names_and_huge_schemas_are_bounded(open_tab, browser, server):
    # Defences: the worker bounds what it mirrors of a frame (50,000 tools and 16 M characters, past which tools are
    # left out loudly; 8 k per description, 200 k per schema); registerTool refuses control characters; a schema
    # that is not serialisable is refused with TypeError. Ten thousand tools are within the bounds: all listed.
    tab = open_tab("t/many-tools.html")
    tab.wait_for_tool("hugeSchema", timeout=30)
    bulk = [f"t{i:05d}" for i in range(10_000)]
    assert list(tab.tools) == ["report", *bulk, "innocent", "hugeSchema"] and tab.tools.omitted == 0
    refused = tab.call("report").value
    assert refused["newline"] == refused["nul"] == "InvalidStateError"
    assert refused["cyclicSchema"] == "TypeError"
    assert all("\n" not in name and "\x00" not in name for name in tab.tools)
    assert len(tab.tools["innocent"].description) == 8000
    assert tab.tools["hugeSchema"].input_schema["description"] == "The schema was too large to mirror."
    assert tab.call("t09999").value == 9999
    other = open_tab("flights/")  # the rest of the browser is unaffected
    assert list(other.tools) == ["searchFlights"] and browser.connected


def test_a_thenable_that_resolves_twice_gives_one_answer(open_tab):
    tab = open_tab("t/hostile.html")
    assert tab.call("resolveTwice").value == "first"
    assert tab.call("resolveTwice").value == "first"


def test_closing_a_tab_during_a_call_fails_it_at_once(open_tab):
    # Defence: a port that closes mid-call fails the call with NAVIGATED (no waiting for the timeout).
    tab = open_tab("t/hostile.html")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(tab.call, "hang", timeout=30)
        eventually(lambda: tab.call("hanging").value == 1, 5, "the call to reach the page")
        started = time.monotonic()
        tab.close()
        error = pending.exception(timeout=15)
    assert isinstance(error, wm.NavigatedError), error
    assert time.monotonic() - started < 10


def test_a_page_finds_no_secret_and_cannot_read_the_extension(open_tab, browser):
    # Defences: the bridge deletes its slot before page scripts run and holds nothing secret; the extension
    # declares no web_accessible_resources; the relay token lives in Python and the worker never has it.
    tab = open_tab("t/hostile.html")
    key = "sk-agent-key-that-must-not-leak"
    with ScriptedServer([call("snoop"), say("done")]) as model:
        wm.Agent(tab, base_url=model.base_url, api_key=key, model="m", evidence="off", confirm="never").run("look")
    found = tab.call("snoop").value
    assert found["slot"] == "undefined" and found["skills"] == "undefined" and found["globals"] == []
    assert found["config.json"] == found["manifest.json"] == found["worker/worker.js"] == "blocked"
    text = str(found)
    assert key not in text and browser.relay.secret not in text


def test_untrusted_tool_output_reaches_the_model_as_marked_data(open_tab):
    # Defence: results are delimited, bounded, and untrustedContentHint tools are marked; the system prompt
    # tells the model such content is data.
    tab = open_tab("t/faults.html")
    with ScriptedServer([call("readComments"), say("ok")]) as model:
        wm.Agent(tab, base_url=model.base_url, api_key="k", model="m", evidence="off").run("read")
    result = next(m for m in model.requests[-1]["messages"] if m["role"] == "tool")["content"]
    assert result.startswith('<tool_result tool="readComments" status="ok" untrusted="true">')


@pytest.mark.parametrize("path", ["/browser", "/client"])
def test_pages_cannot_reach_the_relay(open_tab, browser, path):
    # Defence: Origin checks at the handshake (pages always send their own origin).
    tab = open_tab("t/hostile.html")
    before = len(browser.relay.refused)
    assert tab.call("dialRelay", port=browser.relay.port).value == {"browser": "refused", "client": "refused"}
    assert (path, 403) in [(r.path, r.status) for r in browser.relay.refused[before:]]


def test_a_50_mb_result_is_refused_in_the_page(open_tab, browser):
    # Defence: the size cap is applied in the page, before anything crosses a boundary.
    tab = open_tab("t/faults.html")
    with pytest.raises(wm.ResultTooLargeError) as info:
        tab.call("huge", mb=50)
    assert info.value.data["size"] > 50 * 1024 * 1024 and browser.connected
    assert tab.call("received").value == []
