"""``wm.mcp.connect``: MCP servers no one here wrote in a notebook — ``mcp-server-time`` (Python; it speaks
2026-07-28) and ``@modelcontextprotocol/server-memory`` (Node; 2025-11-25) over stdio, the SDK's own server over
Streamable HTTP, ``webmcp-nb mcp`` as a server whose list changes — and an agent on the scripted model using a
page tool and an MCP tool in one task, whose session then replays with neither the model nor the MCP server."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventually import eventually
from mcp_peers import node_tool, server_env, streamable_http
from ports import free_port, listening

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
        found = memory.tools["search_nodes"]({"query": "London"})  # a dict of arguments, as tab tools take
        assert [entity["name"] for entity in found.value["entities"]] == ["LON"]
        with pytest.raises(TypeError, match=r"help\(server\.tools\['search_nodes'\]\) lists them"):
            memory.tools["search_nodes"]("London")


def test_arguments_that_do_not_fit_are_refused_in_the_servers_words(tmp_path) -> None:
    """The call never reaches the server, and the error says so: the MCP server (not a page) did not see it, and
    help() on the server's tool (not a tab's) shows every argument."""
    command = str(node_tool("mcp-server-memory"))
    with wm.mcp.connect(command, env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}, name="memory") as memory:
        with pytest.raises(wm.InvalidArgumentsError) as refused:
            memory.call("create_entities", entities="x")
        assert not [e for e in memory.events.events if e.kind.startswith("tool.")]  # not even a tool.called
    said = str(refused.value)
    assert said.startswith("create_entities: argument 'entities': 'x' is not of type 'array'.")
    assert said.endswith(
        "MCP server memory did not see the call; help(server.tools['create_entities']), on the server "
        "wm.mcp.connect() returned, shows every argument."
    )
    assert "page" not in said and "tab." not in said


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
            agent = _agent(flights, model, clock, confirm="medium", on_confirm=lambda request: True, session=session)
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


def _agent(tab: wm.Tab, model: ScriptedServer, clock: Any, **policy: Any) -> wm.Agent:
    """An agent on ``tab`` with the scripted ``model`` and the time server's tools."""
    return wm.Agent(
        tab, provider="any", base_url=model.base_url, api_key="offline-key", model="scripted", mcp_servers=[clock],
        **policy,
    )  # fmt: skip


def test_an_agent_is_told_of_refused_arguments_in_a_models_words(polyfill_browser, server) -> None:
    """A call whose arguments do not fit reaches neither the MCP server nor the page; the model is told which of
    them did not see it, and that the tool's parameters describe every argument (not a notebook's help())."""
    flights = polyfill_browser.open(server.url("flights/"))
    script = [
        call("time_get_current_time", timezone=3),
        call("searchFlights", **DEMO_SEARCH, seats=2),
        say("Both calls were refused."),
    ]
    try:
        with wm.mcp.connect(TIME, name="time") as clock, ScriptedServer(script) as model:
            agent = _agent(flights, model, clock, confirm="never", allow_high_risk=True)
            agent.run("What time is it in New York, and which flights are there?")
            told = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    finally:
        flights.close()
    assert "INVALID_ARGS: get_current_time: argument 'timezone': 3 is not of type 'string'." in told[0]
    assert "MCP server time did not see the call; the tool's parameters show every argument." in told[0]
    assert "INVALID_ARGS: searchFlights: unknown argument 'seats'" in told[1]
    assert "The page did not see the call; the tool's parameters show every argument." in told[1]
    assert not any("help(" in text or "tab." in text for text in told)


UNRULY = [sys.executable, str(Path(__file__).parent / "servers" / "unruly_mcp.py")]


def test_a_bare_command_installed_beside_webmcp_nb_starts_without_it_on_path(monkeypatch) -> None:
    """``wm.mcp.connect("mcp-server-time")`` in a kernel whose PATH lacks the virtualenv's bin/ (a kernel started
    from a desktop launcher, or the venv's python run without activating it): found where pip put it."""
    scripts = {sysconfig.get_path("scripts"), str(Path(sys.executable).parent)}
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p not in scripts)
    monkeypatch.setenv("PATH", path or os.defpath)
    assert shutil.which("mcp-server-time") is None  # only beside this Python
    with wm.mcp.connect("mcp-server-time --local-timezone UTC", name="time") as clock:
        assert clock.call("get_current_time", timezone="UTC").value["timezone"] == "UTC"


