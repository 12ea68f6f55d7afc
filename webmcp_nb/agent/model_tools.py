"""Page tools as a model sees them: OpenAI function specs with schemas providers accept (meta keys dropped,
local ``$ref`` resolved, an object root), names providers accept (mapped, and mapped back), a description that
ends with the tool's risk, and a failed call's next step in a model's words. The rules are in
:mod:`webmcp_nb.core.agent_rules`; the side panel's chat applies them alike (``extension/chat/agent-core.js``,
``tests/vectors/agent_rules.json``)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..browser.tools import Tool
from ..core.agent_rules import NAMES, SCHEMA, TEXTS, description_for_model, fill
from ..core.errors import WebMCPError

if TYPE_CHECKING:
    from ..mcp.client import MCPTool

__all__ = [
    "ToolSpec",
    "tool_specs",
    "normalize_schema",
    "model_name",
    "description_for_model",
    "specs_text",
    "MODEL_STEPS",
    "error_text",
]

META_KEYS = frozenset(SCHEMA["meta_keys"])
MAX_REF_DEPTH: int = SCHEMA["max_ref_depth"]
WRAPPED: str = SCHEMA["wrapped"]
PAGE_PREFIX = "page_"
"""What a page tool's model name starts with when its own name is one an MCP server's tool claims."""
_NOT_ALLOWED = re.compile(NAMES["not_allowed"])

MODEL_STEPS: dict[str, str] = {
    "see_arguments": "The page did not see the call; the tool's parameters show every argument.",
    "see_server_arguments": "MCP server {server} did not see the call; the tool's parameters show every argument.",
    "wait_for_tool": "If the page registers it later, it will be among your tools then.",
    "no_tools_yet": "This page registers no tools (yet).",
    "longer_timeout": "The page may still be running it (this call had {limit:g} s).",
    "check_page": "It may or may not have taken effect: check the page before calling again.",
    "relist": "It was not called: the page changed since it offered the tool.",
}
"""The next step of an error (``WebMCPError.hint``) in a model's words: the model has its tools, not the notebook's
objects. A step only the user can take (relaunch, reconnect…) has none: the model is told what went wrong."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool offered to the model."""

    model_name: str
    tool: Tool | MCPTool
    function: dict[str, Any]
    wrapped: bool
    """The page's schema was not an object: the model fills ``{"input": ...}`` and the page gets the value."""

    def page_arguments(self, arguments: dict[str, Any]) -> Any:
        return arguments.get(WRAPPED) if self.wrapped else arguments

    @property
    def tool_name(self) -> str:
        """What events and confirmations call the tool: the page's name, or ``<server>.<tool>`` for an MCP tool."""
        return str(getattr(self.tool, "qualified_name", self.tool.name))


def model_name(name: str, taken: Container[str], limit: int = NAMES["max_length"]) -> str:
    """``name`` made to fit ``^[a-zA-Z0-9_-]{1,64}$`` (what most providers accept), unique in ``taken``; ``limit``
    cuts it shorter (MCP clients add their own prefix to a server's tool names)."""
    base = _NOT_ALLOWED.sub(NAMES["replacement"], name)[:limit] or NAMES["fallback"]
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = base[: limit - len(suffix)] + suffix, n + 1
    return str(candidate)


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
        return _resolve(merged, root, depth + 1)
    return {k: _resolve(v, root, depth) for k, v in node.items() if k not in META_KEYS}


def _lookup(root: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        return None  # remote references are not fetched
    node: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def tool_specs(tools: Iterable[Tool | MCPTool]) -> dict[str, ToolSpec]:
    """Function specs for ``tools`` (page tools, and MCP servers' tools as ``<server>_<tool>``), by the name the
    model will use, in the order given. MCP servers' tools take their names first: a page tool never takes a name
    one of them claims (it is then ``page_<name>``), so the name a model calls says whose tool runs. Each
    description says where the tool comes from (its frame's origin, or its server)."""
    tools = list(tools)
    names: dict[int, str] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            names[i] = model_name(tool.qualified_name, set(names.values()))
    claimed = set(names.values())
    for i, tool in enumerate(tools):
        if isinstance(tool, Tool):
            own = model_name(tool.name, ()) not in claimed
            names[i] = model_name(tool.name if own else PAGE_PREFIX + tool.name, set(names.values()))
    specs: dict[str, ToolSpec] = {}
    for i, tool in enumerate(tools):
        parameters, wrapped = normalize_schema(tool.input_schema)  # an override's, when there is one
        untrusted = tool.annotations.get("untrustedContentHint") is True
        description = description_for_model(
            tool.description, tool.title, tool.name, tool.risk, untrusted, tool.provenance
        )
        function = {"name": names[i], "description": description, "parameters": parameters}
        specs[names[i]] = ToolSpec(names[i], tool, function, wrapped)
    return specs


def specs_text(specs: dict[str, ToolSpec]) -> str:
    """The tools as text, for prompt mode."""
    return "\n".join(
        f"- {s.model_name}: {s.function['description']}\n  parameters: {json.dumps(s.function['parameters'])}"
        for s in specs.values()
    )


def error_text(exc: WebMCPError) -> str:
    """A failed call as the model reads it: the error's code, what went wrong and the next step in its words."""
    return fill(TEXTS["tool_error"], code=exc.code.value, message=exc.worded(MODEL_STEPS))
