"""``launch(url=…)``: Chromium is started on the page itself (its imports run while it starts), and what ``launch()``
returns is what it always returned — the first tab on that page, its tools mirrored, the navigation in the event
stream."""

from __future__ import annotations

from typing import Any

import pytest

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("native", [True, False], ids=["native", "polyfill"])
def test_a_browser_launched_on_a_url_returns_on_that_page_with_its_tools_and_says_it_went_there(
    server: Any, native: bool
) -> None:
    url = server.url("flights/")
    with wm.launch(url=url, native_webmcp=native) as browser:
        (tab,) = browser.tabs
        assert tab.url == url
        assert "searchFlights" in tab.tools  # mirrored by the time launch() returns: no wait
        assert not tab.call("searchFlights", DEMO_SEARCH).is_error
        went = [e for e in browser.events.of_kind("navigation") if e.tab_id == tab.id]
        assert [e.url for e in went] == [url]
