"""Signatures from JSON Schema and argument validation that names the field."""

import inspect

import pytest

from webmcp_nb.errors import InvalidArgumentsError
from webmcp_nb.schema import signature_from_schema, validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "exact": {"type": ["boolean", "null"]},
        "not-an-identifier": {"type": "string"},
    },
    "required": ["query"],
}


def test_signature_has_required_first_and_types():
    sig = signature_from_schema(SCHEMA)
    assert list(sig.parameters) == ["query", "limit", "tags", "exact"]
    assert sig.parameters["query"].default is inspect.Parameter.empty
    assert sig.parameters["limit"].default is None
    assert sig.parameters["limit"].annotation is int
    assert sig.parameters["tags"].annotation is list
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())


def test_no_schema_means_no_parameters():
    assert str(signature_from_schema(None)) == "()"


@pytest.mark.parametrize(
    "args, field",
    [
        ({}, "query"),
        ({"query": 1}, "query"),
        ({"query": "a", "limit": 0}, "limit"),
        ({"query": "a", "tags": [1]}, "tags.0"),
    ],
)
def test_validation_names_the_field(args, field):
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments("search", SCHEMA, args)
    assert info.value.field == field
    assert str(info.value).startswith("search: argument")


def test_additional_properties_true_allows_extra_arguments():
    validate_arguments("t", {**SCHEMA, "additionalProperties": True}, {"query": "a", "other": 1})


def test_arguments_must_be_json():
    with pytest.raises(InvalidArgumentsError, match="JSON"):
        validate_arguments("t", SCHEMA, {"query": object()})


def test_a_schema_that_cannot_be_evaluated_gives_a_typed_error():
    with pytest.raises(InvalidArgumentsError, match="cannot be used"):
        validate_arguments("t", {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}, {"a": 1})
