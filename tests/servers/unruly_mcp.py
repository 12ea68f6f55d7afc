"""An MCP server written with the official SDK that misbehaves on request, for the tests of ``wm.mcp.connect``'s
bounds: ``freeze`` stops the process (SIGSTOP: it answers nothing more, as a wedged server does), ``slow`` sleeps,
``blob`` returns as many characters as asked, and ``--many N`` / ``--long-description N`` / ``--huge-schema N``
make its tool list unreasonable.

    python unruly_mcp.py [--many N] [--long-description N] [--huge-schema N] [--http PORT]
"""

from __future__ import annotations

import argparse
import os
import signal
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from pydantic import Field, create_model

parser = argparse.ArgumentParser()
parser.add_argument("--many", type=int, default=0, help="extra tools named t0, t1, …")
parser.add_argument("--long-description", type=int, default=0, help="characters of the description of `described`")
parser.add_argument("--huge-schema", type=int, default=0, help="properties in the schema of `schematic`")
parser.add_argument("--http", type=int, default=0, help="serve Streamable HTTP on this port of 127.0.0.1, not stdio")
options = parser.parse_args()

server = MCPServer("unruly")


@server.tool(annotations={"readOnlyHint": True})
def blob(size: int) -> str:
    """Returns `size` characters."""
    return "x" * size


@server.tool(annotations={"readOnlyHint": True})
async def slow(seconds: float) -> str:
    """Answers after `seconds`."""
    await anyio.sleep(seconds)
    return f"slept {seconds} s"


@server.tool()
def freeze() -> str:
    """Stops this server's process: it answers nothing more."""
    os.kill(os.getpid(), signal.SIGSTOP)
    return "thawed"


def trivial() -> str:
    return "ok"


if options.long_description:
    server.add_tool(trivial, name="described", description="d" * options.long_description)
if options.huge_schema:
    fields: dict[str, Any] = {f"p{n}": (str, Field("", description="a field " * 4)) for n in range(options.huge_schema)}
    Wide = create_model("Wide", **fields)

    def schematic(data: Wide) -> str:  # type: ignore[valid-type]
        return "ok"

    server.add_tool(schematic, description="A tool with a very large schema.")
for n in range(options.many):
    server.add_tool(trivial, name=f"t{n}", description=f"Trivial tool {n}.")

if options.http:
    import uvicorn

    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=options.http, log_level="error")
else:
    server.run()
