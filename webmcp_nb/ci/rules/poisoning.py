"""Tool poisoning: text in a tool that speaks to the model instead of describing the tool — telling it to ignore
its instructions, to always call this tool or another one, to keep something from the user, to send data or go
somewhere else — and text a person reviewing the page does not see as the model reads it: invisible or
bidirectional characters, markup, and bulk far beyond what a tool needs to say (where instructions hide). Every
text a model reads is checked: the title, the description, and every name and string of the schema (each
parameter's name, title, description and enum values, and the rest: ``anyOf``'s choices, ``$defs``, ``const``,
``default``, a keyword of the page's own)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import urlsplit

from ...core.display import clip, visible
from ..findings import Finding, Rule
from ..lock import ToolEntry
from .base import PageTools, found, texts

__all__ = ["RULES", "check"]

INSTRUCTIONS = Rule("model-instructions", "poisoning", "error", "no text in a tool gives the model instructions")
HIDDEN = Rule("hidden-characters", "poisoning", "error", "no invisible, bidirectional or control characters")
MARKUP = Rule("markup", "poisoning", "warning", "texts are plain: no HTML, no markdown links or images")
PADDING = Rule("padding", "poisoning", "error", "no text far longer than its budget, no runs of blank space")
RULES = (INSTRUCTIONS, HIDDEN, MARKUP, PADDING)

PADDING_FACTOR = 4
"""A description longer than this many times its budget is far longer than a tool needs."""

_I = re.I
_TALK = [
    ("to ignore its instructions",
     re.compile(r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(instructions?|rules|prompts?|guidelines|"
                r"messages|context|policies)\b", _I)),
    ("to always call a tool",
     re.compile(r"\b(always|you must|you should|make sure to|be sure to)\s+(first\s+)?(call|use|invoke|run)\b", _I)),
    ("to call this tool first",
     re.compile(r"\b(call|use|invoke|run)\s+(this( tool)?|it)\s+(first|before any|before anything|every time|"
                r"whenever|instead)\b", _I)),
    ("to keep something from the user",
     re.compile(r"\b(do not|don't|never)\s+(tell|inform|mention|show|reveal|let)\b[^.\n]{0,30}\b(user|human|person)"
                r"|\bwithout\s+(telling|asking|informing|notifying)\s+(the\s+)?(user|human|person)\b", _I)),
    ("to send data elsewhere",
     re.compile(r"\b(send|forward|upload|post|e-?mail|transmit|exfiltrate|copy|leak)\b[^.\n]{0,60}\b(to|at)\s+"
                r"(https?://|[\w.+-]+@[\w-]+\.)", _I)),
    ("to hand over private data",
     re.compile(r"\b(include|add|append|pass|put|attach|send)\b[^.\n]{0,40}\b(conversation|chat history|system "
                r"prompt|api[ _-]?keys?|passwords?|credentials|tokens?|cookies|secrets?|private keys?)\b", _I)),
    ("as if it were the system",
     re.compile(r"<\s*/?\s*(important|system|instructions?|admin|assistant)\s*>|\[(INST|SYSTEM)\]|"
                r"(^|\n)\s*(system|assistant)\s*:|\b(system prompt|developer message)\b", _I)),
]  # fmt: skip
"""What text aimed at a model says, and how it says it."""
_GO = re.compile(
    r"\b(go|navigate|visit|open|browse|redirect|head|switch)\s+(over\s+)?(to\s+)?(https?://[^\s\"'<>)]+)", _I
)
_MUST = r"(always|must|first|before|instead|every time|need to|have to|required to)"
_CALLS = (
    rf"\b{_MUST}\b[^.;\n]{{{{0,40}}}}\b(call|invoke|use|run|execute)\s+(the\s+)?[`'\"]?{{name}}\b"
    rf"|\b(call|invoke|use|run|execute)\s+(the\s+)?[`'\"]?{{name}}\b[^.;\n]{{{{0,25}}}}\b{_MUST}\b"
)
"""Another tool named with a call and a compulsion (``always call payInvoice``, ``call login first``); a pointer to
another tool (``then call readResults``, ``use check for checkboxes``) is a description's business."""
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?/?>")
_MARKDOWN = re.compile(r"!?\[[^\]\n]*\]\(\s*[^)\s]+[^)]*\)|\b(javascript|vbscript|data):", _I)
_BLANK = re.compile(r"(?:[ \t]*\n){10,}|[ \t\u00a0\u3000]{100,}")


