"""Regular expressions written for JavaScript — a page's JSON Schema ``pattern`` (ECMA-262, as JSON Schema says) and
an eval suite's ``$pattern`` — on the ``regex`` engine, with a time limit and the GIL released while one runs: both
come from others, and one could backtrack for minutes."""

from __future__ import annotations

import functools
import re

import regex

__all__ = ["PATTERN_TIMEOUT", "js_pattern", "js_search"]

PATTERN_TIMEOUT = 1.0
"""Seconds one match may take; past it :func:`js_search` raises ``TimeoutError``."""

_NAMED = re.compile(r"(?<!\\)((?:\\\\)*)(\(\?<(?![=!])|\\k<)([A-Za-z_][A-Za-z0-9_]*)>")
"""JavaScript's named groups ``(?<name>…)`` and back-references ``\\k<name>`` (not after an escaping backslash)."""


def _python_names(text: str) -> str:
    """JavaScript's named groups in Python's spelling: ``(?P<name>…)``, ``(?P=name)``."""

    def spelled(found: re.Match[str]) -> str:
        name = found.group(3)
        return found.group(1) + (f"(?P<{name}>" if found.group(2) == "(?<" else f"(?P={name})")

    return _NAMED.sub(spelled, text)


@functools.lru_cache(maxsize=512)
def js_pattern(text: str, flags: int = 0) -> regex.Pattern[str]:
    """``text`` compiled, JavaScript's named groups spelled as Python's; ``regex.error`` if it is not one."""
    return regex.compile(_python_names(text), flags | regex.VERSION0)


def js_search(pattern: regex.Pattern[str], text: str, *, sticky: bool = False) -> bool:
    """Whether ``pattern`` matches in ``text`` (at its start when ``sticky``), within :data:`PATTERN_TIMEOUT`."""
    find = pattern.match if sticky else pattern.search
    return find(text, timeout=PATTERN_TIMEOUT, concurrent=True) is not None
