"""Fixtures: the demo pages and the suite's own pages on 127.0.0.1, and real headless Chromium with the
real extension through the real relay — with the extension's polyfill, with native WebMCP, and with native
WebMCP through the extension.

The two native fixtures are the two ways to a page's native tools, and every test that takes ``mode`` runs on
both: ``native_browser`` is ``wm.launch(native_webmcp=True)`` as a user gets it, whose native tools are listed and
called through the DevTools pipe; ``worker_browser`` (``devtools=False, lanes="off"``) takes the extension's way,
as in a user's own Chrome, through the service worker as on pages outside loopback."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import webmcp_nb as wm
from webmcp_nb.demo.server import DEMO_PAGES, DemoServer

PAGES = Path(__file__).parent / "pages"

# Sessions, tokens and daemon logs of the suite go to a throwaway home, not the user's; each of pytest-xdist's
# workers gets one of its own (the workers inherit the first process's environment).
_HOME = Path(os.environ.get("WEBMCP_NB_HOME") or tempfile.mkdtemp(prefix="webmcp-nb-tests-"))
if os.environ.get("PYTEST_XDIST_WORKER"):
    _HOME = _HOME / os.environ["PYTEST_XDIST_WORKER"]
    _HOME.mkdir(mode=0o700, exist_ok=True)
os.environ["WEBMCP_NB_HOME"] = str(_HOME)


LAUNCHED = {
    "polyfill_browser",
    "native_browser",
    "extension_browser",
    "worker_browser",
    "own_browser",
    "chromium",
    "lab",
}
"""Fixtures that launch a Chromium: a test using one (directly or through another fixture) is marked ``browser``."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if LAUNCHED & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def server() -> Iterator[DemoServer]:
    strict = {"Content-Security-Policy": "script-src 'self'"}
    trusted_types = {"Content-Security-Policy": "script-src 'self'; require-trusted-types-for 'script'"}
    cacheable = {"Cache-Control": "max-age=60"}  # /bf/: pages the back/forward cache may keep
    routes = {"/": DEMO_PAGES, "/t/": PAGES, "/csp/": DEMO_PAGES, "/tt/": DEMO_PAGES, "/bf/": PAGES}
    with DemoServer(routes, headers={"/csp/": strict, "/tt/": trusted_types, "/bf/": cacheable}) as srv:
        yield srv


@pytest.fixture(scope="session")
def polyfill_browser() -> Iterator[wm.Browser]:
    with wm.launch() as browser:
        yield browser


@pytest.fixture(scope="session")
def native_browser() -> Iterator[wm.Browser]:
    with wm.launch(native_webmcp=True) as browser:
        yield browser


@pytest.fixture(scope="session")
def extension_browser() -> Iterator[wm.Browser]:
    """Native WebMCP through the extension with lanes (as on loopback pages in a user's own Chrome): for the tests
    of lanes, which the DevTools pipe leaves unused."""
    with wm.launch(native_webmcp=True, devtools=False) as browser:
        yield browser


@pytest.fixture(scope="session")
def worker_browser() -> Iterator[wm.Browser]:
    """Native WebMCP through the extension (its service worker), not the DevTools pipe."""
    with wm.launch(native_webmcp=True, devtools=False, lanes="off") as browser:
        yield browser


@pytest.fixture(params=["polyfill", "native", "worker"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def source(mode: str) -> str:
    """What the page's own tools report as their source in this mode."""
    return "polyfill" if mode == "polyfill" else "native"


@pytest.fixture
def browser(mode: str, request: pytest.FixtureRequest) -> wm.Browser:
    return request.getfixturevalue(f"{mode}_browser")


@pytest.fixture
def open_tab(browser: wm.Browser, server: DemoServer) -> Iterator:
    """Opens pages by path on the test server; closes them after the test."""
    opened: list[wm.Tab] = []

    def open_(path: str) -> wm.Tab:
        tab = browser.open(server.url(path))
        opened.append(tab)
        return tab

    yield open_
    for tab in opened:
        if not tab.closed:
            tab.close()
