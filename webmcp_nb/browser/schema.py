"""A tool's JSON Schema as Python sees it: argument validation that names the field (and says what the field
takes), a real ``inspect.Signature`` so tab completion and ``help()`` work on page tools (enum choices as
``Literal[...]``, the schema's defaults), and each property described in words."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import difflib
import importlib
import importlib.util
import inspect
import json
import keyword
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import regex

from ..core.display import clip, visible
from ..core.errors import Hint, InvalidArgumentsError
from ..core.patterns import PATTERN_TIMEOUT, PatternTooCostly, js_pattern, js_search

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "validate_arguments",
    "check_arguments",
    "call_arguments",
    "signature_from_schema",
    "python_type",
    "describe_property",
    "VALIDATION_TIMEOUT",
    "checker_loading",
    "load_checker",
    "schema_problem",
]

VALIDATION_TIMEOUT = 2.0
"""Seconds a check of arguments against a schema with regular expressions may take (off the library's loop)."""

_validators = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="webmcp-nb-validate")
_loading: concurrent.futures.Future[ModuleType] | None = None
_loading_lock = threading.Lock()
_loaded: ModuleType | None = None  # jsonschema once imported: every argument check after asks for nothing more
_IMPORT_ATTEMPTS = 3

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


LITERALS = (str, int, float, bool, type(None))


