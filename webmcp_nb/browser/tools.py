"""Page tools as Python objects: ``Tool`` (callable, with a signature from its schema), the live
``ToolMap`` a tab exposes, ``ToolResult``, and ``TabTools``, the tab's mirror they are made from.

A tool's ``description``, ``title`` and ``input_schema`` are what models and views are shown: the page's own, or a
local override (``tab.tools.override``, :mod:`webmcp_nb.browser.overrides`); ``tool.info`` is always the page's."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..core._loop import blocking, on_loop
from ..core.agent_rules import Risk, provenance, risk_of
from ..core.display import Markup, clip, escape, pre_json, pretty_json, table, visible
from ..core.events import origin
from ..link.protocol import ToolChanges, ToolInfo, ToolKey, apply_tool_changes, tool_group
from .overrides import Overrides, ToolOverride, check_fields, schema_differences
from .schema import call_arguments, describe_property, has_pattern, signature_from_schema

if TYPE_CHECKING:
    from .tab import Tab

__all__ = ["Tool", "ToolMap", "ToolResult", "TabTools", "ToolsOmittedWarning", "risk_label"]

T = TypeVar("T")


class ToolsOmittedWarning(UserWarning):
    """A page has more tools than the mirror keeps of a frame (see docs/security.md); the rest are still callable
    by name."""


def risk_label(risk: str) -> str:
    """A risk as views show it: ``read-only``, ``medium risk`` or ``high risk``."""
    return "read-only" if risk == "low" else f"{risk} risk"


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned. ``text`` is the page's text; ``value`` is it parsed when it is JSON;
    ``tools_changed`` says the page's tools changed while it ran (the call returns once ``tab.tools`` has them)."""

    tool: str
    text: str
    duration_ms: float
    frame_id: int = 0
    tools_changed: bool = False
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
            "text/plain": visible(f"{head}\n{pretty_json(self.value, 4000)}"),
            "text/html": f"<div><b>{escape(head)}</b>{pre_json(self.value)}</div>",
        }
        return bundle


class _Help:
    """``Tool.__doc__``: the class's docstring on the class; on a tool, its help (``Tool._doc``), made when first
    read: building it for each of a page's thousands of tools would cost more than the rest of a ``Tool``."""

    def __init__(self, doc: str) -> None:
        self.doc = doc

    def __get__(self, tool: Tool | None, owner: type | None = None) -> str:
        if tool is None:
            return self.doc
        if tool._help is None:
            tool._help = tool._doc()
        return tool._help


