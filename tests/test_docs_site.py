"""The documentation site's strict build, the gate `./run lint` (and so `./run test`) runs: a copy of the docs with
one defect fails it, and the failure names the defect. Run through `./run`'s own `docs_build`, so its flags are
what is tested (a `--quiet` there would hide the warnings strict mode fails on)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

DEFECTS = {
    "a broken link and a broken anchor": (
        "agents.md",
        "\nSee [the old page](no-such-page.md) and [sessions](mcp.md#no-such-heading).\n",
        ("no-such-page.md", "#no-such-heading"),
    ),
    "an API reference that does not resolve": ("reference/mcp.md", "\n::: webmcp_nb.no_such_name\n", ("no_such_name",)),
}


def docs_gate(tree: Path) -> subprocess.CompletedProcess[str]:
    """`./run`'s `docs_build` function, run in `tree` (a copy of the repository's docs)."""
    script = 'set -euo pipefail; cd "$1"; source <(sed -n "/^docs_build()/,/^}/p" "$2"); docs_build'
    return subprocess.run(
        ["bash", "-c", script, "docs-gate", str(tree), str(ROOT / "run")],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.parametrize("defect", DEFECTS)
def test_the_strict_docs_build_fails_on(defect: str, tmp_path: Path) -> None:
    page, text, named = DEFECTS[defect]
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "webmcp_nb").symlink_to(ROOT / "webmcp_nb")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent)  # where mkdocs is installed
    with (tmp_path / "docs" / page).open("a") as f:
        f.write(text)

    built = docs_gate(tmp_path)

    said = built.stdout + built.stderr
    assert built.returncode != 0, said
    for name in named:
        assert name in said
    assert not (tmp_path / "site").exists()  # built into a temporary folder, never into the tree
