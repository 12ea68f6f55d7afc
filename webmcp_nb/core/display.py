"""Small HTML helpers for rich reprs: escaped, bounded, no scripts, no network."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Container, Iterable, Sequence
from typing import Any

__all__ = ["table", "pre_json", "clip", "pretty_json", "escape", "visible", "json_or_text"]

INVISIBLE = re.compile(
    "[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\r(?!\n)"
)
"""What ``visible`` shows by its code: bidi controls (U+202E shows ``exe.txt`` for ``txt.exe``), the control
characters a terminal obeys (ESC, which starts ANSI and OSC sequences, their one-byte C1 forms, a carriage return
that ends no line, backspace, bell…), and lone surrogates (a page's JavaScript string may hold one; no output
encodes it, so printing it would raise); tabs and line ends stay."""

STYLE = "border-collapse:collapse;font-size:12px;text-align:left"
CELL = "padding:2px 8px;border-bottom:1px solid #ddd;vertical-align:top;text-align:left"


def visible(text: Any) -> str:
    """``text`` with its bidirectional and terminal controls shown as ``<U+202E>``, ``<U+001B>``: page text cannot
    read backwards, and printed in a terminal it cannot erase a line, move the cursor or change the colours."""
    return INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", str(text))


def escape(text: Any) -> str:
    """Page text for HTML (element content or a quoted attribute): data, never markup, never reordered."""
    return html.escape(visible(text))


def json_or_text(text: Any) -> Any:
    """The value a JSON text holds, or the text itself when it is not JSON (a tool's result, as recorded)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def pretty_json(value: Any, limit: int = 20_000) -> str:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, limit)


def pre_json(value: Any, limit: int = 20_000) -> str:
    return f'<pre style="margin:0;max-height:24em;overflow:auto">{escape(pretty_json(value, limit))}</pre>'


def table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "", *, nowrap: Container[int] = ()
) -> str:
    """An HTML table; cells are escaped unless they are ``Markup`` (pre-built HTML from this module). The columns
    in ``nowrap`` (numbers, intervals, times) never break over lines: the other columns wrap instead."""

    def style(column: int) -> str:
        return f"{CELL};white-space:nowrap" if column in nowrap else CELL

    head = "".join(f'<th style="{style(i)}">{escape(h)}</th>' for i, h in enumerate(headers))
    cells = ("".join(f'<td style="{style(i)}">{_cell(c)}</td>' for i, c in enumerate(row)) for row in rows)
    body = "".join(f"<tr>{row}</tr>" for row in cells)
    cap = f'<caption style="text-align:left;font-weight:bold">{escape(caption)}</caption>' if caption else ""
    return f'<table style="{STYLE}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class Markup(str):
    """HTML that :func:`table` inserts as is."""


def _cell(value: Any) -> str:
    if isinstance(value, Markup):
        return value
    return escape("" if value is None else value)
