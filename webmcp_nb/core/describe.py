"""Events in words: what the notebook panel's log and the session report say about each one — the URL of a
navigation, the tools a page added and removed, a call's arguments and a preview of its result, who acted.

Plain text only, cut to a line; every view escapes it (page text is data)."""

from __future__ import annotations

import json
import time
from typing import Any

from .display import clip, visible
from .events import ORIGINS, Event

__all__ = [
    "describe",
    "line",
    "actor",
    "family",
    "FAMILIES",
    "PROBLEMS",
    "QUIET",
    "ASKERS",
    "preview",
    "call_text",
    "stamp",
    "asker",
    "doing",
    "counted",
]

PREVIEW = 140
"""Characters of arguments or a result a line shows."""

FAMILIES: dict[str, str] = {
    "tool": "tool calls",
    "evidence": "tool calls",
    "agent": "agent",
    "model": "agent",
    "confirmation": "agent",
    "navigation": "page",
    "tools": "page",
    "browser": "page",
    "skill": "skills",
    "skills": "skills",
    "note": "notes",
    "replay": "tool calls",
    "grant": "sites",
    "bridge": "agent",
    "override": "tool calls",
    "verdict": "agent",
}
"""Each kind's first part → the group a filter shows it in."""

PROBLEMS = {
    "tool.failed",
    "tool.refused",
    "tool.denied",
    "agent.error",
    "agent.limit",
    "evidence.failed",
    "skill.failed",
    "browser.crashed",
    "tools.omitted",
    "replay.diverged",
    "grant.refused",
    "bridge.problem",
    "verdict.fail",
    "verdict.error",
}
"""Kinds that mean something went wrong (or was stopped): views highlight them."""

QUIET = {"model.delta", "model.tool_call", "model.request"}
"""Kinds too fine-grained for a log line (the response that follows says it all)."""

ASKERS = {"agent": "agent", "mcp": "MCP client", "sidepanel": "side panel chat", "bridge": "chat-site bridge"}
"""Who asks for a site (a ``grant.*`` event's ``origin``), as a person would say it."""
ANSWERED = {"once": "allowed once", "read": "may read it", "act": "may act on it", "never": "never"}
LEVEL_WORDS = {"none": "never (not asked)", "read": "may be read", "act": "may be acted on", "ask": "asks first"}
WHY_NOT = {
    "never": "the user chose never",
    "timeout": "nobody answered in time",
    "withdrawn": "the asker gave up",
    "read only": "granted for reading only",
    "not a site": "not a site that can be granted",
    "too many asks": "too many of its asks were waiting",
}


