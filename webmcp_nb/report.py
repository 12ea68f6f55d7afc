"""A session as one self-contained HTML file: a timeline of steps with their arguments and results
(collapsible), the model's messages, confirmations, screenshots (embedded) and durations. No script, no
network: it opens anywhere and is also the session's rich display in a notebook.

Everything in it came from pages, models or a session folder someone shared, so every text is escaped and the
only files read are screenshots the session wrote: a plain PNG file in the session folder with a name of the
shape it writes (``EVIDENCE_FILE``). Anything else an event names shows as missing evidence, unread."""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from typing import TYPE_CHECKING, Any

from .display import clip, escape
from .session import EVIDENCE_FILE, NO_FOLLOW

if TYPE_CHECKING:
    from .session import Session

__all__ = ["render"]

STYLE = """
.wm-report{font:14px system-ui,sans-serif;color:#1b1f24;background:#fff;max-width:60em;margin:0 auto;padding:1em}
.wm-report h1{font-size:1.3em;margin:.2em 0}.wm-meta{color:#57606a;font-size:12px}
.wm-ev{border-left:3px solid #d0d7de;margin:.35em 0;padding:.2em .6em}
.wm-ev.tool{border-color:#0969da}.wm-ev.model{border-color:#8250df}.wm-ev.confirmation{border-color:#bf8700}
.wm-ev.error{border-color:#cf222e;background:#fff5f5}.wm-ev.agent{border-color:#1a7f37}
.wm-k{font-weight:600}.wm-t{color:#57606a;font-size:12px;margin-left:.5em}
.wm-report pre{background:#f6f8fa;padding:.4em;overflow:auto;max-height:20em;margin:.2em 0;white-space:pre-wrap}
.wm-report img{max-width:min(100%,36em);border:1px solid #d0d7de;margin:.3em 0}
"""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024

SHOWN = {
    "tool.called",
    "tool.returned",
    "tool.failed",
    "tool.denied",
    "model.response",
    "agent.turn.started",
    "agent.turn.finished",
    "agent.limit",
    "confirmation.requested",
    "confirmation.answered",
    "navigation",
    "skill.injected",
    "skill.failed",
    "evidence.screenshot",
    "evidence.failed",
    "note",
    "tools.changed",
    "model.prompt_mode",
}


def _pre(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return f"<pre>{escape(clip(text, 20_000))}</pre>"


def _details(summary: str, value: Any) -> str:
    return f"<details><summary>{escape(summary)}</summary>{_pre(value)}</details>"


def _body(session: Session, kind: str, data: dict[str, Any]) -> str:
    if kind == "tool.called":
        return _details("arguments", data.get("arguments"))
    if kind == "tool.returned":
        text = data.get("text", "")
        try:
            value: Any = json.loads(text)
        except (TypeError, ValueError):
            value = text
        return _details("result", value)
    if kind == "model.response":
        parts = []
        if data.get("content"):
            parts.append(f"<div>{escape(data['content'])}</div>")
        for call in data.get("tool_calls") or []:
            parts.append(
                f"<div>→ calls <code>{escape(str(call.get('name')))}</code></div>"
                + _details("arguments", call.get("arguments"))
            )
        return "".join(parts)
    if kind == "evidence.screenshot":
        png = _screenshot(session, data.get("file"))
        if png is None:
            return "<div>(missing evidence)</div>"
        alt = f"{data.get('tool')} {data.get('phase')}"
        return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
    if kind == "agent.turn.started":
        return f"<div>Task: {escape(str(data.get('task', '')))}</div>"
    if kind == "agent.turn.finished":
        answer = data.get("answer")
        stopped = f" (stopped: {data['stopped']})" if data.get("stopped") else ""
        return f"<div>Answer{escape(stopped)}: {escape(str(answer))}</div>"
    rest = {k: v for k, v in data.items() if k not in ("tool",)}
    return _pre(rest) if rest else ""


def _screenshot(session: Session, name: Any) -> bytes | None:
    """The PNG the session wrote as ``name``, or ``None`` without reading anything that is not one: another
    name (a path, ``..``), a link, a device or pipe, a file too large or without the PNG signature."""
    if not isinstance(name, str) or not EVIDENCE_FILE.fullmatch(name):
        return None
    path = session.directory / name
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | NO_FOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCREENSHOT_BYTES:
            return None
        png = file.read(MAX_SCREENSHOT_BYTES + 1)
    return png if png.startswith(PNG_SIGNATURE) and len(png) <= MAX_SCREENSHOT_BYTES else None


def _title(kind: str, data: dict[str, Any]) -> str:
    tool = data.get("tool")
    if kind.startswith("tool.") and tool:
        return f"{kind} {tool}"
    if kind.startswith("confirmation.") and tool:
        approved = data.get("approved")
        verdict = {True: " — approved", False: " — denied"}.get(approved, "") if isinstance(approved, bool) else ""
        return f"{kind} {tool}{verdict}"
    if kind.startswith("skill."):
        return f"{kind} {data.get('skill')}"
    return kind


def render(session: Session, *, fragment: bool = False) -> str:
    """The report as a whole HTML document, or as a ``fragment`` (scoped styles) to show inside a notebook."""
    header = session.header
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(header.created))
    meta = [f"started {started}", f"webmcp-nb {header.library}"]
    if header.model:
        meta.append(f"model {header.provider}:{header.model}")
    if header.start_url:
        meta.append(f"start {header.start_url}")
    if header.browser:
        meta.append(header.browser)
    rows = []
    for event in session.events:
        if event.kind not in SHOWN:
            continue
        family = event.kind.split(".")[0]
        failed = event.kind in ("tool.failed", "tool.denied", "evidence.failed", "skill.failed", "agent.limit")
        took = f"{event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
        offset = f"+{event.ts - header.created:.2f} s"
        rows.append(
            f'<div class="wm-ev {family}{" error" if failed else ""}">'
            f'<span class="wm-k">{escape(_title(event.kind, event.data))}</span>'
            f'<span class="wm-t">#{event.seq} {offset} {took}</span>{_body(session, event.kind, event.data)}</div>'
        )
    title = header.title or f"Session {header.id}"
    body = (
        f'<style>{STYLE}</style><div class="wm-report"><h1>{escape(title)}</h1>'
        f'<div class="wm-meta">{escape(" · ".join(meta))}</div>{"".join(rows)}</div>'
    )
    if fragment:
        return body
    head = f'<meta charset="utf-8"><title>{escape(title)}</title>'
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
