"""A form generated from a JSON Schema: one widget per property (strings, numbers, booleans, enums, arrays,
nested objects), and a JSON editor as the fallback for anything else or for pasting arguments whole.

The schema is the page's: its property names, descriptions and enum values are data. They go into text-only
traits (descriptions, tooltips, placeholders, option labels) with bidi controls made visible, and into HTML only
escaped (:func:`webmcp_nb.core.display.escape`)."""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as W

from ..core.display import escape, visible

__all__ = ["SchemaForm"]

LAYOUT = W.Layout(width="auto", min_width="0")
"""Fields stretch to the form's width: ``100%`` plus ipywidgets' margins would run past the output area."""
STYLE = {"description_width": "9em"}


class _Field:
    """One property: its widget, and how to read a value out of it (``None``: left empty)."""

    def __init__(self, name: str, schema: dict[str, Any], required: bool) -> None:
        self.name, self.schema, self.required = name, schema, required
        kind = schema.get("type")
        label = visible(name + ("*" if required else ""))
        tip = visible(schema.get("description", ""))
        if isinstance(schema.get("enum"), list):
            options = [("", None)] + [(visible(v if isinstance(v, str) else json.dumps(v)), v) for v in schema["enum"]]
            self.widget = W.Dropdown(options=options, description=label, tooltip=tip, layout=LAYOUT, style=STYLE)
            self.read = lambda: self.widget.value
        elif kind == "boolean":
            options = [("", None), ("true", True), ("false", False)]
            self.widget = W.Dropdown(options=options, description=label, tooltip=tip, layout=LAYOUT, style=STYLE)
            self.read = lambda: self.widget.value
        elif kind == "object" and isinstance(schema.get("properties"), dict):
            self.form = SchemaForm(schema, title=name + ("*" if required else ""))
            self.widget = self.form
            self.read = lambda: self.form.value or None
        else:
            hint = {
                "array": "JSON list, e.g. [0, 1]",
                "object": "JSON object",
                "integer": "a whole number",
                "number": "a number",
            }.get(kind or "", "")
            self.widget = W.Text(description=label, placeholder=tip or hint, tooltip=tip, layout=LAYOUT, style=STYLE)
            self.read = lambda: _parse(self.widget.value, kind)


def _parse(text: str, kind: str | None) -> Any:
    text = text.strip()
    if not text:
        return None
    if kind == "string":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # the schema check names the field if this is wrong


class SchemaForm(W.VBox):
    """``SchemaForm(schema).value`` is the arguments dict (empty optional fields left out)."""

    def __init__(self, schema: dict[str, Any] | None, title: str = "") -> None:
        schema = schema or {}
        props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        required = set(schema.get("required") or [])
        self.fields = [
            _Field(n, p if isinstance(p, dict) else {}, n in required)
            for n, p in sorted(props.items(), key=lambda item: item[0] not in required)
        ]
        editor = W.Layout(width="auto", min_width="0", height="8em")
        self.editor = W.Textarea(placeholder='{"name": "value"}', layout=editor)
        self.as_json = W.ToggleButton(
            description="JSON",
            tooltip="edit the arguments as JSON",
            value=not self.fields and bool(props or schema.get("type") != "object"),
        )
        self.as_json.observe(self._switch, names="value")
        self._header = [W.HTML(f"<b>{escape(title)}</b>")] if title else []
        super().__init__([*self._header, self.as_json, self._body()], layout=LAYOUT)

    def _body(self) -> W.Widget:
        return self.editor if self.as_json.value else W.VBox([f.widget for f in self.fields], layout=LAYOUT)

    def _switch(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.editor.value = json.dumps(self._from_fields(), indent=1)
        self.children = (*self._header, self.as_json, self._body())

    def _from_fields(self) -> dict[str, Any]:
        values = {f.name: f.read() for f in self.fields}
        return {k: v for k, v in values.items() if v is not None}

    @property
    def value(self) -> dict[str, Any]:
        if self.as_json.value:
            text = self.editor.value.strip()
            return json.loads(text) if text else {}
        return self._from_fields()

    def fill(self, values: dict[str, Any]) -> None:
        """Put ``values`` into the form (what a user would type)."""
        for field in self.fields:
            if field.name not in values:
                continue
            value = values[field.name]
            if isinstance(field.widget, SchemaForm):
                field.widget.fill(value)
            elif isinstance(field.widget, W.Dropdown):
                field.widget.value = value
            else:
                field.widget.value = value if isinstance(value, str) else json.dumps(value)
