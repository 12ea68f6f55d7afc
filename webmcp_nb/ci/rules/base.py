"""What every rule family reads: a page's tools as lint saw them (``PageTools``), and the walks over a tool's texts
and parameters that several families share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...core.display import clip
from ..config import LintConfig
from ..findings import Finding, Rule
from ..lock import ToolEntry

__all__ = [
    "PageTools", "Sample", "found", "parameters", "texts", "words_of_name", "sentence_starts", "as_dict", "as_list",
    "shown",
]  # fmt: skip

_DEPTH = 6


@dataclass(frozen=True)
class Sample:
    """A sample call lint made: its arguments, and the result's JSON text or the error's message."""

    arguments: dict[str, Any]
    text: str | None = None
    error: str | None = None


@dataclass
class PageTools:
    """A page's tools as lint saw them."""

    url: str
    origin: str
    entries: list[ToolEntry]
    """Every frame's tools, in the tab's order."""
    config: LintConfig = field(default_factory=LintConfig)
    again: list[ToolEntry] | None = None
    """The tools of a second load of the page (``None``: it was not loaded again)."""
    samples: dict[str, Sample] = field(default_factory=dict)
    """Sample calls by tool name."""
    declarative: dict[str, bool] = field(default_factory=dict)
    """Tools that are declarative forms, by name: ``True`` when the form submits itself (``toolautosubmit``),
    ``False`` when it waits for the person (only the tools lint asked the page about)."""
    skill: str | None = None
    """The skill lint was asked about (``None``: a page, or a lock file)."""
    skill_tools: set[str] = field(default_factory=set)
    """The tools that come from a skill (their fix is a skill's ``defineTool``, not the page's registration)."""


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping (a schema's part as the page wrote it), else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def shown(value: Any, limit: int = 100) -> str:
    """A value of the page's as a message quotes it: its ``repr`` (line breaks and quotes escaped), cut to
    ``limit`` characters."""
    return clip(repr(value), limit)


def found(rule: Rule, entry: ToolEntry | None, message: str, fix: str) -> Finding:
    """A finding of ``rule`` about ``entry`` (``None``: the page), at the rule's own severity."""
    if entry is None:
        return Finding(rule.id, rule.severity, None, message, fix)
    return Finding(rule.id, rule.severity, entry.name, message, fix, entry.origin)


def parameters(schema: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """Every parameter of a schema, nested ones too (``filters.maxPrice``, ``legs[].from``): its path, its schema,
    and whether it is required."""
    if not isinstance(schema, dict) or depth > _DEPTH:
        return
    props = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) and all(isinstance(r, str) for r in required) else set()
    for name, prop in (props if isinstance(props, dict) else {}).items():
        if not isinstance(prop, dict):
            continue
        where = f"{path}{name}"
        yield where, prop, name in needed
        yield from parameters(prop, f"{where}.", depth + 1)
        if isinstance(prop.get("items"), dict):
            yield from parameters(prop["items"], f"{where}[].", depth + 1)


def texts(entry: ToolEntry) -> Iterator[tuple[str, str]]:
    """Every text of a tool a model reads, with where it is: its title and description, and every name and string
    of its schema — each parameter's name, title, description and enum values, and wherever else the schema holds
    one (a choice of ``anyOf``, ``$defs``, a ``const`` or ``default``, an ``items`` schema, a keyword of the page's
    own): a model is shown the whole schema."""
    if entry.title:
        yield "title", entry.title
    yield "description", entry.description
    yield from _schema_texts(entry.input_schema, None, "")


KEYWORDS = frozenset({
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "definitions", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
    "prefixItems", "items", "additionalItems", "contains", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "type", "const", "enum", "multipleOf", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
    "format", "contentEncoding", "contentMediaType", "contentSchema", "title", "description", "default",
    "deprecated", "readOnly", "writeOnly", "examples",
})  # fmt: skip
"""JSON Schema's keywords (draft 2020-12, and draft 7's): any other key of a schema is the page's own text."""
_NAMES = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
"""Keywords whose keys are names the page chose (of parameters, of definitions)."""
_NOT_TEXT = {
    "pattern",
    "format",
    "$ref",
    "$dynamicRef",
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "type",
    "required",
}
"""Keywords whose strings are not prose (expressions, references, type names, names listed again)."""


def _schema_texts(node: Any, param: str | None, at: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """The texts of a schema that is ``param`` (``None``: the tool's arguments), ``at`` a place inside it."""
    if not isinstance(node, dict) or depth > 4 * _DEPTH:
        return
    owner = ("the schema" if param is None else f"parameter {param!r}") + (f" at {at}" if at else "")
    for key, value in node.items():
        if key not in KEYWORDS:
            yield f"{owner}'s keyword {key!r}", key
        if key in _NAMES and isinstance(value, dict):
            for name, sub in value.items():
                if key == "properties" and not at:
                    where = f"{param}.{name}" if param else name
                    yield f"parameter {where!r}", where
                    yield from _schema_texts(sub, where, "", depth + 1)
                else:
                    yield f"{owner}'s {key} name", name
                    yield from _schema_texts(sub, param, f"{at}/{key}/{name}".lstrip("/"), depth + 1)
        elif key == "items" and isinstance(value, dict) and not at:
            yield from _schema_texts(value, f"{param or ''}[]", "", depth + 1)
        elif key in _NOT_TEXT:
            continue
        elif isinstance(value, str):
            yield f"{owner}'s {'enum value' if key == 'enum' else key}", value
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    yield f"{owner}'s {key} value", item
                else:
                    yield from _schema_texts(item, param, f"{at}/{key}/{i}".lstrip("/"), depth + 1)
        elif isinstance(value, dict):
            yield from _schema_texts(value, param, f"{at}/{key}".lstrip("/"), depth + 1)


_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def words_of_name(name: str) -> list[str]:
    """A tool's name as words, lower case: ``placeOrder`` → ``place, order``; ``delete_item`` → ``delete, item``."""
    return [word.lower() for word in _CAMEL.findall(name)]


_SENTENCE = re.compile(r"(?:^|[.!?;]\s+|\n\s*)(?:this tool\s+|it\s+|will\s+)*([A-Za-z]+)", re.I)


def sentence_starts(text: str) -> list[str]:
    """The first word of each sentence of ``text``, lower case (``Books a table. Then …`` → ``books, then``)."""
    return [match.group(1).lower() for match in _SENTENCE.finditer(text)]
