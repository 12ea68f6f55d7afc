"""webmcp-evals' matching rules, ported so that their suites give the same verdicts here; no I/O.

``matches(expected, actual)`` is their ``matchesArgument``: an object whose keys all start with ``$`` is a
constraint (``$pattern`` with an optional leading ``(?flags)``, ``$contains``, ``$gt``/``$gte``/``$lt``/``$lte``,
``$type``, ``$any``, and ours: ``$eq``, ``$ne``, ``$in``); other objects match as subsets, arrays by length and
position, everything else by JavaScript's strict equality (``1 == 1.0``, ``True != 1``). Where theirs lets a ``$``
key it does not know pass, ours refuses it (:func:`check_constraints`, when a suite loads; ``ConstraintError`` if
one reaches the matcher): a gate must not pass on a misspelt check.

``trajectory(expected_calls, calls)`` is their ``evaluateExecutionTrajectory``: the top level is an ordered
sequence, ``{"ordered": [...]}`` and ``{"unordered": [...]}`` groups nest, ``optional`` calls may be skipped, and
every call left over is a failing row. A case passes when every row passes. Their quirks are kept on purpose
(documented in docs/evals.md): a flat unordered group looks at as many following calls as it has members,
optional ones included.

``smoke_steps`` and ``concrete`` are their smoke mode's compiler: the required expected calls in authored order,
constraints replaced by sample values.

``explain(expected, actual)`` says where a value fails its constraint, path by path, in words
(``maxPrice: expected ≤ 900, got 1200``): what reports show for a failed run.

Regular expressions (``$pattern``) come from suites someone shared: they run on the ``regex`` engine with a time
limit (:data:`PATTERN_TIMEOUT`) and the GIL released, so a pattern that backtracks for minutes fails its row
("the match took over 1 s") instead of freezing the process.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from ..core.patterns import PATTERN_TIMEOUT, PatternTooCostly, js_pattern, js_search

__all__ = [
    "ConstraintError",
    "CONSTRAINTS",
    "check_constraints",
    "PATTERN_TIMEOUT",
    "Call",
    "Row",
    "matches",
    "explain",
    "words",
    "is_constraint",
    "call_outcome",
    "trajectory",
    "passed",
    "count_expected",
    "flatten",
    "concrete",
    "smoke_steps",
    "tool_failure",
]


class ConstraintError(ValueError):
    """A constraint that cannot be evaluated (a bad regular expression, an unknown inline flag, a key the matcher
    does not know): the case is an error, not a failure, as in webmcp-evals."""


def check_constraints(value: Any, path: str = "") -> None:
    """Raise ``ConstraintError`` naming the place when a constraint anywhere in ``value`` has a key the matcher
    does not know (with the keys it knows), or an ``$in`` that is not a list of values: what a suite's loader
    calls, so that nothing passes on a check the matcher would not make."""
    if is_constraint(value):
        at = f"{path}: " if path else ""
        for key, operand in value.items():
            if key not in CONSTRAINTS:
                raise ConstraintError(f"{at}unknown constraint {_json(key)}; the known ones: {', '.join(CONSTRAINTS)}")
            if key == "$in" and not isinstance(operand, list):
                raise ConstraintError(f"{at}$in takes a list of values, not {_json(operand)}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_constraints(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_constraints(item, f"{path}[{i}]")


@dataclass(frozen=True)
class Call:
    """A tool call the model made, as the matcher sees it."""

    tool: str
    arguments: Any = field(default_factory=dict)
    result: Any = None


@dataclass(frozen=True)
class Row:
    """One line of a trajectory: an expected node and the call it was paired with (either may be missing)."""

    expected: Mapping[str, Any] | None
    actual: int | None
    """The index of the call in the run's calls."""
    outcome: str
    """``pass`` or ``fail``."""


# ----- arguments -----


