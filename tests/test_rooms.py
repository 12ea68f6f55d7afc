"""The package's rooms: each folder of ``webmcp_nb/`` says in its docstring what it may use, and no module imports
from a room it does not name there — not even inside a function (only ``if TYPE_CHECKING:`` is exempt). The rooms
are ordered, so a lower room never reaches a higher one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "webmcp_nb"

ORDER = [
    "core",
    "link",
    "devtools",
    "browser",
    "own_chrome",
    "recording",
    "agent",
    "mcp",
    "replay",
    "bridge",
    "views",
    "demo",
    "evals",
    "ci",
]
"""The rooms from the bottom up: each may use only rooms before it."""

LEAVES = {"_version", "testing"}
"""Top-level modules that use nothing of the package, so every room may use them."""

FACES = {"__init__", "__main__", "cli"}
"""Top-level modules that face the user: they may use every room."""


def _room_of(module: str) -> str:
    """``webmcp_nb.link.relay`` → ``link``; a top-level module is its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["webmcp_nb", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    """Every module of the package this one imports, with its line, except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.append((node.lineno, f"{target}.{alias.name}" if node.module is None else target))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if name == "webmcp_nb" or name.startswith("webmcp_nb.")]


def _declared_uses(room: str) -> list[str]:
    doc = ast.get_docstring(ast.parse((PACKAGE / room / "__init__.py").read_text())) or ""
    match = re.search(r"^Uses: (.*)\.$", doc, re.M)
    assert match, (
        f"webmcp_nb/{room}/__init__.py: its docstring must end with a line 'Uses: <rooms>.' (or 'Uses: none.')"
    )
    return [] if match.group(1) == "none" else [name.strip() for name in match.group(1).split(",")]


def test_every_folder_is_a_room_in_the_order() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(ORDER)
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == LEAVES | FACES


@pytest.mark.parametrize("room", ORDER)
def test_a_room_says_what_it_may_use_and_uses_only_lower_rooms(room: str) -> None:
    uses = _declared_uses(room)
    below = ORDER[: ORDER.index(room)]
    assert set(uses) <= set(below), f"{room} may use only rooms below it ({', '.join(below) or 'none'}): {uses}"
    wrong = []
    for module, path in _modules().items():
        if _room_of(module) != room:
            continue
        for line, target in _imports(module, path):
            target_room = _room_of(target)
            if target_room in (room, *uses) or target.removeprefix("webmcp_nb.") in LEAVES:
                continue
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not wrong, f"{room} uses only {', '.join(uses) or 'nothing'}:\n" + "\n".join(wrong)


def test_no_room_hides_a_public_name() -> None:
    """``wm.connect`` is a function: a folder or module of the same name would shadow it once imported."""
    import webmcp_nb as wm

    assert not set(ORDER) & set(wm.__all__) - {"mcp", "evals"}


def test_leaves_use_nothing_of_the_package() -> None:
    modules = _modules()
    for leaf in LEAVES:
        assert _imports(f"webmcp_nb.{leaf}", modules[f"webmcp_nb.{leaf}"]) == []