def _hidden(text: str) -> list[str]:
    """The code points in ``text`` a reader does not see as the model reads them: format characters (zero-width
    spaces and joiners, bidirectional controls, tag characters, the BOM) and control characters (but tab and
    line ends)."""
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if unicodedata.category(c) == "Cf" or (unicodedata.category(c) == "Cc" and c not in "\t\n\r")
        }
    )


def _quote(text: str) -> str:
    return visible(clip(" ".join(text.split()), 100))


def check(page: PageTools) -> Iterator[Finding]:
    names = sorted({e.name for e in page.entries}, key=len, reverse=True)
    for entry in page.entries:
        others = [n for n in names if n != entry.name and len(n) >= 3]
        calls_other = re.compile(_CALLS.format(name=f"({'|'.join(map(re.escape, others))})"), _I) if others else None
        for where, text in texts(entry):
            yield from _talk(page, entry, where, text, calls_other)
            if hidden := _hidden(text):
                yield found(
                    HIDDEN,
                    entry,
                    f"{where} holds {len(hidden)} kind(s) of invisible or control characters ({', '.join(hidden[:6])}"
                    f"{', …' if len(hidden) > 6 else ''}): a model reads them, a reviewer does not see them "
                    "(bidirectional controls even reorder what the reviewer sees)",
                    "Remove them; write the text in plain characters.",
                )
            if (tag := _TAG.search(text)) or (tag := _MARKDOWN.search(text)):
                yield found(
                    MARKUP,
                    entry,
                    f"{where} holds markup: {_quote(tag.group())}",
                    "Write plain text: models read markup as instructions as readily as prose, and a client that "
                    "renders it can load what a link names.",
                )
            yield from _padding(page, entry, where, text)


def _talk(
    page: PageTools, entry: ToolEntry, where: str, text: str, calls_other: re.Pattern[str] | None
) -> Iterator[Finding]:
    said = [(what, match.group()) for what, pattern in _TALK if (match := pattern.search(text))]
    if calls_other is not None and (match := calls_other.search(text)):
        said.append(("to call another tool", match.group()))
    for match in _GO.finditer(text):
        url = match.group(4)
        if _origin(url) != page.origin:
            said.append(("to go to another site", match.group()))
            break
    for what, quoted in said:
        yield found(
            INSTRUCTIONS,
            entry,
            f"{where} tells the model {what}: “{_quote(quoted)}”",
            "Describe what the tool does and what its arguments mean, nothing else; if this text comes from your "
            "users (a product name, a review), keep it out of tool descriptions.",
        )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _padding(page: PageTools, entry: ToolEntry, where: str, text: str) -> Iterator[Finding]:
    budgets = page.config.budgets
    budget = budgets.description if where in ("description", "the schema's description") else budgets.parameter
    if not where.endswith(("description", "title")):  # (a name, an enum value, a default: not prose to pad)
        return
    if len(text) > PADDING_FACTOR * budget:
        yield found(
            PADDING,
            entry,
            f"{where} is {len(text):,} characters, {len(text) / budget:.0f}× its budget of {budget:,}: far longer "
            "than a tool needs, and room for text a reviewer skims and a model reads",
            "Cut it to what a model needs to choose and call the tool.",
        )
    elif _BLANK.search(text):
        yield found(
            PADDING,
            entry,
            f"{where} holds a long run of blank space: text after it is out of a reviewer's sight",
            "Remove the blank space (and whatever it hides).",
        )
