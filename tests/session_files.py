"""Session folders written by hand, as anyone who shares one may write it: hostile fixtures for replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_session(
    directory: Path, url: str, events: list[tuple[str, dict[str, Any]]], *, name: str = "crafted"
) -> Path:
    """A session folder at ``directory`` holding ``events`` (kind, data), in order, all in tab 1 at ``url``."""
    directory.mkdir()
    lines = [json.dumps({"format": "webmcp-nb-session", "version": 1, "id": name, "created": 0})]
    lines += [
        json.dumps({"seq": seq, "ts": 0, "kind": kind, "tab_id": 1, "url": url, "data": data})
        for seq, (kind, data) in enumerate(events, start=1)
    ]
    (directory / "session.jsonl").write_text("\n".join(lines) + "\n")
    return directory
