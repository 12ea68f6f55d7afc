"""Running the extension's own ES modules headlessly with Node, for tests that pin JavaScript to Python."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

EXTENSION = Path(__file__).resolve().parents[1] / "extension"


def run_module_script(body: str) -> Any:
    """Run ``body`` (an async ES-module script that sets ``result``) with the extension's folder as the base
    for imports; returns ``result`` as JSON. Skips the test when Node is not installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript side of this test cannot run")
    script = f"let result;\n{body}\nprocess.stdout.write(JSON.stringify(result));"
    out = subprocess.run(
        [node, "--experimental-default-type=module", "--input-type=module", "-e", script],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)
