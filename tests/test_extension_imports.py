"""The extension's ES modules import only downward: no module reaches, through its imports, back to itself.
Where a lower module must tell a higher one something, the entry (worker/worker.js, sidepanel/main.js) connects them
with callbacks. Each folder is one context and imports only from the folders it may. This reads the
``import … from './x.js'`` lines of every ``extension/**/*.js``."""

from __future__ import annotations

import re
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[1] / "extension"
# Each folder, and what its modules may import: a path inside extension/ that starts with one of these.
MAY_IMPORT = {
    "shared": ("shared/",),
    "chat": ("chat/", "shared/"),
    "worker": ("worker/", "shared/"),
    "sidepanel": ("sidepanel/", "chat/", "shared/"),
    "options": ("options/", "chat/", "shared/", "worker/pairing.js"),  # "Pair now", "Forget pairing"
    "page": (),  # classic scripts in pages' worlds: they import nothing
}
IMPORT = re.compile(r"""^(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]""", re.M)


def imports() -> dict[str, list[str]]:
    """Each module (its path inside extension/) → the modules it imports, resolved to paths inside extension/."""
    graph = {}
    for path in sorted(EXTENSION.rglob("*.js")):
        found = [a or b for a, b in IMPORT.findall(path.read_text(encoding="utf-8"))]
        graph[path.relative_to(EXTENSION).as_posix()] = [
            (path.parent / name).resolve().relative_to(EXTENSION).as_posix() for name in found
        ]
    return graph


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every import cycle found by a depth-first walk, each as the modules along it (first one repeated)."""
    found, done = [], set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for imported in graph.get(module, []):
            walk(imported, [*path, module])
        done.add(module)

    for module in graph:
        walk(module, [])
    return found


def test_the_parser_sees_the_imports() -> None:
    graph = imports()
    assert "worker/relay.js" in graph["worker/worker.js"] and "shared/protocol.js" in graph["worker/relay.js"]
    assert "chat/agent-core.js" in graph["chat/chat-loop.js"]  # an import spread over several lines
    assert cycles({"a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"]}) == [["a.js", "b.js", "c.js", "a.js"]]


def test_every_import_names_a_module_that_exists() -> None:
    graph = imports()
    missing = [f"{module} imports {name}" for module, names in graph.items() for name in names if name not in graph]
    assert not missing, "\n".join(missing)


def test_no_module_imports_itself_through_others() -> None:
    found = cycles(imports())
    assert not found, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in found)


def test_each_folder_imports_only_what_it_may() -> None:
    graph = imports()
    assert set(MAY_IMPORT) == {module.split("/")[0] for module in graph}, "a folder MAY_IMPORT does not know"
    wrong = [
        f"{module} imports {name}"
        for module, names in graph.items()
        for name in names
        if not name.startswith(MAY_IMPORT[module.split("/")[0]])
    ]
    assert not wrong, "\n".join(wrong)
