"""The DevTools protocol's WebMCP shapes in the relay's words: a ``WebMCP.Tool`` as the relay mirrors a tool
(bounded as the extension's mirror bounds it, with the frame, document and origin the browser names, never the
page), and a ``WebMCP.toolResponded`` as a call's result text or error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..link.protocol import ErrorCode, error_body

__all__ = ["Frame", "wire_tool", "listed_tool", "result_text", "failure", "MAX_TOOLS", "MAX_FRAME_CHARS"]

# What the relay keeps of one frame, as extension/worker/mirror.js keeps it: pages are untrusted.
MAX_TOOLS = 50_000
MAX_FRAME_CHARS = 16_000_000
MAX_NAME = 128
MAX_TITLE = 200
MAX_DESCRIPTION_CHARS = 8_000
MAX_SCHEMA_CHARS = 200_000
TOO_LARGE = {"type": "object", "description": "The schema was too large to mirror."}

ANNOTATIONS = {
    "readOnly": "readOnlyHint",
    "untrustedContent": "untrustedContentHint",
    "consequential": "consequentialHint",
    "debugging": "debugging",
}
"""The protocol's annotation names → the names pages register (and ``getTools()`` gives back). ``autosubmit`` (a
declarative form's) is not one of them: the extension's listing never shows it either."""
PROTOCOL_ANNOTATIONS = {page: protocol for protocol, page in ANNOTATIONS.items()}


@dataclass
class Frame:
    """A frame of a tab as the DevTools protocol shows it, and the tools its current document registered."""

    id: str
    """The protocol's frame id."""
    number: int
    """The frame id its tools carry: 0 for the tab's top frame, then in the order frames were first seen."""
    session: str
    """The session that reports it (a cross-origin iframe has a session of its own)."""
    parent: str | None = None
    document: str | None = None
    """The protocol's ``loaderId`` of the document it shows; ``None`` until the browser said."""
    url: str = ""
    origin: str | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Its document's tools by name, as the relay mirrors them, in the order they joined."""
    sizes: dict[str, int] = field(default_factory=dict)
    left_out: set[str] = field(default_factory=set)
    """Names of its document's tools past the bounds: counted, not mirrored (still callable by name)."""
    arrived: set[str] = field(default_factory=set)
    """Names that arrived since the frame last started navigating: a document restored from the back/forward cache
    announces its tools just before the navigation commits."""
    changes: int = 0
    """Changes to its tools so far (a call that saw the count move changed them)."""
    world: int | None = None
    """The execution context of its isolated world, where titles are read (``None``: not made for this document)."""
    untitled: set[str] = field(default_factory=set)
    """Names its document registered without a title when last read: registered again, they are shown at once (and
    their titles read again after)."""
    unordered: set[str] = field(default_factory=set)
    """Names whose place among its tools is not known yet: the browser reported them all at once, sorted by name."""
    listing: set[str] | None = None
    """While its tools are read from the frame itself (``None`` otherwise): names removed meanwhile, which the
    listing may still show."""
    chars: int = 0

    @property
    def omitted(self) -> int:
        return len(self.left_out)

    def put(self, name: str, tool: dict[str, Any], size: int) -> bool:
        """Keep ``tool`` (in place of one of that name) if the frame stays within its bounds; else leave it out."""
        self.drop(name)
        if self.chars + size > MAX_FRAME_CHARS or len(self.tools) >= MAX_TOOLS:
            self.left_out.add(name)
            return False
        self.tools[name], self.sizes[name] = tool, size
        self.chars += size
        return True

    def drop(self, name: str) -> bool:
        """Forget ``name``; whether it was mirrored."""
        self.left_out.discard(name)
        self.unordered.discard(name)
        if self.tools.pop(name, None) is None:
            return False
        self.chars -= self.sizes.pop(name)
        return True

    def clear(self) -> list[str]:
        """Forget the document: its tools' names."""
        gone = list(self.tools)
        self.tools, self.sizes, self.left_out, self.chars, self.world = {}, {}, set(), 0, None
        self.untitled, self.unordered = set(), set()
        return gone