def _choices(schema: dict[str, Any]) -> list[Any] | None:
    """The values a property may take (``enum``, or ``const``), when it lists them."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def python_type(schema: dict[str, Any]) -> Any:
    """The Python annotation for a property schema: ``Literal[...]`` for its choices, else its type (``Any``
    when it cannot say)."""
    choices = _choices(schema)
    if choices is not None and all(isinstance(c, LITERALS) for c in choices):
        return Literal.__getitem__(tuple(dict.fromkeys(choices)))
    kind = schema.get("type")
    if isinstance(kind, list):
        types = [_TYPES[k] for k in kind if k in _TYPES]
        if not types:
            return Any
        result = types[0]
        for t in types[1:]:
            result = result | t
        return result
    if "enum" in schema and kind is None:
        return Any
    return _TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _properties(schema: dict[str, Any] | None) -> tuple[dict[str, Any], set[str]]:
    if not schema:
        return {}, set()
    props = schema.get("properties")
    required = schema.get("required")
    return (props if isinstance(props, dict) else {}), set(required if isinstance(required, list) else [])


def signature_from_schema(schema: dict[str, Any] | None) -> inspect.Signature:
    """Keyword-only parameters, required ones first; optional ones default to the schema's ``default`` (what
    the page assumes when it is left out), else ``None``."""
    props, required = _properties(schema)
    params = []
    for name in sorted(props, key=lambda n: n not in required):
        if not name.isidentifier() or keyword.iskeyword(name):
            continue  # still passable through the args dict: tab.call("route", {"from": ...})
        prop = props[name] if isinstance(props[name], dict) else {}
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if name in required else prop.get("default"),
                annotation=python_type(prop),
            )
        )
    return inspect.Signature(params)


_BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def describe_property(schema: Any, depth: int = 0) -> str:
    """A property's schema in a few words: ``one of "one-way", "round-trip"``, ``integer ≥ 1``, ``array of
    string matching ^[A-Z]{3}$, 2 items``, ``object with from, to``. Page text, shown as it is (bidi controls
    made visible)."""
    if not isinstance(schema, dict):
        return "any"
    choices = _choices(schema)
    if choices is not None:
        words = "one of " + ", ".join(json.dumps(c, ensure_ascii=False) for c in choices)
    else:
        kind = schema.get("type")
        words = " or ".join(kind) if isinstance(kind, list) else str(kind or "any")
        if kind == "array" and depth < 3:
            words = f"array of {describe_property(schema.get('items'), depth + 1)}"
        elif kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
            words = "object with " + ", ".join(schema["properties"])
    extra = [f"{sign} {schema[key]}" for key, sign in _BOUNDS if isinstance(schema.get(key), int | float)]
    if isinstance(schema.get("pattern"), str):
        extra.append(f"matching {schema['pattern']}")
    if isinstance(schema.get("format"), str):
        extra.append(f"format {schema['format']}")
    for low, high, unit in (("minLength", "maxLength", "characters"), ("minItems", "maxItems", "items")):
        lo, hi = schema.get(low), schema.get(high)
        if lo is not None and lo == hi:
            extra.append(f"{lo} {unit}")
        elif lo is not None or hi is not None:
            extra.append(f"{lo or 0}–{'' if hi is None else hi} {unit}")
    if "default" in schema:
        extra.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    text = words + (" " if extra and extra[0][0] in "≥>≤<" else ", " if extra else "") + ", ".join(extra)
    return visible(clip(text, 300))


def _matches(pattern: str, text: str) -> bool:
    """A search as JSON Schema means it (an ECMA-262 expression, anywhere in the text), with a time limit. A pattern
    too large to compile here passes: the page checks it."""
    try:
        return js_search(js_pattern(pattern), text)
    except PatternTooCostly:
        return True


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        if not _matches(pattern, instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
    except TimeoutError:
        yield ValidationError(f"matching {pattern!r} took over {PATTERN_TIMEOUT:g} s (a pathological pattern?)")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = _matches(pattern, key)
            except TimeoutError:
                yield ValidationError(f"matching {pattern!r} took over {PATTERN_TIMEOUT:g} s")
                return
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def load_checker() -> concurrent.futures.Future[ModuleType]:
    """Import ``jsonschema`` in a thread, once (again only if that failed): a tenth of a second or two with its IRI
    checker deferred (:func:`_iri_syntax_deferred`), so it loads beside a browser's start rather than with the
    library or on the loop."""
    global _loading
    with _loading_lock:
        if _loading is None or (_loading.done() and _loading.exception() is not None):
            _loading = _validators.submit(_jsonschema)
        return _loading


@contextlib.asynccontextmanager
async def checker_loading() -> AsyncIterator[None]:
    """Start the argument checker's import (:func:`load_checker`) for the body — a browser's start, beside which it
    costs nothing — and wait for it on the way out, whether the start worked or failed, so that the import never
    runs beside the caller's own work. CPython 3.11's AST construction is not thread-safe, the import builds ASTs by
    the thousand, and so does the caller's (a pydantic model's class, a traceback, pytest's next import): two at once
    can fail either. A failed load is left for the argument check to raise."""
    loading = load_checker()
    try:
        yield
    finally:
        with contextlib.suppress(SystemError, ImportError):
            await asyncio.wrap_future(loading)


def _jsonschema() -> ModuleType:
    """``jsonschema``; imported with its IRI checker deferred (:func:`_iri_syntax_deferred`)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    if "jsonschema" in sys.modules:  # imported (or being imported by another thread, which import_module waits for)
        _loaded = _imported("jsonschema")
        return _loaded
    with _iri_syntax_deferred():
        _loaded = _imported("jsonschema")
    return _loaded


def _imported(module: str) -> ModuleType:
    """``module``, imported again when CPython 3.11's AST construction, which is not thread-safe
    (python/cpython#106905), failed it: lark builds a format checker's grammar with ``ast.literal_eval``, and
    another thread parsing at that moment (formatting a traceback, say) makes it raise ``SystemError``."""
    attempts = _IMPORT_ATTEMPTS
    while True:
        try:
            return importlib.import_module(module)
        except SystemError as error:
            # (a copy: other threads may be importing as it is read)
            orphans = [name for name in list(sys.modules) if name.partition(".")[0] not in sys.modules]
            for name in orphans:  # submodules whose package failed to import: the retry binds them to it again
                del sys.modules[name]
            attempts -= 1
            if not attempts or "recursion depth mismatch" not in str(error):
                raise