def is_constraint(value: Any) -> bool:
    """An object whose keys all start with ``$`` (and that has at least one)."""
    return isinstance(value, dict) and bool(value) and all(isinstance(k, str) and k.startswith("$") for k in value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _js_string(value: Any) -> str:
    """``String(value)`` for the primitives a suite may hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _strict_equal(a: Any, b: Any) -> bool:
    """JavaScript's ``===`` on JSON values (objects and arrays are never equal here: the caller recurses)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return not (isinstance(a, float) and math.isnan(a)) and a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


_FLAGS: dict[str, int] = {
    "i": regex.IGNORECASE,
    "m": regex.MULTILINE,
    "s": regex.DOTALL,
    "d": 0,
    "g": 0,
    "u": 0,
    "v": 0,
}
_INLINE = re.compile(r"^\(\?([a-zA-Z]+)\)")


def _pattern(raw: Any) -> tuple[regex.Pattern[str], bool]:
    """A ``$pattern`` as a compiled expression and whether it is sticky (``y``: it must match at the start)."""
    return _compiled(_js_string(raw))


@functools.lru_cache(maxsize=512)
def _compiled(text: str) -> tuple[regex.Pattern[str], bool]:
    raw, flags, sticky = text, 0, False
    found = _INLINE.match(text)
    if found:
        for flag in found.group(1):
            if flag == "y":
                sticky = True
            elif flag in _FLAGS:
                flags |= _FLAGS[flag]
            else:
                raise ConstraintError(
                    f'unsupported inline flag "(?{flag})" in $pattern {_json(text)}; supported: d, g, i, m, s, u, v, y'
                )
        text = text[found.end() :]
    try:
        return js_pattern(text, flags), sticky
    except PatternTooCostly as exc:
        raise ConstraintError(f"$pattern {_json(raw)} is too large to compile: {exc}") from None
    except regex.error as exc:
        raise ConstraintError(f"$pattern {_json(raw)} is not a valid regular expression: {exc}") from None


class PatternTimeout(Exception):
    """A ``$pattern`` ran past :data:`PATTERN_TIMEOUT` on a value (inside ``matches`` it is a mismatch)."""


def _search(raw: Any, text: str) -> bool:
    """Whether ``$pattern`` ``raw`` matches ``text``, within the time limit (raises :class:`PatternTimeout`)."""
    pattern, sticky = _pattern(raw)
    try:
        return js_search(pattern, text, sticky=sticky)
    except TimeoutError:
        raise PatternTimeout(raw) from None


def _json(value: Any) -> str:
    """A suite's value as the suite spells it (JSON), in messages."""
    return json.dumps(value, ensure_ascii=False, default=str)


_ORDER: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _bound(op: str) -> Callable[[Any, Any], bool]:
    """The check of ``$gt``, ``$gte``, ``$lt`` or ``$lte``: numbers only, no coercion."""
    return lambda bound, actual: _is_number(actual) and _is_number(bound) and _ORDER[op](actual, bound)


def _type_ok(wanted: Any, actual: Any) -> bool:
    if wanted == "array":
        return isinstance(actual, list)
    if wanted == "null":
        return actual is None
    if wanted == "object":
        return isinstance(actual, dict)
    typeof = {
        bool: "boolean",
        str: "string",
    }.get(type(actual)) or ("number" if _is_number(actual) else "object" if actual is None else "other")
    return bool(typeof == wanted)


def _equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values, JavaScript's strict equality at the leaves (``$eq``, ``$ne``, ``$in``): the
    same keys and the same items, not a subset."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return _strict_equal(a, b)


def _pattern_ok(raw: Any, actual: Any) -> bool:
    try:
        return isinstance(actual, str) and _search(raw, actual)
    except PatternTimeout:
        return False


_CHECKS: dict[str, Callable[[Any, Any], bool]] = {
    "$pattern": _pattern_ok,
    "$contains": lambda value, actual: isinstance(actual, str) and _js_string(value) in actual,
    **{op: _bound(op) for op in _ORDER},
    "$type": _type_ok,
    "$any": lambda value, actual: True,
    "$eq": _equal,
    "$ne": lambda value, actual: not _equal(value, actual),
    "$in": lambda value, actual: isinstance(value, list) and any(_equal(v, actual) for v in value),
}
"""Each constraint key and its check, ``(the constraint's value, the actual value) -> bool``."""
CONSTRAINTS = tuple(_CHECKS)
"""The constraint keys the matcher knows; any other ``$`` key is refused."""


def _constraint(constraint: Mapping[str, Any], actual: Any) -> bool:
    for key, value in constraint.items():
        check = _CHECKS.get(key)
        if check is None:
            check_constraints(constraint)  # raises, naming the key and the known ones
            return False
        if not check(value, actual):
            return False
    return True


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` satisfies ``expected`` (a value, or a constraint, with constraints nested anywhere)."""
    if is_constraint(expected):
        return _constraint(expected, actual)
    if _strict_equal(expected, actual):
        return True
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(key in actual and matches(value, actual[key]) for key, value in expected.items())
    return False


_SIGNS = {"$gt": ">", "$gte": "≥", "$lt": "<", "$lte": "≤"}
MISSING = object()
"""``explain``'s ``got`` for a key the value does not have."""


def words(expected: Any) -> str:
    """A constraint (or a plain value) as a reader says it: ``≤ 900``, ``contains "York"``, ``matches
    /^LON$/``, ``of type array``, ``[0]``."""
    if not is_constraint(expected):
        return _json(expected)
    parts = []
    for key, value in expected.items():
        if key in _SIGNS:
            parts.append(f"{_SIGNS[key]} {_json(value)}")
        elif key == "$contains":
            parts.append(f"contains {_json(_js_string(value))}")
        elif key == "$pattern":
            parts.append(f"matches /{_js_string(value)}/")
        elif key == "$type":
            parts.append(f"of type {_js_string(value)}")
        elif key == "$any":
            parts.append("anything")
        elif key == "$eq":
            parts.append(f"= {_json(value)}")
        elif key == "$ne":
            parts.append(f"≠ {_json(value)}")
        elif key == "$in" and isinstance(value, list):
            parts.append("one of " + ", ".join(_json(v) for v in value))
        else:
            parts.append(f"{key} {_json(value)}")
    return " and ".join(parts)


def _shown(value: Any) -> str:
    return "nothing (not given)" if value is MISSING else _json(value)


def explain(expected: Any, actual: Any, path: str = "") -> list[tuple[str, str, str]]:
    """Where ``actual`` fails ``expected``, as ``(path, expected in words, what it got)`` rows (none when it
    matches), the same rules as :func:`matches`. A ``$pattern`` that ran out of time says so in its row."""
    if is_constraint(expected):
        if actual is not MISSING and _constraint(expected, actual):
            return []
        got = _shown(actual)
        if isinstance(actual, str) and "$pattern" in expected:
            try:
                _search(expected["$pattern"], actual)
            except PatternTimeout:
                got += f" (the match took over {PATTERN_TIMEOUT:g} s and was stopped: counted as no match)"
        return [(path, words(expected), got)]
    if actual is not MISSING and _strict_equal(expected, actual):
        return []
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            row for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for row in explain(e, a, f"{path}[{i}]")
        ]
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [
            row
            for key, value in expected.items()
            for row in explain(value, actual.get(key, MISSING), f"{path}.{key}" if path else str(key))
        ]
    return [(path, words(expected), _shown(actual))]


# ----- trajectories -----


def _unordered(node: Mapping[str, Any]) -> bool:
    return "unordered" in node


def _ordered(node: Mapping[str, Any]) -> bool:
    return "ordered" in node


def _function(node: Mapping[str, Any]) -> bool:
    return "functionName" in node


def call_outcome(expected: Mapping[str, Any] | None, actual: Call | None) -> bool:
    """Whether one call satisfies one expected call: name, then ``arguments`` (unless absent or null), then
    ``result`` (when present)."""
    if expected is None or actual is None:
        return expected is None and actual is None
    if expected.get("functionName") != actual.tool:
        return False
    if expected.get("arguments") is not None and not matches(expected["arguments"], actual.arguments):
        return False
    return not ("result" in expected and not matches(expected["result"], actual.result))


def count_expected(nodes: Sequence[Mapping[str, Any]]) -> int:
    """How many calls the nodes require (optional calls do not count)."""
    total = 0
    for node in nodes:
        if _unordered(node):
            total += count_expected(node["unordered"])
        elif _ordered(node):
            total += count_expected(node["ordered"])
        elif not node.get("optional"):
            total += 1
    return total


@dataclass
class _Match:
    matches: bool
    consumed: int
    rows: list[Row]


def _simple_unordered(nodes: Sequence[Mapping[str, Any]], calls: Sequence[Call], start: int) -> _Match:
    """A group of plain calls in any order: a maximum bipartite matching over the next ``len(nodes)`` calls."""
    pool = max(0, min(len(nodes), len(calls) - start))
    edges = [[j for j in range(pool) if call_outcome(node, calls[start + j])] for node in nodes]
    owner = [-1] * pool  # call → expected node

    def augment(i: int, seen: list[bool]) -> bool:
        for j in edges[i]:
            if not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(nodes)):
        augment(i, [False] * pool)
    matched = {i for i in owner if i != -1}
    required = [i for i, node in enumerate(nodes) if not node.get("optional")]
    ok = all(i in matched for i in required) and pool == len(matched)
    unmatched = [node for i, node in enumerate(nodes) if i not in matched and not node.get("optional")]
    rows: list[Row] = []
    for j in range(pool):
        if owner[j] != -1:
            rows.append(Row(nodes[owner[j]], start + j, "pass"))
        else:
            rows.append(Row(unmatched.pop(0) if unmatched else None, start + j, "fail"))
    rows += [Row(node, None, "fail") for node in unmatched]
    return _Match(ok, len(nodes), rows)


def _nested_unordered(nodes: Sequence[Mapping[str, Any]], calls: Sequence[Call], start: int) -> _Match:
    """A group with groups inside: every order of its members is tried, the one with most passing rows wins."""
    if len(nodes) > 15:
        raise ConstraintError(f"unordered group too large ({len(nodes)} nodes); at most 15")
    best: list[Any] = [False, -1, 0, []]  # matches, passes, consumed, rows
    cache: dict[tuple[int, int], _Match] = {}
    used = [False] * len(nodes)

    def node_match(i: int, at: int) -> _Match:
        if (i, at) not in cache:
            cache[(i, at)] = _node(nodes[i], calls, at)
        return cache[(i, at)]

    def walk(done: int, consumed: int, ok: bool, passes: int, rows: list[Row]) -> None:
        if done == len(nodes):
            if passes > best[1]:
                best[:] = [ok, passes, consumed, list(rows)]
            return
        for i in range(len(nodes)):
            if used[i]:
                continue
            used[i] = True
            found = node_match(i, start + consumed)
            gained = sum(1 for r in found.rows if r.outcome == "pass")
            walk(done + 1, consumed + found.consumed, ok and found.matches, passes + gained, rows + found.rows)
            used[i] = False

    walk(0, 0, True, 0, [])
    consumed = best[2] if best[1] >= 0 else count_expected(nodes)
    return _Match(bool(best[0]), consumed, best[3])


def _node(node: Mapping[str, Any], calls: Sequence[Call], start: int) -> _Match:
    if _unordered(node):
        members = node["unordered"]
        nested = any(_unordered(m) or _ordered(m) for m in members)
        return _nested_unordered(members, calls, start) if nested else _simple_unordered(members, calls, start)
    if _ordered(node):
        return _sequence(node["ordered"], calls, start)
    if _function(node):
        if start >= len(calls):
            if node.get("optional"):
                return _Match(True, 0, [])
            return _Match(False, 1, [Row(node, None, "fail")])
        ok = call_outcome(node, calls[start])
        if node.get("optional") and not ok:  # a skipped optional call leaves this call to the next node
            return _Match(True, 0, [])
        return _Match(ok, 1, [Row(node, start, "pass" if ok else "fail")])
    return _Match(False, 0, [])


def _sequence(nodes: Sequence[Mapping[str, Any]], calls: Sequence[Call], start: int) -> _Match:
    at, ok, rows = start, True, []
    for node in nodes:
        found = _node(node, calls, at)
        ok = ok and found.matches
        at += found.consumed
        rows += found.rows
    return _Match(ok, at - start, rows)


def trajectory(expected: Sequence[Mapping[str, Any]] | None, calls: Sequence[Call]) -> list[Row]:
    """The expected calls paired with the calls made, row by row; calls left over fail."""
    if not expected:
        if not calls:
            return [Row(None, None, "pass")] if expected is None else []
        return [Row(None, i, "fail") for i in range(len(calls))]
    found = _sequence(expected, calls, 0)
    return found.rows + [Row(None, i, "fail") for i in range(found.consumed, len(calls))]


def passed(rows: Sequence[Row]) -> bool:
    """A case passes when every row of its trajectory does."""
    return all(row.outcome == "pass" for row in rows)


def flatten(nodes: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    """The expected calls in authored order, groups opened (what local mode's mock outputs are looked up in)."""
    out: list[Mapping[str, Any]] = []
    for node in nodes or ():
        if _unordered(node):
            out += flatten(node["unordered"])
        elif _ordered(node):
            out += flatten(node["ordered"])
        elif _function(node):
            out.append(node)
    return out


# ----- smoke mode -----


def _tomorrow() -> str:
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).date().isoformat()


def concrete(key: str, value: Any) -> Any:
    """A sample value that satisfies a constraint as webmcp-evals' smoke mode makes one (``$eq`` included, which
    only their smoke mode knows; ours: ``$in``'s first value, and for ``$ne`` a text other than its value)."""
    if not isinstance(value, dict | list):
        return value
    if isinstance(value, list):
        return [concrete(key, item) for item in value]
    for op in ("$eq", "$contains", "$gt", "$gte", "$lt", "$lte"):
        if op in value:
            return concrete(key, value[op])
    if isinstance(value.get("$in"), list) and value["$in"]:
        return concrete(key, value["$in"][0])
    if isinstance(value.get("$pattern"), str):
        text = re.sub(r"[\^$]", "", value["$pattern"])
        text = text.replace(".*", " ").replace(r"\d+", "123")
        text = re.sub(r"\[\^?.*?\]", "a", text)
        return text.strip() or "sample"
    if isinstance(value.get("$type"), str):
        kind = value["$type"]
        if kind == "string":
            return _tomorrow() if "date" in key.lower() else "sample"
        samples: dict[str, Any] = {"number": 1, "boolean": True, "array": [], "object": {}}
        if kind in samples:
            return samples[kind]
    if "$any" in value:
        return "sample"
    if "$ne" in value:
        return "other" if value["$ne"] == "sample" else "sample"
    return {k: concrete(k, v) for k, v in value.items() if not k.startswith("$")}


def smoke_steps(name: str, nodes: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, dict[str, Any]]]:
    """The required calls of a case in authored order with concrete arguments. Raises ``ValueError`` as their
    compiler does: a required call without an arguments object, or a case with no required call."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for node in flatten(nodes):
        if node.get("optional"):
            continue
        arguments = node.get("arguments")
        if not isinstance(arguments, dict):
            raise ValueError(
                f'smoke test "{name}" step {len(steps) + 1} ({node.get("functionName")}) requires an arguments '
                "object with concrete values"
            )
        steps.append((str(node["functionName"]), {k: concrete(k, v) for k, v in arguments.items()}))
    if not steps:
        raise ValueError(f'smoke test "{name}" must contain at least one required tool call')
    return steps


def tool_failure(result: Any) -> str | None:
    """What webmcp-evals' smoke mode takes for a tool reporting failure in its result, or ``None``: a text
    starting with ``error``, or an object with ``success: false``, ``isError: true`` or an ``error`` string."""
    if isinstance(result, str):
        if re.match(r"error[:\s]", result.strip(), re.I):
            return f"tool reported failure: {result.strip()}"
        try:
            result = json.loads(result)
        except ValueError:
            return None
    if not isinstance(result, dict):
        return None
    if result.get("success") is False or result.get("isError") is True or isinstance(result.get("error"), str):
        detail = result.get("error")
        detail = result.get("message") if detail is None else detail
        return f"tool reported failure: {detail if isinstance(detail, str) and detail.strip() else result}"
    return None