def test_a_command_that_does_not_exist_says_so() -> None:
    with pytest.raises(wm.NotConnectedError, match="cannot run 'no-such-mcp-server': No such file or directory"):
        wm.mcp.connect(["no-such-mcp-server"], timeout=20)  # (it runs behind stdio_bound.py, which says why)


@pytest.mark.timeout(60)  # a hang, not a slow failure, is the bug
def test_a_server_that_stops_answering_fails_each_request_within_its_time_limit() -> None:
    with wm.mcp.connect(UNRULY, name="unruly", request_timeout=2) as unruly:
        with pytest.raises(wm.ToolTimeoutError, match="did not answer a call of slow within 1 s"):
            unruly.call("slow", seconds=30, timeout=1)
        assert unruly.call("blob", size=3).text == "xxx"  # a late answer is not taken for the next one's
        with pytest.raises(wm.ToolTimeoutError):
            unruly.call("freeze", timeout=1)  # the process is stopped: it answers nothing more
        with pytest.raises(wm.ToolTimeoutError, match="did not answer tools/list within 2 s"):
            unruly.refresh_tools()
    assert not unruly.connected  # and closing a wedged server does not hang either


def refused_within_bound(server: wm.mcp.MCPServer, match: str) -> wm.ResultTooLargeError:
    """A call of ``blob`` for 50 MB, refused with ``match``, having cost the notebook under 20 MB."""
    tracemalloc.start()
    try:
        with pytest.raises(wm.ResultTooLargeError, match=match) as refused:
            server.call("blob", size=50_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"{peak:,} bytes allocated while refusing a 50 MB result"
    return refused.value


def test_a_huge_result_is_refused_before_it_is_read() -> None:
    with wm.mcp.connect(UNRULY, name="unruly", max_result_chars=100_000) as unruly:
        refused = refused_within_bound(unruly, "over the 1,248,576-byte bound")
        assert refused.data["size"] > 50_000_000 and refused.data["limit"] == 1_248_576
        with pytest.raises(wm.ResultTooLargeError, match="over the 100,000 limit"):
            unruly.call("blob", size=150_000)  # within the message bound, over the characters'
        assert unruly.call("blob", size=100).text == "x" * 100  # the server is still usable
        assert [e.data["code"] for e in unruly.events.events if e.kind == "tool.failed"] == ["RESULT_TOO_LARGE"] * 2


@pytest.mark.slow
def test_a_huge_result_over_http_is_refused_before_it_is_read() -> None:
    """As over stdio: a Streamable HTTP server's 50 MB reply (JSON, as 2026-07-28 answers a call) costs the
    notebook the bound, not the reply."""
    port = free_port()
    process = subprocess.Popen([*UNRULY, "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        eventually(lambda: listening(port), 20, "the HTTP server")
        url = f"http://127.0.0.1:{port}/mcp"
        with wm.mcp.connect(url, name="unruly", max_result_chars=100_000) as unruly:
            assert unruly.protocol_version == "2026-07-28"
            refused_within_bound(unruly, "1,248,576-byte bound")
            assert unruly.call("blob", size=100).text == "x" * 100  # the server is still usable
    finally:
        process.terminate()
        process.wait(10)


class _Zipping(http.server.BaseHTTPRequestHandler):
    """A server that answers every JSON-RPC request gzip-compressed, asked to or not: 2 kB that could unpack to
    gigabytes."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        server = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "zip", "version": "1"}}
        data = gzip.compress(json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": server}).encode())
        self.send_response(200)
        for name, value in [("content-type", "application/json"), ("content-encoding", "gzip")]:
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_a_compressed_reply_over_http_is_refused_unread() -> None:
    zipping = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Zipping)
    threading.Thread(target=zipping.serve_forever, daemon=True).start()
    try:
        with pytest.raises(wm.NotConnectedError, match=r"compressed its reply \(gzip\) though asked not to"):
            wm.mcp.connect(f"http://127.0.0.1:{zipping.server_address[1]}/mcp", name="zip", timeout=10)
    finally:
        zipping.shutdown()
        zipping.server_close()


class _NotMCP(http.server.BaseHTTPRequestHandler):
    """A web server with no MCP endpoint: a POST to ``/status/<code>`` is answered with that status and a page."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        page = b"<html><body>Not an MCP server</body></html>"
        self.send_response(int(self.path.rsplit("/", 1)[-1]))
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("status", "answer"), [(404, "404 Not Found"), (405, "405 Method Not Allowed"), (200, "200 OK")]
)
def test_a_url_that_is_no_mcp_endpoint_says_what_it_answered(status: int, answer: str) -> None:
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotMCP)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_address[1]}/status/{status}"
    try:
        with pytest.raises(wm.NotConnectedError) as failed:
            wm.mcp.connect(url, timeout=10)
    finally:
        web.shutdown()
        web.server_close()
    said = str(failed.value)
    assert said.startswith(f"could not connect to the MCP server at {url}: it answered HTTP {answer} (text/html)")
    assert "Check that the URL is the server's MCP endpoint" in said and "127_0_0_1" not in said


