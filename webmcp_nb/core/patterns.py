"""Regular expressions written for JavaScript — a page's JSON Schema ``pattern`` (ECMA-262, as JSON Schema says) and
an eval suite's ``$pattern`` — on the ``regex`` engine, with a time limit and the GIL released while one runs: both
come from others, and one could backtrack for minutes.

The text is respelled where the two dialects read the same characters differently, so that Python accepts what the
page's own check would: ``\\d``, ``\\w`` and ``\\b`` are ASCII in JavaScript, ``\\s`` is JavaScript's list of spaces,
``.`` stops at every line terminator, ``$`` never matches before a final newline, ``[]`` matches nothing and ``[^]``
anything, and named groups are spelled as Python spells them."""

from __future__ import annotations

import functools

import regex

__all__ = ["PATTERN_TIMEOUT", "js_pattern", "js_search"]

PATTERN_TIMEOUT = 1.0
"""Seconds one match may take; past it :func:`js_search` raises ``TimeoutError``."""

_SETS = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": "\\t\\n\\x0b\\f\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff",
}
"""JavaScript's ``\\d``, ``\\w`` and ``\\s`` as the insides of a character class."""
_LINE_END = "\\n\\r\\u2028\\u2029"
_WORD = f"[{_SETS['w']}]"
_ESCAPES = {
    "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
    **{name: f"[{inside}]" for name, inside in _SETS.items()},
    **{name.upper(): f"[^{inside}]" for name, inside in _SETS.items()},
}
_CLASS_LITERALS = "[&~|"
"""Literal in a JavaScript class; escaped for Python's (nested sets and set operations there)."""


def _braced(text: str, start: int, close: str) -> int:
    """The index just past ``close`` from ``start``, or -1."""
    end = text.find(close, start)
    return -1 if end < 0 else end + 1


def _class(text: str, start: int) -> tuple[str, int]:
    """The character class at ``text[start] == "["`` in Python's spelling, and the index past it. A negated shorthand
    inside it (``[a\\D]``) has no ASCII spelling within one Python class, so such a class becomes an alternation."""
    i = start + 1
    negated = text.startswith("^", i)
    i += negated
    inside: list[str] = []
    outside: list[str] = []
    while i < len(text) and text[i] != "]":
        if text[i] == "\\" and i + 1 < len(text):
            escape = text[i + 1]
            if escape in _SETS:
                inside.append(_SETS[escape])
            elif escape.lower() in _SETS:
                outside.append(f"[^{_SETS[escape.lower()]}]")
            else:
                inside.append(text[i : i + 2])
            i += 2
        else:
            inside.append("\\" + text[i] if text[i] in _CLASS_LITERALS else text[i])
            i += 1
    if i >= len(text):
        return text[start:], len(text)  # unterminated: the engine names the error
    either = ([f"[{''.join(inside)}]"] if inside else []) + outside
    if not negated:
        spelled = "(?!)" if not either else either[0] if len(either) == 1 else f"(?:{'|'.join(either)})"
    elif not outside:
        spelled = f"[^{''.join(inside)}]" if inside else "(?s:.)"
    else:
        spelled = f"(?:(?!{'|'.join(either)})(?s:.))"
    return spelled, i + 1


def _python_spelling(text: str, *, multiline: bool, dotall: bool) -> str:
    """``text``, an ECMA-262 expression, as the ``regex`` engine must read it to match what JavaScript matches."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char, step = text[i], 1
        if char == "\\" and i + 1 < len(text):
            escape, step = text[i + 1], 2
            end = _braced(text, i + 3, ">") if text.startswith("k<", i + 1) else -1
            hex_end = _braced(text, i + 3, "}") if text.startswith("u{", i + 1) else -1
            if end > 0:
                out.append(f"(?P={text[i + 3 : end - 1]})")
                step = end - i
            elif hex_end > 0 and regex.fullmatch("[0-9A-Fa-f]{1,6}", text[i + 3 : hex_end - 1]):
                out.append(f"\\U{int(text[i + 3 : hex_end - 1], 16):08X}")
                step = hex_end - i
            else:
                out.append(_ESCAPES.get(escape, text[i : i + 2]))
        elif char == "[":
            spelled, end = _class(text, i)
            out.append(spelled)
            step = end - i
        elif char == "(" and text.startswith("(?<", i) and text[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            step = 3
        elif char == ".":
            out.append("(?s:.)" if dotall else f"[^{_LINE_END}]")
        elif char == "$":
            out.append(f"(?=[{_LINE_END}]|\\Z)" if multiline else "\\Z")
        elif char == "^" and multiline:
            out.append(f"(?:(?<=[{_LINE_END}])|\\A)")
        else:
            out.append(char)
        i += step
    return "".join(out)


@functools.lru_cache(maxsize=512)
def js_pattern(text: str, flags: int = 0) -> regex.Pattern[str]:
    """``text`` compiled to match what JavaScript's ``new RegExp(text, "u")`` matches (``flags``: ``IGNORECASE``,
    ``MULTILINE`` and ``DOTALL`` for JavaScript's ``i``, ``m``, ``s``); ``regex.error`` if it is not an expression."""
    spelled = _python_spelling(text, multiline=bool(flags & regex.MULTILINE), dotall=bool(flags & regex.DOTALL))
    return regex.compile(spelled, (flags & regex.IGNORECASE) | regex.VERSION0)


def js_search(pattern: regex.Pattern[str], text: str, *, sticky: bool = False) -> bool:
    """Whether ``pattern`` matches in ``text`` (at its start when ``sticky``), within :data:`PATTERN_TIMEOUT`."""
    find = pattern.match if sticky else pattern.search
    return find(text, timeout=PATTERN_TIMEOUT, concurrent=True) is not None
