"""What changed between two versions of a page's tools (lock files or live pages), each change classified:
**breaking** when a caller that worked with the old version can fail or act differently with the new one — a tool
removed or renamed, a required argument added, an argument removed, a type changed, an enum value removed, a bound
tightened, a pattern or format added or changed, a choice of anyOf removed, any keyword the diff does not weigh
added or changed (``$ref``, ``not``…: a call that passed may be refused), a read-only tool no longer read-only, a
tool's risk raised to high (agents now ask before it; unattended ones refuse it), a tool moved to another frame's
origin — and **compatible** otherwise: a tool added, an optional argument added, a requirement dropped, a type or
bound widened, an enum value added, a keyword dropped, a description, title or default changed. Whatever differs
in the lock files is a change: the diff never says two versions are the same when their locks differ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..core.agent_rules import RISK, risk_of
from ..core.display import Markup, clip, escape, table, visible
from .findings import MESSAGE_LIMIT
from .lock import ToolEntry, ToolLock, normal_schema
from .rules.base import as_dict, as_list

__all__ = ["Change", "ToolDiff", "diff"]

Kind = Literal["breaking", "compatible"]
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_DEPTH = 6


@dataclass(frozen=True)
class Change:
    """One change: breaking or compatible, the tool (as messages name it) and what changed, in words."""

    kind: Kind
    tool: str
    what: str

    def __post_init__(self) -> None:  # (it quotes page text: argument names, values)
        object.__setattr__(self, "what", clip(self.what, MESSAGE_LIMIT))


def _json(value: Any) -> str:
    return clip(json.dumps(value, ensure_ascii=False, sort_keys=True), 120)


class ToolDiff:
    """The changes from ``old`` to ``new``; ``breaking`` is what CI gates on."""

    def __init__(self, old: str, new: str, changes: list[Change]) -> None:
        self.old, self.new = old, new
        self.changes = changes

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "breaking"]

    @property
    def compatible(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "compatible"]

    def summary(self) -> str:
        if not self.changes:
            return f"webmcp-nb diff {self.old} → {self.new}: the tools are the same"
        return (
            f"webmcp-nb diff {self.old} → {self.new}: {len(self.breaking)} breaking, "
            f"{len(self.compatible)} compatible change{'s' if len(self.compatible) != 1 else ''}"
        )

    def lines(self) -> list[str]:
        """Each change in words, breaking ones first."""
        ordered = self.breaking + self.compatible
        return [f"{'BREAKING' if c.kind == 'breaking' else 'compatible':<10}  {c.tool}: {c.what}" for c in ordered]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "webmcp-nb-diff",
            "version": 1,
            "old": self.old,
            "new": self.new,
            "breaking": len(self.breaking),
            "compatible": len(self.compatible),
            "changes": [{"kind": c.kind, "tool": c.tool, "what": c.what} for c in self.breaking + self.compatible],
        }

    def __str__(self) -> str:
        return visible("\n".join([self.summary(), *(f"  {line}" for line in self.lines())]))

    def __repr__(self) -> str:
        return f"<ToolDiff {visible(self.summary())}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        rows = [
            [Markup(f"<b>{'breaking' if c.kind == 'breaking' else 'compatible'}</b>"), c.tool, c.what]
            for c in self.breaking + self.compatible
        ]
        html = table(["change", "tool", "what"], rows, self.summary()) if rows else f"<b>{escape(self.summary())}</b>"
        return {"text/plain": str(self), "text/html": html}


def diff(old: ToolLock, new: ToolLock) -> ToolDiff:
    """The changes from ``old`` to ``new`` (see the module's docstring for what is breaking)."""
    before = {e.key: e for e in old.tools}
    after = {e.key: e for e in new.tools}
    added = [after[k] for k in after if k not in before]
    changes: list[Change] = []
    for entry in (before[k] for k in before if k not in after):
        twin = _moved_or_renamed(entry, added)
        if twin is None:
            changes.append(Change("breaking", entry.where, "removed: agents, evals and scripts that call it fail"))
            continue
        added.remove(twin)
        if twin.name != entry.name:
            changes.append(Change("breaking", entry.where, f"renamed to {twin.name!r}: calls by the old name fail"))
        else:
            now = f"a frame of {twin.origin}" if twin.origin else "the page's own frame"
            changes.append(Change("breaking", entry.where, f"moved to {now}: a model is told where a tool is from"))
        changes += _tool_changes(entry, twin)
    changes += [Change("compatible", e.where, "added") for e in added]
    for key in sorted(before.keys() & after.keys()):
        changes += _tool_changes(before[key], after[key])
    return ToolDiff(old.source, new.source, sorted(changes, key=lambda c: c.kind != "breaking"))


def _same_body(a: ToolEntry, b: ToolEntry) -> bool:
    return a.description == b.description and _same(a.input_schema, b.input_schema)


def _moved_or_renamed(entry: ToolEntry, added: list[ToolEntry]) -> ToolEntry | None:
    """The added tool that is ``entry`` under another name or in another frame: the same name elsewhere, or the
    same description and schema under a new name."""
    same_name = [e for e in added if e.name == entry.name]
    if same_name:
        return same_name[0]
    same = [e for e in added if _same_body(entry, e)]
    return same[0] if len(same) == 1 else None


def _tool_changes(old: ToolEntry, new: ToolEntry) -> list[Change]:
    where = new.where
    out = [Change(kind, where, what) for kind, what in _schema(old.input_schema, new.input_schema)]
    if old.description != new.description:
        out.append(Change("compatible", where, "description changed"))
    if old.title != new.title:
        out.append(Change("compatible", where, f"title changed from {_json(old.title)} to {_json(new.title)}"))
    was, now = risk_of(old.annotations), risk_of(new.annotations)
    if was == "low" and now != "low":
        out.append(Change("breaking", where, "no longer read-only: agents that ran it unasked now ask, or refuse"))
    elif now == "high" and was != "high":
        out.append(Change("breaking", where, "now high risk: agents ask before every call; unattended ones refuse it"))
    elif was != now:
        out.append(Change("compatible", where, f"risk lowered from {was} to {now}"))
    before, after = old.to_json()["annotations"], new.to_json()["annotations"]  # false is the default: left out
    notes = {k for k in {*before, *after} if not _same(before.get(k), after.get(k))}
    said = {RISK["low_hint"], *RISK["high_hints"], RISK["declared"]} if was != now else set()  # (the risk line)
    for key in sorted(notes - said):
        out.append(
            Change("compatible", where, f"annotation {key} changed from {_json(before.get(key, False))} to "
                   f"{_json(after.get(key, False))}")
        )  # fmt: skip
    return out


def _types(schema: dict[str, Any]) -> set[str] | None:
    """The types a schema takes (``None``: any); a number takes integers too."""
    kind = schema.get("type")
    kinds = {kind} if isinstance(kind, str) else {str(k) for k in kind} if isinstance(kind, list) else None
    return None if kinds is None else kinds | ({"integer"} if "number" in kinds else set())


def _same(a: Any, b: Any) -> bool:
    """Whether two parts of a schema are the same, as a lock file writes them (never compared as shown: a shown
    value is clipped)."""
    return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
    return json.dumps(normal_schema(value), sort_keys=True)


WEIGHED = frozenset({
    "type", "enum", "const", "pattern", "format", "multipleOf", *LOWER_BOUNDS, *UPPER_BOUNDS, "default",
    "description", "items", "properties", "required", "additionalProperties", "$defs", "definitions", "anyOf",
    "oneOf", "allOf",
})  # fmt: skip
"""The keywords :func:`_schema` weighs one by one; any other that changes is judged by :func:`_unweighed`."""
NOTES = frozenset({"title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id"})
"""Keywords that check nothing (annotations): a change to one is compatible."""
ACCEPTING = {"uniqueItems": False, "unevaluatedProperties": True, "unevaluatedItems": True}
"""Values of a keyword that refuse nothing: adding one is compatible."""


def _schema(old: Any, new: Any, path: str = "", depth: int = 0) -> Iterator[tuple[Kind, str]]:
    """The changes from schema ``old`` to ``new`` at ``path`` (``""``: the tool's arguments). Every keyword that
    differs is a change: those weighed here as breaking or compatible by what they mean, any other as breaking
    when it is added or changed (a call that passed may now be refused) and compatible when it is dropped."""
    at = f"{path}: " if path else ""
    old, new = ({} if old is None else old), ({} if new is None else new)  # (no schema: any arguments)
    if _same(old, new):
        return
    if not isinstance(old, dict) or not isinstance(new, dict) or depth > _DEPTH:
        accepts_all = new is True or new == {}
        yield ("compatible" if accepts_all else "breaking"), f"{at}schema changed from {_json(old)} to {_json(new)}"
        return
    was, now = _types(old), _types(new)
    if was != now and now is not None:
        if was is None or not was <= now:
            yield "breaking", f"{at}type changed from {_kind(old)} to {_kind(new)}"
        else:
            yield "compatible", f"{at}type widened from {_kind(old)} to {_kind(new)}"
    elif was != now:
        yield "compatible", f"{at}type no longer limited (was {_kind(old)})"
    yield from _choices(old, new, at)
    for key in ("pattern", "format", "multipleOf"):
        if key in new and not _same(old.get(key), new[key]):
            yield "breaking", f"{at}{key} {'changed to' if key in old else 'added:'} {_json(new[key])}"
        elif key in old and key not in new:
            yield "compatible", f"{at}{key} dropped"
    for key in (*LOWER_BOUNDS, *UPPER_BOUNDS):
        yield from _bound(key, old.get(key), new.get(key), at)
    if not _same(old.get("default"), new.get("default")) and ("default" in old or "default" in new):
        yield "compatible", f"{at}default changed from {_json(old.get('default'))} to {_json(new.get('default'))}"
    if path and old.get("description") != new.get("description"):
        yield "compatible", f"{at}description changed"
    if "items" in old or "items" in new:
        yield from _schema(old.get("items"), new.get("items"), f"{path}[]", depth + 1)
    yield from _arguments(old, new, f"{path}." if path else "", depth)
    yield from _others(old.get("additionalProperties"), new.get("additionalProperties"), path, depth)
    for key in ("$defs", "definitions"):
        before, after = as_dict(old.get(key)), as_dict(new.get(key))
        for name in sorted({*before, *after}):
            where = f"{at}{key}/{name}"
            if name not in after:
                yield "breaking", f"{where} removed: a $ref to it finds nothing"
            elif name in before:
                yield from _schema(before[name], after[name], f"{path}{'/' if path else ''}{key}/{name}", depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        yield from _branches(key, old.get(key), new.get(key), at)
    for key in sorted({*old, *new} - WEIGHED):
        if not _same(old.get(key), new.get(key)):
            yield _unweighed(key, old, new, at)


def _unweighed(key: str, old: dict[str, Any], new: dict[str, Any], at: str) -> tuple[Kind, str]:
    """A keyword :func:`_schema` does not weigh, changed: compatible when it checks nothing, is dropped or takes a
    value that refuses nothing; else breaking."""
    if key in NOTES:
        return "compatible", f"{at}{key} changed"
    if key not in new:
        return "compatible", f"{at}{key} dropped"
    if key in ACCEPTING and new[key] == ACCEPTING[key]:
        return "compatible", f"{at}{key} set to {_json(new[key])}"
    how = f"changed from {_json(old[key])} to" if key in old else "added:"
    return "breaking", f"{at}{key} {how} {_json(new[key])} (calls that passed may be refused now)"


def _others(old: Any, new: Any, path: str, depth: int) -> Iterator[tuple[Kind, str]]:
    """``additionalProperties``: what an object takes besides its named properties (absent: anything)."""
    if _same(old, new):
        return
    at, what = (f"{path}: ", "properties") if path else ("", "arguments")
    if new is None or new is True or new == {}:
        yield "compatible", f"{at}other {what} than those named are taken now"
    elif new is False:
        yield "breaking", f"{at}no other {what} than those named are taken now: calls that pass one are refused"
    elif old is False:
        yield "compatible", f"{at}other {what} than those named are taken now, as {_json(new)} says"
    elif isinstance(old, dict):
        yield from _schema(old, new, f"{path}.*" if path else "*", depth + 1)
    else:
        yield "breaking", f"{at}other {what} than those named must fit {_json(new)} now"


def _branches(key: str, old: Any, new: Any, at: str) -> Iterator[tuple[Kind, str]]:
    """``anyOf``, ``oneOf`` and ``allOf``, each a set of schemas: a choice (anyOf, oneOf) removed, or a condition
    (allOf) added, refuses what passed; the other way round is compatible, except a choice added to ``oneOf``
    (a value may then fit two, which oneOf refuses)."""
    if _same(old, new):
        return
    before = {_canonical(b): b for b in as_list(old)} if old is not None else None
    after = {_canonical(b): b for b in as_list(new)} if new is not None else None
    if after is None:
        yield "compatible", f"{at}{key} dropped"
        return
    if before is None:
        yield "breaking", f"{at}{key} added: {_json(new)}"
        return
    lost = [b for k, b in before.items() if k not in after]
    gained = [b for k, b in after.items() if k not in before]
    narrowing, widening = (gained, lost) if key == "allOf" else (lost, gained)
    for part in narrowing:
        yield "breaking", f"{at}{key}: {'added' if key == 'allOf' else 'no longer takes'} {_json(part)}"
    for part in widening:
        kind: Kind = "breaking" if key == "oneOf" else "compatible"
        yield kind, f"{at}{key}: {'dropped' if key == 'allOf' else 'now also takes'} {_json(part)}"


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    return _json(kind) if kind is not None else "any"


def _allowed(schema: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The values a schema is limited to (``enum`` or ``const``: which, and each value by its canonical text), or
    ``None``."""
    if "const" in schema:
        return "const", {_canonical(schema["const"]): schema["const"]}
    if "enum" in schema:
        return "enum", {_canonical(v): v for v in as_list(schema["enum"])}
    return None


def _choices(old: dict[str, Any], new: dict[str, Any], at: str) -> Iterator[tuple[Kind, str]]:
    before, after = _allowed(old), _allowed(new)
    if before is None and after is None:
        return
    if after is None:
        yield "compatible", f"{at}{before[0] if before else 'enum'} dropped: any value of its type"
    elif before is None:
        yield "breaking", f"{at}now limited to {', '.join(map(_json, after[1].values()))}"
    else:
        if lost := [v for k, v in before[1].items() if k not in after[1]]:
            yield "breaking", f"{at}{after[0]} no longer takes {', '.join(map(_json, lost))}"
        if gained := [v for k, v in after[1].items() if k not in before[1]]:
            yield "compatible", f"{at}{after[0]} now also takes {', '.join(map(_json, gained))}"


def _bound(key: str, old: Any, new: Any, at: str) -> Iterator[tuple[Kind, str]]:
    if _same(old, new):
        return
    lower = key in LOWER_BOUNDS
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
    if new is None:
        yield "compatible", f"{at}{key} {_json(old)} dropped"
    elif old is None or not numbers or (new > old if lower else new < old):
        yield "breaking", f"{at}{key} tightened {'to' if old is None else f'from {_json(old)} to'} {_json(new)}"
    else:
        yield "compatible", f"{at}{key} loosened from {_json(old)} to {_json(new)}"


def _arguments(old: dict[str, Any], new: dict[str, Any], prefix: str, depth: int) -> Iterator[tuple[Kind, str]]:
    before, after = as_dict(old.get("properties")), as_dict(new.get("properties"))
    needed_before = {n for n in as_list(old.get("required")) if isinstance(n, str)}
    needed_after = {n for n in as_list(new.get("required")) if isinstance(n, str)}
    open_after = new.get("additionalProperties") is True or isinstance(new.get("additionalProperties"), dict)
    for name in sorted(needed_after - needed_before):
        if name in before:
            yield "breaking", f"argument {prefix + name!r} is now required: calls without it are refused"
        else:
            yield "breaking", f"a required argument {prefix + name!r} was added: calls without it are refused"
    for name in sorted(needed_before - needed_after):
        if name in after:
            yield "compatible", f"argument {prefix + name!r} is no longer required"
    for name in sorted(set(after) - set(before) - needed_after):
        yield "compatible", f"an optional argument {prefix + name!r} was added"
    for name in sorted(set(before) - set(after)):
        if open_after:
            yield "compatible", f"argument {prefix + name!r} was removed (the schema still takes any argument)"
        else:
            yield "breaking", f"argument {prefix + name!r} was removed: calls that pass it are refused"
    for name in sorted(set(before) & set(after)):
        yield from _schema(before[name], after[name], f"{prefix}{name}", depth + 1)
