"""An MCP server (the SDK's low-level ``Server``) whose tool list never ends: every ``tools/list`` page holds one tool
with a description of DESCRIPTION characters and a title as long, and a cursor to another page, for the test that
``wm.mcp.connect`` keeps a bounded listing however many pages a server offers.

    python paging_mcp.py DESCRIPTION
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

SIZE = int(sys.argv[1])


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    page = int(params.cursor) if params is not None and params.cursor else 0
    tool = types.Tool(
        name=f"t{page}",
        title="T" * SIZE,
        description="d" * SIZE,
        input_schema={"type": "object", "properties": {}},
    )
    return types.ListToolsResult(tools=[tool], next_cursor=str(page + 1))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


async def main() -> None:
    server = Server("paging", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


anyio.run(main)
