"""Page tools as a model sees them: OpenAI function specs with schemas providers accept (meta keys dropped,
local ``$ref`` resolved, an object root) and names providers accept (mapped, and mapped back)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .tools import Tool

__all__ = ["ToolSpec", "tool_specs", "normalize_schema", "model_name"]

META_KEYS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "$anchor", "$dynamicAnchor"})
MAX_REF_DEPTH = 8
WRAPPED = "input"


@dataclass(frozen=True)
class ToolSpec:
    """One tool offered to the model."""

    model_name: str
    tool: Tool
    function: dict[str, Any]
    wrapped: bool
    """The page's schema was not an object: the model fills ``{"input": ...}`` and the page gets the value."""

    def page_arguments(self, arguments: dict[str, Any]) -> Any:
        return arguments.get(WRAPPED) if self.wrapped else arguments


def model_name(name: str, taken: set[str]) -> str:
    """``name`` made to fit ``^[a-zA-Z0-9_-]{1,64}$`` (what most providers accept), unique in ``taken``."""
    base = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = base[: 64 - len(suffix)] + suffix, n + 1
    return candidate


def normalize_schema(schema: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """A provider-friendly copy of ``schema`` and whether it had to be wrapped in an object."""
    if not isinstance(schema, dict) or not schema:
        return {"type": "object", "properties": {}}, False
    root = copy.deepcopy(schema)
    resolved = _resolve(root, root, 0)
    if resolved.get("type") != "object" and "properties" not in resolved:
        return {"type": "object", "properties": {WRAPPED: resolved}, "required": [WRAPPED]}, True
    resolved["type"] = "object"
    if not isinstance(resolved.get("properties"), dict):
        resolved["properties"] = {}
    if "required" in resolved and not isinstance(resolved["required"], list):
        del resolved["required"]
    return resolved, False


def _resolve(node: Any, root: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_resolve(item, root, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _lookup(root, ref) if depth < MAX_REF_DEPTH else None
        merged = {k: v for k, v in node.items() if k != "$ref"}
        if isinstance(target, dict):
            merged = {**target, **merged}
        return _resolve(merged, root, depth + 1) if target is not None else {k: v for k, v in merged.items()}
    return {k: _resolve(v, root, depth) for k, v in node.items() if k not in META_KEYS}


def _lookup(root: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        return None  # remote references are not fetched
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def tool_specs(tools: Iterable[Tool]) -> dict[str, ToolSpec]:
    """Function specs for ``tools``, by the name the model will use."""
    specs: dict[str, ToolSpec] = {}
    for tool in tools:
        name = model_name(tool.name, set(specs))
        parameters, wrapped = normalize_schema(tool.info.input_schema)
        notes = []
        if tool.read_only:
            notes.append("read-only")
        if tool.annotations.get("untrustedContentHint"):
            notes.append("returns untrusted content")
        description = (tool.description or tool.title or tool.name).strip()
        if notes:
            description += f" ({', '.join(notes)})"
        function = {"name": name, "description": description[:1024], "parameters": parameters}
        specs[name] = ToolSpec(name, tool, function, wrapped)
    return specs


def specs_text(specs: dict[str, ToolSpec]) -> str:
    """The tools as text, for prompt mode."""
    return "\n".join(
        f"- {s.model_name}: {s.function['description']}\n  parameters: {json.dumps(s.function['parameters'])}"
        for s in specs.values()
    )
