"""What lint finds: each rule (an id, a family, a default severity, what it checks) and each finding (the rule, the
tool, what is wrong and the fix). Plain data: views, JSON and JUnit are made from it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..core.display import clip

__all__ = ["Severity", "SEVERITIES", "Rule", "Finding", "MESSAGE_LIMIT"]

MESSAGE_LIMIT = 2_000
"""Characters of a finding's message at the most: it quotes page text, which a page can make as long as it likes
(a pattern of 200,000 characters); a CI log, a JUnit file and a terminal get the rest as a count."""

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
"""From the worst: an error fails the gate (exit 1), a warning and an info are reported."""


@dataclass(frozen=True)
class Rule:
    """One check: its id (what findings, the config and the docs name it by), its family, its default severity and
    what it checks, in a line."""

    id: str
    family: str
    severity: Severity
    checks: str


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a page's tool (``tool`` ``None``: with the page, or the skill), and how to fix it.
    ``message`` quotes page text as it is; every view makes it visible or escapes it."""

    rule: str
    severity: Severity
    tool: str | None
    message: str
    fix: str
    origin: str | None = None
    """The frame's origin when the tool is an iframe's of another origin than the page's."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", clip(self.message, MESSAGE_LIMIT))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
