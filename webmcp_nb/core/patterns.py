"""Regular expressions written for JavaScript — a page's JSON Schema ``pattern`` (ECMA-262, as JSON Schema says) and
an eval suite's ``$pattern`` — on the ``regex`` engine, with a time limit and the GIL released while one runs: both
come from others, and one could backtrack for minutes.

The text is read with JavaScript's grammar (``new RegExp(text, "u")``) and respelled where the two dialects read
the same characters differently, so that Python accepts what the page's own check would: ``\\d``, ``\\w`` and
``\\b`` are ASCII in JavaScript, ``\\s`` is JavaScript's list of spaces, ``.`` stops at every line terminator, ``$``
never matches before a final newline, ``[]`` matches nothing and ``[^]`` anything, a back-reference to a group that
has not matched matches nothing, and named groups are spelled as Python spells them. What only Python reads
(``(?R)``, ``(*SKIP)``, ``a{,2}``, ``\\A``…) is refused, and so is an expression whose counted repeats the engine
would unroll into more than :data:`MAX_COST` items (``(?:a{1000}){1000}`` took gigabytes to compile)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import regex

__all__ = ["MAX_COST", "MAX_LENGTH", "PATTERN_TIMEOUT", "PatternTooCostly", "js_pattern", "js_search"]

PATTERN_TIMEOUT = 1.0
"""Seconds one match may take; past it :func:`js_search` raises ``TimeoutError``."""
MAX_LENGTH = 4000
"""Characters of an expression read at most."""
MAX_COST = 10_000
"""Items an expression may unroll to: each atom counts the product of the minimum counts of the repeats around it."""
_MAX_DEPTH = 64
_MAX_COUNT = 4_294_967_294  # the engine's largest count (JavaScript takes any)
_CACHED_COST = 1_000  # compiled expressions kept for reuse: only cheap ones, so the cache stays small

_SETS = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": "\\t\\n\\x0b\\f\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff",
}
"""JavaScript's ``\\d``, ``\\w`` and ``\\s`` as the insides of a character class."""
_LINE_END = "\\n\\r\\u2028\\u2029"
_WORD = f"[{_SETS['w']}]"
_BOUNDARIES = {
    "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}
_CONTROLS = {"f": "\\f", "n": "\\n", "r": "\\r", "t": "\\t", "v": "\\x0b"}
_SYNTAX = "^$\\.*+?()[]{}|/"
_CLASS_LITERALS = "[&~|"
"""Literal in a JavaScript class; escaped for Python's (nested sets and set operations there)."""
_COUNT = regex.compile(r"\{(\d+)(,(\d*))?\}")
_NAME = regex.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>")
_HEX4 = regex.compile(r"[0-9A-Fa-f]{4}")
_BRACED_HEX = regex.compile(r"\{([0-9A-Fa-f]{1,6})\}")


class PatternTooCostly(regex.error):  # type: ignore[misc]  # (regex has no type hints)
    """A valid JavaScript expression this process will not compile: longer than :data:`MAX_LENGTH`, or unrolling
    to more than :data:`MAX_COST` items. A page's ``pattern`` so large is left for the page to check."""


def _code_point(text: str, i: int) -> tuple[int, int] | None:
    """The code point of a ``\\u`` escape at ``text[i]`` (``\\uHHHH``, a surrogate pair of two, ``\\u{H…}``) and
    the index past it."""
    if braced := _BRACED_HEX.match(text, i + 2):
        return int(braced.group(1), 16), braced.end()
    if not _HEX4.match(text, i + 2):
        return None
    unit = int(text[i + 2 : i + 6], 16)
    if 0xD800 <= unit < 0xDC00 and text.startswith("\\u", i + 6) and _HEX4.match(text, i + 8):
        low = int(text[i + 8 : i + 12], 16)
        if 0xDC00 <= low < 0xE000:
            return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), i + 12
    return unit, i + 6


