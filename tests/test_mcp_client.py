"""``wm.mcp.connect``: MCP servers no one here wrote in a notebook — ``mcp-server-time`` (Python; it speaks
2026-07-28) and ``@modelcontextprotocol/server-memory`` (Node; 2025-11-25) over stdio, the SDK's own server over
Streamable HTTP, ``webmcp-nb mcp`` as a server whose list changes — and an agent on the scripted model using a
page tool and an MCP tool in one task, whose session then replays with neither the model nor the MCP server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest
from eventually import eventually
from mcp_peers import node_tool, server_env, streamable_http

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.testing import ScriptedServer, call, say

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


@pytest.fixture
def time_server() -> Iterator[wm.mcp.MCPServer]:
    with wm.mcp.connect(TIME, name="time") as server:
        yield server


def test_a_python_server_in_a_cell(time_server: wm.mcp.MCPServer) -> None:
    assert time_server.protocol_version == "2026-07-28" and time_server.connected
    tool = time_server.tools["get_current_time"]
    assert (
        "timezone" in str(tool.__signature__) and tool.risk == "low" and tool.qualified_name == "time.get_current_time"
    )
    result = tool(timezone="Asia/Tokyo")
    assert result.value["timezone"] == "Asia/Tokyo"
    with pytest.raises(wm.InvalidArgumentsError):
        time_server.call("get_current_time")  # timezone is required: the server never sees it
    with pytest.raises(wm.ToolError, match="Invalid timezone"):
        time_server.call("get_current_time", timezone="Mars/Olympus")
    assert [e.kind for e in time_server.events.events][-2:] == ["tool.called", "tool.failed"]
    text = time_server._repr_mimebundle_()
    assert "get_current_time" in text["text/plain"] and "<table" in text["text/html"]


def test_blocking_and_awaited_calls_inside_a_running_loop(time_server: wm.mcp.MCPServer) -> None:
    async def cell() -> tuple[str, str]:  # as in Jupyter: the kernel's loop is running
        blocking = time_server.call("get_current_time", timezone="UTC").value["timezone"]
        awaited = (await time_server.acall("get_current_time", timezone="UTC")).value["timezone"]
        return blocking, awaited

    assert asyncio.run(cell()) == ("UTC", "UTC")


def test_a_node_server_in_the_handshake_era(tmp_path) -> None:
    command = str(node_tool("mcp-server-memory"))
    with wm.mcp.connect(command, env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}) as memory:
        assert memory.protocol_version == "2025-11-25" and memory.name == "memory"
        memory.call("create_entities", entities=[{"name": "LON", "entityType": "city", "observations": ["London"]}])
        graph = memory.tools["read_graph"]()
        assert [entity["name"] for entity in graph.value["entities"]] == ["LON"]


def test_a_streamable_http_server(tmp_path) -> None:
    from mcp.server.mcpserver import MCPServer as SDKServer

    sdk = SDKServer("adder")

    @sdk.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    with streamable_http(sdk) as url, wm.mcp.connect(url) as adder:
        assert adder.call("add", a=2, b=3).value in (5, {"result": 5})


@pytest.mark.timeout(60)  # a hang, not a slow failure, is the bug
def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(wm.NotConnectedError, match="handshake within 1 s"):
        wm.mcp.connect(silent, name="silent", timeout=1)


@pytest.mark.browser
@pytest.mark.slow
def test_list_changes_are_followed(server) -> None:
    command = [sys.executable, "-m", "webmcp_nb", "mcp", "--launch", "--url", server.url("flights/")]
    with wm.mcp.connect(command, env=server_env(), name="tabs") as tabs:
        assert "page_listFlights" not in tabs.tools
        tabs.call("page_searchFlights", DEMO_SEARCH)
        eventually(lambda: "page_listFlights" in tabs.tools, 20, "the results' tools")
        assert any(e.kind == "tools.changed" for e in tabs.events.events)


def test_an_agent_uses_a_page_tool_and_an_mcp_tool_and_its_session_replays_without_either(
    polyfill_browser, server, tmp_path
) -> None:
    flights = polyfill_browser.open(server.url("flights/"))
    script = [
        call("searchFlights", **DEMO_SEARCH),
        call("time_get_current_time", timezone="America/New_York"),
        say("15 flights; it is morning in New York."),
    ]
    try:
        with wm.mcp.connect(TIME, name="time") as clock, ScriptedServer(script) as model:
            session = wm.Session(polyfill_browser, directory=tmp_path / "run", evidence="off")
            agent = wm.Agent(
                flights,
                provider="any",
                base_url=model.base_url,
                api_key="offline-key",
                model="scripted",
                confirm="medium",
                on_confirm=lambda request: True,
                mcp_servers=[clock],
                session=session,
            )
            result = agent.run("How many flights, and what time is it in New York?")
            session.close()
            offered = {tool["function"]["name"] for tool in model.requests[0]["tools"]}
            asked = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
        assert result.answer == "15 flights; it is morning in New York."
        assert [s.tool for s in result.steps] == ["searchFlights", "time.get_current_time"]
        assert {"searchFlights", "time_get_current_time", "time_convert_time"} <= offered
        assert 'untrusted="true"' in asked[1]["content"] and "America/New_York" in asked[1]["content"]
        confirmed = [e.data["tool"] for e in session.filter("confirmation.requested")]
        assert confirmed == ["searchFlights"]  # the time tool is read-only: no question under "medium"

        other = polyfill_browser.open(server.url("flights/"))  # the MCP server and the model are gone
        try:
            report = wm.replay_agent(wm.Session.load(tmp_path / "run"), other, progress=False, ignore=("searchId",))
        finally:
            other.close()
        assert report.ok, str(report)
        assert report.steps == 2
    finally:
        flights.close()