class Tool:
    __doc__ = _Help(
        """One tool of a tab. Call it with keyword arguments: ``tab.tools["searchFlights"](origin="LON", ...)``."""
    )

    def __init__(self, tab: Tab, info: ToolInfo, override: ToolOverride | None = None) -> None:
        self._tab = tab
        self.info = info
        """The tool as the page registered it (an override never changes it)."""
        self.override = override
        """The local override models and views are shown instead of the page's text, or ``None``."""
        try:
            self.__signature__ = signature_from_schema(self.input_schema)
        except (TypeError, ValueError):  # a page's schema must never make its tab unusable
            self.__signature__ = inspect.Signature()
        self._help: str | None = None
        self.has_pattern = has_pattern(info.input_schema)
        """Whether the page's schema holds a regular expression (checked off the library's loop, with a time
        limit)."""

    @property
    def differences(self) -> list[str]:
        """Where an overriding schema tells models something the page's own schema does not take (calls are
        checked against the page's); empty without one."""
        if self.override is None or self.override.input_schema is None:
            return []
        return schema_differences(self.info.input_schema, self.override.input_schema)

    def _shown(self, key: str) -> Any:
        value = getattr(self.override, key) if self.override is not None else None
        return getattr(self.info, key) if value is None else value

    name = property(lambda self: self.info.name, doc="The tool's name as the page registered it.")
    title = property(
        lambda self: self._shown("title"), doc="The title models are shown (an override's, or the page's)."
    )
    description = property(
        lambda self: self._shown("description"), doc="The description models are shown (an override's, or the page's)."
    )
    input_schema = property(
        lambda self: self._shown("input_schema") or {"type": "object", "properties": {}},
        doc="The input schema models are shown; calls are checked against the page's own (``tool.info``).",
    )
    annotations = property(lambda self: dict(self.info.annotations))
    source = property(lambda self: self.info.source, doc="native, polyfill, or the name of a skill")
    frame_id = property(lambda self: self.info.frame_id)
    origin = property(
        lambda self: self.info.origin,
        doc="The origin of the frame that registered it (an iframe's may differ from the page's own); ``None`` when "
        "the browser did not say.",
    )

    @property
    def provenance(self) -> str:
        """Where the tool comes from, as views, confirmations and the model say it: its frame's origin, marked
        when that is not the page's own (``a frame of http://b, not the page's own origin (http://a)``)."""
        return provenance(self.info.origin, self._tab.origin)

    @property
    def cross_origin(self) -> bool:
        """True when the frame that registered it has another origin than the page's own (an iframe's tool)."""
        return bool(self.info.origin and self._tab.origin and self.info.origin != self._tab.origin)

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

    @on_loop
    async def acall(self, arguments: dict[str, Any] | None = None, /, **kwargs: Any) -> ToolResult:
        """Call the tool with keyword arguments, or a dict of them (for names that are not identifiers), checked
        against its schema first, in its own frame and only in the document that registered it: after the page
        changed, ``StaleToolError`` (take it from ``tab.tools`` again)."""
        return await self._tab.acall(self, call_arguments(self.name, arguments, kwargs, "tab.tools"))

    call = blocking(acall)
    __call__ = call

    def _doc(self) -> str:
        """What ``help(tool)`` shows: the call, the page's description, and every argument in words."""
        name = visible(self.info.name)
        lines = [f"{name}{self.__signature__}", ""]
        lines += [*textwrap.wrap(visible(self.description or "(no description)"), 100), ""]
        lines.append(f"Source: {visible(self.info.source)} · {self.risk_label} · from {self.provenance or '?'}")
        if self.override is not None:
            lines.append(_overridden_text(self))
        schema = self.input_schema
        props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
        if props:
            lines += ["", "Arguments (* required):"]
            order = sorted(props, key=lambda n: n not in required)
            width = min(max(len(visible(n)) + 1 for n in order), 24)
            for arg in order:
                label = visible(arg) + ("*" if arg in required else "")
                prop = props[arg] if isinstance(props[arg], dict) else {}
                lines.append(f"  {label:<{width}}  {describe_property(prop)}")
                about = prop.get("description")
                if isinstance(about, str) and about:
                    lines += [f"  {'':<{width}}  {line}" for line in textwrap.wrap(visible(clip(about, 600)), 90)]
        else:
            lines += ["", "No arguments."]
        lines += ["", f"Call it: tab.tools[{self.info.name!r}](...) or tab.call({self.info.name!r}, {{...}})"]
        return "\n".join(lines)

    def __repr__(self) -> str:
        marks = [self.source, self.risk_label, f"from {self.provenance or '?'}"]
        marks += ["overridden"] if self.override is not None else []
        return f"<Tool {self.name}{self.__signature__} [{', '.join(marks)}]>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        marks = [self.source, self.risk_label] + ([f"frame {self.frame_id}"] if self.frame_id else [])
        marks.append(f"from {self.provenance or '?'}")
        marks += [_overridden_text(self)] if self.override is not None else []
        schema = self.input_schema
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        rows = [
            [
                Markup(f"<code>{escape(name)}</code>{'*' if name in required else ''}"),
                describe_property(prop),
                clip(str(prop.get("description", "")) if isinstance(prop, dict) else "", 300),
            ]
            for name, prop in sorted(props.items(), key=lambda item: item[0] not in required)
        ]
        arguments = table(["argument (* required)", "takes", "description"], rows) if rows else "<i>no arguments</i>"
        body = (
            f"<div><b>{escape(self.name)}</b> <i>({escape(', '.join(marks))})</i>"
            f"<div>{escape(self.description)}</div>{arguments}"
            f"<details><summary>input schema</summary>{pre_json(self.input_schema)}</details></div>"
        )
        return {"text/plain": self.__doc__, "text/html": body}


def _overridden_text(tool: Tool) -> str:
    assert tool.override is not None
    differences = tool.differences
    differs = f"; its schema differs from the page's: {'; '.join(differences)}" if differences else ""
    return (
        f"Overridden here ({', '.join(tool.override.fields)}): models and views see the override, calls reach the "
        f"page's own tool, checked against its own schema (tool.info){differs}"
    )


