"""``tab.tools.override``: a tool's description, title or schema as the notebook shows it — to the agent's model,
the panel, the MCP server's listing — while calls still reach the page's own tool, checked against the schema the
page registered. Overrides are session events, and replays apply them again. Real Chromium, the flight demo."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

import webmcp_nb as wm
from webmcp_nb.core.display import escape
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.mcp.server import Options, WebMCPServer
from webmcp_nb.testing import ScriptedServer, call, say

pytestmark = pytest.mark.browser

SHOWN = "Filters the results. For direct (nonstop) flights only, set stops to [0]."


@pytest.fixture
def results(polyfill_browser: wm.Browser, server) -> wm.Tab:
    tab = polyfill_browser.open(server.url("flights/"))
    tab.call("searchFlights", DEMO_SEARCH)
    tab.wait_for_tool("setFilters")
    yield tab
    tab.close()


def test_models_and_views_see_the_override_and_the_page_runs_its_own_tool(results: wm.Tab, tmp_path: Path) -> None:
    tab = results
    page_own = tab.tools["setFilters"].info.description
    session = wm.Session(tab.browser, directory=tmp_path / "recorded", evidence="off")
    found = tab.tools.override("setFilters", description=SHOWN, title="Filter the flights")
    tool = tab.tools["setFilters"]
    assert (tool.description, tool.title, tool.override) == (SHOWN, "Filter the flights", found)
    assert tool.info.description == page_own and page_own != SHOWN  # the page's own, kept
    assert (
        "overridden" in repr(tool) and SHOWN in tool.__doc__ and "Overridden here (description, title)" in tool.__doc__
    )
    assert list(tab.tools.overrides) == ["setFilters"] and "(overridden)" in tab.tools._repr_mimebundle_()["text/html"]

    panel = wm.panel(tab)
    panel.tools.select("setFilters")
    assert (
        escape(SHOWN) in panel.tools.details.value
        and "Overridden here (description, title)" in panel.tools.details.value
    )
    assert any("overridden" in label for label, name in panel.tools.list.options if name == "setFilters")
    panel.close()

    with ScriptedServer([call("setFilters", stops=[0]), say("Direct flights only.")]) as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="offline", model="m", confirm="never", session=session)
        result = agent.run("Only direct flights, please.")
        offered = {t["function"]["name"]: t["function"] for t in model.requests[0]["tools"]}
    assert offered["setFilters"]["description"].startswith(SHOWN)  # what the model was shown
    assert page_own not in json.dumps(model.requests)
    assert result.steps[0].result["filters"]["stops"] == [0]  # the page's own tool ran: its own result
    session.close()
    shown = tab.call("listFlights").value
    assert shown and all(f["stops"] == 0 for f in shown)
    (recorded,) = session.filter("override.set")
    assert recorded.data["tool"] == "setFilters" and recorded.data["fields"]["description"] == SHOWN

    assert tab.tools.clear_overrides() == ["setFilters"]
    assert tab.tools["setFilters"].description == page_own and not tab.tools.overrides

    replayed = wm.replay_agent(wm.Session.load(tmp_path / "recorded"), tab, progress=False)  # the override again
    assert replayed.ok, str(replayed)
    assert replayed.session is not None and [e.data["tool"] for e in replayed.session.filter("override.set")] == [
        "setFilters"
    ]
    assert not tab.tools.overrides  # the tab as it was before the replay


def test_an_overriding_schema_is_checked_against_the_pages_and_the_difference_named(results: wm.Tab) -> None:
    tab = results
    schema = copy.deepcopy(tab.tools["searchFlights"].info.input_schema)
    schema["required"].remove("passengers")
    schema["properties"]["cabin"] = {"type": "string", "enum": ["economy", "business"]}
    schema["properties"]["passengers"]["type"] = "string"
    tab.tools.override("searchFlights", input_schema=schema)
    differences = tab.tools["searchFlights"].differences
    assert differences == [
        "cabin: in the override's schema, not in the page's (the page may refuse or ignore it)",
        "passengers: the page requires it; the override's schema makes it optional",
        'passengers: the override\'s type is "string", the page\'s "integer"',
    ]
    assert tab.tools.overrides.differences == {"searchFlights": differences}
    assert tab.tools["searchFlights"].input_schema == schema  # what models are shown
    without = {k: v for k, v in DEMO_SEARCH.items() if k != "passengers"}
    with pytest.raises(wm.InvalidArgumentsError) as refused:  # fine by the override, refused by the page's schema
        tab.call("searchFlights", without)
    assert "Checked against the page's own schema" in str(refused.value)
    assert "passengers: the page requires it; the override's schema makes it optional" in str(refused.value)
    assert tab.call("searchFlights", DEMO_SEARCH).value["count"] > 0  # what the page takes still runs
    with pytest.raises(wm.ToolNotFoundError, match="Did you mean 'setFilters'"):
        tab.tools.override("setFilter", description="typo")
    with pytest.raises(wm.InvalidArgumentsError) as bad:
        tab.tools.override("setFilters", description=42)  # type: ignore[arg-type]
    assert bad.value.field == "description"
    assert tab.tools.override("later", description="x", missing_ok=True).fields == {"description": "x"}
    assert tab.tools.overrides.differences["later"] is None  # not listed now: its schema is not known
    filters = copy.deepcopy(tab.tools["setFilters"].info.input_schema)
    filters["properties"]["stops"]["items"]["type"] = "string"  # deeper than the top level
    tab.tools.override("setFilters", input_schema=filters)
    assert tab.tools["setFilters"].differences == ['stops[]: the override\'s type is "string", the page\'s "integer"']
    with pytest.raises(wm.InvalidArgumentsError, match=r"stops\[\]: the override's type is \"string\""):
        tab.call("setFilters", stops=["0"])
    tab.tools.clear_overrides()


def test_the_mcp_servers_listing_shows_the_override(results: wm.Tab) -> None:
    """The MCP server over a tab of this process (the official SDK's client, in process)."""
    tab = results
    stops = {"type": "array", "items": {"type": "integer"}, "description": "[0] for direct flights"}
    tab.tools.override("setFilters", description=SHOWN, input_schema={"type": "object", "properties": {"stops": stops}})
    server = WebMCPServer(Options())
    server.browser, server.tab, server._client_name = tab.browser, tab, "test"
    server._ready.set()

    async def listing() -> types.ListToolsResult:
        async with Client(server.server, client_info=types.Implementation(name="test", version="1")) as client:
            return await client.list_tools()

    try:
        listed = {t.name: t for t in asyncio.run(listing()).tools}
    finally:
        tab.tools.clear_overrides()
    shown = listed["page_setFilters"]
    assert shown.description is not None and shown.description.endswith(SHOWN)
    assert shown.input_schema["properties"]["stops"]["description"] == "[0] for direct flights"
    assert set(shown.input_schema["properties"]) == {"stops"}  # the override's schema, not the page's nine fields


@pytest.mark.slow
def test_webmcp_nb_mcp_shows_the_overrides_of_a_file_and_the_page_runs_its_own_tool(server, tmp_path: Path) -> None:
    """``webmcp-nb mcp --overrides FILE``: a desktop client (the SDK's, over stdio) is shown the file's text; its call
    reaches the page's own tool. A file that is wrong is refused before anything starts, naming what is wrong."""
    import subprocess
    import sys

    import anyio
    import yaml
    from mcp_peers import mcp_session, server_env

    shown = "Searches flights. Give IATA codes in capitals and dates as YYYY-MM-DD."
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"searchFlights": {"description": shown}}))

    async def run(errlog: object) -> None:
        args = ("--launch", "--url", server.url("flights/"), "--overrides", str(overrides))
        async with mcp_session(*args, errlog=errlog) as (client, _):
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            described = listed["page_searchFlights"].description or ""
            assert described.endswith(shown) and "shows the results in the page" not in described  # not the page's
            result = await client.call_tool("page_searchFlights", DEMO_SEARCH)
            assert not result.is_error and json.loads(result.content[0].text)["count"] > 0

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)

    overrides.write_text(yaml.safe_dump({"searchFlights": {"name": "renamed"}}))
    command = [sys.executable, "-m", "webmcp_nb", "mcp", "--launch", "--overrides", str(overrides)]
    refused = subprocess.run(
        command, capture_output=True, text=True, timeout=60, env=server_env(), stdin=subprocess.DEVNULL
    )
    assert (
        refused.returncode == 2 and "'name' cannot be overridden" in refused.stderr and str(overrides) in refused.stderr
    )
