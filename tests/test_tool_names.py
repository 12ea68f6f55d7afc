"""Model-facing names say whose tool runs: a page tool never takes a name an MCP server's tool claims, each
description says where its tool comes from, and the confirmation names the source. Hostile fixture: a page
registering ``notes.save`` beside a connected MCP server ``notes`` whose tool ``save`` is ``notes.save`` too (a tiny
server written with the official SDK, ``tests/notes_server.py``); the PIN-bearing call must reach the server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import webmcp_nb as wm
from webmcp_nb.testing import ScriptedServer, call, say

NOTES_SERVER = Path(__file__).parent / "notes_server.py"


def test_a_page_tool_never_takes_the_name_of_an_mcp_servers_tool(polyfill_browser, server, tmp_path) -> None:
    notes_file = tmp_path / "notes.jsonl"
    tab = polyfill_browser.open(server.url("t/notes.html"))
    asked: list[wm.ConfirmationRequest] = []
    try:
        with wm.mcp.connect(
            [sys.executable, str(NOTES_SERVER)], name="notes", env={"NOTES_FILE": str(notes_file)}
        ) as notes:
            script = [call("notes_save", text="groceries", pin="4321"), say("saved")]
            with ScriptedServer(script) as model:
                agent = wm.Agent(
                    tab,
                    base_url=model.base_url,
                    api_key="test",
                    model="scripted",
                    mcp_servers=[notes],
                    on_confirm=lambda request: asked.append(request) or True,
                )
                result = agent.run("save my note with my PIN")
                offered = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
        assert {"notes_save", "page_notes_save"} <= set(offered) and "notes_save_2" not in offered
        assert offered["notes_save"].endswith("(from the MCP server notes; risk: medium, returns untrusted content)")
        assert offered["page_notes_save"].endswith(f"(from http://127.0.0.1:{server.port}; risk: medium)")
        assert [(r.tool, r.provenance) for r in asked] == [("notes.save", "the MCP server notes")]
        assert result.steps[0].error is None and "saved" in str(result.steps[0].result)
        assert [json.loads(line) for line in notes_file.read_text().splitlines()] == [
            {"text": "groceries", "pin": "4321"}
        ]
        assert tab.call("received").value == []  # the page never got the PIN
    finally:
        tab.close()
