"""Helpers for tests that run MCP clients and servers no one here wrote: ``webmcp-nb mcp`` as the SDK's stdio
client starts it, the Node packages the project pins in package.json (``npm ci`` installs them), the SDK's own
server over Streamable HTTP, and a way to count the tool-list changes a client is told of in either protocol era."""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from eventually import eventually
from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
NODE_BIN = ROOT / "node_modules" / ".bin"


def node_tool(name: str) -> Path:
    """A pinned Node package's command; the test is skipped (saying how to install it) when it is missing."""
    path = NODE_BIN / name
    if not path.exists():
        pytest.skip(f"{path} is missing: run `npm ci` at the repository's root")
    return path


@contextmanager
def streamable_http(sdk: Any) -> Iterator[str]:
    """Serve the SDK's server ``sdk`` (``mcp.server.mcpserver.MCPServer``) over Streamable HTTP on 127.0.0.1, in a
    thread; yields its URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    http = uvicorn.Server(uvicorn.Config(sdk.streamable_http_app(), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=http.run, daemon=True)
    thread.start()
    try:
        eventually(lambda: http.started, 20, "the HTTP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        thread.join(10)


def server_env(**extra: str) -> dict[str, str]:
    """The environment ``webmcp-nb mcp`` runs in: this checkout first on the path, the suite's home."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def webmcp_nb_mcp(*args: str, **env: str) -> StdioServerParameters:
    """``webmcp-nb mcp ARGS`` as the SDK's stdio client launches it."""
    return StdioServerParameters(command=sys.executable, args=["-m", "webmcp_nb", "mcp", *args], env=server_env(**env))


class Changes:
    """Tool-list changes a client was told of: counted, and awaited past a count."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    def note(self) -> None:
        self.count += 1
        self._event.set()
        self._event = anyio.Event()

    async def after(self, seen: int) -> int:
        """Return once more than ``seen`` changes were announced (within 20 s); the new count."""
        with anyio.fail_after(20):
            while self.count <= seen:
                await self._event.wait()
        return self.count
