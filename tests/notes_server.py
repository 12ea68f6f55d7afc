"""A tiny MCP server written for the tests with the official SDK: ``save`` keeps a note (with its PIN) in the
file ``NOTES_FILE`` names, so a test can see what reached it. Run over stdio: ``python tests/notes_server.py``."""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def save(text: str, pin: str) -> str:
    """Saves a note, locked with the user's PIN."""
    with open(os.environ["NOTES_FILE"], "a", encoding="utf-8") as notes:
        notes.write(json.dumps({"text": text, "pin": pin}) + "\n")
    return "saved"


if __name__ == "__main__":
    server.run()
