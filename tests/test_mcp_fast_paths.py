"""What ``webmcp-nb mcp``'s fast paths must keep, checked through the SDK's own client: a listing right after a call
that changed the page's tools shows the change (the server no longer asks the page after every call that may
change it, only after those the page says did); a listing served from the cache follows every change of the
page's tools; and the stdio wire read and written by the event loop keeps stray output off it, with the SDK's own
transport when stdin is not a pipe."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_peers import server_env, webmcp_nb_mcp

SPAWNED = 500  # tools a call registers: 3 MB of descriptions to report (each under the mirror's 8 k)


async def _listed(client: Client) -> dict[str, Any]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


@pytest.mark.browser
@pytest.mark.slow  # ~15 s an era: the server launches its own Chromium, as a desktop client's would
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_listing_right_after_a_call_shows_what_the_call_changed(mode: str, server, tmp_path) -> None:
    spawned = {f"page_s{i}" for i in range(SPAWNED)}

    async def run(errlog: Any) -> None:
        params = webmcp_nb_mcp("--launch", "--url", server.url("t/spawning.html"))
        async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None) as client:
            before = await _listed(client)  # the page has loaded, with its tools, before the first answer
            assert "page_spawn" in before and before["page_spawn"].annotations.read_only_hint
            assert await _listed(client) == before  # unchanged: the same listing (from the cache)
            scalar = await client.call_tool("page_scalar", {"input": "x"})  # listed wrapped in an object
            assert scalar.is_error and "the page's input schema is not an object" in scalar.content[0].text

            for label in ("first", "second"):  # then the same names again: only their descriptions tell
                arguments = {"count": SPAWNED, "size": 6000, "label": label}
                assert not (await client.call_tool("page_spawn", arguments)).is_error
                listed = await _listed(client)  # at once: no waiting for the list-change notification
                assert spawned <= set(listed)
                assert all(listed[name].description.endswith(f" {label}") for name in spawned), label

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


# A low-level SDK server on webmcp-nb's stdio wire, whose tool writes to stdout three ways before it answers.
NOISY_SERVER = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from webmcp_nb.mcp._stdio import stdio_streams

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name="noisy", input_schema={"type": "object"})])

    async def call_tool(ctx, params):
        print("a stray print")
        os.write(1, b"a stray write to fd 1\\n")
        subprocess.run([sys.executable, "-c", "print('a child process on our stdout')"], check=True)
        return types.CallToolResult(content=[types.TextContent(text="quiet " + "x" * 200_000)])

    async def main():
        server = Server("noisy", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_streams() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_stray_output_misses_the_stdio_wire(mode: str, tmp_path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY_SERVER)
    params = StdioServerParameters(command=sys.executable, args=[str(script)], env=server_env())

    async def run(errlog: Any) -> None:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None) as client:
            for _ in range(3):
                result = await client.call_tool("noisy", {})
                assert result.content[0].text == "quiet " + "x" * 200_000  # longer than a pipe's buffer

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)
    log = (tmp_path / "server.log").read_text()
    for stray in ("a stray print", "a stray write to fd 1", "a child process on our stdout"):
        assert log.count(stray) == 3  # on stderr, where the wire's fd 1 points while the server runs


def test_a_stdin_that_is_not_a_pipe_is_served_by_the_sdks_own_transport(tmp_path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY_SERVER)
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "1"}}},
    ]  # fmt: skip
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    with open(tmp_path / "requests.jsonl") as stdin:  # a regular file: no pipe transport for it
        done = subprocess.run(
            [sys.executable, str(script)], stdin=stdin, capture_output=True, text=True, env=server_env(), timeout=60
        )
    (reply,) = map(json.loads, done.stdout.splitlines())  # then end of file: the server ends
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "noisy", done.stderr
