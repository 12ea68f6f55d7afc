"""Local overrides of page tools' text: a tool's description, title or input schema as the notebook shows it to
models and views, while calls still reach the page's own tool and are checked against the schema the page
registered. The site author's loop: rewrite a description in a cell, run the evals under both, keep the winner.

``tab.tools.override(name, description=...)`` makes one; each ``Tool`` then reports the override in its
``description``/``title``/``input_schema`` (what the agent, the panel, the MCP server and the evals read) and
keeps the page's own in ``tool.info``. Overrides belong to the tab, by tool name, whatever page it shows next;
each one set or cleared is an event (``override.set``, ``override.cleared``), so sessions record them and replays
apply them again. An override's schema that differs from the page's is named, field by field."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..core.display import Markup, clip, escape, table, visible
from ..core.errors import ConfigurationError, InvalidArgumentsError

__all__ = ["ToolOverride", "Overrides", "FIELDS", "schema_differences", "check_fields", "load_overrides"]

FIELDS = ("description", "title", "input_schema")
"""What an override may change (never the name, the annotations or where the tool runs)."""


def check_fields(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` as an override takes them; a typed error names the field that is wrong."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "inputSchema":
            key = "input_schema"
        if key not in FIELDS:
            raise InvalidArgumentsError(
                f"override of {name}: {key!r} cannot be overridden; an override changes {', '.join(FIELDS)}",
                field=key,
            )
        if value is None:
            continue
        wanted = dict if key == "input_schema" else str
        if not isinstance(value, wanted):
            raise InvalidArgumentsError(
                f"override of {name}: {key} must be {'an object (a JSON Schema)' if wanted is dict else 'a text'}, "
                f"not {type(value).__name__}",
                field=key,
            )
        if key == "input_schema":
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentsError(f"override of {name}: input_schema is not JSON: {exc}", field=key) from None
        out[key] = value
    if not out:
        raise InvalidArgumentsError(f"override of {name}: give a description, a title or an input_schema", field=None)
    return out


def load_overrides(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Overrides from a YAML or JSON file, ``{tool: {description?, title?, input_schema?}}`` (what ``webmcp-nb mcp
    --overrides`` shows its client); ``ConfigurationError`` naming the file and what is wrong in it."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"{file}: cannot read the overrides: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise ConfigurationError(f"{file}: overrides are a mapping {{tool name: {{description, title, input_schema}}}}")
    found: dict[str, dict[str, Any]] = {}
    for name, fields in data.items():
        if not isinstance(fields, dict):
            raise ConfigurationError(
                f"{file}: {name}: {{description, title, input_schema}}, not {type(fields).__name__}"
            )
        try:
            found[str(name)] = check_fields(str(name), fields)
        except InvalidArgumentsError as exc:
            raise ConfigurationError(f"{file}: {exc.message}") from None
    return found


def _properties(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _required(schema: Any) -> list[Any]:
    found = schema.get("required") if isinstance(schema, dict) else None
    return found if isinstance(found, list) else []


def schema_differences(page: dict[str, Any] | None, override: dict[str, Any]) -> list[str]:
    """Where an override's schema tells models something the page's own schema does not take, in words: at every
    level (``filters.price``, ``stops[]`` for an array's items)."""
    found: list[str] = []
    _object_differences("", page, override, found)
    return [visible(clip(text, 300)) for text in found]


_DEPTH = 5


def _object_differences(path: str, page: Any, override: Any, found: list[str]) -> None:
    mine, theirs = _properties(override), _properties(page)
    for name in mine:
        if name not in theirs:
            found.append(
                f"{path}{name}: in the override's schema, not in the page's (the page may refuse or ignore it)"
            )
    for name in _required(page):
        if name not in mine:
            found.append(f"{path}{name}: the page requires it; the override's schema does not offer it")
        elif name not in _required(override):
            found.append(f"{path}{name}: the page requires it; the override's schema makes it optional")
    for name, prop in mine.items():
        if isinstance(prop, dict) and isinstance(theirs.get(name), dict):
            _value_differences(f"{path}{name}", theirs[name], prop, found)


def _value_differences(where: str, page: dict[str, Any], override: dict[str, Any], found: list[str]) -> None:
    for key in ("type", "enum"):
        if key in override and key in page and override[key] != page[key]:
            found.append(
                f"{where}: the override's {key} is {json.dumps(override[key])}, the page's {json.dumps(page[key])}"
            )
    if where.count(".") + where.count("[]") >= _DEPTH:
        return
    if isinstance(override.get("items"), dict) and isinstance(page.get("items"), dict):
        _value_differences(f"{where}[]", page["items"], override["items"], found)
    if _properties(override) or _required(page):
        _object_differences(f"{where}.", page, override, found)


@dataclass(frozen=True)
class ToolOverride:
    """What models and views are shown for one tool instead of the page's own text (``None``: the page's)."""

    name: str
    description: str | None = None
    title: str | None = None
    input_schema: dict[str, Any] | None = None

    @property
    def fields(self) -> dict[str, Any]:
        """The overridden fields and their values."""
        return {key: getattr(self, key) for key in FIELDS if getattr(self, key) is not None}


class Overrides(Mapping[str, ToolOverride]):
    """A tab's overrides by tool name (read-only here; ``tab.tools.override`` and ``clear_overrides`` change
    them). Shows as a table of what each one changes."""

    def __init__(self, items: Mapping[str, ToolOverride], differences: Mapping[str, list[str] | None]) -> None:
        self._items = dict(items)
        self.differences = dict(differences)
        """Per tool: where the override's schema and the page's disagree (``None``: the tab does not list the
        tool now, so its schema is not known)."""

    def __getitem__(self, name: str) -> ToolOverride:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def _rows(self) -> list[tuple[str, str, str]]:
        rows = []
        for name, found in self._items.items():
            differs = self.differences.get(name)
            notes = "(the tab does not list this tool now)" if differs is None else "; ".join(differs)
            rows.append((name, ", ".join(found.fields), notes))
        return rows

    def __repr__(self) -> str:
        if not self._items:
            return "Overrides(none: every tool shows the page's own text)"
        lines = [f"{len(self._items)} override(s); calls still reach the page's own tools"]
        for name, changed, notes in self._rows():
            lines.append(f"  {name}: {changed}" + (f" (schema differs: {notes})" if notes else ""))
        return visible("\n".join(lines))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [
            [Markup(f"<code>{escape(name)}</code>"), changed, notes or "–"] for name, changed, notes in self._rows()
        ]
        html = table(["tool", "overridden", "schema differs from the page's"], rows, repr(self).split("\n")[0])
        return {"text/plain": repr(self), "text/html": html}
