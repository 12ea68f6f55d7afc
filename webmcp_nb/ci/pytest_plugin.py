"""webmcp-nb's pytest plugin (entry point ``pytest11``): a site's own tests drive its WebMCP tools in a real
Chromium.

    def test_search(webmcp_tab, site_url):
        webmcp_tab.navigate(site_url)
        assert webmcp_tab.call("searchRooms", city="Paris").value["rooms"]
        assert_tools_match(webmcp_tab, "tools.lock.json")      # from webmcp_nb.ci import assert_tools_match

``webmcp_browser`` (one per test session, launched on first use: headless Chromium with native WebMCP;
``--webmcp-headed`` shows it, ``--webmcp-polyfill`` uses the extension's polyfill instead) and ``webmcp_tab`` (a
fresh tab per test, closed after it; a ``wm.Tab``). It is a thin layer over ``wm.launch()`` and ``Tab``, and imports
nothing of webmcp-nb until a test asks for a fixture: loaded into every suite of an environment that has webmcp-nb,
it costs a suite that does not use it nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab

__all__ = ["webmcp_browser", "webmcp_tab"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("webmcp-nb", "webmcp-nb: a real Chromium for a site's WebMCP tools")
    group.addoption("--webmcp-headed", action="store_true", help="webmcp_browser: show the browser window")
    group.addoption(
        "--webmcp-polyfill",
        action="store_true",
        help="webmcp_browser: the extension's WebMCP polyfill instead of Chromium's native WebMCP",
    )


@pytest.fixture(scope="session")
def webmcp_browser(pytestconfig: pytest.Config) -> Iterator[Browser]:
    """A headless Chromium with webmcp-nb's extension, for the whole test session (``wm.launch()``)."""
    from ..browser.launch import launch

    with launch(
        headless=not pytestconfig.getoption("webmcp_headed"),
        native_webmcp=not pytestconfig.getoption("webmcp_polyfill"),
    ) as browser:
        yield browser


@pytest.fixture
def webmcp_tab(webmcp_browser: Browser) -> Iterator[Tab]:
    """A fresh tab of ``webmcp_browser`` (``about:blank``), closed after the test: ``webmcp_tab.navigate(url)``."""
    tab = webmcp_browser.open("about:blank")
    yield tab
    if not tab.closed:
        tab.close()
