"""Tabs: open, navigate, activate, screenshot, close; and the rich displays of everything a cell shows."""

import pytest
from ports import free_port

import webmcp_nb as wm


def test_navigate_replaces_the_tools_and_activate_screenshot_close(open_tab, browser, server):
    tab = open_tab("flights/")
    assert browser.active_tab is tab
    other = open_tab("t/faults.html")
    assert browser.active_tab is other and not tab.active

    tab.navigate(server.url("early-draft/"))
    assert tab.url == server.url("early-draft/") and "addTodo" in tab.tools and "searchFlights" not in tab.tools

    tab.activate()
    assert browser.active_tab is tab

    png = other.screenshot()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert png._repr_png_() == bytes(png)
    assert browser.active_tab is other  # a screenshot shows the tab, so it activates it

    other.close()
    assert other.closed and other not in browser.tabs
    with pytest.raises(wm.TabNotFoundError):
        browser.tab(other.id)


def test_a_page_that_does_not_load_says_what_to_check(open_tab):
    tab = open_tab("flights/")
    dead = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    with pytest.raises(wm.NavigatedError) as failed:
        tab.navigate(dead)
    assert "failed to load: net::ERR_CONNECTION_REFUSED" in str(failed.value)
    assert "It stays open on its error page: check the address and that its server answers" in str(failed.value)


def test_reprs_have_html_and_plain_text(open_tab, browser):
    tab = open_tab("flights/")
    result = tab.call(
        "searchFlights",
        origin="LON",
        destination="NYC",
        tripType="one-way",
        outboundDate="2027-01-15",
        inboundDate="2027-01-22",
        passengers=1,
    )
    tab.wait_for_tool("listFlights")
    for shown, needle in [
        (browser, str(tab.id)),
        (tab, "listFlights"),
        (tab.tools, "listFlights"),
        (tab.tools["listFlights"], "read-only"),
        (result, "searchFlights"),
    ]:
        bundle = shown._repr_mimebundle_()
        assert needle in bundle["text/plain"], type(shown)
        assert needle in bundle["text/html"], type(shown)
        assert "<script" not in bundle["text/html"]


def test_a_missing_tool_is_a_tool_not_found_error_with_help(open_tab):
    tab = open_tab("flights/")
    with pytest.raises(wm.ToolNotFoundError) as by_name:
        tab.tools["searchFlight"]
    with pytest.raises(wm.ToolNotFoundError) as by_call:
        tab.call("searchFlight")
    assert isinstance(by_name.value, KeyError) and str(by_name.value) == str(by_call.value)
    message = str(by_name.value)
    assert "Did you mean 'searchFlights'?" in message and "wait_for_tool('searchFlight')" in message
    assert "searchFlight" not in tab.tools and tab.tools.get("searchFlight") is None
    assert tab.tools.get("searchFlights") is tab.tools["searchFlights"]


def test_page_text_is_escaped_in_html(open_tab):
    tab = open_tab("t/faults.html")
    result = tab.call("strict", count=1, code="ABC", options={"fast": True})
    html = result._repr_mimebundle_()["text/html"]
    assert "<b>strict" in html and "&quot;fast&quot;" in html


def test_fragment_navigation_and_reload_return_promptly(open_tab, server):
    tab = open_tab("t/faults.html")
    tab.navigate(server.url("t/faults.html#section"))  # same document: no load event comes
    assert tab.url.endswith("#section") and "boom" in tab.tools
    tab.reload()
    assert "boom" in tab.tools


def test_a_page_restored_from_the_back_forward_cache_keeps_its_tools(open_tab, server):
    tab = open_tab("bf/bfcache.html")
    tab.navigate(server.url("bf/landing.html"))
    assert "wasRestored" not in tab.tools
    tab.back()
    assert tab.call("wasRestored").value is True  # it really came from the cache, and its tools answer
    with pytest.raises(wm.InvalidArgumentsError, match="no previous page"):  # it was the tab's first page
        tab.back()


def test_each_tab_says_which_webmcp_its_page_has(open_tab, source):
    assert open_tab("flights/").webmcp == source  # native in native modes, the extension's polyfill otherwise


def test_reading_the_tools_while_the_page_changes_them(open_tab):
    """The loop thread swaps in a new tool dict on each change; a thread walking the old one is undisturbed and
    a name or a Tool taken before the change is never served after it."""
    tab = open_tab("flights/")
    before = tab._tools.infos
    walking = iter(before)
    first = next(walking)
    search = tab.tools["searchFlights"]
    search(origin="LON", destination="NYC", tripType="one-way", outboundDate="2027-01-15", passengers=1)
    tab.wait_for_tool("listFlights")  # the page registered three more tools meanwhile
    assert [first, *walking] == list(before)  # (a dict changed during iteration raised RuntimeError here)
    assert "listFlights" in tab.tools and tab.tools["listFlights"].info is tab._tools.infos[(0, "listFlights")]


def test_a_call_that_changes_the_pages_tools_returns_once_tab_tools_shows_it(open_tab):
    """The page's frame says when its tools changed during a call (a registration, an AbortSignal that removes a
    tool); such a call returns once ``tab.tools`` has the change, others at once."""
    tab = open_tab("t/changing.html")
    tab.wait_for_tool("beta")
    assert tab.call("alpha").tools_changed is False
    removed = tab.call("change", remove=["alpha"])  # an abort only: nothing registered
    assert removed.tools_changed is True and "alpha" not in tab.tools
    added = tab.call("change", add=["gamma"], describe={"beta": "beta, described anew"})
    assert added.tools_changed is True and "gamma" in tab.tools
    assert tab.tools["beta"].description == "beta, described anew"
    assert tab.call("gamma").tools_changed is False
