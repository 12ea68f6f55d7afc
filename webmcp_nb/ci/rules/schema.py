"""Schemas: a description for the tool and each parameter, an input schema the argument check (and so an agent)
can use — valid JSON Schema, patterns valid as JavaScript reads them, ``required`` naming real parameters — and
``enum`` where a parameter takes one of a few values."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import regex

from ...browser.schema import schema_problem
from ...core.display import clip
from ...core.patterns import PatternTooCostly, js_pattern
from ..findings import Finding, Rule
from ..lock import ToolEntry
from .base import PageTools, as_dict, found, parameters, shown

__all__ = ["RULES", "check"]

DESCRIPTION = Rule("description-missing", "schema", "error", "the tool has a description")
INVALID = Rule("schema-invalid", "schema", "error", "the input schema is valid JSON Schema")
PATTERN = Rule("pattern-invalid", "schema", "error", "every pattern is a regular expression JavaScript reads")
COSTLY = Rule("pattern-costly", "schema", "info", "every pattern is small enough for the argument check")
NOT_OBJECT = Rule("schema-not-object", "schema", "warning", "the input schema is an object of arguments")
REQUIRED = Rule("required-unknown", "schema", "error", "required names only parameters the schema has")
UNDESCRIBED = Rule("param-undescribed", "schema", "warning", "every parameter has a description")
ENUM = Rule("enum-for-closed-set", "schema", "warning", "a parameter that takes one of a few values says so in enum")
FORMAT = Rule("format-unknown", "schema", "warning", "every format is one JSON Schema defines (others check nothing)")
RULES = (DESCRIPTION, INVALID, PATTERN, COSTLY, NOT_OBJECT, REQUIRED, UNDESCRIBED, ENUM, FORMAT)

FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6", "uri",
    "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
}  # fmt: skip
"""JSON Schema's formats (draft 2020-12); a validator ignores any other."""

_ALTERNATION = re.compile(r"^\^\(?(?:\?:)?([\w ./-]+(?:\|[\w ./-]+)+)\)?\$$")
_EXAMPLES = re.compile(r"\b(e\.g\.|eg|for example|for instance|such as|like)\W*$", re.I)
"""Words before values that are examples, not the choices."""
_QUOTED_CHOICES = re.compile(r"([\"'`])[^\"'`\n]{1,40}\1\s*(?:,|or|\||/)\s*([\"'`])[^\"'`\n]{1,40}\2")


def check(page: PageTools) -> Iterator[Finding]:
    for entry in page.entries:
        yield from _tool(entry)


def _tool(entry: ToolEntry) -> Iterator[Finding]:
    if not entry.description.strip():
        yield found(
            DESCRIPTION,
            entry,
            "it has no description: a model has only its name to go by",
            "Say in a sentence or two what it does and when to use it.",
        )
    schema = entry.input_schema
    if schema is None:
        return
    bad_patterns = list(_patterns(entry, schema))
    yield from bad_patterns
    problem = schema_problem(schema)
    if problem is not None:
        message, path = problem
        at_pattern = any(key in ("pattern", "patternProperties") for key in path[-2:] if isinstance(key, str))
        if not (at_pattern and any(f.rule == PATTERN.id for f in bad_patterns)):
            where = clip("/".join(str(p) for p in path), 200) or "the schema"
            yield found(
                INVALID,
                entry,
                f"its input schema is not valid JSON Schema at {where}: {clip(message, 300)}",
                "Fix the schema: the argument check refuses every call of a tool whose schema is invalid, and "
                "agents are shown it as it is.",
            )
    if not isinstance(schema, dict):
        return
    if "type" in schema and schema["type"] != "object":
        yield found(
            NOT_OBJECT,
            entry,
            f"its input schema is of type {schema['type']!r}: WebMCP passes a tool one object of arguments",
            'Make it {"type": "object", "properties": {...}}.',
        )
    yield from _required(entry, schema, "")
    for where, prop, _ in parameters(schema):
        if not (isinstance(prop.get("description"), str) and prop["description"].strip()):
            yield found(
                UNDESCRIBED,
                entry,
                f"parameter {where!r} has no description",
                "Say what it means and the form it takes (units, format, an example).",
            )
        yield from _required(entry, prop, f"{where}.")
        kind = prop.get("format")
        if isinstance(kind, str) and kind not in FORMATS:
            yield found(
                FORMAT,
                entry,
                f'parameter {where!r} has format "{kind}", which JSON Schema does not define: nothing checks it',
                "Use one of JSON Schema's formats (date, time, email, uri…), or a pattern for a form of your own.",
            )
        if (why := _closed_set(prop)) is not None:
            yield found(
                ENUM,
                entry,
                f"parameter {where!r} takes one of a few values ({why}) but has no enum",
                'List them: "enum": [...] (models then pick only those, and the argument check refuses others).',
            )


def _required(entry: ToolEntry, schema: dict[str, Any], path: str) -> Iterator[Finding]:
    required = schema.get("required")
    if not isinstance(required, list):
        return
    props = as_dict(schema.get("properties"))
    for name in required:
        if isinstance(name, str) and name not in props:
            yield found(
                REQUIRED,
                entry,
                f"required names {shown(path + name)}, which is not among its parameters "
                f"({clip(', '.join(map(repr, props)), 300) or 'none'})",
                "Add the parameter to properties, or take it out of required: no model can know what it is.",
            )


def _patterns(entry: ToolEntry, node: Any, path: str = "") -> Iterator[Finding]:
    """Every ``pattern`` (and ``patternProperties`` key) in the schema, read as JavaScript reads it."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _patterns(entry, item, f"{path}/{i}")
        return
    if not isinstance(node, dict):
        return
    expressions = [(f"{path}/pattern", node["pattern"])] if isinstance(node.get("pattern"), str) else []
    if isinstance(node.get("patternProperties"), dict):
        expressions += [(f"{path}/patternProperties", key) for key in node["patternProperties"]]
    for where, expression in expressions:
        try:
            js_pattern(expression)
        except PatternTooCostly as exc:
            yield found(
                COSTLY,
                entry,
                f"the pattern at {where.lstrip('/')} is too large for the argument check ({exc}); calls are sent "
                "without checking it",
                "Use a smaller expression (fewer counted repeats), or leave the check to the page.",
            )
        except regex.error as exc:
            yield found(
                PATTERN,
                entry,
                f"the pattern {shown(expression)} at {clip(where.lstrip('/'), 200)} is not a regular expression "
                f"JavaScript reads: {exc}",
                "Write it as JavaScript's RegExp (with the u flag) reads it: JSON Schema patterns are ECMA-262.",
            )
    for key, value in node.items():
        if key not in ("pattern", "enum", "const", "default", "examples"):
            yield from _patterns(entry, value, f"{path}/{key}")


def _closed_set(prop: dict[str, Any]) -> str | None:
    """Why a parameter looks like it takes one of a few values though it has no ``enum``, or ``None``."""
    if "enum" in prop or "const" in prop or prop.get("type") not in ("string", None):
        return None
    pattern = prop.get("pattern")
    if isinstance(pattern, str):
        return f"its pattern {pattern!r} lists them" if _ALTERNATION.match(pattern) else None
    description = prop.get("description")
    quoted = _QUOTED_CHOICES.search(description) if isinstance(description, str) else None
    if quoted is not None and not _EXAMPLES.search(quoted.string[max(0, quoted.start() - 25) : quoted.start()]):
        return f"its description lists {quoted.group()!r}"
    return None