def _escape(text: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``text[i] == "\\\\"`` in Python's spelling and the index past it (not ``\\D``, ``\\W``, ``\\S``
    inside a class: :func:`_class` spells those); ``regex.error`` for one JavaScript does not have."""
    if i + 1 >= len(text):
        raise regex.error("\\ at end of pattern")
    char = text[i + 1]
    if char in _SETS:
        return (_SETS[char] if in_class else f"[{_SETS[char]}]"), i + 2
    if char.lower() in _SETS:
        return f"[^{_SETS[char.lower()]}]", i + 2
    if char in _BOUNDARIES and not (in_class and char == "B"):  # in a class, \b is a backspace and \B nothing
        return ("\\x08" if in_class else _BOUNDARIES[char]), i + 2
    if char in _CONTROLS:
        return _CONTROLS[char], i + 2
    if char == "c" and text[i + 2 : i + 3].isascii() and text[i + 2 : i + 3].isalpha():
        return f"\\x{ord(text[i + 2]) % 32:02x}", i + 3
    if char == "0" and not text[i + 2 : i + 3].isdigit():
        return "\\x00", i + 2
    if char == "x" and regex.match(r"[0-9A-Fa-f]{2}", text[i + 2 : i + 4]):
        return text[i : i + 4], i + 4
    if char == "u" and (point := _code_point(text, i)):
        return f"\\U{point[0]:08X}", point[1]
    if char in "pP" and (end := text.find("}", i + 3)) > 0 and text.startswith("{", i + 2):
        return text[i : end + 1], end + 1
    if not in_class and (digits := regex.match(r"[1-9][0-9]*", text[i + 1 :])):
        number = digits.group()  # a group that has not matched matches nothing, as in JavaScript
        return f"(?({number})\\{number})", i + 1 + len(number)
    if not in_class and char == "k" and (name := _NAME.match(text, i + 2)):
        return f"(?({name.group(1)})(?P={name.group(1)}))", name.end()
    if char in _SYNTAX or (in_class and char == "-"):
        return "\\" + char, i + 2
    raise regex.error(f"\\{char} is not an escape in JavaScript")


def _class(text: str, start: int) -> tuple[str, int]:
    """The character class at ``text[start] == "["`` in Python's spelling, and the index past it. A negated shorthand
    inside it (``[a\\D]``) has no ASCII spelling within one Python class, so such a class becomes an alternation."""
    i = start + 1
    negated = text.startswith("^", i)
    i += negated
    inside: list[str] = []
    outside: list[str] = []
    while i < len(text) and text[i] != "]":
        if text[i] == "\\" and text[i + 1 : i + 2] in ("D", "W", "S"):
            outside.append(f"[^{_SETS[text[i + 1].lower()]}]")
            i += 2
        elif text[i] == "\\":
            spelled, i = _escape(text, i, in_class=True)
            inside.append(spelled)
        else:
            inside.append("\\" + text[i] if text[i] in _CLASS_LITERALS else text[i])
            i += 1
    if i >= len(text):
        raise regex.error("unterminated character set")
    either = ([f"[{''.join(inside)}]"] if inside else []) + outside
    if not negated:
        spelled = "(?!)" if not either else either[0] if len(either) == 1 else f"(?:{'|'.join(either)})"
    elif not outside:
        spelled = f"[^{''.join(inside)}]" if inside else "(?s:.)"
    else:
        spelled = f"(?:(?!{'|'.join(either)})(?s:.))"
    return spelled, i + 1


def _group(text: str, i: int) -> tuple[str, int]:
    """The opening of the group at ``text[i] == "("`` in Python's spelling, and the index past it."""
    if not text.startswith("(?", i):
        return "(", i + 1
    for opening in ("(?:", "(?=", "(?!", "(?<=", "(?<!"):
        if text.startswith(opening, i):
            return opening, i + len(opening)
    if name := _NAME.match(text, i + 2):
        return f"(?P<{name.group(1)}>", name.end()
    raise regex.error(f"{text[i : i + 4]!r}… is not a group JavaScript has")