def test_a_url_where_nothing_listens_says_what_to_check() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(wm.NotConnectedError) as failed:
        wm.mcp.connect(url, timeout=10)
    said = str(failed.value)
    assert said.startswith(f"could not connect to the MCP server at {url}: ConnectError")
    assert "Check that the server is running" in said


class _Streaming(http.server.BaseHTTPRequestHandler):
    """A 2025-11-25 server that answers every request on an event stream, as most servers in the wild do; a call
    of ``blob`` sends one event of ``size`` characters, written as it goes, until the client hangs up. Before it,
    ``chatter`` small log events, each ended by ``end`` (a ``|`` in it: the rest is written a moment later). With
    ``zip``, the call's stream is gzip-compressed, asked to or not."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "id" not in request:  # a notification
            self.send_response(202)
            self.end_headers()
            return
        arguments = (request.get("params") or {}).get("arguments", {})
        size = arguments.get("size", 0)
        known = request["method"] in _STREAMED  # (not 2026-07-28's server/discover)
        reply = {"result": _STREAMED[request["method"]]} if known else {"error": {"code": -32601, "message": "?"}}
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], **reply})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if arguments.get("zip"):
            self.send_header("content-encoding", "gzip")
            self.end_headers()
            self.wfile.write(
                gzip.compress(b"event: message\ndata: " + body.replace("TEXT", "zipped").encode() + b"\n\n")
            )
            return
        self.end_headers()
        before, _, after = body.partition("TEXT")
        try:
            self._chatter(arguments.get("chatter", 0), arguments.get("end", "\n\n").encode())
            self.wfile.write(b"event: message\r\ndata: " + before.encode())
            for start in range(0, size, 65536):
                self.wfile.write(b"x" * min(65536, size - start))
            self.wfile.write(after.encode() + b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: as it should

    def _chatter(self, count: int, end: bytes) -> None:
        log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "."}}
        event = b"event: message\ndata: " + json.dumps(log, separators=(",", ":")).encode()
        first, _, rest = end.partition(b"|")
        for _ in range(count):
            self.wfile.write(event + first)
            if rest:
                time.sleep(0.005)  # the event's end arrives in two pieces
                self.wfile.write(rest)
        if count:
            time.sleep(0.2)  # the result a moment later: the chatter is read without it

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


_STREAMED = {
    "initialize": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "streaming", "version": "1"},
    },
    "tools/list": {
        "tools": [
            {
                "name": "blob",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "size": {"type": "integer"},
                        "chatter": {"type": "integer"},
                        "end": {"type": "string"},
                        "zip": {"type": "boolean"},
                    },
                },
                "annotations": {"readOnlyHint": True},
            }
        ]
    },
    "tools/call": {"content": [{"type": "text", "text": "TEXT"}]},
}


def test_a_huge_event_on_an_event_stream_is_refused_as_it_arrives() -> None:
    """A server of the 2025-11-25 era answers on an event stream: its 50 MB event costs the notebook the bound, the
    error is the same one a JSON reply gets (a compressed stream is refused as a compressed JSON reply is), and the
    server stays usable."""
    streaming = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    threading.Thread(target=streaming.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{streaming.server_address[1]}/mcp"
    try:
        with wm.mcp.connect(url, name="streaming", max_result_chars=100_000, timeout=10) as server:
            assert server.protocol_version == "2025-11-25"
            assert server.call("blob", size=100).text == "x" * 100
            refused_within_bound(server, "passed the 1,248,576-byte bound")
            assert server.call("blob", size=200).text == "x" * 200
            with pytest.raises(wm.ResultTooLargeError, match=r"compressed its reply \(gzip\) though asked not to"):
                server.call("blob", zip=True)  # as a JSON reply is: it could unpack to any size
            assert server.call("blob", size=300).text == "x" * 300
    finally:
        streaming.shutdown()
        streaming.server_close()


@pytest.mark.parametrize("end", ["\n\r\n", "\r\n\n", "\n\r", "\r\r", "\r\n\r\n", "\n\r|\n", "\r|\n\r\n", "\r\n\r|\n"])
def test_small_events_ended_by_any_blank_line_pass_the_bound(monkeypatch, end: str) -> None:
    """An event ends at any blank line (CRLF, LF or CR twice over, even split between two reads): a hundred events
    of 110 bytes are a hundred messages within a 2,000-byte bound, not one message past it."""
    import webmcp_nb.mcp.client as client

    monkeypatch.setattr(client, "_message_bound", lambda chars: 2_000)
    streaming = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    threading.Thread(target=streaming.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{streaming.server_address[1]}/mcp"
    try:
        with wm.mcp.connect(url, name="streaming", timeout=10) as server:
            assert server.call("blob", size=100, chatter=100, end=end).text == "x" * 100
    finally:
        streaming.shutdown()
        streaming.server_close()


@pytest.mark.slow
def test_a_listing_that_never_ends_is_cut_down_as_it_arrives(monkeypatch) -> None:
    """A server whose listing has page after page, each a tool with a 1 MB description and a 1 MB title: each page
    is cut down as it arrives (nothing like its 2 MB is kept), the pages stop at 100, the titles are labels again,
    and a budget over the whole listing stops it sooner."""
    import webmcp_nb.mcp.client as client

    paging = [sys.executable, str(Path(__file__).parent / "servers" / "paging_mcp.py"), "1000000"]
    tracemalloc.start()
    try:
        with pytest.warns(wm.ToolsOmittedWarning) as warned, wm.mcp.connect(paging, name="paging", timeout=60) as p:
            peak = tracemalloc.get_traced_memory()[1]
            assert len(p.tools) == client.MAX_PAGES
            assert {(len(t.title or ""), len(t.description)) for t in p.tools.values()} == {(200, 8_000)}
    finally:
        tracemalloc.stop()
    assert peak < 100_000_000, f"{peak:,} bytes allocated while listing 200 MB of tools"  # (all of it held: 243 MB)
    assert "more tools past 100 pages of the listing left out" in str(warned[0].message)

    monkeypatch.setattr(client, "MAX_LISTING_CHARS", 50_000)
    with pytest.warns(wm.ToolsOmittedWarning) as warned, wm.mcp.connect(paging, name="paging", timeout=60) as p:
        assert len(p.tools) == 7  # seven descriptions of 8,000 characters: past the budget
    assert "more tools past 50,000 characters of descriptions and schemas left out" in str(warned[0].message)


def test_a_huge_tool_list_is_kept_within_the_mirror_bounds(monkeypatch) -> None:
    import webmcp_nb.mcp.client as client

    monkeypatch.setattr(client, "MAX_TOOLS", 6)  # (50,000 as in the extension's mirror: too many to list here)
    huge = [*UNRULY, "--many", "5", "--long-description", "2000016", "--huge-schema", "3000"]
    with pytest.warns(wm.ToolsOmittedWarning) as warned, wm.mcp.connect(huge, name="unruly") as unruly:
        assert len(unruly.tools) == 6 and unruly.omitted == 4
        assert len(unruly.tools["described"].description) == client.MAX_DESCRIPTION_CHARS
        assert unruly.tools["schematic"].input_schema == {
            "type": "object",
            "description": "The schema was too large to keep.",
        }
        assert unruly.call("schematic", data={"p1": "a"}).text == "ok"  # the server checks what we no longer can
    said = str(warned[0].message)
    assert "descriptions over 8,000 characters cut (described)" in said
    assert "schemas over 200,000 characters replaced by an open one (schematic)" in said
    assert "4 tools past the first 6 left out" in said
