"""``webmcp-nb mcp`` against hostile pages, through the official SDK's client over stdio (each server launches its
own Chromium): a page tool's name outlives its page only as a stale-tool error; a cross-origin frame's tools say
whose they are and a page's title never reaches the client bare; URLs an MCP client gives open only on http,
https and about:blank unless the user started the server with ``--allow-file-urls``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_peers import listed_until, mcp_session, text

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_page_tool_name_outlives_its_page_only_as_a_stale_tool(server: Any, tmp_path: Path) -> None:
    """Page a (127.0.0.1) answers once, then sends its tab to page b (localhost), which registers a tool of the same
    name: the client's next call by the name it listed is refused, b never sees it, and the change is announced."""

    async def run(errlog: Any) -> None:
        url = server.url("t/elsewhere-a.html")
        async with mcp_session("--launch", "--url", url, errlog=errlog) as (client, changes):
            tools = await listed_until(client, changes, lambda t: "page_send_message" in t)
            assert "of http://127.0.0.1:" in (tools["page_send_message"].description or "")
            seen = changes.count
            first = await client.call_tool("page_send_message", {"text": "hello a"})
            assert json.loads(text(first)) == {"to": "a", "text": "hello a"}
            await changes.after(seen)  # page a sent its tab away: a list change is announced

            for name, arguments in (
                ("page_send_message", {"text": "meant for a"}),
                ("call_page_tool", {"name": "send_message", "arguments": {"text": "meant for a"}}),
            ):
                stale = await client.call_tool(name, arguments)
                assert stale.is_error and "STALE_TOOL" in text(stale), text(stale)
                assert "the page changed since you listed it" in text(stale)
                assert "List the tools again" in text(stale) and "tab.tools" not in text(stale)  # MCP words

            b = "http://localhost:"
            tools = await listed_until(
                client, changes, lambda t: "page_send_message" in t and b in (t["page_send_message"].description or "")
            )
            inbox = await client.call_tool("call_page_tool", {"name": "inbox"})
            assert json.loads(text(inbox)) == []  # b never saw what was meant for a
            sent = await client.call_tool("page_send_message", {"text": "for b"})  # listed again: b's, it works
            assert json.loads(text(sent)) == {"to": "b", "text": "for b"}

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


def test_a_cross_origin_frames_tools_and_a_pages_titles_say_whose_they_are(server: Any, tmp_path: Path) -> None:
    """The frame (localhost) of a page on 127.0.0.1 registers tools; one is titled like a fixed tool of the server."""
    page, frame = f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}"
    marked = f"a frame of {frame}, not the page's own origin ({page})"

    async def run(errlog: Any) -> None:
        async with mcp_session("--launch", "--url", server.url("t/cross-frame.html"), errlog=errlog) as (c, changes):
            tools = await listed_until(c, changes, lambda t: "page_frameGreeting" in t and "page_sendPin" in t)
            host, inner = tools["page_hostTool"], tools["page_frameGreeting"]
            assert (host.description or "").startswith(f"[Page-supplied tool of {page}: ")
            assert (inner.description or "").startswith(f"[Page-supplied tool of {marked}: ")
            titles = [inner.title, inner.annotations.title if inner.annotations else None]
            assert titles == [f"Page tool of {marked}: webmcp-nb: list_tabs (read-only, safe)"] * 2
            assert host.title is None and not any(str(t.title).startswith("webmcp-nb") for t in tools.values())

            listing = json.loads(text(await c.call_tool("list_page_tools", {})))
            by_name = {tool["name"]: tool for tool in listing["tools"]}
            assert listing["origin"] == page
            assert (by_name["hostTool"]["origin"], by_name["hostTool"]["from"]) == (page, page)
            assert (by_name["frameGreeting"]["origin"], by_name["frameGreeting"]["from"]) == (frame, marked)

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)


def test_an_mcp_client_opens_only_http_https_and_about_blank_unless_the_user_allows_file_urls(
    server: Any, tmp_path: Path
) -> None:
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- not for any page\n")
    refused = {
        secret.as_uri(): "file: URLs are not opened for MCP clients",
        "data:text/html,<p>hi</p>": "data: URLs are not opened for MCP clients",
        "chrome://version": "chrome: URLs are not opened for MCP clients",
        "javascript:alert(1)": "javascript: URLs are not opened for MCP clients",
    }

    async def run(errlog: Any) -> None:
        async with mcp_session("--launch", "--url", server.url("flights/"), errlog=errlog) as (client, _):
            for url, why in refused.items():
                for tool in ("open_tab", "navigate"):
                    answer = await client.call_tool(tool, {"url": url})
                    assert answer.is_error and why in text(answer), (tool, text(answer))
                    assert "webmcp-nb mcp --allow-file-urls" in text(answer)
            tabs = json.loads(text(await client.call_tool("list_tabs", {})))["tabs"]
            assert [tab["url"] for tab in tabs] == [server.url("flights/")]  # nothing else opened

            dom = await client.call_tool("inject_skill", {"name": "dom"})  # the skill's navigate keeps the rule
            assert not dom.is_error, text(dom)
            escape = await client.call_tool("page_navigate", {"url": secret.as_uri()})
            assert escape.is_error and "file: URLs are not opened" in text(escape), text(escape)
            blank = await client.call_tool("open_tab", {"url": "about:blank"})
            assert not blank.is_error, text(blank)

        async with mcp_session("--launch", "--allow-file-urls", errlog=errlog) as (client, _):
            opened = await client.call_tool("open_tab", {"url": secret.as_uri()})
            assert not opened.is_error and json.loads(text(opened))["url"] == secret.as_uri(), text(opened)
            still = await client.call_tool("open_tab", {"url": "data:text/html,<p>hi</p>"})
            assert still.is_error and "data: URLs are not opened" in text(still)

    with open(tmp_path / "server.log", "w") as errlog:
        anyio.run(run, errlog)