def _python_spelling(text: str, *, multiline: bool, dotall: bool) -> tuple[str, int]:
    """``text``, an ECMA-262 expression, as the ``regex`` engine must read it to match what JavaScript matches, and
    what it costs (see :data:`MAX_COST`). ``regex.error`` for what JavaScript's grammar refuses."""
    out: list[str] = []
    frames = [[0, 0]]  # per open group: its cost so far, the cost of its last item (what a quantifier repeats)
    i = 0
    while i < len(text):
        char, frame = text[i], frames[-1]
        item = 0  # the cost of an atom read here
        if char == "\\":
            spelled, i = _escape(text, i, in_class=False)
            item = 50 if spelled in _BOUNDARIES.values() else 1  # four lookarounds each: slow to compile
        elif char == "[":
            spelled, i = _class(text, i)
            item = 1
        elif char == "(":
            spelled, i = _group(text, i)
            frames.append([0, 0])
            if len(frames) > _MAX_DEPTH:
                raise regex.error(f"groups nested deeper than {_MAX_DEPTH}")
        elif char == ")":
            if len(frames) == 1:
                raise regex.error("unbalanced parenthesis")
            spelled, i = ")", i + 1
            item = frames.pop()[0]
            frames[-1][0] += item
            frames[-1][1] = item
        elif char in "*+?{":
            count = _COUNT.match(text, i) if char == "{" else None
            if char == "{" and count is None:
                raise regex.error("a lone '{' (JavaScript reads '{' only as a count: escape it)")
            if frame[1] == 0:
                raise regex.error(f"nothing to repeat at position {i}")
            if count and count.group(3) and int(count.group(3)) < int(count.group(1)):
                raise regex.error(f"min repeat greater than max repeat at position {i}")
            end = count.end() if count else i + 1
            end += text.startswith("?", end)  # lazy
            spelled, times = text[i:end], max(1, int(count.group(1)) if count else char == "+")
            if count and count.group(3) and int(count.group(3)) > _MAX_COUNT:  # no text is that long: unbounded
                spelled = f"{{{count.group(1)},}}" + text[count.end() : end]
            frame[0] += frame[1] * (times - 1)
            frame[1] = 0  # a repeat is not repeated again
            i = end
        elif char in "]}":
            raise regex.error(f"a lone '{char}' (escape it)")
        elif char == ".":
            spelled, i, item = ("(?s:.)" if dotall else f"[^{_LINE_END}]"), i + 1, 1
        elif char == "$":
            spelled, i = (f"(?=[{_LINE_END}]|\\Z)" if multiline else "\\Z"), i + 1
        elif char == "^":
            spelled, i = (f"(?:(?<=[{_LINE_END}])|\\A)" if multiline else "^"), i + 1
        else:
            spelled, i, item = char, i + 1, char != "|"
        if char not in "*+?{)":
            frame[0] += item
            frame[1] = item
        out.append(spelled)
    if len(frames) > 1:
        raise regex.error("missing ), unterminated subpattern")
    return "".join(out), frames[0][0]


_cache: OrderedDict[tuple[str, int], regex.Pattern[str]] = OrderedDict()
_cache_lock = threading.Lock()


def js_pattern(text: str, flags: int = 0) -> regex.Pattern[str]:
    """``text`` compiled to match what JavaScript's ``new RegExp(text, "u")`` matches (``flags``: ``IGNORECASE``,
    ``MULTILINE`` and ``DOTALL`` for JavaScript's ``i``, ``m``, ``s``). ``regex.error`` if JavaScript would refuse
    it, :class:`PatternTooCostly` (one) if it is too large to compile here."""
    key = (text, flags)
    with _cache_lock:
        if (found := _cache.get(key)) is not None:
            _cache.move_to_end(key)
            return found
    if len(text) > MAX_LENGTH:
        raise PatternTooCostly(f"longer than {MAX_LENGTH:,} characters")
    spelled, cost = _python_spelling(text, multiline=bool(flags & regex.MULTILINE), dotall=bool(flags & regex.DOTALL))
    if cost > MAX_COST:
        raise PatternTooCostly(f"it unrolls to {cost:,} items (repeats counted out; at most {MAX_COST:,} here)")
    compiled = regex.compile(spelled, (flags & regex.IGNORECASE) | regex.VERSION0)
    if cost <= _CACHED_COST:
        with _cache_lock:
            _cache[key] = compiled
            if len(_cache) > 512:
                _cache.popitem(last=False)
    return compiled


def js_search(pattern: regex.Pattern[str], text: str, *, sticky: bool = False) -> bool:
    """Whether ``pattern`` matches in ``text`` (at its start when ``sticky``), within :data:`PATTERN_TIMEOUT`."""
    find = pattern.match if sticky else pattern.search
    return find(text, timeout=PATTERN_TIMEOUT, concurrent=True) is not None
