"""Page tools as Python objects: ``Tool`` (callable, with a signature from its schema), the live
``ToolMap`` a tab exposes, and ``ToolResult``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .agent_rules import Risk, risk_of
from .display import Markup, clip, escape, pre_json, pretty_json, table
from .protocol import ToolInfo
from .schema import signature_from_schema

if TYPE_CHECKING:
    from .browser import Tab

__all__ = ["Tool", "ToolMap", "ToolResult", "risk_label"]


def risk_label(risk: str) -> str:
    """A risk as views show it: ``read-only``, ``medium risk`` or ``high risk``."""
    return "read-only" if risk == "low" else f"{risk} risk"


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned. ``text`` is the page's text; ``value`` is it parsed when it is JSON."""

    tool: str
    text: str
    duration_ms: float
    frame_id: int = 0
    value: Any = field(init=False)

    def __post_init__(self) -> None:
        try:
            value = json.loads(self.text)
        except ValueError:
            value = self.text
        object.__setattr__(self, "value", value)

    @property
    def is_error(self) -> bool:
        """True when the tool reported a failure in its result (MCP style ``{"isError": true}``)."""
        return isinstance(self.value, dict) and self.value.get("isError") is True

    def __repr__(self) -> str:
        return f"ToolResult({self.tool!r}, {self.duration_ms:.1f} ms, value={clip(repr(self.value), 200)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        status = "error" if self.is_error else "ok"
        head = f"{self.tool} → {status} in {self.duration_ms:.1f} ms"
        bundle: dict[str, Any] = {
            "text/plain": f"{head}\n{pretty_json(self.value, 4000)}",
            "text/html": f"<div><b>{escape(head)}</b>{pre_json(self.value)}</div>",
        }
        return bundle


class Tool:
    """One tool of a tab. Call it with keyword arguments: ``tab.tools["searchFlights"](origin="LON", ...)``."""

    def __init__(self, tab: Tab, info: ToolInfo) -> None:
        self._tab = tab
        self.info = info
        try:
            self.__signature__ = signature_from_schema(info.input_schema)
        except (TypeError, ValueError):  # a page's schema must never make its tab unusable
            self.__signature__ = inspect.Signature()
        self.__doc__ = self._doc()
        schema_text = json.dumps(info.input_schema or {})
        self.has_pattern = '"pattern"' in schema_text or '"patternProperties"' in schema_text
        """Whether the schema holds a regular expression (checked off the library's loop, with a time limit)."""

    name = property(lambda self: self.info.name, doc="The tool's name as the page registered it.")
    title = property(lambda self: self.info.title)
    description = property(lambda self: self.info.description)
    input_schema = property(lambda self: self.info.input_schema or {"type": "object", "properties": {}})
    annotations = property(lambda self: dict(self.info.annotations))
    source = property(lambda self: self.info.source, doc="native, polyfill, or the name of a skill")
    frame_id = property(lambda self: self.info.frame_id)

    @property
    def read_only(self) -> bool:
        """True when the page marked the tool ``readOnlyHint``: calling it changes nothing."""
        return self.info.annotations.get("readOnlyHint") is True

    @property
    def risk(self) -> Risk:
        """``low`` (read-only), ``medium`` (changes the page; the default) or ``high`` (``destructiveHint`` or
        ``consequentialHint``, or declared ``risk: "high"``): what agents' confirmation policies go by."""
        return risk_of(self.info.annotations)

    @property
    def risk_label(self) -> str:
        """The risk as views show it: ``read-only``, ``medium risk`` or ``high risk``."""
        return risk_label(self.risk)

    def __call__(self, **kwargs: Any) -> ToolResult:
        return self._tab.call(self.name, kwargs, frame=self.frame_id)

    async def acall(self, **kwargs: Any) -> ToolResult:
        return await self._tab.acall(self.name, kwargs, frame=self.frame_id)

    def _doc(self) -> str:
        lines = [self.info.description or self.info.name, ""]
        props = (self.info.input_schema or {}).get("properties") or {}
        required = set((self.info.input_schema or {}).get("required") or [])
        for name, prop in props.items():
            prop = prop if isinstance(prop, dict) else {}
            kind = prop.get("type", "any")
            need = "required" if name in required else "optional"
            lines.append(f"{name} ({kind}, {need}): {prop.get('description', '')}".rstrip(": "))
        return "\n".join(lines).strip()

    def __repr__(self) -> str:
        return f"<Tool {self.name}{self.__signature__} [{self.source}, {self.risk_label}]>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        marks = [self.source, self.risk_label] + ([f"frame {self.frame_id}"] if self.frame_id else [])
        body = (
            f"<div><b>{escape(self.name)}</b> <i>({escape(', '.join(marks))})</i>"
            f"<div>{escape(self.description)}</div>"
            f"<details><summary>input schema</summary>{pre_json(self.input_schema)}</details></div>"
        )
        return {"text/plain": f"{self!r}\n{self.__doc__}", "text/html": body}


class ToolMap(Mapping[str, Tool]):
    """A live, read-only view of a tab's tools: it always reflects the tab's current mirror.

    When two frames register the same name, the top frame's tool is the one under that name.
    """

    def __init__(self, tab: Tab) -> None:
        self._tab = tab

    def _current(self) -> dict[str, Tool]:
        return self._tab._tool_objects()

    def __getitem__(self, name: str) -> Tool:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return f"ToolMap({', '.join(self._current()) or 'no tools'})"

    def _rows(self) -> list[list[Any]]:
        return [
            [
                Markup(f"<code>{escape(t.name)}</code>"),
                t.source,
                "yes" if t.read_only else "",
                t.frame_id or "",
                clip(t.description, 160),
            ]
            for t in self._current().values()
        ]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        tools = self._current()
        caption = f"{len(tools)} tools on {self._tab.url}"
        lines = [caption] + [
            f"  {t.name:<24} {t.source:<9} {'read-only' if t.read_only else '':<9} {clip(t.description, 70)}"
            for t in tools.values()
        ]
        html_table = table(["name", "source", "read-only", "frame", "description"], self._rows(), caption)
        return {"text/plain": "\n".join(lines), "text/html": html_table}