@contextlib.contextmanager
def _iri_syntax_deferred() -> Iterator[None]:
    """While ``jsonschema`` is imported, ``rfc3987_syntax`` (its optional checker of the ``iri`` and
    ``iri-reference`` formats, when installed) stands in as the one function it takes, which imports the real
    module the first time a schema uses those formats: that import builds an IRI grammar, most of ``jsonschema``'s
    import time (~1 s of ~1.1 s), which every first call waited for. Other importers get the real module."""
    if "rfc3987_syntax" in sys.modules or importlib.util.find_spec("rfc3987_syntax") is None:
        yield
        return

    def is_valid_syntax(rule: str, value: str) -> bool:
        return bool(_imported("rfc3987_syntax").is_valid_syntax(rule, value))

    stand_in = ModuleType("rfc3987_syntax")
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules["rfc3987_syntax"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("rfc3987_syntax") is stand_in:
            del sys.modules["rfc3987_syntax"]


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Validator:
    jsonschema = _jsonschema()
    schema = json.loads(schema_json)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    formats = jsonschema.FormatChecker(formats=())  # the draft's, but a regex is JavaScript's, as JSON Schema says
    formats.checkers = {**base.FORMAT_CHECKER.checkers, "regex": (_is_js_pattern, regex.error)}
    base.check_schema(schema, format_checker=formats)
    cls = jsonschema.validators.extend(base, {"pattern": _pattern, "patternProperties": _pattern_properties})
    return cls(schema, format_checker=formats)


def schema_problem(schema: Any) -> tuple[str, list[str | int]] | None:
    """Why the argument check cannot use ``schema`` — its draft's meta-schema refuses it, or a ``pattern`` is not
    one JavaScript reads — and where in it (a path of keys), or ``None``. The check refuses every call of a tool
    whose schema is wrong; a site's lint says so first."""
    jsonschema = _jsonschema()
    try:
        _validator(json.dumps(schema, sort_keys=True))
    except jsonschema.SchemaError as exc:
        return exc.message, list(exc.absolute_path)
    except Exception as exc:  # an unknown draft ($schema), and the like: what the argument check would meet
        return f"{type(exc).__name__}: {exc}", []
    return None


def _is_js_pattern(instance: object) -> bool:
    """Format ``regex``: whether JavaScript reads ``instance`` as an expression (``regex.error`` says why not)."""
    if isinstance(instance, str):
        with contextlib.suppress(PatternTooCostly):
            js_pattern(instance)
    return True


def has_pattern(schema: dict[str, Any] | None) -> bool:
    """Whether ``schema`` holds a regular expression (``pattern``, ``patternProperties``): then
    :func:`check_arguments` validates off the loop, with a time limit."""
    text = json.dumps(schema or {})
    return '"pattern"' in text or '"patternProperties"' in text


async def check_arguments(
    name: str, schema: dict[str, Any] | None, args: dict[str, Any], *, has_pattern: bool, server: str | None = None
) -> None:
    """:func:`validate_arguments` from the library's loop: inline, or, when the schema holds regular expressions
    (a page's ``pattern`` could backtrack for minutes), in a thread with a time limit so the loop keeps serving."""
    if _loaded is None and not (checker := load_checker()).done():
        await asyncio.wrap_future(checker)
    if not has_pattern:
        validate_arguments(name, schema, args, server)
        return
    future = asyncio.get_running_loop().run_in_executor(_validators, validate_arguments, name, schema, args, server)
    try:
        await asyncio.wait_for(future, VALIDATION_TIMEOUT)
    except asyncio.TimeoutError:  # (not the built-in TimeoutError before Python 3.11)
        raise InvalidArgumentsError(
            f"{name}: checking the arguments against {_whose(server)} schema took over {VALIDATION_TIMEOUT:g} s "
            "(a pathological pattern?); the call was not made"
        ) from None


def validate_arguments(
    tool_name: str, schema: dict[str, Any] | None, args: dict[str, Any], server: str | None = None
) -> None:
    """Raise :class:`InvalidArgumentsError` naming the field when ``args`` do not fit ``schema``.

    Arguments the schema does not declare are refused too (most often a misspelt name), unless the
    schema explicitly allows additional properties. ``server``: the MCP server whose tool it is (``None``: a
    page's), so the error says whose schema it is and who did not see the call.
    """
    if not isinstance(args, dict):
        raise InvalidArgumentsError(f"{tool_name}: arguments must be a mapping, not {type(args).__name__}")
    try:
        json.dumps(args, allow_nan=False)  # NaN and Infinity are not JSON: a page could not parse them
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentsError(f"{tool_name}: arguments must be JSON-serialisable ({exc})") from None
    if not schema:
        return
    props, _ = _properties(schema)
    if props and schema.get("additionalProperties") in (None, False):
        unknown = sorted(set(args) - set(props))
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(props), n=1)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            raise InvalidArgumentsError(
                f"{tool_name}: unknown argument {unknown[0]!r}{guess}. It takes {', '.join(sorted(props))}.",
                field=unknown[0],
                hint=not_sent(tool_name, server),
            )
    jsonschema = _jsonschema()
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
        error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    except jsonschema.SchemaError as exc:
        raise InvalidArgumentsError(f"{tool_name}: {_whose(server)} input schema is invalid: {exc.message}") from None
    except Exception as exc:  # e.g. a $ref that does not resolve
        raise InvalidArgumentsError(f"{tool_name}: {_whose(server)} input schema cannot be used: {exc}") from None
    if error is None:
        return
    path = list(error.absolute_path)
    message = error.message
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [n for n in error.validator_value if n not in (error.instance or {})]
        path.append(missing[0] if missing else "")
        message = "missing (it is required)"
    field = ".".join(str(p) for p in path) or None
    where = f"argument {field!r}" if field else "arguments"
    wanted = _wanted(schema, path)
    raise InvalidArgumentsError(
        f"{tool_name}: {where}: {message}.{wanted}", field=field, hint=not_sent(tool_name, server)
    )