def wire_tool(raw: Any, frame: Frame) -> tuple[dict[str, Any], int] | None:
    """A ``WebMCP.Tool`` as the relay mirrors it (``ToolInfo``'s wire shape) and its size, labelled with what the
    browser says of its frame; ``None`` when it is not a tool at all."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not 0 < len(raw["name"]) <= MAX_NAME:
        return None
    schema = raw.get("inputSchema") if isinstance(raw.get("inputSchema"), dict) else None
    schema_chars = len(json.dumps(schema)) if schema is not None else 4
    if schema_chars > MAX_SCHEMA_CHARS:
        schema, schema_chars = dict(TOO_LARGE), 60
    description = str(raw.get("description") or "")[:MAX_DESCRIPTION_CHARS]
    marks: dict[str, Any] = raw["annotations"] if isinstance(raw.get("annotations"), dict) else {}
    tool = {
        "name": raw["name"],
        "description": description,
        "inputSchema": schema,
        "annotations": {ANNOTATIONS[k]: v for k, v in marks.items() if k in ANNOTATIONS and isinstance(v, bool)},
        "source": "native",
        "frameId": frame.number,
        "frameUrl": frame.url,
        "documentId": frame.document,
        "origin": frame.origin,
    }
    size = schema_chars + len(description) + len(raw["name"]) + len(frame.url) + 200
    return tool, size


def listed_tool(listed: Any, frame_id: str) -> dict[str, Any] | None:
    """A tool as the frame's own ``getTools()`` lists it, in the protocol's ``WebMCP.Tool`` shape (for
    :func:`wire_tool`) with its ``title`` (which the protocol's lacks); ``None`` when it is not a tool at all."""
    if not isinstance(listed, dict) or not isinstance(listed.get("name"), str):
        return None
    marks: dict[str, Any] = listed["annotations"] if isinstance(listed.get("annotations"), dict) else {}
    return {
        "name": listed["name"],
        "title": str(listed.get("title") or "")[:MAX_TITLE],
        "description": listed.get("description"),
        "inputSchema": listed.get("inputSchema"),
        "annotations": {PROTOCOL_ANNOTATIONS[k]: v for k, v in marks.items() if k in PROTOCOL_ANNOTATIONS},
        "frameId": frame_id,
    }


def result_text(output: Any) -> str:
    """A result's text as the page's bridge gives it: the tool's JSON text (the protocol hands it over parsed), or
    the tool's own string when it was not JSON."""
    if isinstance(output, str):
        if output[:1] not in _JSON_STARTS:
            return output
        try:
            json.loads(output)
        except ValueError:
            return output  # the tool's own text
        return json.dumps(output, ensure_ascii=False)  # a JSON string whose content is JSON again: keep it a string
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


_JSON_STARTS = frozenset('{["-0123456789tfn \t\r\n')


def failure(response: dict[str, Any]) -> dict[str, Any]:
    """A failed ``toolResponded`` as the bridge words a throw: the page's own message, and the error's name."""
    exception: dict[str, Any] = response["exception"] if isinstance(response.get("exception"), dict) else {}
    name, message = "Error", ""
    if exception.get("subtype") == "error":
        name = str(exception.get("className") or "Error")
        message = _message(str(exception.get("description") or ""), name)
    elif "value" in exception:
        value = exception["value"]
        message = value if isinstance(value, str) else json.dumps(value)
    elif exception.get("description"):
        message = str(exception["description"])
    if not message:
        message = str(response.get("errorText") or "Tool failed")
    return error_body(ErrorCode.TOOL_ERROR, message, {"name": name})


def _message(description: str, name: str) -> str:
    """An error's message from V8's description of it (``TypeError: bad thing\\n    at …``): the stack left out."""
    lines = description.split("\n")
    kept: list[str] = []
    for line in lines:
        if line.startswith("    at ") and kept:
            break
        kept.append(line)
    text = "\n".join(kept)
    for prefix in (f"{name}: ", "Error: "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return "" if text == name else text
