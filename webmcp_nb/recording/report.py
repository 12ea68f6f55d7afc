"""A session as a report a person can read: what the agent was asked, what it did, and where it went wrong.

It opens with a summary — task, model, outcome and answer, steps, tool calls and how they ended, total, model,
tool and evidence time, tokens, the pages used, a time bar, and the problems, each a link to its step — then
the timeline: each tool call as one card (the call, its confirmation, the result or the error, the screenshots
before and after), the model's replies between them, and what the page did on its own (navigation, tools that
came and went). JSON is folded away; screenshots are thumbnails that enlarge when clicked; radio buttons above
the timeline show one kind of entry at a time.

One self-contained file: no script, no network, styles scoped to ``.wm-report`` (the filter and the zoom are
CSS: ``:has()`` and ``:checked``). It reads the same with scripts disabled, and it is also the notebook display
of :class:`Report` and of a :class:`~webmcp_nb.recording.session.Session`.

Everything in it came from pages, models or a session folder someone shared, so every text is escaped and the
only files read are screenshots the session wrote: a plain PNG file in the session folder with a name of the
shape it writes (``EVIDENCE_FILE``). Anything else an event names shows as missing evidence, unread."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.describe import PROBLEMS, actor, call_text, describe, family, preview
from ..core.display import clip, escape, json_or_text
from ..core.events import ORIGINS, Event
from .session import EVIDENCE_FILE, NO_FOLLOW

if TYPE_CHECKING:
    from .session import Session

__all__ = ["Report", "Summary", "Step", "summarize", "timeline", "render", "STYLE"]

STYLE = """
.wm-report{font:14px/1.45 system-ui,sans-serif;color:#1b1f24;background:#fff;max-width:64em;margin:0 auto;
padding:1em;box-sizing:border-box;overflow-wrap:anywhere}
.wm-report *{box-sizing:border-box}
.wm-report h1{font-size:1.35em;margin:.1em 0 .2em}.wm-report h2{font-size:1.05em;margin:1.2em 0 .4em}
.wm-meta,.wm-t{color:#57606a;font-size:12px}
.wm-outcome{display:inline-block;font-weight:600;padding:.15em .6em;border-radius:1em;margin:.4em 0}
.wm-outcome.ok{background:#dafbe1;color:#116329}.wm-outcome.bad{background:#ffebe9;color:#a40e26}
.wm-outcome.neutral{background:#eaeef2;color:#24292f}
.wm-answer{border-left:3px solid #1a7f37;background:#f6fff8;padding:.4em .7em;margin:.3em 0;white-space:pre-wrap}
.wm-facts{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:.6em 0}
.wm-facts>div:nth-child(odd){color:#57606a}
.wm-report code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:0 .2em;
border-radius:3px}
.wm-problems{border:1px solid #ffcecb;background:#fff5f5;border-radius:6px;padding:.4em .8em;margin:.6em 0}
.wm-problems div{margin:.15em 0}.wm-report a{color:#0969da}
.wm-bar{position:relative;height:14px;background:#f6f8fa;border:1px solid #d0d7de;border-radius:3px;margin:.3em 0}
.wm-bar span{position:absolute;top:0;bottom:0;min-width:2px}
.wm-seg-model{background:#c297ff}.wm-seg-tool{background:#54aeff}.wm-seg-evidence{background:#afb8c1}
.wm-seg-problem{background:#cf222e}
.wm-key span{display:inline-block;width:.8em;height:.8em;margin:0 .25em 0 .8em;vertical-align:-1px}
.wm-glance{border-collapse:collapse;font-size:13px;margin:.3em 0}
.wm-report .wm-glance td{padding:1px .6em 1px 0;vertical-align:top;text-align:left;border:0}
.wm-report .wm-glance tr{background:none}
.wm-filter{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #d0d7de;z-index:1}
.wm-filter label{margin-right:1em;white-space:nowrap;cursor:pointer}
.wm-report:has(.wm-f-tool:checked) .wm-entry:not(.k-tool),
.wm-report:has(.wm-f-model:checked) .wm-entry:not(.k-model),
.wm-report:has(.wm-f-page:checked) .wm-entry:not(.k-page),
.wm-report:has(.wm-f-problem:checked) .wm-entry:not(.problem){display:none}
.wm-entry{margin:.45em 0}
.wm-line{color:#57606a;font-size:13px;padding:0 .6em}
.wm-card{border:1px solid #d0d7de;border-left:4px solid #0969da;border-radius:6px;padding:.4em .7em}
.wm-card.problem{border-left-color:#cf222e;background:#fff8f8}
.wm-model{border-left:4px solid #8250df;padding:.3em .7em;background:#fbf8ff;border-radius:0 6px 6px 0}
.wm-turn{border-top:2px solid #1b1f24;padding-top:.3em;margin-top:1em;font-weight:600}
.wm-finish{border-left:4px solid #1a7f37;padding:.3em .7em;background:#f6fff8}
.wm-finish.problem{border-left-color:#cf222e;background:#fff5f5}
.wm-note{border-left:4px solid #bf8700;padding:.3em .7em;background:#fffbea}
.wm-n{display:inline-block;min-width:1.6em;font-weight:700;color:#57606a}
.wm-badge{font-size:12px;font-weight:600;padding:0 .45em;border-radius:1em;margin-left:.4em}
.wm-badge.ok{background:#dafbe1;color:#116329}.wm-badge.bad{background:#ffebe9;color:#a40e26}
.wm-badge.neutral{background:#eaeef2;color:#24292f}
.wm-error{color:#a40e26;font-weight:500;margin:.2em 0;white-space:pre-wrap}
.wm-preview{color:#24292f;font:12px ui-monospace,SFMono-Regular,Menlo,monospace;margin:.15em 0}
.wm-report details{margin:.15em 0}.wm-report summary{cursor:pointer;color:#57606a;font-size:12px}
.wm-report pre{background:#f6f8fa;padding:.5em;overflow:auto;max-height:24em;margin:.2em 0;white-space:pre-wrap;
font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.wm-shots{display:flex;flex-wrap:wrap;gap:.8em;align-items:flex-start;margin:.3em 0}
.wm-shot{display:flex;flex-direction:column;font-size:12px;color:#57606a;cursor:zoom-in}
.wm-shot input{display:none}
.wm-shot img{width:16em;max-width:100%;border:1px solid #d0d7de;border-radius:3px;margin-top:.15em}
.wm-shot input:checked+img{width:60em;cursor:zoom-out}
"""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024
HIDDEN = {"model.delta", "model.request", "model.tool_call", "confirmation.answered"}
"""Kinds the timeline leaves out (too fine-grained, or shown inside another entry)."""
STEP_PROBLEMS = {"tool.failed", "tool.refused", "tool.denied", "replay.diverged"}
"""Problems the summary lists under their call (a divergence without one is listed on its own)."""
GLANCE_ROWS = 40
"""Tool calls the summary lists at a glance (the timeline has them all)."""


# ----- what happened, grouped -----


@dataclass
class Step:
    """One tool call and everything about it: the confirmation, the call, how it ended, the screenshots, and
    what a replay found. ``number`` counts the calls that reached the page, as replays number their steps."""

    tool: str
    tab_id: int | None
    first: Event
    number: int | None = None
    confirm: Event | None = None
    answer: Event | None = None
    called: Event | None = None
    outcome: Event | None = None
    """``tool.returned``, ``tool.failed``, ``tool.refused`` or ``tool.denied``."""
    evidence: list[Event] = field(default_factory=list)
    diverged: list[Event] = field(default_factory=list)

    @property
    def arguments(self) -> Any:
        source = self.called or self.outcome or self.confirm or self.first
        return source.data.get("arguments")

    @property
    def problem(self) -> bool:
        return (self.outcome is not None and self.outcome.kind in PROBLEMS) or bool(self.diverged)

    @property
    def status(self) -> tuple[str, str]:
        """A badge: its text and its class."""
        text, tone = self._status()
        return (f"{text} · diverged", "bad") if self.diverged else (text, tone)

    def _status(self) -> tuple[str, str]:
        outcome = self.outcome
        kind = outcome.kind if outcome is not None else ""
        if kind == "tool.returned":
            return "ok", "ok"
        if outcome is not None and kind == "tool.failed":
            return str(outcome.data.get("code", "failed")), "bad"
        if kind == "tool.refused":
            return "refused", "bad"
        if kind == "tool.denied":
            return "denied", "bad"
        return "no result recorded", "neutral"


Entry = Step | Event


def timeline(events: list[Event]) -> list[Entry]:
    """The session's events as the report shows them: each tool call gathered into one :class:`Step`, in the
    order its first event happened; everything else as it is."""
    entries: list[Entry] = []
    asking: dict[tuple[int | None, str], list[Step]] = {}  # confirmation asked, call not made yet
    running: dict[tuple[int | None, str], list[Step]] = {}  # called, no outcome yet
    last: dict[tuple[int | None, str], Step] = {}
    number = 0

    def step_for(key: tuple[int | None, str], event: Event) -> Step:
        waiting = asking.get(key)
        if waiting:
            return waiting.pop(0)
        step = Step(key[1], key[0], event)
        entries.append(step)
        return step

    for event in events:
        kind, key = event.kind, (event.tab_id, str(event.data.get("tool", "")))
        if kind == "confirmation.requested":
            step = Step(key[1], key[0], event, confirm=event)
            asking.setdefault(key, []).append(step)
            entries.append(step)
            last[key] = step
        elif kind == "confirmation.answered":
            for step in asking.get(key, []):
                if step.confirm is not None and step.confirm.data.get("id") == event.data.get("id"):
                    step.answer = event
        elif kind == "tool.called":
            step = step_for(key, event)
            number += 1
            step.called, step.number = event, number
            running.setdefault(key, []).append(step)
            last[key] = step
        elif kind in ("tool.returned", "tool.failed"):
            pending = running.get(key)
            step = pending.pop(0) if pending else step_for(key, event)
            step.outcome = event
            last[key] = step
        elif kind in ("tool.refused", "tool.denied"):
            step = step_for(key, event)
            step.outcome = event
            last[key] = step
        elif kind.startswith("evidence.") and (running.get(key) or key in last):
            pending = running.get(key)
            (pending[0] if pending else last[key]).evidence.append(event)
        elif kind == "replay.diverged" and key in last and last[key].number == event.data.get("step"):
            last[key].diverged.append(event)  # (a call the replay never made stands on its own)
        elif kind not in HIDDEN:
            entries.append(event)
    return entries


@dataclass
class Summary:
    """The figures a report opens with; :func:`summarize` makes them."""

    title: str
    tasks: list[str]
    model: str | None
    outcome: str
    good: bool | None
    """``True`` when it went as asked, ``False`` when something went wrong, ``None`` when it cannot say."""
    answer: str | None
    turns: int
    replies: int
    calls: int
    ok: int
    failed: int
    refused: int
    denied: int
    diverged: int
    total_ms: float
    model_ms: float
    tool_ms: float
    evidence_ms: float
    tokens: dict[str, int]
    pages: list[str]
    problems: list[tuple[Step | None, str]]
    """Each problem in words, with the tool call it happened at (``None``: not at a call)."""
    verdict: tuple[str, str, list[str]] | None = None
    """What someone concluded about the session (an eval): who, ``pass``/``fail``/``error``, and why."""


def _usage(events: list[Event]) -> dict[str, int]:
    turns = [e.data.get("usage") for e in events if e.kind == "agent.turn.finished"]
    counted = [u for u in turns if isinstance(u, dict)]
    if not counted:
        counted = [u for e in events if e.kind == "model.response" and isinstance(u := e.data.get("usage"), dict)]
    tokens: dict[str, int] = {}
    for usage in counted:
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            if isinstance(usage.get(name), int):
                tokens[name] = tokens.get(name, 0) + usage[name]
    return tokens


def _ms(events: list[Event], *kinds: str) -> float:
    return sum(e.duration_ms or 0.0 for e in events if e.kind in kinds)


def summarize(session: Session, entries: list[Entry] | None = None) -> Summary:
    """The summary of ``session``: outcome, counts, times, tokens and problems."""
    events = list(session.events)
    entries = timeline(events) if entries is None else entries
    steps = [e for e in entries if isinstance(e, Step)]
    header = session.header
    counts = {kind: sum(1 for s in steps if s.outcome is not None and s.outcome.kind == kind) for kind in PROBLEMS}
    ok = sum(1 for s in steps if s.outcome is not None and s.outcome.kind == "tool.returned")
    tasks = [str(e.data.get("task", "")) for e in events if e.kind == "agent.turn.started"]
    finished = [e for e in events if e.kind == "agent.turn.finished"]
    problems: list[tuple[Step | None, str]] = []
    for step in steps:
        if step.outcome is not None and step.outcome.kind in PROBLEMS:
            problems.append((step, _step_problem(step)))
        problems += [(step, f"{step.tool}: the replay's result differs from the recording")] * len(step.diverged)
    on_their_own = {e.seq for e in entries if isinstance(e, Event) and e.kind == "replay.diverged"}
    verdict = _verdict(events)
    for event in events:
        if event.kind.startswith(VERDICT):
            continue  # its reasons lead the list
        if event.kind in PROBLEMS - STEP_PROBLEMS or event.seq in on_their_own:
            problems.append((None, f"{event.kind}: {describe(event)}"))
    outcome, good, answer = _outcome(finished, tasks, len(steps), len(problems))
    if verdict is not None:
        by, status, why = verdict
        problems[:0] = [(None, f"{by}: {reason}") for reason in why]
        good = status == "pass"
    started = [e for e in events if e.kind == "agent.turn.started"]
    said: Mapping[str, Any] = {"provider": header.provider, "model": header.model}  # as the recorder named it:
    if not header.model and started:  # an eval's "scripted:flights", not the endpoint's "any:flights"
        said = started[0].data
    named = [str(said[key]) for key in ("provider", "model") if said.get(key)]
    model = ":".join(named) if said.get("model") else None
    pages: list[str] = []
    for event in events:
        if event.kind in ("navigation", "tool.called") and event.url and event.url not in pages:
            pages.append(event.url)
    first = events[0].ts if events else header.created
    return Summary(
        title=header.title or f"Session {header.id}",
        tasks=tasks,
        model=model,
        outcome=outcome,
        good=good,
        answer=answer,
        turns=len(started),
        replies=sum(1 for e in events if e.kind == "model.response"),
        calls=sum(1 for s in steps if s.called is not None),
        ok=ok,
        failed=counts["tool.failed"],
        refused=counts["tool.refused"],
        denied=counts["tool.denied"],
        diverged=sum(len(s.diverged) for s in steps) + len(on_their_own),
        total_ms=max(0.0, (events[-1].ts - min(first, header.created)) * 1000) if events else 0.0,
        model_ms=_ms(events, "model.response"),
        tool_ms=_ms(events, "tool.returned", "tool.failed"),
        evidence_ms=_ms(events, "evidence.screenshot", "evidence.failed"),
        tokens=_usage(events),
        pages=pages[:20],
        problems=problems,
        verdict=verdict,
    )


VERDICT = "verdict."
"""The kinds of verdict events: ``verdict.pass``, ``verdict.fail``, ``verdict.error``."""


def _verdict(events: list[Event]) -> tuple[str, str, list[str]] | None:
    """The last verdict recorded (who reached it, its status, its reasons), if any."""
    found = [e for e in events if e.kind.startswith(VERDICT)]
    if not found:
        return None
    data = found[-1].data
    reasons = data.get("reasons")
    listed = [str(r) for r in reasons] if isinstance(reasons, list) else []
    return str(data.get("by") or "eval"), found[-1].kind[len(VERDICT) :], listed


def _step_problem(step: Step) -> str:
    outcome = step.outcome
    assert outcome is not None
    if outcome.kind == "tool.denied":
        return f"{step.tool}: denied by the user"
    if outcome.kind == "tool.refused":
        return f"{step.tool}: refused before the page saw it: {outcome.data.get('error', '')}"
    return f"{step.tool} failed: {outcome.data.get('code', '')}: {outcome.data.get('error', '')}"


def _outcome(finished: list[Event], tasks: list[str], steps: int, problems: int) -> tuple[str, bool | None, str | None]:
    """In words: how the session ended, whether that is good, and the agent's last answer."""
    if tasks:
        if len(finished) < len(tasks):
            return "Unfinished: the recording ends during a turn", False, None
        last = finished[-1].data
        if last.get("error"):
            return f"Failed: {clip(str(last['error']), 200)}", False, None
        if last.get("stopped"):
            return f"Stopped ({last['stopped']}) before an answer", False, last.get("answer")
        answer = last.get("answer")
        return ("Answered" if not problems else "Answered, with problems on the way"), not problems, answer
    if not steps:
        return "Nothing was called", None, None
    if problems:
        return f"{problems} problem{'s' if problems != 1 else ''} in {steps} tool calls", False, None
    return f"All {steps} tool calls returned", True, None


# ----- HTML -----


def _seconds(ms: float) -> str:
    return f"{ms / 1000:,.1f} s" if ms >= 1000 else f"{ms:,.0f} ms"


def _pre(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return f"<pre>{escape(clip(text, 20_000))}</pre>"


def _folded(label: str, value: Any) -> str:
    return f"<details><summary>{escape(label)}</summary>{_pre(value)}</details>"


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


class _Page:
    """One rendering: the ids of its anchors and radio group are its own, so several reports can share a
    notebook page."""

    def __init__(self, session: Session, entries: list[Entry]) -> None:
        self.session = session
        self.prefix = f"wm{secrets.token_hex(4)}"
        self.start = session.events[0].ts if session.events else session.header.created
        self.index = {id(entry): i for i, entry in enumerate(entries)}

    def anchor(self, entry: Entry) -> str:
        return f"{self.prefix}-{self.index[id(entry)]}"

    def link(self, step: Step, text: str) -> str:
        return f"<a href='#{self.anchor(step)}'>{escape(text)}</a>"

    def when(self, event: Event) -> str:
        return f"+{max(0.0, event.ts - self.start):,.1f} s"

    # --- the summary ---

    def summary(self, s: Summary, entries: list[Entry]) -> str:
        header = self.session.header
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(header.created))
        meta = [f"session {header.id}", f"started {started}", f"webmcp-nb {header.library}"]
        if header.browser:
            product = re.search(r"(HeadlessChrome|Chrome|Chromium|Edg|Firefox)/[\d.]+", header.browser)
            meta.append(product.group(0) if product else clip(header.browser, 60))
        tone = {True: "ok", False: "bad", None: "neutral"}[s.good]
        parts = [f"<h1>{escape(s.title)}</h1><div class='wm-meta'>{escape(' · '.join(meta))}</div>"]
        if s.verdict is not None:
            by, status, why = s.verdict
            words = {"pass": "passed", "fail": "failed", "error": "ended in an error"}.get(status, status)
            reasons = "".join(f"<div>✖ {escape(clip(reason, 2000))}</div>" for reason in why)
            parts.append(
                f"<div class='wm-outcome {tone}'>{escape(by.capitalize())}: {escape(words)}</div>"
                + (f"<div class='wm-problems'><b>Why</b>{reasons}</div>" if why else "")
                + f"<div class='wm-t'>The agent's own outcome: {escape(s.outcome)}</div>"
            )
        else:
            parts.append(f"<div class='wm-outcome {tone}'>{escape(s.outcome)}</div>")
        if s.answer:
            parts.append(f"<div class='wm-answer'>{escape(clip(s.answer, 4000))}</div>")
        facts: list[tuple[str, str]] = []
        for i, task in enumerate(s.tasks, 1):
            facts.append((f"Task {i}" if len(s.tasks) > 1 else "Task", escape(clip(task, 1000))))
        if s.model:
            facts.append(("Model", f"<code>{escape(s.model)}</code>"))
        calls = f"{s.calls} tool call{'s' if s.calls != 1 else ''} reached the page: {s.ok} ok, {s.failed} failed"
        extra = [f"{n} {what}" for n, what in ((s.refused, "refused"), (s.denied, "denied")) if n]
        extra += [f"{s.diverged} diverged from the recording"] if s.diverged else []
        turns = f"{s.turns} turn{'s' if s.turns != 1 else ''}, {s.replies} model replies; " if s.turns else ""
        facts.append(("Steps", escape(turns + calls + (f"; {', '.join(extra)}" if extra else ""))))
        times = [f"total {_seconds(s.total_ms)}"]
        times += [f"model {_seconds(s.model_ms)}"] if s.replies else []
        times += [f"tools {_seconds(s.tool_ms)}"] + (
            [f"screenshots {_seconds(s.evidence_ms)}"] if s.evidence_ms else []
        )
        facts.append(("Time", escape(" · ".join(times))))
        if s.tokens:
            total = s.tokens.get("total_tokens", 0)
            split = f" ({s.tokens.get('prompt_tokens', 0):,} in, {s.tokens.get('completion_tokens', 0):,} out)"
            facts.append(("Tokens", escape(f"{total:,}{split}")))
        if s.pages:
            facts.append(("Pages", "<br>".join(f"<code>{escape(clip(url, 200))}</code>" for url in s.pages)))
        parts.append("<div class='wm-facts'>" + "".join(f"<div>{k}</div><div>{v}</div>" for k, v in facts) + "</div>")
        others = s.problems[len(s.verdict[2]) :] if s.verdict is not None else s.problems  # the verdict's: above
        if others:
            rows = "".join(
                f"<div>✖ {self.link(step, _label(step)) + ' · ' if step else ''}{escape(clip(text, 400))}</div>"
                for step, text in others[:30]
            )
            more = f"<div>… and {len(others) - 30} more</div>" if len(others) > 30 else ""
            parts.append(f"<div class='wm-problems'><b>Where it went wrong</b>{rows}{more}</div>")
        parts.append(self.bar(s))
        parts.append(self.glance([e for e in entries if isinstance(e, Step)]))
        return "".join(parts)

    def bar(self, s: Summary) -> str:
        """Where the time went: model replies, tool calls and screenshots on one bar, problems in red."""
        events = self.session.events
        if not events or s.total_ms <= 0:
            return ""
        span = s.total_ms / 1000
        classes = {
            "model.response": "model",
            "tool.returned": "tool",
            "tool.failed": "problem",
            "evidence.screenshot": "evidence",
        }
        segments = []
        for event in events:
            kind = classes.get(event.kind)
            if kind is None and event.kind in PROBLEMS:
                kind = "problem"
            if kind is None:
                continue
            length = (event.duration_ms or 0) / 1000
            left = max(0.0, (event.ts - length - self.start) / span * 100)
            width = min(100.0 - left, length / span * 100)
            segments.append(f"<span class='wm-seg-{kind}' style='left:{left:.2f}%;width:{width:.2f}%'></span>")
        key = (
            "<div class='wm-key wm-t'><span class='wm-seg-model'></span>model<span class='wm-seg-tool'></span>"
            "tools<span class='wm-seg-evidence'></span>screenshots<span class='wm-seg-problem'></span>problems"
            f" — {_seconds(s.total_ms)} in all</div>"
        )
        return f"<h2>Where the time went</h2><div class='wm-bar'>{''.join(segments[:2000])}</div>{key}"

    def glance(self, steps: list[Step]) -> str:
        """Every tool call on one line each, linked to its card: what the agent did, in order."""
        if not steps:
            return ""
        rows = []
        for step in steps[:GLANCE_ROWS]:
            text, tone = step.status
            took = step.outcome.duration_ms if step.outcome is not None else None
            call = escape(call_text(step.tool, step.arguments, 60))
            rows.append(
                f"<tr><td>{self.link(step, str(step.number or '–'))}</td><td><code>{call}</code></td>"
                f"<td><span class='wm-badge {tone}'>{escape(text)}</span></td>"
                f"<td class='wm-t'>{_seconds(took) if took is not None else ''}</td></tr>"
            )
        left = len(steps) - GLANCE_ROWS
        more = f"<div class='wm-t'>… {left} more in the timeline</div>" if left > 0 else ""
        return f"<h2>Tool calls at a glance</h2><table class='wm-glance'>{''.join(rows)}</table>{more}"

    # --- the timeline ---

    def filters(self, entries: list[Entry]) -> str:
        counts = {
            "all": len(entries),
            "tool": sum(1 for e in entries if _kind_class(e) == "k-tool"),
            "model": sum(1 for e in entries if _kind_class(e) == "k-model"),
            "page": sum(1 for e in entries if _kind_class(e) == "k-page"),
            "problem": sum(1 for e in entries if _problem(e)),
        }
        names = {"all": "Everything", "tool": "Tool calls", "model": "Model", "page": "Page", "problem": "Problems"}
        group = f"{self.prefix}-show"
        radios = "".join(
            f"<label><input type='radio' name='{group}' class='wm-f-{key}'{' checked' if key == 'all' else ''}>"
            f" {names[key]} ({counts[key]})</label>"
            for key in names
        )
        return f"<div class='wm-filter'><span class='wm-t'>Show:</span> {radios}</div>"

    def entry(self, entry: Entry) -> str:
        problem = " problem" if _problem(entry) else ""
        kind = _kind_class(entry)
        body = self.step(entry) if isinstance(entry, Step) else self.event(entry)
        return f"<div class='wm-entry {kind}{problem}' id='{self.anchor(entry)}'>{body}</div>"

    def step(self, step: Step) -> str:
        text, tone = step.status
        outcome = step.outcome
        meta = [self.when(step.first)]
        if outcome is not None and outcome.duration_ms is not None and outcome.kind != "tool.refused":
            meta.append(f"{_seconds(outcome.duration_ms)} in the page")
        who = actor(step.called or step.outcome or step.first)
        meta += [who] if who else []
        risk = (step.called or step.confirm or step.first).data.get("risk")
        meta += [f"{risk} risk"] if isinstance(risk, str) else []
        number = f"<span class='wm-n'>{step.number}</span>" if step.number else "<span class='wm-n'>–</span>"
        parts = [
            f"<div>{number}<code>{escape(call_text(step.tool, step.arguments, 120))}</code>"
            f"<span class='wm-badge {tone}'>{escape(text)}</span> <span class='wm-t'>{escape(' · '.join(meta))}"
            "</span></div>"
        ]
        if step.confirm is not None:
            answer = step.answer.data if step.answer is not None else None
            by = str(answer.get("by") or "") if answer is not None else ""
            verdict = (
                f"{'approved' if answer.get('approved') else 'denied'} by {ORIGINS.get(by, by) if by else 'someone'}"
                if answer is not None
                else "no answer recorded"
            )
            parts.append(f"<div class='wm-t'>The user was asked first: {escape(verdict)}</div>")
        if outcome is not None and outcome.kind == "tool.returned":
            parts.append(f"<div class='wm-preview'>→ {escape(preview(outcome.data.get('text', ''), 240))}</div>")
        elif outcome is not None and outcome.kind in ("tool.failed", "tool.refused"):
            code = outcome.data.get("code", "")
            parts.append(
                f"<div class='wm-error'>{escape(code)}: {escape(clip(str(outcome.data.get('error')), 2000))}</div>"
            )
        elif outcome is not None and outcome.kind == "tool.denied":
            parts.append("<div class='wm-error'>Denied: the call was not made.</div>")
        if step.arguments not in (None, {}):
            parts.append(_folded("arguments", step.arguments))
        if outcome is not None and outcome.kind == "tool.returned":
            text = str(outcome.data.get("text", ""))
            truncated = f", recorded cut from {outcome.data['truncated']:,}" if outcome.data.get("truncated") else ""
            parts.append(_folded(f"result ({len(text):,} characters{truncated})", json_or_text(text)))
        if step.evidence:
            parts.append(self.shots(step.evidence))
        for found in step.diverged:
            parts.append(
                "<div class='wm-error'>The replay's result differs from the recording.</div>"
                + _folded("diff (recorded → replayed)", str(found.data.get("diff", "")))
            )
        return f"<div class='wm-card{' problem' if step.problem else ''}'>{''.join(parts)}</div>"

    def shots(self, evidence: list[Event]) -> str:
        figures, spent = [], 0.0
        for event in evidence:
            spent += event.duration_ms or 0.0
            phase = escape(str(event.data.get("phase", "")))
            if event.kind == "evidence.failed":
                figures.append(f"<div class='wm-shot'>{phase}: no screenshot ({escape(event.data.get('error'))})</div>")
                continue
            png = _screenshot(self.session, event.data.get("file"))
            if png is None:
                figures.append(f"<div class='wm-shot'>{phase}: (missing evidence)</div>")
                continue
            alt = escape(f"{event.data.get('tool')} {event.data.get('phase')}")
            source = base64.b64encode(png).decode()
            figures.append(
                f"<label class='wm-shot' title='click to enlarge or shrink'>{phase}<input type='checkbox'>"
                f"<img alt='{alt}' src='data:image/png;base64,{source}'></label>"
            )
        took = f"<div class='wm-t'>screenshots took {_seconds(spent)} (not counted in the call's time)</div>"
        return f"<div class='wm-shots'>{''.join(figures)}</div>{took if spent else ''}"

    def event(self, event: Event) -> str:
        kind, data = event.kind, event.data
        when = f"<span class='wm-t'>{escape(self.when(event))}</span>"
        if kind == "agent.turn.started":
            task = escape(clip(str(data.get("task", "")), 2000))
            return f"<div class='wm-turn'>Turn: {task} {when}</div>"
        if kind == "agent.turn.finished":
            took = f" · {_seconds(event.duration_ms)}" if event.duration_ms else ""
            css = "wm-finish problem" if data.get("error") or data.get("stopped") else "wm-finish"
            return f"<div class='{css}'><b>{escape(describe(event))}</b> {when}<span class='wm-t'>{took}</span></div>"
        if kind == "model.response":
            took = f" · {_seconds(event.duration_ms)}" if event.duration_ms else ""
            usage = data.get("usage") or {}
            tokens = f" · {usage['total_tokens']:,} tokens" if usage.get("total_tokens") else ""
            said = str(data.get("content") or "").strip()
            calls = [c.get("name") for c in data.get("tool_calls") or [] if isinstance(c, dict)]
            plan = f"<div class='wm-t'>→ calls {escape(', '.join(str(c) for c in calls))}</div>" if calls else ""
            words = f"<div style='white-space:pre-wrap'>{escape(clip(said, 4000))}</div>" if said else ""
            reasoning = _folded("reasoning", data["reasoning"]) if data.get("reasoning") else ""
            head = f"<div class='wm-t'>Model · {escape(self.when(event) + took + tokens)}</div>"
            return f"<div class='wm-model'>{head}{words}{plan}{reasoning}</div>"
        if kind == "note":
            return f"<div class='wm-note'>{escape(clip(str(data.get('text', '')), 4000))} {when}</div>"
        if kind.startswith("evidence."):  # a screenshot of no call the session recorded
            return f"<div class='wm-line'>{escape(describe(event))} {when}</div>{self.shots([event])}"
        label = f"<b>{escape(kind)}</b> {escape(clip(describe(event), 600))}"
        who = actor(event)
        by = f" · {escape(who)}" if who else ""
        return f"<div class='wm-line'>{label} {when}<span class='wm-t'>{by}</span></div>"


def _label(step: Step) -> str:
    """How a call is named in links: its step number, or what became of it when it never reached the page."""
    if step.number is not None:
        return f"step {step.number}"
    return "refused call" if step.outcome is not None and step.outcome.kind == "tool.refused" else "denied call"


def _kind_class(entry: Entry) -> str:
    """The report's filter class of an entry: the log's families (``describe.FAMILIES``), skills and the rest
    with the page."""
    if isinstance(entry, Step):
        return "k-tool"
    return {"tool calls": "k-tool", "agent": "k-model", "notes": "k-note"}.get(family(entry.kind), "k-page")


def _problem(entry: Entry) -> bool:
    if isinstance(entry, Step):
        return entry.problem
    if entry.kind == "agent.turn.finished":
        return bool(entry.data.get("error") or entry.data.get("stopped"))
    return entry.kind in PROBLEMS


def render(session: Session, *, fragment: bool = False) -> str:
    """The report as a whole HTML document, or as a ``fragment`` (scoped styles) to show inside a notebook."""
    entries = timeline(list(session.events))
    summary = summarize(session, entries)
    page = _Page(session, entries)
    shown = "".join(page.entry(entry) for entry in entries) or "<div class='wm-t'>Nothing was recorded.</div>"
    body = (
        f"<style>{STYLE}</style><div class='wm-report'>{page.summary(summary, entries)}"
        f"<h2>Timeline</h2>{page.filters(entries)}{shown}</div>"
    )
    if fragment:
        return body
    head = f'<meta charset="utf-8"><title>{escape(summary.title)}</title>'
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


class Report:
    """A session's report: it displays as itself in a notebook; ``html`` is the whole file (one
    self-contained HTML document) and ``save(path)`` writes it. Made by ``session.report()``; it renders the
    session as it is when asked, so a report of a session still recording shows what has happened so far."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def html(self) -> str:
        """The whole report as one HTML document."""
        return render(self.session)

    @property
    def summary(self) -> Summary:
        """Its figures: outcome, counts, times, tokens, problems."""
        return summarize(self.session)

    def save(self, path: str | Path) -> Path:
        """Write the report to ``path`` (one file that opens offline); returns the path."""
        target = Path(path)
        target.write_text(self.html, encoding="utf-8")
        return target

    def __repr__(self) -> str:
        s = self.summary
        problems = len(s.problems)
        verdict = f"{s.verdict[0]}: {s.verdict[1]}; " if s.verdict is not None else ""
        return (
            f"<Report {s.title!r}: {verdict}{s.outcome}; {s.calls} tool calls, "
            f"{problems} problem{'' if problems == 1 else 's'} — .save(path) writes it, .html is the file>"
        )

    def _repr_html_(self) -> str:
        return render(self.session, fragment=True)
