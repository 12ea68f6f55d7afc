"""What lint found, for a person and for CI: per page (or lock file, or skill) its tools and findings, as text for a
log, a table in a notebook, JSON, and JUnit XML (:mod:`.junit`). Every page text in it is shown as data: escaped in
HTML, its controls made visible in text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.display import Markup, escape, table, visible
from .findings import SEVERITIES, Finding
from .lock import json_text

__all__ = ["LintedPage", "LintReport", "LINT_FORMAT"]

LINT_FORMAT = "webmcp-nb-lint"
MARKS = {"error": "✖ error", "warning": "⚠ warning", "info": "· info"}
COLOURS = {"error": "#a40e26", "warning": "#7d4e00", "info": "#57606a"}


@dataclass
class LintedPage:
    """One thing lint read: a page (its URL), a lock file or a skill, with its tools and findings."""

    target: str
    """The URL, the lock file's path, or ``skill NAME (folder)``."""
    tools: list[str]
    """The tools it read, as findings name them."""
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)
    """How it was read (loaded twice, the tools sampled), in words."""

    def count(self, severity: str) -> int:
        return sum(f.severity == severity for f in self.findings)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


class LintReport:
    """The findings of one lint run. ``ok`` is what CI gates on: no finding of severity ``error``."""

    def __init__(self, pages: Sequence[LintedPage], settings: str | None = None) -> None:
        self.pages = list(pages)
        self.settings = settings
        """The settings file it used (``None``: the defaults)."""

    @property
    def findings(self) -> list[Finding]:
        return [f for page in self.pages for f in page.findings]

    def count(self, severity: str) -> int:
        return sum(page.count(severity) for page in self.pages)

    @property
    def ok(self) -> bool:
        """No error: the gate passes (warnings and infos are reported, not fatal)."""
        return self.count("error") == 0

    def summary(self) -> str:
        counts = ", ".join(_count(self.count(s), s) for s in SEVERITIES)
        what = f"{_count(len(self.pages), 'target')}, {_count(sum(len(p.tools) for p in self.pages), 'tool')}"
        return f"webmcp-nb lint: {what}: {counts} (settings: {self.settings or 'the defaults'})"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": LINT_FORMAT,
            "version": 1,
            "ok": self.ok,
            "counts": {s: self.count(s) for s in SEVERITIES},
            "settings": self.settings,
            "targets": [
                {"target": p.target, "tools": p.tools, "notes": p.notes, "findings": [f.to_json() for f in p.findings]}
                for p in self.pages
            ],
        }

    def json_text(self) -> str:
        return json_text(self.to_json()) + "\n"

    def junit(self) -> str:
        """The findings as JUnit XML (see :func:`webmcp_nb.ci.junit.lint_junit`)."""
        from .junit import lint_junit

        return lint_junit(self)

    def __str__(self) -> str:
        lines = [self.summary()]
        for page in self.pages:
            counts = ", ".join(_count(page.count(s), s) for s in SEVERITIES if page.count(s))
            lines += [
                "",
                f"{page.target}: {_count(len(page.tools), 'tool')}" + (f"; {counts}" if counts else "; nothing found"),
            ]
            lines += [f"  ({note})" for note in page.notes]
            tool: object = ...
            for finding in page.findings:
                if finding.tool != tool:
                    tool = finding.tool
                    where = "(the page)" if finding.tool is None else finding.tool
                    lines.append(f"  {where}" + (f" in a frame of {finding.origin}" if finding.origin else ""))
                lines.append(f"    {MARKS[finding.severity]:<9}  {finding.rule}: {finding.message}")
                lines += [f"               fix: {line}" if i == 0 else f"                    {line}"
                          for i, line in enumerate(finding.fix.splitlines())]  # fmt: skip
        return visible("\n".join(lines))

    def __repr__(self) -> str:
        return f"<LintReport {visible(self.summary())}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        parts = [f"<div><b>{escape(self.summary())}</b>"]
        for page in self.pages:
            rows = [
                [
                    Markup(f'<b style="color:{COLOURS[f.severity]}">{escape(f.severity)}</b>'),
                    Markup(f"<code>{escape(f.rule)}</code>"),
                    "(the page)" if f.tool is None else f.tool + (f" (in a frame of {f.origin})" if f.origin else ""),
                    f.message,
                    f.fix,
                ]
                for f in page.findings
            ]
            caption = f"{page.target}: {_count(len(page.tools), 'tool')}" + (
                f" ({'; '.join(page.notes)})" if page.notes else ""
            )
            if rows:
                parts.append(table(["severity", "rule", "tool", "what is wrong", "fix"], rows, caption))
            else:
                parts.append(f"<div>{escape(caption)}: nothing found</div>")
        parts.append("</div>")
        return {"text/plain": str(self), "text/html": "".join(parts)}
