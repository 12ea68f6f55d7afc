"""Tools that fail: every failure is a typed exception or a bounded result, never a hang."""

import http.server
import threading
import time

import pytest
from eventually import eventually

import webmcp_nb as wm


@pytest.fixture
def tab(open_tab):
    return open_tab("t/faults.html")


def test_a_throwing_tool_raises_tool_error_with_the_pages_message(tab):
    with pytest.raises(wm.ToolError, match="kaboom 42"):
        tab.call("boom")
    with pytest.raises(wm.ToolError, match="bad thing") as info:
        tab.call("reject")
    assert info.value.data["name"] == "TypeError"


def test_a_tool_that_never_resolves_times_out_at_the_limit(tab):
    with pytest.raises(wm.ToolTimeoutError) as info:
        tab.call("hang", timeout=1.5)
    assert str(info.value).startswith('"hang" did not finish in 1.5 s. The page may still be running it.')
    assert "tab.call(..., timeout=SECONDS) (this call had 1.5 s" in str(info.value)  # and what to do about it
    assert tab.call("received").value == []  # the tab still answers
    told = eventually(lambda: (tab.call("cancelled").value, tab.call("handled").value) == (["hang"], ["hang"]))
    assert told  # the page was told: its toolcancel listener and its ontoolcancel handler


def test_a_limit_under_a_millisecond_is_said_as_such(tab):
    """The wire carries whole milliseconds: timeout=0.0001 was told as "did not finish within 0 ms The page…"
    (no period either), on the lane and on the worker's path alike."""
    with pytest.raises(wm.ToolTimeoutError) as info:
        tab.call("hang", timeout=0.0001)
    assert str(info.value).startswith('"hang" did not finish in under 1 ms. The page may still be running it.')
    assert "(this call had 0.0001 s" in str(info.value)
    for limit in (0, -1, float("inf"), "5", True):  # refused in Python, naming it (the relay answered BAD_REQUEST)
        with pytest.raises(ValueError, match=r"^timeout must be a positive number of seconds, not "):
            tab.call("hang", timeout=limit)
    with pytest.raises(ValueError, match=r"^call_timeout must be a positive number of seconds, not -5"):
        tab.browser.call_timeout = -5


def test_a_tool_that_navigates_away_raises_navigated(tab):
    with pytest.raises(wm.NavigatedError, match="look at the page"):
        tab.call("leave")


def test_invalid_arguments_are_refused_in_python_and_never_reach_the_page(tab):
    cases = [
        ({"code": "ABC"}, "count"),  # missing required
        ({"count": 9, "code": "ABC"}, "count"),  # above maximum
        ({"count": 1, "code": "abc"}, "code"),  # pattern
        ({"count": "1", "code": "ABC"}, "count"),  # type
        ({"count": 1, "code": "ABC", "options": {}}, "options.fast"),  # nested required
        ({"count": 1, "code": "ABC", "cuont": 2}, "cuont"),  # misspelt name
    ]
    for args, field in cases:
        with pytest.raises(wm.InvalidArgumentsError) as info:
            tab.call("strict", args)
        assert info.value.field == field, (args, info.value)
        assert field.split(".")[-1] in str(info.value)
    with pytest.raises(wm.InvalidArgumentsError, match="must be a dict of named values, not list"):
        tab.call("strict", [2, "ABC"])  # (was a TypeError from deep inside the library)
    assert tab.call("received").value == []
    tab.call("strict", count=2, code="ABC")
    assert tab.call("received").value == [{"count": 2, "code": "ABC"}]


def test_values_json_cannot_hold_are_serialised(tab):
    value = tab.call("odd").value
    assert value["date"] == "2026-01-02T03:04:05.000Z"
    assert value["big"] == str(2**70)
    assert value["map"] == {"a": 1}
    assert value["set"] == [1, 2]
    assert value["error"] == {"name": "RangeError", "message": "out"}
    assert value["self"] == "[Circular]"
    assert value["trap"].startswith("[Thrown:")
    assert value["nan"] is None and value["list"] == [None, 1]
    assert "nothing" not in value and "fn" not in value


def test_a_20_mb_result_is_refused_with_its_size(tab):
    with pytest.raises(wm.ResultTooLargeError) as info:
        tab.call("huge", mb=20)
    assert info.value.data["size"] > 20 * 1024 * 1024
    assert info.value.data["limit"] == tab._browser.max_result_chars
    assert len(tab.call("huge", mb=1).value["blob"]) == 1024 * 1024


