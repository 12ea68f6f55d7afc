"""Helpers for tests that run MCP clients and servers no one here wrote: ``webmcp-nb mcp`` as the SDK's stdio
client starts it, the Node packages the project pins in package.json (``npm ci`` installs them), the SDK's own
server over Streamable HTTP, and a way to count the tool-list changes a client is told of in either protocol era."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from eventually import eventually
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from ports import free_port

from webmcp_nb.browser.chromium import ChromiumProcess
from webmcp_nb.link.home import read_secret
from webmcp_nb.own_chrome.connect import start_daemon

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

    port = free_port()
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


def inspector_cli(server_args: list[str], *method: str, home: Path) -> subprocess.CompletedProcess[str]:
    """One request of the MCP Inspector's CLI (a client nobody here wrote) to ``webmcp-nb mcp SERVER_ARGS``, in
    JSON; it waits up to 60 s for a server that starts on a loaded machine."""
    env = ["-e", f"PYTHONPATH={server_env()['PYTHONPATH']}", "-e", f"WEBMCP_NB_HOME={home}"]
    target = [sys.executable, "-m", "webmcp_nb", "mcp", *server_args]
    cli = [str(node_tool("mcp-inspector")), "--cli", "--format", "json", "-q", "--connect-timeout", "60000"]
    return subprocess.run([*cli, *env, *target, *method], capture_output=True, text=True, timeout=120)


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


@asynccontextmanager
async def mcp_session(
    *args: str,
    errlog: Any,
    mode: str = "legacy",
    name: str = "test-client",
    read_timeout: float | None = None,
    **env: str,
) -> AsyncIterator[tuple[Client, Changes]]:
    """The SDK's client on ``webmcp-nb mcp ARGS`` over stdio, and the tool-list changes it is told of: by
    ``notifications/tools/list_changed`` (2025-11-25) or on a ``subscriptions/listen`` stream (2026-07-28).
    ``errlog`` is a real file (Jupyter's and pytest's stderr have no fileno) that gets the server's stderr;
    ``read_timeout`` bounds every request (the SDK enforces it)."""
    changes = Changes()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.note()

    transport = stdio_client(webmcp_nb_mcp(*args, **env), errlog=errlog)
    info = types.Implementation(name=name, version="1.0")
    options: dict[str, Any] = {"message_handler": on_message, "cache": None, "client_info": info}
    async with Client(transport, mode=mode, read_timeout_seconds=read_timeout, **options) as client:
        if mode == "legacy":
            yield client, changes
            return
        async with anyio.create_task_group() as group, client.listen(tools_list_changed=True) as stream:

            async def follow() -> None:
                async for _ in stream:
                    changes.note()

            group.start_soon(follow)
            yield client, changes
            group.cancel_scope.cancel()


class Daemon:
    """The relay daemon of a throwaway home (``WEBMCP_NB_HOME`` must name ``root``), and, unless ``browser`` is
    false, a Chromium whose extension dials it (as the user's would)."""

    def __init__(self, root: Path, *, browser: bool = True) -> None:
        self.port = free_port()
        self.home = root
        start_daemon(self.port)
        self.chromium: ChromiumProcess | None = None
        if browser:
            self.start_browser()

    def start_browser(self) -> ChromiumProcess:
        self.chromium = ChromiumProcess(
            f"ws://127.0.0.1:{self.port}/browser", secret=read_secret(), args=["--remote-debugging-port=0"]
        )
        return self.chromium

    def close(self) -> None:
        if self.chromium is not None:
            self.chromium.close()
        with contextlib.suppress(OSError, ValueError):
            os.kill(int((self.home / f"relay-{self.port}.pid").read_text()), signal.SIGTERM)


@contextmanager
def users_chrome(home: Path) -> Iterator[Daemon]:
    """The user's own Chrome, emulated: ``WEBMCP_NB_HOME`` names ``home`` (its secret and grants) while a relay
    daemon of it runs with a Chromium dialing it; the variable is as it was afterwards."""
    before = os.environ.get("WEBMCP_NB_HOME")
    os.environ["WEBMCP_NB_HOME"] = str(home)
    running = None
    try:
        running = Daemon(home)
        yield running
    finally:
        if running is not None:
            running.close()
        if before is None:
            os.environ.pop("WEBMCP_NB_HOME", None)
        else:
            os.environ["WEBMCP_NB_HOME"] = before


def text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


async def listed_until(client: Client, changes: Changes, wanted: Any) -> dict[str, types.Tool]:
    """The tool list once ``wanted(tools by name)`` holds, re-listed at each announced change (20 s at most)."""
    seen = changes.count
    while True:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        if wanted(tools):
            return tools
        seen = await changes.after(seen)
