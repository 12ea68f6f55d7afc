"""``webmcp-nb mcp`` driven by MCP clients no one here wrote: the official SDK's client over stdio in both protocol
eras (2025-11-25 with its initialize handshake, 2026-07-28 stateless with ``subscriptions/listen``), and the MCP
Inspector's CLI (a Node package). Each server launches its own Chromium (``--launch``) on the demo pages."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

import anyio
import mcp_types as types
import pytest
from eventually import eventually
from mcp_peers import inspector_cli, mcp_session

from webmcp_nb.browser.skills import builtin_skills_path
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.mcp.server import FIXED_TOOLS, PAGE_NAME_LIMIT

SEARCH = DEMO_SEARCH
FIXED = {tool.name for tool in FIXED_TOOLS}
SAFE = re.compile(rf"^[A-Za-z0-9_-]{{1,{PAGE_NAME_LIMIT}}}$")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def session(mode: str, url: str, errlog: Any) -> Any:
    """The SDK's client on ``webmcp-nb mcp --launch --url URL`` (see ``mcp_peers.mcp_session``)."""
    return mcp_session("--launch", "--url", url, errlog=errlog, mode=mode)


def names(listing: types.ListToolsResult) -> list[str]:
    return [tool.name for tool in listing.tools]


@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_sdk_client_drives_a_tab_in_both_protocol_eras(mode: str, era: str, server, tmp_path) -> None:
    async def run(errlog: Any) -> None:
        async with session(mode, server.url("flights/"), errlog) as (client, changes):
            assert client.protocol_version == era
            listing = await client.list_tools()
            listed = names(listing)
            assert set(listed) >= FIXED and "page_searchFlights" in listed
            assert "page_listFlights" not in listed
            assert all(SAFE.match(name) for name in listed)
            page_tool = next(t for t in listing.tools if t.name == "page_searchFlights")
            assert page_tool.description.startswith("[Page-supplied tool of http://127.0.0.1:")
            assert page_tool.output_schema is None and page_tool.annotations.read_only_hint is False
            hints = {t.name: t.annotations for t in listing.tools}
            assert hints["list_tabs"].read_only_hint and hints["close_tab"].destructive_hint
            assert hints["select_tab"].read_only_hint is False  # with force it takes another session's tab

            seen = changes.count
            result = await client.call_tool("page_searchFlights", SEARCH)
            assert not result.is_error and json.loads(result.content[0].text)["count"] > 0
            seen = await changes.after(seen)  # the results view registered its tools
            listed = names(await client.list_tools())
            assert {"page_listFlights", "page_setFilters", "page_resetFilters"} <= set(listed)
            flights = await client.call_tool("call_page_tool", {"name": "listFlights"})  # the fixed pair
            assert len(json.loads(flights.content[0].text)) > 0

            opened = await client.call_tool("open_tab", {"url": server.url("t/faults.html")})
            assert "page_boom" in json.loads(opened.content[0].text)["page_tools"]
            seen = await changes.after(seen)  # rebinding to the new tab
            listed = names(await client.list_tools())
            assert "page_boom" in listed and "page_searchFlights" not in listed
            assert "page_ns_echo" in listed  # the page's "ns.echo", made safe

            shot = await client.call_tool("screenshot", {})
            assert shot.content[0].type == "image" and shot.content[0].mime_type == "image/png"
            skills = json.loads((await client.call_tool("list_skills", {})).content[0].text)
            assert "dom" in {skill["name"] for skill in skills["shipped"]}
            injected = json.loads((await client.call_tool("inject_skill", {"name": "dom"})).content[0].text)
            assert injected["ok"] and "readPage" in injected["tools"]
            seen = await changes.after(seen)  # the skill's tools joined the page's
            assert "page_readPage" in names(await client.list_tools())
            for path in by_path:  # not a name list_skills gives
                refused = await client.call_tool("inject_skill", {"name": path})
                assert refused.is_error and "no skill" in refused.content[0].text
            assert "page_evil" not in names(await client.list_tools())

            failed = await client.call_tool("page_boom", {})
            assert failed.is_error and "kaboom 42" in failed.content[0].text
            stale = await client.call_tool("page_listFlights", {})
            assert stale.is_error and stale.content[0].text.startswith("STALE_TOOL: ")
            unknown = await client.call_tool("page_frobnicate", {})  # coded, as the server's other errors are
            assert unknown.is_error and unknown.content[0].text.startswith("TOOL_NOT_FOUND: unknown tool page_frob")

            progress = anyio.Event()

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.set()

            async with anyio.create_task_group() as group:
                group.start_soon(lambda: client.call_tool("page_hang", {}, progress_callback=on_progress))
                with anyio.fail_after(20):
                    await progress.wait()  # the call reached the page and reports progress
                group.cancel_scope.cancel()  # the client cancels it: notifications/cancelled

            async def told() -> Any:
                reply = await client.call_tool("page_cancelled", {})
                return json.loads(reply.content[0].text)

            cancelled = await anyio.to_thread.run_sync(
                lambda: eventually(lambda: anyio.from_thread.run(told), 20, "the page's toolcancel event")
            )
            assert cancelled == ["hang"]

    outside = tmp_path / "evil"  # a skill folder the client names by path: never injected
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: evil\n---\nNot shipped.\n")
    (outside / "tools.js").write_text("defineTool({name: 'evil', description: 'E'}, async () => 1);\n")
    by_path = [str(outside), os.path.relpath(outside, builtin_skills_path())]  # absolute, and ../../…
    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


def test_the_mcp_inspector_cli_lists_and_calls_page_tools(server, tmp_path) -> None:
    def inspect(*method: str) -> subprocess.CompletedProcess[str]:
        return inspector_cli(["--launch", "--url", server.url("flights/")], *method, home=tmp_path / "home")

    listed = inspect("--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)["result"]["tools"]}
    assert set(tools) >= FIXED and "page_searchFlights" in tools
    assert tools["page_searchFlights"]["inputSchema"]["required"]

    called = inspect(
        "--method", "tools/call", "--tool-name", "page_searchFlights", "--tool-args-json", json.dumps(SEARCH)
    )
    assert called.returncode == 0, called.stderr
    assert "Found" in json.loads(called.stdout)["result"]["content"][0]["text"]

    refused = inspect("--method", "tools/call", "--tool-name", "page_searchFlights", "--tool-args-json", "{}")
    assert refused.returncode == 5  # isError: the arguments do not fit the page's schema
