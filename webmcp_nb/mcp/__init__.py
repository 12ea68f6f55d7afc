"""MCP both ways, on the official ``mcp`` SDK (``pip install 'webmcp-nb[mcp]'``).

- ``webmcp-nb mcp`` (:mod:`webmcp_nb.mcp.server`): a stdio MCP server that lets a desktop AI client drive a tab
  of the user's Chrome (or of a Chromium it launches) through the relay, one session per process.
- ``webmcp-nb mcp-config`` (:mod:`webmcp_nb.mcp.desktop`): the entry that starts it in a desktop client (Claude
  Desktop, Cursor, VS Code, Codex, the MCP Inspector), printed or merged into the client's config file.
- ``wm.mcp.connect(...)`` (:mod:`webmcp_nb.mcp.client`): any MCP server's tools in a notebook cell, and beside a
  page's tools in ``wm.Agent(tab, mcp_servers=[...])``.

Submodules are imported on first use: the SDK is an optional dependency.

Uses: core, link, browser, own_chrome, agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import MCPServer, MCPTool, MCPToolMap, aconnect, connect

__all__ = ["connect", "aconnect", "MCPServer", "MCPTool", "MCPToolMap"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'webmcp_nb.mcp' has no attribute {name!r}")
