"""Both views say the same of each event: the notebook's log and report (webmcp_nb/core/describe.py) and the side
panel's log (extension/sidepanel/describe.js), over one vector file of events (tests/vectors/log_lines.json)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from webmcp_nb.core.describe import actor, counted, describe, family
from webmcp_nb.core.events import Event

VECTORS = Path(__file__).parent / "vectors" / "log_lines.json"
ROOT = Path(__file__).resolve().parents[1]


def python_words() -> list[list[str | None]]:
    events = [Event.model_validate(e) for e in json.loads(VECTORS.read_text())["events"]]
    return [[describe(e), actor(e), family(e.kind)] for e in events]


def test_the_vectors_cover_every_kind_the_notebook_describes() -> None:
    kinds = {e["kind"] for e in json.loads(VECTORS.read_text())["events"]}
    source = (ROOT / "webmcp_nb" / "core" / "describe.py").read_text()
    described = set(re.findall(r'kind == "([a-z._]+)"', source))
    assert described <= kinds, described - kinds


def test_the_side_panel_says_what_the_notebook_says() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the side panel's describe.js cannot be run here")
    module = ROOT / "extension" / "sidepanel" / "describe.js"
    run = subprocess.run(
        [node, str(VECTORS.parent / "describe.mjs"), str(VECTORS), str(module)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    side_panel = json.loads(run.stdout)
    for i, (ours, theirs) in enumerate(zip(python_words(), side_panel, strict=True)):
        assert theirs == ours, f"event {i}"


def test_a_count_of_one_is_singular() -> None:
    """The log said "(1 tools)", the tab picker "(1 tools)", the chat bridge "(1 tool calls this turn)"."""
    events = [Event.model_validate(e) for e in json.loads(VECTORS.read_text())["events"]]
    one = next(e for e in events if e.kind == "tools.changed" and e.data["count"] == 1)
    assert describe(one) == "+readPage (1 tool)"  # the side panel's words are the same (the test above)
    assert (counted(1, "tool call"), counted(0, "tool"), counted(2, "tab")) == ("1 tool call", "0 tools", "2 tabs")
