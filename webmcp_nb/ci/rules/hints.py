"""Annotations: a tool that only reads says ``readOnlyHint`` (agents then call it without asking), and a tool that
sends, pays, deletes or publishes says ``consequentialHint`` or declares a high risk (agents then always ask the
user first). What a tool does is judged from its name and description; what agents do about it is the risk the
agent's confirmation policy reads from the annotations (``core.agent_rules.risk_of``), the same here as there."""

from __future__ import annotations

from collections.abc import Iterator

from ...core.agent_rules import risk_of
from ..findings import Finding, Rule
from ..lock import ToolEntry
from .base import PageTools, found, sentence_starts, words_of_name

__all__ = ["RULES", "check", "acts", "reads"]

HIGH = Rule(
    "consequential-hint-missing", "annotations", "error",
    "a tool that sends, pays, deletes or publishes has consequentialHint (or a declared high risk)",
)  # fmt: skip
READ_ONLY = Rule("readonly-hint-missing", "annotations", "warning", "a tool that only reads has readOnlyHint")
CONTRADICTS = Rule("readonly-but-acts", "annotations", "error", "a tool marked readOnlyHint does not send or pay")
RULES = (HIGH, READ_ONLY, CONTRADICTS)

ACTS = {
    "send": "sends", "email": "sends", "message": "sends", "pay": "pays", "charge": "pays", "purchase": "pays",
    "buy": "pays", "checkout": "pays", "order": "pays", "donate": "pays", "transfer": "pays", "wire": "pays",
    "book": "books", "reserve": "books", "submit": "submits", "delete": "deletes", "destroy": "deletes",
    "erase": "deletes", "purge": "deletes", "publish": "publishes", "post": "publishes",
}  # fmt: skip
"""The verbs of what the agent's rules call high risk ("it submits, sends, pays, deletes or publishes"), as a
tool's name or a sentence of its description starts with them, and what each means. Not ``share``: a tool named
so often only makes a link (Google's pizza demo: "Get a shareable URL")."""
LEADS = {"place", "make", "confirm", "complete", "process", "finalize", "execute", "create", "do"}
"""Words a name may start with before the verb that says what it does (``placeOrder``, ``confirmBooking``)."""
READS = {"get", "list", "read", "fetch", "lookup", "count", "describe", "find", "view", "inspect"}
"""The verbs a tool that only reads starts its name with (not ``search`` or ``show``: those often change the
page)."""


def _verb(word: str) -> str | None:
    """``word`` as an entry of ``ACTS`` (``books`` → ``book``, ``purchases`` → ``purchase``), or ``None``."""
    stem = word.removesuffix("ing")
    for form in (word, word.removesuffix("s"), word.removesuffix("es"), stem, stem + "e"):
        if form in ACTS:
            return form
    return None


def acts(entry: ToolEntry) -> tuple[str, str] | None:
    """What the tool's name or description says it does that agents treat as high risk, and the word that says
    so (``("pays", "placeOrder")``), or ``None``."""
    words = words_of_name(entry.name)
    for word in words[:2] if words and words[0] in LEADS else words[:1]:
        if (verb := _verb(word)) is not None:
            return ACTS[verb], f"its name ({entry.name!r})"
    for word in sentence_starts(entry.description):
        if (verb := _verb(word)) is not None:
            return ACTS[verb], f"its description ({word!r})"
    return None


def reads(entry: ToolEntry) -> bool:
    """Whether the tool's name says it only reads (``getCart``, ``listFlights``)."""
    words = words_of_name(entry.name)
    return bool(words) and words[0] in READS


def check(page: PageTools) -> Iterator[Finding]:
    for entry in page.entries:
        risk = risk_of(entry.annotations)
        doing = acts(entry)
        if doing is not None and risk != "high":
            what, said = doing
            if page.declarative.get(entry.name) is False:
                continue  # a declarative form that waits for the person: the person submits it
            if risk == "low":
                yield found(
                    CONTRADICTS,
                    entry,
                    f"{said} says it {what}, yet it is marked readOnlyHint: agents call it without asking anyone",
                    "Drop readOnlyHint and add consequentialHint: true, or rename it if it only reads.",
                )
                continue
            fix = (
                'Declare risk: "high" in its defineTool({...}) (agents then ask the user first).'
                if entry.name in page.skill_tools
                else "Add annotations: {consequentialHint: true} to its registration (agents then ask the user "
                "first); for a declarative form, drop toolautosubmit so that the person submits it."
            )
            form = (
                " (a declarative form that submits itself: toolautosubmit)" if page.declarative.get(entry.name) else ""
            )
            yield found(
                HIGH,
                entry,
                f"{said} says it {what}{form}, but nothing marks it high risk: agents may call it without asking the "
                "user",
                fix,
            )
        elif doing is None and risk != "low" and reads(entry):
            yield found(
                READ_ONLY,
                entry,
                f"its name ({entry.name!r}) says it reads, but it is not marked readOnlyHint: agents that ask before "
                "acting ask before this too",
                "Add annotations: {readOnlyHint: true} if it changes nothing; if it does change something, name it "
                "for what it changes.",
            )
