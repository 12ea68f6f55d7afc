"""The pytest plugin (entry point ``pytest11``) as a site's own test suite meets it, run by pytest's ``pytester`` in a
fresh pytest process: ``webmcp_browser`` (one per session, native WebMCP unless ``--webmcp-polyfill``),
``webmcp_tab`` (a fresh tab per test) and ``assert_tools_match`` with the diff's words; and a suite that does not
use it loads none of webmcp-nb but the plugin's few lines."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

LOCK_V1 = Path(__file__).parent / "pages" / "lint" / "hotel-v1.lock.json"


@pytest.mark.slow
def test_a_sites_suite_drives_its_tools_and_checks_them_against_its_lock(pytester: pytest.Pytester, server):
    pytester.makepyfile(
        test_site=f"""
        from webmcp_nb.ci import assert_tools_match

        V1, V2, LOCK = {server.url("t/lint/v1.html")!r}, {server.url("t/lint/v2.html")!r}, {str(LOCK_V1)!r}
        tabs = []

        def test_calls_a_tool(webmcp_tab):
            webmcp_tab.navigate(V1)
            assert webmcp_tab.call("listAmenities").value == {{"amenities": ["pool"]}}
            assert webmcp_tab.tools["listAmenities"].source == "native"
            tabs.append(webmcp_tab)

        def test_matches_the_lock(webmcp_tab, webmcp_browser):
            assert webmcp_tab.url == "about:blank" and webmcp_tab.browser is webmcp_browser
            assert tabs[0].closed and tabs[0].browser is webmcp_browser  # a fresh tab, one browser
            webmcp_tab.navigate(V1)
            assert_tools_match(webmcp_tab, LOCK)

        def test_v2_breaks_the_lock(webmcp_tab):
            webmcp_tab.navigate(V2)
            assert_tools_match(webmcp_tab, LOCK)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: the tools of http://127.0.0.1:*/t/lint/v2.html differ from *hotel-v1.lock.json: "
            "3 breaking, 3 compatible",
            "*BREAKING    listAmenities: removed: agents, evals and scripts that call it fail",
            "*BREAKING    searchRooms: a required argument 'guests' was added: calls without it are refused",
            "*compatible  compareRooms: added",
        ]
    )
    polyfill = pytester.makepyfile(
        test_polyfill=f"""
        def test_polyfill(webmcp_tab):
            webmcp_tab.navigate({server.url("t/lint/v1.html")!r})
            assert webmcp_tab.tools["listAmenities"].source == "polyfill"
        """
    )
    pytester.runpytest_subprocess(str(polyfill), "-p", "no:cacheprovider", "--webmcp-polyfill").assert_outcomes(
        passed=1
    )


def test_a_suite_that_does_not_use_it_loads_nothing_of_webmcp_nb(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            loaded = sorted(name for name in sys.modules if name.startswith("webmcp_nb"))
            assert loaded == ["webmcp_nb", "webmcp_nb._version", "webmcp_nb.ci", "webmcp_nb.ci.pytest_plugin"]
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--help")
    result.stdout.fnmatch_lines(["*--webmcp-headed*", "*--webmcp-polyfill*"])
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