def test_a_schema_given_as_a_json_string_is_parsed(tab, mode):
    if mode in ("native", "worker"):
        assert "stringSchema" not in tab.tools  # Chromium's own registerTool refuses a string schema
        return
    assert tab.tools["stringSchema"].input_schema["required"] == ["n"]
    assert tab.call("stringSchema", n=21).value == 42


def test_unknown_tools_and_tabs_raise_lookup_errors(tab, browser):
    with pytest.raises(wm.ToolNotFoundError, match="boom"):
        tab.call("nope")
    with pytest.raises(wm.TabNotFoundError):
        browser.tab(-1)


def test_register_tool_contract_matches_native(open_tab):
    # The polyfill must behave like Chromium's own registerTool; the same expectations run in both modes.
    tab = open_tab("t/registration.html")
    assert tab.call("contract").value == {
        "first": "ok",
        "duplicate": "InvalidStateError",
        "empty": "InvalidStateError",
        "spaces": "InvalidStateError",
        "tooLong": "InvalidStateError",
        "listedBefore": True,
        "listedAfter": False,
        "changeOnAbort": True,
        "preAborted": "AbortError",
        "neverListed": True,
        "draftDuplicate": "InvalidStateError",
    }


def test_keyword_property_names_do_not_break_the_tab(tab):
    assert "route" in tab.tools and list(tab.tools["route"].__signature__.parameters) == ["to"]
    assert tab.call("route", {"from": "LON", "to": "NYC"}).value == "LON->NYC"


def test_a_pathological_pattern_cannot_freeze_the_library(polyfill_browser, server):
    # The pattern backtracks for minutes; it is matched with a time limit and without holding the GIL.
    tab = polyfill_browser.open(server.url("t/faults.html"))
    try:
        with pytest.raises(wm.InvalidArgumentsError, match="took over"):
            tab.call("backtrack", word="a" * 40 + "!")
        assert tab.call("received").value == []  # the loop kept serving while the regex ran
    finally:
        tab.close()


def test_a_listing_that_never_settles_does_not_hold_up_later_ones(open_tab):
    """The page's first getTools() never answers: that listing is given up after 5 s, and the next one (a sync
    here) reports the page's tool."""
    tab = open_tab("t/hung-listing.html")
    eventually(lambda: "after_hang" in tab.refresh_tools().tools, 30, "the tool after the hung listing")
    assert tab.call("after_hang").value == "ok"


def test_refreshing_a_tab_asks_its_iframes_too(open_tab):
    """``refresh_tools`` asks every frame of the tab, not only the top one: an iframe whose first listing never
    settled reports its tool when asked again."""
    tab = open_tab("t/hung-listing-host.html")
    eventually(lambda: "after_hang" in tab.refresh_tools().tools, 30, "the iframe's tool after its hung listing")
    assert tab.tools["after_hang"].frame_id != 0 and tab.call("after_hang").value == "ok"


class _Endless(http.server.BaseHTTPRequestHandler):
    """``/`` goes to ``/endless`` once loaded: a page that registers a tool and then never finishes arriving (a
    comment every 0.2 s, for up to a minute), so its document never stops parsing."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        if self.path != "/endless":
            self.wfile.write(START)
            return
        self.wfile.write(ENDLESS_HEAD)
        for _ in range(300):
            try:
                self.wfile.write(b"<!-- still coming -->\n")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        pass


START = (
    b"<!doctype html><title>start</title><script>onload = () => setTimeout(() => location.assign('/endless'))</script>"
)
ENDLESS_HEAD = b"""<!doctype html><html><head><meta charset="utf-8"><title>endless</title></head><body><script>
document.modelContext.registerTool({ name: 'streamed', description: 'on a page still arriving',
  inputSchema: { type: 'object', properties: {} }, execute: () => 'still here' });
</script>
"""


def test_a_page_that_never_finishes_arriving_still_has_its_tools_listed(browser: wm.Browser):
    """The bridge waits for a document to be parsed before its first listing, but not for ever: a page streamed
    without end (it never reaches DOMContentLoaded) has its tools listed and callable all the same."""
    endless = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    endless.daemon_threads = True
    threading.Thread(target=endless.serve_forever, daemon=True).start()
    tab = browser.open(f"http://127.0.0.1:{endless.server_address[1]}/")
    try:
        eventually(lambda: "streamed" in tab.tools, 20, "the tool of the page still arriving")
        assert tab.call("streamed").value == "still here"
    finally:
        tab.close()
        endless.shutdown()
        endless.server_close()
