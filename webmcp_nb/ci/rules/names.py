"""Names: valid as WebMCP takes them, one tool per name across the page's frames, and the same names on every load
(a name numbered per load breaks every agent, lock and eval that knew the last one)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..findings import Finding, Rule
from .base import PageTools, found, shown

__all__ = ["RULES", "check"]

NO_TOOLS = Rule("no-tools", "names", "error", "the page registers at least one tool")
INVALID = Rule("name-invalid", "names", "error", "a name is 1–128 of A–Z, a–z, 0–9, _, - and . (WebMCP's rule)")
DUPLICATE = Rule("name-duplicate", "names", "error", "no two frames of the page register the same name")
UNSTABLE = Rule("name-unstable", "names", "error", "a second load of the page registers the same names")
NUMBERED = Rule("name-numbered", "names", "warning", "no name carries a number or id that looks generated")
RULES = (NO_TOOLS, INVALID, DUPLICATE, UNSTABLE, NUMBERED)

VALID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
GENERATED = re.compile(r"\d{4,}|(?<![0-9a-z])(?=[0-9a-f]*\d)[0-9a-f]{8,}(?![0-9a-z])", re.I)
"""A run of four digits or more (a counter, a timestamp), or of eight hex digits or more (an id, a hash)."""


def check(page: PageTools) -> Iterator[Finding]:
    if not page.entries and page.skill is None:
        yield found(
            NO_TOOLS,
            None,
            "the page registered no tools (none by the time it had loaded)",
            "Check that the page registers its tools (document.modelContext.registerTool, or a <form toolname>) as "
            "it loads; if it registers them later, pass --wait-for NAME.",
        )
    counts = Counter(entry.name for entry in page.entries)
    reported: set[str] = set()
    for entry in page.entries:
        if not VALID.match(entry.name):
            yield found(
                INVALID,
                entry,
                f"{shown(entry.name)} is not a name WebMCP takes (1–128 of A–Z, a–z, 0–9, _, - and .)",
                "Rename it: Chromium's native WebMCP refuses to register it (InvalidStateError).",
            )
        if counts[entry.name] > 1 and entry.name not in reported:
            reported.add(entry.name)
            origins = sorted({e.origin or "the page's own origin" for e in page.entries if e.name == entry.name})
            yield found(
                DUPLICATE,
                entry,
                f"{counts[entry.name]} frames register {entry.name!r} ({', '.join(origins)}): an agent that calls it "
                "gets the top frame's",
                "Give each frame's tool a name of its own.",
            )
        if mark := GENERATED.search(entry.name):
            yield found(
                NUMBERED,
                entry,
                f"{entry.name!r} carries {mark.group()!r}, which looks generated (a counter, a timestamp, an id)",
                "Use a fixed name: agents, lock files and evals find a tool by its name.",
            )
    if page.again is not None:
        first = {e.key for e in page.entries}
        second = {e.key for e in page.again}
        for name, origin in sorted(first ^ second):
            where = f" (in a frame of {origin})" if origin else ""
            seen = "the first load" if (name, origin) in first else "the second load"
            yield Finding(
                UNSTABLE.id,
                UNSTABLE.severity,
                name,
                f"{name!r}{where} was registered on {seen} only: the page's names change from load to load",
                "Register the same names on every load (no counters, timestamps or random ids in names).",
                origin or None,
            )
