"""Why a run failed, in words a person reads: the first expected call not met with its expected and actual
arguments side by side (``setFilters.maxPrice: expected ≤ 900, got 1200``), a call left over, a forbidden call
with its arguments, a page check with what the page showed, the answer against ``expect_answer``, and why the
agent stopped. Plain text (reports escape it, the command line makes its controls visible); no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.agent_rules import LIMITS
from ..core.describe import call_text
from . import matcher

__all__ = ["trajectory", "forbidden", "answer", "state", "stopped", "expected_call", "ARGUMENT_LIMIT"]

ARGUMENT_LIMIT = 200
"""Characters of a call's arguments quoted in a reason."""


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def expected_call(node: Mapping[str, Any]) -> str:
    """An expected call as a reader says it: ``setFilters(maxPrice ≤ 900, stops=[0])``."""
    arguments = node.get("arguments")
    if not isinstance(arguments, dict):
        inner = "" if arguments is None else matcher.words(arguments)
    else:
        inner = ", ".join(
            f"{key} {matcher.words(value)}" if matcher.is_constraint(value) else f"{key}={_value(value)}"
            for key, value in arguments.items()
        )
    return f"{node.get('functionName')}({inner})"


def _made(call: matcher.Call) -> str:
    return call_text(call.tool, call.arguments, ARGUMENT_LIMIT)


def _unmet(node: Mapping[str, Any], call: matcher.Call | None) -> list[tuple[str, str, str]]:
    """Expected against actual, path by path: the tool, then the arguments, then the result."""
    tool = str(node.get("functionName"))
    if call is None:
        return []
    if call.tool != tool:
        return [("tool", tool, call.tool)]
    rows = []
    if node.get("arguments") is not None:
        rows += matcher.explain(node["arguments"], call.arguments, tool)
    if "result" in node:
        rows += matcher.explain(node["result"], call.result, f"{tool} → result")
    return rows


def trajectory(
    expected: Sequence[Mapping[str, Any]] | None, rows: Sequence[matcher.Row], calls: Sequence[matcher.Call],
    numbers: Sequence[int],
) -> tuple[list[str], dict[str, Any] | None]:  # fmt: skip
    """The reason for a trajectory that failed (its first failing row, and how many more failed) and what the
    report shows beside it: ``{call, expected, got, rows}``. ``numbers[i]`` is the 1-based number of ``calls[i]``
    among all the run's calls."""
    failing = [row for row in rows if row.outcome == "fail"]
    if not failing:
        return [], None
    first, more = failing[0], len(failing) - 1
    call = calls[first.actual] if first.actual is not None else None
    number = numbers[first.actual] if first.actual is not None else None
    tail = f" (and {more} more row{'s' if more != 1 else ''} of the trajectory failed)" if more else ""
    got = None if call is None else {"tool": call.tool, "arguments": call.arguments, "result": call.result}
    if first.expected is None:
        assert call is not None
        if not expected:
            text = f"expected no tool call; call {number} was {_made(call)}"
        else:
            text = f"unexpected call {number}: {_made(call)} (no expected call is left for it)"
        return [text + tail], {"call": number, "expected": None, "got": got, "rows": []}
    node = first.expected
    want = expected_call(node)
    if call is None:
        made = len(calls)
        text = (
            f"first expected call not met: {want} was never made "
            f"(the model made {made} call{'s' if made != 1 else ''} the trajectory counts)"
        )
        return [text + tail], {"call": None, "expected": dict(node), "got": None, "rows": []}
    found = _unmet(node, call)
    if found and found[0][0] == "tool":
        text = f"first expected call not met: {want}; call {number} was {_made(call)}"
    elif found:
        text = f"first expected call not met (call {number}): " + "; ".join(
            f"{path}: expected {wanted}, got {value}" for path, wanted, value in found
        )
    else:  # a group's member that no call fitted (the pairing gave it this one)
        text = f"first expected call not met: {want}; call {number} was {_made(call)}"
    rows_shown = [list(row) for row in found if row[0] != "tool"]  # a wrong tool: the calls side by side say it
    return [text + tail], {"call": number, "expected": dict(node), "got": got, "rows": rows_shown}


def forbidden(calls: Sequence[Any], names: Sequence[str]) -> list[str]:
    """One reason per forbidden call made, with its arguments."""
    return [
        f"forbidden call (call {i}): {call_text(call.tool, call.arguments, ARGUMENT_LIMIT)}"
        for i, call in enumerate(calls, 1)
        if call.tool in names
    ]


def answer(expected: Any, given: str | None, error: str | None) -> str:
    """The answer against ``expect_answer``."""
    if error:
        return f"the answer could not be checked: {error}"
    if given is None:
        return f"answer: expected {matcher.words(expected)}, got no answer"
    found = matcher.explain(expected, given)
    why = found[0][2] if found else _value(given)
    return f"answer: expected {matcher.words(expected)}, got {why}"


def _target(check: Mapping[str, Any]) -> tuple[str, str, str]:
    """What a page check looked at, its key, and how the page is said to have shown it."""
    if "url" in check:
        return "url", "url", "the page was at"
    if "selector" in check:
        key = "text" if "text" in check else "count"
        return f"{check['selector']} {key}", key, "the page showed" if key == "text" else "the page had"
    arguments = check.get("arguments") or {}
    return f"{call_text(check.get('tool'), arguments, ARGUMENT_LIMIT)} result", "result", "got"


def state(check: Mapping[str, Any], observed: Any, error: str | None) -> str:
    """A page check that failed: what it expected and what the page showed."""
    what, key, shown = _target(check)
    if error:
        return f"page check could not run: {what}: {error}"
    found = matcher.explain(check[key], observed)
    value = found[0][2] if found and not found[0][0] else _value(observed)
    return f"page check failed: {what}: expected {matcher.words(check[key])}, {shown} {value}"


def stopped(reason: str | None, max_tool_calls: int | None, turn_timeout: float) -> str | None:
    """Why the agent's turn stopped before it was done, or ``None``."""
    if reason == "max_tool_calls":
        limit = max_tool_calls or LIMITS["max_tool_calls"]
        return f"the agent stopped: it reached the limit of {limit} tool calls (max_tool_calls)"
    if reason == "turn_timeout":
        return f"the agent stopped: the turn ran out of its time limit of {turn_timeout:g} s"
    if reason:
        return f"the agent stopped: {reason}"
    return None
