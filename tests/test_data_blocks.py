"""Page text inside the model's data blocks: tool results and the page context are framed the same way by the notebook's
agent (``webmcp_nb/core/agent_rules.py``) and by the side panel's chat (``extension/chat/agent-core.js``), checked
against one file of vectors (``tests/vectors/tool_results.json``) that both implementations must reproduce exactly.
Whatever a page or a model puts in a result, an error or a tool name, the block cannot be closed early, nor a second
one forged."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from webmcp_nb.core.agent_rules import page_context, result_text

ROOT = Path(__file__).resolve().parents[1]
VECTORS = Path(__file__).parent / "vectors" / "tool_results.json"
TAGS = {tag: re.compile(rf"<\s*/?\s*{tag}", re.I) for tag in ("tool_result", "page_context")}


def expand(value: Any) -> Any:
    """A vector's value: ``{"repeat": [text, n]}`` is ``text * n``; a list is the concatenation of its parts."""
    if isinstance(value, list):
        return "".join(expand(v) for v in value)
    if isinstance(value, dict):
        text, times = value["repeat"]
        return text * times
    return value


def load() -> dict[str, Any]:
    return json.loads(VECTORS.read_text(encoding="utf-8"))


def one_block(text: str, tag: str) -> bool:
    """``text`` is one block of ``tag``: one opening tag at its start, one closing tag at its end, none between."""
    return len(TAGS[tag].findall(text)) == 2 and text.startswith(f"<{tag} ") and text.endswith(f"</{tag}>")


def test_the_agent_frames_every_vector() -> None:
    vectors = load()
    for v in vectors["tool_results"]:
        framed = result_text(v["tool"], v["status"], expand(v["body"]), v["untrusted"], v["limit"])
        assert framed == expand(v["expected"]), v["name"]
        assert one_block(framed, "tool_result") and not TAGS["page_context"].search(framed), v["name"]
        body = expand(v["body"])
        inner = html.unescape(framed.split("\n", 1)[1].rsplit("\n", 1)[0])
        assert inner == body or (len(body) > v["limit"] and inner.startswith(body[: v["limit"]] + "… [")), v["name"]
    for v in vectors["page_contexts"]:
        framed = page_context(expand(v["title"]), expand(v["url"]))
        assert framed == expand(v["expected"]), v["name"]
        assert one_block(framed, "page_context") and not TAGS["tool_result"].search(framed), v["name"]
        assert framed.count("\n") == 3, v["name"]  # a title or URL cannot add a line


def test_the_side_panel_frames_every_vector_alike() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the side panel's framing (extension/chat/agent-core.js) cannot be run here")
    run = subprocess.run(
        [node, str(VECTORS.parent / "frame.mjs"), str(VECTORS), str(ROOT / "extension" / "chat" / "agent-core.js")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    framed = json.loads(run.stdout)
    vectors = load()
    for kind in ("tool_results", "page_contexts"):
        assert len(framed[kind]) == len(vectors[kind])
        for v, text in zip(vectors[kind], framed[kind], strict=True):
            assert text == expand(v["expected"]), f"{kind}: {v['name']}"