def _group(info: ToolInfo) -> tuple[int, int]:
    return tool_group(info.source, info.frame_id)


class TabTools:
    """A tab's tools as the relay reports them: their ``ToolInfo`` by key, in the mirror's order, and a ``Tool``
    made for a key when first asked for, so neither listing thousands of tools nor a change to one of them
    makes thousands of ``Tool`` objects.

    The loop thread replaces ``infos`` with a new dict on each change (never edits it), so the notebook's
    thread can read and iterate it at any time; caches are keyed by the dict or the ``ToolInfo`` they came from.
    """

    def __init__(self, tab: Tab) -> None:
        self._tab = tab
        self.infos: dict[ToolKey, ToolInfo] = {}
        self._made: dict[ToolKey, Tool] = {}
        self._names: tuple[dict[ToolKey, ToolInfo], dict[str, ToolKey]] = (self.infos, {})
        self.overrides: dict[str, ToolOverride] = {}
        """Local overrides by tool name (replaced, never edited, like ``infos``)."""

    def replace(self, infos: list[ToolInfo]) -> tuple[list[str], list[str]]:
        """Take the whole list; returns the names added and removed."""
        keyed: dict[ToolKey, ToolInfo] = {}
        for info in infos:
            keyed.setdefault((info.frame_id, info.name), info)
        before, self.infos, self._made = self.infos, keyed, {}
        return [key[1] for key in keyed if key not in before], [key[1] for key in before if key not in keyed]

    def apply(self, changes: ToolChanges) -> tuple[list[str], list[str]]:
        """Take what changed since the last report; returns the names added and removed."""
        removed, order, before = changes.removed, changes.order, self.infos
        upserted = [((info.frame_id, info.name), info) for info in changes.upserted]
        gone = [key for key in removed if key in before]
        new = [key for key, _ in upserted if key not in before or key in gone]
        for key in removed:
            self._made.pop(key, None)
        after = self.infos = apply_tool_changes(dict(before), removed, upserted, _group, order)
        return [key[1] for key in new if key in after], [key[1] for key in gone if key not in after]

    def names(self) -> dict[str, ToolKey]:
        """Each name's key: the first in the tab's order (the top frame's, when frames share a name)."""
        infos = self.infos
        built, names = self._names
        if built is not infos:
            names = {}
            for key in infos:
                names.setdefault(key[1], key)
            self._names = (infos, names)
        return names

    def first_names(self, n: int) -> list[str]:
        """The first ``n`` names in the tab's order, without the index of every name (events say at most a few; a
        page that registers 10,000 tools changes its list hundreds of times)."""
        names: dict[str, None] = {}
        for key in self.infos:
            if len(names) >= n:
                break
            names.setdefault(key[1], None)
        return list(names)

    def get(self, key: ToolKey) -> Tool | None:
        info = self.infos.get(key)
        if info is None:
            return None
        tool = self._made.get(key)
        override = self.overrides.get(key[1])
        if tool is None or tool.info is not info or tool.override is not override:
            tool = self._made[key] = Tool(self._tab, info, override)
        return tool

    def set_override(self, name: str, fields: dict[str, Any]) -> ToolOverride:
        """Override ``name``'s text (the fields already checked)."""
        override = ToolOverride(name, **fields)
        self.overrides = {**self.overrides, name: override}
        return override

    def clear_overrides(self, names: list[str]) -> list[str]:
        """Drop the overrides of ``names``; returns those that were set."""
        gone = [name for name in names if name in self.overrides]
        self.overrides = {k: v for k, v in self.overrides.items() if k not in gone}
        return gone

    def named(self, name: str) -> Tool | None:
        """The tool listed under ``name``."""
        key = self.names().get(name)
        return None if key is None else self.get(key)

    def __len__(self) -> int:
        return len(self.infos)