def call_arguments(tool: str, arguments: Any, keywords: dict[str, Any], listed_in: str) -> dict[str, Any]:
    """A tool object's call arguments: its keywords, after one dict of them (for names that are not identifiers);
    anything else is a ``TypeError`` naming the tool and where ``help`` lists its arguments (``listed_in``)."""
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(
            f"{tool}() takes its arguments by name (or one dict of them), not a {type(arguments).__name__}; "
            f"help({listed_in}[{tool!r}]) lists them"
        )
    return {**(arguments or {}), **keywords}


def not_sent(tool_name: str, server: str | None = None) -> Hint:
    """The next step after a refused call: who did not see it (the page, or MCP server ``server``), and where
    every argument is described."""
    if server is not None:
        return Hint("see_server_arguments", {"tool": tool_name, "server": server})
    return Hint("see_arguments", {"tool": tool_name})


def _whose(server: str | None) -> str:
    """Whose schema it is, in words: ``the page's`` or ``MCP server <name>'s``."""
    return f"MCP server {server}'s" if server is not None else "the page's"


def _wanted(schema: dict[str, Any], path: list[Any]) -> str:
    """What the property at ``path`` takes, from its schema: its constraints and the page's description."""
    node: Any = schema
    for step in path:
        if not isinstance(node, dict):
            return ""
        if isinstance(step, int):
            node = node.get("items")
        else:
            props = node.get("properties")
            node = props.get(step) if isinstance(props, dict) else None
    if not isinstance(node, dict) or not path:
        return ""
    description = node.get("description")
    about = f" — {visible(clip(description, 200)).rstrip('.')}" if isinstance(description, str) and description else ""
    return f" It takes {describe_property(node)}{about}."
