"""A tool's JSON Schema as Python sees it: argument validation that names the field, and a real
``inspect.Signature`` so tab completion and ``help()`` work on page tools."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import keyword
from functools import lru_cache
from typing import Any

import jsonschema
import regex
from jsonschema.exceptions import ValidationError, best_match

from .errors import InvalidArgumentsError

__all__ = ["validate_arguments", "check_arguments", "signature_from_schema", "python_type", "VALIDATION_TIMEOUT"]

VALIDATION_TIMEOUT = 2.0
"""Seconds a check of arguments against a schema with regular expressions may take (off the library's loop)."""

_validators = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="webmcp-nb-validate")

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python annotation for a property schema (``Any`` when it cannot say)."""
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
    """Keyword-only parameters, required ones first, optional ones defaulting to ``None``."""
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
                default=inspect.Parameter.empty if name in required else None,
                annotation=python_type(prop),
            )
        )
    return inspect.Signature(params)


PATTERN_TIMEOUT = 1.0
"""Seconds one ``pattern`` may take: a page's regular expression may backtrack for minutes."""


def _matches(pattern: str, text: str) -> bool:
    """``re.search`` as JSON Schema means it, with a time limit; the GIL is released while it runs."""
    return regex.search(pattern, text, timeout=PATTERN_TIMEOUT, concurrent=True) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "string"):
        return
    try:
        if not _matches(pattern, instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
    except TimeoutError:
        yield ValidationError(f"matching {pattern!r} took over {PATTERN_TIMEOUT:g} s (a pathological pattern?)")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
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


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    base.check_schema(schema)
    cls = jsonschema.validators.extend(base, {"pattern": _pattern, "patternProperties": _pattern_properties})
    return cls(schema, format_checker=base.FORMAT_CHECKER)


async def check_arguments(name: str, schema: dict[str, Any] | None, args: dict[str, Any], *, has_pattern: bool) -> None:
    """:func:`validate_arguments` from the library's loop: inline, or, when the schema holds regular expressions
    (a page's ``pattern`` could backtrack for minutes), in a thread with a time limit so the loop keeps serving."""
    if not has_pattern:
        validate_arguments(name, schema, args)
        return
    future = asyncio.get_running_loop().run_in_executor(_validators, validate_arguments, name, schema, args)
    try:
        await asyncio.wait_for(future, VALIDATION_TIMEOUT)
    except TimeoutError:
        raise InvalidArgumentsError(
            f"{name}: checking the arguments against the page's schema took over {VALIDATION_TIMEOUT:g} s "
            "(a pathological pattern?); the call was not made"
        ) from None


def validate_arguments(tool_name: str, schema: dict[str, Any] | None, args: dict[str, Any]) -> None:
    """Raise :class:`InvalidArgumentsError` naming the field when ``args`` do not fit ``schema``.

    Arguments the schema does not declare are refused too (most often a misspelt name), unless the
    schema explicitly allows additional properties.
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
            raise InvalidArgumentsError(
                f"{tool_name}: unknown argument {unknown[0]!r}; it takes {', '.join(sorted(props))}",
                field=unknown[0],
            )
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
        error = best_match(validator.iter_errors(args))
    except jsonschema.SchemaError as exc:
        raise InvalidArgumentsError(f"{tool_name}: the page's input schema is invalid: {exc.message}") from None
    except Exception as exc:  # e.g. a $ref that does not resolve
        raise InvalidArgumentsError(f"{tool_name}: the page's input schema cannot be used: {exc}") from None
    if error is None:
        return
    path = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [n for n in error.validator_value if n not in (error.instance or {})]
        path.append(missing[0] if missing else "")
    field = ".".join(str(p) for p in path) or None
    where = f"argument {field!r}" if field else "arguments"
    raise InvalidArgumentsError(f"{tool_name}: {where}: {error.message}", field=field)
