"""A page's tools as a lock file: each tool's own fields (name, title, description, input schema, annotations, and
the frame's origin when it is not the page's own), sorted, so that two loads of an unchanged page write the same
text and a diff of two versions shows only what changed.

    webmcp-nb tools http://127.0.0.1:8000/ --json > tools.lock.json

The fields are the page's own (``tool.info``: a local override never reaches a lock). What is normalised, and why:
tools are sorted by name (then origin), keys are sorted, a schema's ``required`` lists are sorted (a set, however
the page built it), annotations that are ``false`` and an empty title are left out (false is WebMCP's default,
and Chromium's native WebMCP lists every annotation it knows as false, and an empty title, where the polyfill
lists none): a lock taken with native WebMCP and one taken with the polyfill agree. A page's address is not in
the file: a CI run serves the site on a port of its own."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..browser.tab import Tab
    from ..browser.tools import Tool

__all__ = ["LOCK_FORMAT", "LOCK_VERSION", "LockError", "ToolEntry", "ToolLock", "normal_schema", "json_text"]

LOCK_FORMAT = "webmcp-nb-tools"
LOCK_VERSION = 1


_UNSEEN = re.compile(
    "[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U000e0000-\U000e007f]"
)
"""What a JSON text spells as ``\\uXXXX`` although it may stay as it is: controls a terminal obeys (C1), format
characters (zero-width, bidirectional, tags) and lone surrogates (which no file can hold as UTF-8)."""


def json_text(data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``data`` as JSON that any text reads as it is: letters of every script as they are, and what a reader does
    not see (or a terminal obeys) as ``\\uXXXX`` escapes. Page text goes into lock files, lint's and diff's JSON."""
    return _UNSEEN.sub(_escaped, json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False))


def _escaped(found: re.Match[str]) -> str:
    """A character as JSON's ``\\uXXXX`` (a surrogate pair past the Basic Multilingual Plane)."""
    code = ord(found.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class LockError(ValueError):
    """A lock file that is not one; the message names the file and what is wrong."""


def normal_schema(value: Any) -> Any:
    """A schema with every ``required`` list sorted and without repeats (the rest as it is; keys are sorted when
    the lock is written)."""
    if isinstance(value, dict):
        out = {key: normal_schema(item) for key, item in value.items()}
        required = value.get("required")
        if isinstance(required, list) and all(isinstance(name, str) for name in required):
            out["required"] = sorted(set(required))
        return out
    if isinstance(value, list):
        return [normal_schema(item) for item in value]
    return value


@dataclass(frozen=True)
class ToolEntry:
    """One tool as a lock file holds it (and as lint reads it): the page's own fields."""

    name: str
    description: str = ""
    title: str | None = None
    input_schema: Any = None
    """As the page registered it (``None``: no schema): lint judges it as it is, the lock writes it normalised."""
    annotations: Mapping[str, Any] = field(default_factory=dict)
    origin: str | None = None
    """The origin of the frame that registered it, when that is not the page's own (``None``: the page's)."""

    @classmethod
    def of(cls, tool: Tool) -> ToolEntry:
        """The page's own fields of ``tool`` (``tool.info``, never an override)."""
        info = tool.info
        return cls(
            name=info.name,
            description=info.description,
            title=info.title or None,  # Chromium's native WebMCP lists "" for a tool without one; the polyfill None
            input_schema=info.input_schema,
            annotations=dict(info.annotations),
            origin=info.origin if tool.cross_origin else None,
        )

    @property
    def key(self) -> tuple[str, str]:
        """Where it sorts, and what a diff pairs it by: its name, then its origin (``""``: the page's)."""
        return self.name, self.origin or ""

    @property
    def where(self) -> str:
        """The tool as messages name it: its name, and its frame's origin when that is not the page's."""
        return self.name if self.origin is None else f"{self.name} (in a frame of {self.origin})"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            data["title"] = self.title
        data["description"] = self.description
        data["inputSchema"] = normal_schema(self.input_schema)
        data["annotations"] = {k: v for k, v in self.annotations.items() if v is not False}
        if self.origin is not None:
            data["origin"] = self.origin
        return data

    @classmethod
    def from_json(cls, data: Any, where: str) -> ToolEntry:
        """An entry of a lock file; ``LockError`` naming the place when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise LockError(f"{where}: each tool is an object with a name")
        for key in ("name", "origin"):  # (every message and log line names a tool by them)
            if isinstance(data.get(key), str) and not data[key].isprintable():
                raise LockError(
                    f"{where}: its {key} {data[key][:100]!r} holds a line break or a control character, which no "
                    "page's tool has: write the lock again (webmcp-nb tools URL --json)"
                )
        texts = {key: data.get(key) for key in ("description", "title", "origin")}
        for key, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise LockError(f"{where} ({data['name'][:100]}): {key} must be a text")
        notes = data.get("annotations") or {}
        if not isinstance(notes, dict):
            raise LockError(f"{where} ({data['name'][:100]}): annotations must be an object")
        return cls(
            name=data["name"],
            description=texts["description"] or "",
            title=texts["title"],
            input_schema=data.get("inputSchema"),
            annotations=notes,
            origin=texts["origin"],
        )


@dataclass(frozen=True)
class ToolLock:
    """A page's tools, sorted; ``text()`` is the lock file."""

    tools: tuple[ToolEntry, ...]
    source: str = ""
    """Where they were read: a URL, or a lock file's path (for messages; not written)."""

    @classmethod
    def of(cls, entries: Iterable[ToolEntry], source: str = "") -> ToolLock:
        return cls(tuple(sorted(entries, key=lambda e: e.key)), source)

    @classmethod
    def of_tab(cls, tab: Tab) -> ToolLock:
        """The tools ``tab`` lists now, every frame's."""
        return cls.of((ToolEntry.of(tool) for tool in tab.tools.every_frame()), tab.url)

    def to_json(self) -> dict[str, Any]:
        return {"format": LOCK_FORMAT, "version": LOCK_VERSION, "tools": [t.to_json() for t in self.tools]}

    def text(self) -> str:
        """The lock file's text: JSON with sorted keys, two spaces of indent, a newline at the end."""
        return json_text(self.to_json(), sort_keys=True) + "\n"

    def write(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        target.write_text(self.text(), encoding="utf-8")
        return target

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> ToolLock:
        """A lock file; ``LockError`` naming the file and what is wrong with it."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise LockError(f"{file}: cannot read it as a lock file: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != LOCK_FORMAT or not isinstance(data.get("tools"), list):
            raise LockError(
                f"{file}: not a lock file (a JSON object with format: {LOCK_FORMAT} and a list of tools; "
                "webmcp-nb tools URL --json writes one)"
            )
        if isinstance(data.get("version"), int) and data["version"] > LOCK_VERSION:
            raise LockError(f"{file}: version {data['version']}; this webmcp-nb reads version {LOCK_VERSION}")
        entries = [ToolEntry.from_json(item, f"{file}: tools[{i}]") for i, item in enumerate(data["tools"])]
        return cls.of(entries, str(file))