class ToolMap(Mapping[str, Tool]):
    """A live, read-only view of a tab's tools: it always reflects the tab's current mirror.

    When two frames register the same name, the top frame's tool is the one under that name.
    """

    def __init__(self, tab: Tab) -> None:
        self._tab = tab

    def __getitem__(self, name: str) -> Tool:
        tool = self._tab._tools.named(name)
        if tool is None:
            raise self._tab._missing(name, None)
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tab._tools.names()

    @overload
    def get(self, name: str, /) -> Tool | None: ...
    @overload
    def get(self, name: str, /, default: Tool | T) -> Tool | T: ...
    def get(self, name: str, /, default: Any = None) -> Any:
        """The tool named ``name``, or ``default`` (without building the error ``tools[name]`` raises)."""
        tool = self._tab._tools.named(name)
        return default if tool is None else tool

    def __iter__(self) -> Iterator[str]:
        return iter(self._tab._tools.names())

    def __len__(self) -> int:
        return len(self._tab._tools.names())

    def every_frame(self) -> list[Tool]:
        """Every tool the tab lists, in its order, one per frame that registered it: where two frames register
        the same name, ``tools[name]`` is the top frame's and this has both."""
        tools = self._tab._tools
        return [tool for key in list(tools.infos) if (tool := tools.get(key)) is not None]

    def override(
        self,
        name: str,
        *,
        description: str | None = None,
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        missing_ok: bool = False,
    ) -> ToolOverride:
        """Show models and views ``description``, ``title`` and/or ``input_schema`` for tool ``name`` instead of
        the page's own, in this tab (whatever page it shows next) until ``clear_overrides``. Calls still reach the
        page's tool and are checked against the schema the page registered; where the two schemas differ, the
        differences are named (``tool.differences``, in views, and in the error of a call the page's schema
        refuses). ``missing_ok``: the page registers ``name`` later (else a name the tab does not list is an
        error)."""
        tools = self._tab._tools
        fields = check_fields(name, {"description": description, "title": title, "input_schema": input_schema})
        if not missing_ok and tools.named(name) is None:
            raise self._tab._missing(name, None)
        found = tools.set_override(name, fields)
        listed = tools.named(name)
        self._tab.browser.events.emit(
            "override.set", tab_id=self._tab.id, url=self._tab.url, tool=name, fields=fields,
            differences=listed.differences if listed is not None else [], origin=origin(),
        )  # fmt: skip
        return found

    @property
    def overrides(self) -> Overrides:
        """The tab's overrides by tool name (see ``override``), with where each one's schema and the page's
        differ."""
        tools = self._tab._tools
        listed = {name: tools.named(name) for name in tools.overrides}
        return Overrides(tools.overrides, {n: t.differences if t is not None else None for n, t in listed.items()})

    def clear_overrides(self, *names: str) -> list[str]:
        """Drop the overrides of ``names`` (all of them when none is named); returns the names cleared. Models and
        views see the page's own text again."""
        tools = self._tab._tools
        gone = tools.clear_overrides(list(names) or list(tools.overrides))
        if gone:
            self._tab.browser.events.emit(
                "override.cleared", tab_id=self._tab.id, url=self._tab.url, tools=gone, origin=origin()
            )
        return gone

    @property
    def omitted(self) -> int:
        """How many tools the page has that the mirror left out (its frames are over the mirror's bounds). They
        are not in this mapping, and ``tab.call(name)`` still reaches them."""
        return self._tab._info.tools_omitted

    def _omitted_text(self) -> str:
        n = self.omitted
        return f"{n:,} more left out of the mirror (over its bounds per frame); call them by name" if n else ""

    def __repr__(self) -> str:
        names = ", ".join(self) or "no tools"
        more = self._omitted_text()
        return visible(f"ToolMap({names}{'; ' + more if more else ''})")

    def _rows(self) -> list[list[Any]]:
        return [
            [
                Markup(f"<code>{escape(t.name)}</code>" + (" <i>(overridden)</i>" if t.override is not None else "")),
                t.source,
                t.risk_label,
                t.frame_id or "",
                t.provenance,
                clip(t.description, 160),
            ]
            for t in self.values()
        ]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        tools = dict(self)
        more = self._omitted_text()
        caption = f"{len(tools)} tools on {self._tab.url}" + (f" ({more})" if more else "")
        lines = [caption] + [
            f"  {t.name:<24} {t.source:<9} {t.risk_label:<11} {clip(t.description, 70)}"
            + (f" [in {t.provenance}]" if t.cross_origin else "")
            for t in tools.values()
        ]
        html_table = table(["name", "source", "risk", "frame", "from", "description"], self._rows(), caption)
        return {"text/plain": visible("\n".join(lines)), "text/html": html_table}