def counted(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``0 tool calls``: a count with its noun, plural unless it is one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def family(kind: str) -> str:
    """The filter group of an event kind."""
    return FAMILIES.get(kind.split(".")[0], "other")


def stamp(ts: float) -> str:
    """An event's time of day, as the log shows it."""
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any, limit: int) -> str:
    try:
        return _cut(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")), limit)
    except (TypeError, ValueError):
        return _cut(repr(value), limit)


def preview(value: Any, limit: int = PREVIEW) -> str:
    """``value`` as compact JSON on one line, cut to ``limit`` characters."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return _cut(" ".join(value.split()), limit)
    return _json(value, limit)


def call_text(tool: Any, arguments: Any, limit: int = PREVIEW) -> str:
    """``tool(name=value, …)`` with the arguments as a person would write them, cut to ``limit``."""
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={_json(v, limit)}" for k, v in arguments.items())
    elif arguments in (None, ""):
        inner = ""
    else:
        inner = _json(arguments, limit)
    return f"{tool}({_cut(inner, limit)})"


def actor(event: Event) -> str | None:
    """Who acted, as a person would say it, or ``None`` when nobody did (the page changed on its own)."""
    data = event.data
    who = data.get("origin")
    if isinstance(who, str):
        return ORIGINS.get(who, who)
    if event.kind == "confirmation.answered" and data.get("by"):
        return ORIGINS.get(str(data["by"]), str(data["by"]))
    if event.kind.split(".")[0] in ("agent", "model", "confirmation"):
        return "agent"
    return None


def _tokens(usage: Any) -> int:
    """The total tokens of a ``usage`` field, 0 when it has none (or a shared session folder mangled it)."""
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else 0


def asker(data: dict[str, Any]) -> str:
    """Who asks for a site: ``MCP client Claude Desktop``, ``agent deepseek:deepseek-chat``."""
    kind = str(data.get("origin", ""))
    return f"{ASKERS.get(kind, kind)} {data.get('who', '')}".strip()


def doing(data: dict[str, Any]) -> str:
    """What it asks to do: ``call searchFlights [medium risk]``, ``open``, ``inject dom``."""
    risk = f" [{data['risk']} risk]" if data.get("risk") else ""
    return f"{data.get('action', '')}{' ' + str(data['tool']) if data.get('tool') else ''}{risk}"


def _names(names: Any) -> str:
    return ", ".join(str(n) for n in names) if isinstance(names, list) else ""


def describe(event: Event) -> str:
    """One line saying what happened (without time, duration or actor: views add those)."""
    data, kind = event.data, event.kind
    tool = str(data.get("tool", ""))
    if kind == "tool.called":
        return call_text(tool, data.get("arguments"))
    if kind == "tool.returned":
        return f"{tool} → {preview(data.get('text', ''))}"
    if kind == "tool.failed":
        return f"{tool} failed: {data.get('code', '')}: {clip(str(data.get('error', '')), 300)}"
    if kind == "tool.refused":
        return f"{call_text(tool, data.get('arguments'), 60)} refused before the page saw it: {data.get('error', '')}"
    if kind == "tool.denied":
        return f"{call_text(tool, data.get('arguments'), 60)} denied: not run"
    if kind == "navigation":
        where = event.url or ""
        tools = data.get("tools")
        if data.get("opened"):
            count = f" ({counted(len(tools), 'tool')})" if isinstance(tools, list) else ""
            return f"opened {where}{count}"
        return f"{where} (from {data.get('previous', '?')})"
    if kind == "tools.changed":
        added = " ".join(f"+{n}" for n in data.get("added") or [])
        removed = " ".join(f"−{n}" for n in data.get("removed") or [])
        total = f"({counted(data['count'], 'tool')})" if data.get("count") is not None else ""
        return " ".join(part for part in (added, removed, total) if part)
    if kind == "tools.omitted":
        return f"{data.get('omitted')} tools left out of the mirror ({data.get('listed')} listed); call them by name"
    if kind == "skill.injected":
        return f"{data.get('skill')} {data.get('version', '')} → {_names(data.get('tools')) or 'no tools'}"
    if kind == "skill.failed":
        return f"{data.get('skill')} not active here: {data.get('reason')}"
    if kind == "skills.changed":
        return f"installed: {_names(data.get('skills')) or 'none'}"
    if kind == "evidence.screenshot":
        return f"{tool} {data.get('phase')} → {data.get('file')}"
    if kind == "evidence.failed":
        return f"{tool} {data.get('phase')}: no screenshot ({data.get('error')})"
    if kind == "agent.turn.started":
        return f"task: {data.get('task', '')}"
    if kind == "agent.turn.finished":
        return _finished(data)
    if kind == "agent.limit":
        return f"stopped: {data.get('limit')}" + (f" ({data['tool']})" if data.get("tool") else "")
    if kind == "agent.error":
        return f"{data.get('error')}: {data.get('message')}"
    if kind == "model.response":
        calls = [c.get("name") for c in data.get("tool_calls") or [] if isinstance(c, dict)]
        said = " ".join(str(data.get("content") or "").split())
        parts = [clip(said, 200)] if said else []
        if calls:
            parts.append("→ calls " + ", ".join(str(c) for c in calls))
        if spent := _tokens(data.get("usage")):
            parts.append(f"[{spent:,} tokens]")
        return " ".join(parts) or "(empty reply)"
    if kind == "model.request":
        return f"{data.get('messages')} messages, {len(data.get('tools') or [])} tools"
    if kind == "model.prompt_mode":
        return "the endpoint refused tools: tools described in the prompt instead"
    if kind == "confirmation.requested":
        source = f" from {clip(str(data['provenance']), 200)}" if data.get("provenance") else ""
        return f"{call_text(tool, data.get('arguments'), 80)}? [{data.get('risk', '')} risk]{source}"
    if kind == "confirmation.answered":
        return f"{tool} {'approved' if data.get('approved') else 'denied'}"
    if kind == "note":
        return str(data.get("text", ""))
    if kind == "browser.crashed":
        return str(data.get("message", "the browser is gone"))
    if kind == "replay.diverged":
        return f"step {data.get('step')} {tool}: differs from the recording"
    if kind.startswith("mcp.session."):
        return _session(kind, event.tab_id, data)
    if kind == "grant.asked":
        return f"{asker(data)} asks to {doing(data)} on {data.get('site', '')} (needs {data.get('need', '')})"
    if kind == "grant.answered":
        said = ANSWERED.get(str(data.get("answer")), str(data.get("answer")))
        return f"{data.get('site', '')}: {said} ({doing(data)})" + (f"; {data['error']}" if data.get("error") else "")
    if kind == "grant.refused":
        why = WHY_NOT.get(str(data.get("why")), str(data.get("why")))
        return f"{data.get('site', '')}: not granted to {asker(data)} ({doing(data)}): {why}"
    if kind == "grant.changed":
        level = LEVEL_WORDS.get(str(data.get("level")), str(data.get("level")))
        return f"{data.get('site', '')}: {level}" + (f" (by {data['by']})" if data.get("by") else "")
    if kind == "bridge.opened":
        names = _names(data.get("tools"))
        return (
            f"chat bridge on the {data.get('site')} site with {len(data.get('tools') or [])} tools: {names or 'none'}"
        )
    if kind == "bridge.state":
        state = "on" if data.get("enabled") else "off"
        return state if data.get("running", True) else f"{state}, not running: {data.get('why', '')}"
    if kind == "bridge.sent":
        what = "results sent to the chat" if data.get("by") == "bridge" else "the user sent a message"
        return what + (" (with the tool instructions)" if data.get("instructions") else "")
    if kind == "bridge.answered":
        calls = data.get("calls", 0)
        return f"the assistant answered ({calls} tool call{'' if calls == 1 else 's'} this turn)"
    if kind == "bridge.closed":
        return "chat bridge closed"
    if kind == "bridge.offered":
        call = call_text(tool, data.get("arguments"), 80)
        return f"{call} written without its tags: the user is asked whether to run it"
    if kind == "bridge.problem":
        return f"in the chat page: {data.get('text', '')}"
    if kind == "override.set":
        fields: list[str] = list(data["fields"]) if isinstance(data.get("fields"), dict) else []
        found = data.get("differences")
        differs = "; ".join(map(str, found)) if isinstance(found, list) else ""
        differs = f"; its schema differs from the page's: {differs}" if differs else ""
        return f"{tool}: {', '.join(fields) or 'text'} overridden here (the page's own tool still runs){differs}"
    if kind == "override.cleared":
        return f"{_names(data.get('tools'))}: the page's own text again"
    if kind.startswith("verdict."):
        why = "; ".join(str(r) for r in data.get("reasons") or []) if isinstance(data.get("reasons"), list) else ""
        return f"{data.get('by', 'eval')}: {kind.partition('.')[2]}" + (f" — {clip(why, 600)}" if why else "")
    rest = {k: v for k, v in data.items() if k != "origin"}
    return preview(rest) if rest else ""


def _session(kind: str, tab_id: int | None, data: dict[str, Any]) -> str:
    """An MCP client's session: who started it, the tab it drives, its end."""
    who = f"{clip(str(data.get('client') or 'an MCP client'), 100)} (pid {data.get('pid', '?')})"
    tab = f"tab {tab_id}" if tab_id is not None else "no tab"
    if kind == "mcp.session.started":
        return f"{who} connected, on {tab}"
    if kind == "mcp.session.bound":
        return f"{who} now drives {tab}"
    return f"{who} disconnected"


def _finished(data: dict[str, Any]) -> str:
    if data.get("error"):
        outcome = f"failed: {data['error']}"
    elif data.get("stopped"):
        outcome = f"stopped ({data['stopped']})"
    else:
        outcome = f"answered: {' '.join(str(data.get('answer') or '').split())}"
    total = _tokens(data.get("usage"))
    tokens = f", {total:,} tokens" if total else ""
    steps = data.get("steps", 0)
    return f"{clip(outcome, 300)} ({steps} tool call{'' if steps == 1 else 's'}{tokens})"


def line(event: Event) -> str:
    """The whole log line in plain text: time, kind, what happened, duration, who acted (invisible characters
    of page text shown, as every view shows them)."""
    took = f" · {event.duration_ms:,.0f} ms" if event.duration_ms is not None else ""
    who = actor(event)
    return visible(f"{stamp(event.ts)} {event.kind} {describe(event)}{took}{f' · {who}' if who else ''}")
