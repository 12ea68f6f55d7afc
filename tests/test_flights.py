"""The flight demo, through the polyfill and through native WebMCP: list, call, tools that change."""

import pytest

from webmcp_nb.demo.run import DEMO_SEARCH as SEARCH


def test_search_page_registers_only_search(open_tab, source):
    tab = open_tab("flights/")
    assert list(tab.tools) == ["searchFlights"]
    tool = tab.tools["searchFlights"]
    assert tool.source == source
    assert set(tool.input_schema["required"]) == set(SEARCH) - {"inboundDate"}  # round trips only
    assert not tool.read_only
    assert set(tool.__signature__.parameters) == set(SEARCH)
    assert str(tool.__signature__.parameters["tripType"]) == "tripType: Literal['one-way', 'round-trip']"
    assert 'one of "one-way", "round-trip"' in tool.__doc__ and "passengers*" in tool.__doc__


def test_a_one_way_search_needs_no_return_date(open_tab):
    tab = open_tab("flights/")
    one_way = {k: v for k, v in SEARCH.items() if k != "inboundDate"} | {"tripType": "one-way"}
    result = tab.call("searchFlights", one_way).value
    assert result["count"] > 0 and "inboundDate" not in result["search"]
    round_trip = {k: v for k, v in SEARCH.items() if k != "inboundDate"}
    assert "inboundDate" in tab.call("searchFlights", round_trip).value["error"]


def test_search_then_results_tools_and_filters(open_tab):
    tab = open_tab("flights/")
    result = tab.call("searchFlights", SEARCH)
    assert result.value["count"] > 0
    tab.wait_for_tool("listFlights", timeout=5)
    assert set(tab.tools) == {"searchFlights", "listFlights", "setFilters", "resetFilters"}
    assert tab.tools["listFlights"].read_only

    flights = tab.tools["listFlights"]().value
    assert len(flights) == result.value["count"]
    assert tab.tools["searchFlights"](SEARCH).value["count"] == result.value["count"]  # a dict of arguments
    with pytest.raises(TypeError, match=r"searchFlights\(\) takes its arguments by name .* not a str"):
        tab.tools["searchFlights"]("LON")
    assert {f["stops"] for f in flights} == {0, 1, 2}

    filtered = tab.call("setFilters", stops=[0])
    direct = tab.call("listFlights").value
    assert filtered.value["count"] == len(direct) < len(flights)
    assert {f["stops"] for f in direct} == {0}

    cheap = max(f["price"] for f in flights) / 2
    tab.call("setFilters", maxPrice=cheap)
    assert all(f["price"] <= cheap for f in tab.call("listFlights").value)

    tab.call("resetFilters")
    assert len(tab.call("listFlights").value) == len(flights)


def test_tool_objects_are_callable_with_keywords(open_tab):
    tab = open_tab("flights/")
    search = tab.tools["searchFlights"]
    assert search(**SEARCH).value["count"] > 0
    assert "origin" in search.__doc__
