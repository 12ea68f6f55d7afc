"""Signatures from JSON Schema and argument validation that names the field."""

import inspect
import json
import subprocess
import sys
from typing import Literal

import pytest
import regex
from node import run_module_script
from ports import free_port

from webmcp_nb.browser.schema import describe_property, signature_from_schema, validate_arguments
from webmcp_nb.core.errors import InvalidArgumentsError
from webmcp_nb.core.patterns import PatternTooCostly, js_pattern, js_search

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


def test_enum_choices_and_defaults_are_in_the_signature():
    sig = signature_from_schema(
        {
            "type": "object",
            "properties": {
                "tripType": {"type": "string", "enum": ["one-way", "round-trip"]},
                "passengers": {"type": "integer", "minimum": 1, "default": 1},
                "cabin": {"const": "economy"},
            },
            "required": ["tripType"],
        }
    )
    assert sig.parameters["tripType"].annotation == Literal["one-way", "round-trip"]
    assert sig.parameters["passengers"].default == 1 and sig.parameters["cabin"].annotation == Literal["economy"]
    shown = "(*, tripType: Literal['one-way', 'round-trip'], passengers: int = 1, cabin: Literal['economy'] = None)"
    assert str(sig) == shown


def test_properties_are_described_in_words():
    assert describe_property({"enum": ["a", "b"]}) == 'one of "a", "b"'
    assert describe_property({"type": "integer", "minimum": 1}) == "integer ≥ 1"
    stops = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2}
    assert describe_property(stops) == "array of integer ≥ 0, 2 items"
    assert describe_property({"type": "string", "pattern": "^[A-Z]{3}$"}) == "string, matching ^[A-Z]{3}$"


def test_a_refusal_says_what_the_field_takes_and_what_to_do():
    limit = {"type": "integer", "minimum": 1, "description": "How many."}
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "limit": limit}}
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments("search", schema, {"query": "a", "limit": 0})
    assert "It takes integer ≥ 1 — How many." in str(info.value)
    assert "help(tab.tools['search'])" in str(info.value)
    with pytest.raises(InvalidArgumentsError, match="unknown argument 'qurey' \\(did you mean 'query'\\?\\)"):
        validate_arguments("search", SCHEMA, {"qurey": "a"})


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


RACED_IMPORT = """
import lark
from webmcp_nb.browser import schema
from webmcp_nb.core.errors import InvalidArgumentsError

faults = {"left": 0}
build = lark.Lark.__init__
def raced(self, *args, **kwargs):
    if faults["left"]:
        faults["left"] -= 1
        raise SystemError("AST constructor recursion depth mismatch (before=243, after=153)")
    build(self, *args, **kwargs)
lark.Lark.__init__ = raced

schema.load_checker().result()
iri = {"type": "object", "properties": {"u": {"type": "string", "format": "iri"}}}
faults["left"] = schema._IMPORT_ATTEMPTS
try:
    schema.validate_arguments("t", iri, {"u": "no iri \\\\ ::"})
except InvalidArgumentsError as error:
    print("gave up:", "recursion depth mismatch" in str(error))
faults["left"] = 1
try:
    schema.validate_arguments("t", iri, {"u": "no iri \\\\ ::"})
except InvalidArgumentsError as error:
    print("checked:", error)
"""


def test_an_iri_checker_whose_import_met_another_threads_parse_loads_again():
    """CPython 3.11's AST construction is not thread-safe: ``jsonschema``'s IRI checker (lark's grammar, built when
    a schema first uses the format) raised SystemError in a Dask worker while another thread formatted a
    traceback, and every later check failed with it. The import is tried again, and a load that gave up is not
    kept."""
    pytest.importorskip("rfc3987_syntax")
    script = subprocess.run(
        [sys.executable, "-c", RACED_IMPORT], capture_output=True, text=True, timeout=60, check=False
    )
    assert script.returncode == 0, script.stderr
    gave_up, checked = script.stdout.splitlines()
    assert gave_up == "gave up: True"
    assert checked.startswith("checked: t: argument 'u'") and "is not a 'iri'" in checked, checked


IRI_CHECK = """
import sys
from webmcp_nb.browser.schema import load_checker, validate_arguments
from webmcp_nb.core.errors import InvalidArgumentsError
load_checker().result()
print("loaded with the grammar:", "rfc3987_syntax" in sys.modules)
schema = {"type": "object", "properties": {"u": {"type": "string", "format": "iri"}}}
validate_arguments("t", schema, {"u": "https://example.com/\u00fc"})
try:
    validate_arguments("t", schema, {"u": "no iri \\\\ ::"})
except InvalidArgumentsError as error:
    print("checked:", error)
import rfc3987_syntax
print("the real module:", hasattr(rfc3987_syntax, "is_valid_syntax") and hasattr(rfc3987_syntax, "__file__"))
"""


def test_the_argument_checker_loads_without_building_the_iri_grammar_and_still_checks_iris():
    """``jsonschema`` imports its optional IRI checker, whose import builds a grammar (~1 s, most of its import, which
    a server's first call waited for); it is imported the first time a schema uses the format, and checks as
    before."""
    pytest.importorskip("rfc3987_syntax")
    script = subprocess.run([sys.executable, "-c", IRI_CHECK], capture_output=True, text=True, timeout=60, check=False)
    assert script.returncode == 0, script.stderr
    loaded, checked, real = script.stdout.splitlines()
    assert loaded == "loaded with the grammar: False"
    assert checked.startswith("checked: t: argument 'u'") and "is not a 'iri'" in checked, checked
    assert real == "the real module: True"


def test_a_pattern_is_read_as_javascript_reads_it():
    """JSON Schema's ``pattern`` is ECMA-262: a page's named group and back-reference (``\\k<name>``) work, as an eval
    suite's ``$pattern`` do (one reading for both); Python's engine alone refused the whole schema."""
    schema = {"type": "object", "properties": {"pair": {"type": "string", "pattern": r"^(?<w>[a-z]+)-\k<w>$"}}}
    validate_arguments("t", schema, {"pair": "ab-ab"})
    with pytest.raises(InvalidArgumentsError, match=r"argument 'pair': 'ab-cd' does not match") as refused:
        validate_arguments("t", schema, {"pair": "ab-cd"})
    assert refused.value.field == "pair"


PATTERNS = [
    r"^\d+$", r"^\w+$", r"\bcaf\b", r"^a\sb$", r"^\S+$", r"^[\w-]+$", r"^[^\d]+$", r"^[\D]+$", r"^[a\S]$",
    r"^[^a\S]$", r"^.$", r"^a$", r"^b$", r"^[]$", r"^[^]$", r"^a.b$", r"^[&|~]+$", r"(?<y>\d{2})-\k<y>",
    r"^\u{1F600}$", r"^\p{Lu}+$", r"^\B.", r"x*$", r"(a)|\1b", r"\1(a)", r"\k<a>(?<a>x)", r"^\cJ$", r"^[\cJ]$",
    r"^[\u{1F600}-\u{1F64F}]$", r"^\ud83d\ude00$", r"^(?:ab|c){2}$", r"^a{2,3}?$", r"^\x41\/$",
    r"^a{1,9007199254740991}$",
]  # fmt: skip
NOT_JAVASCRIPT = [
    r"(?R)", r"(?:a|(?R))*", r"(*SKIP)", r"a{,2}", r"\Aa", r"a\Z", r"(?i)a", r"(?x)a b", r"a++", r"(?>a)", r"(?|a)",
    r"(?#note)", r"\N{BULLET}", r"\X", r"\G", r"\a", r"\-", r"a]", r"a}", r"x{1", r"(?P<n>a)", r"a{e<=1}",
    r"(a", r"a)", r"**", r"[\B]",
]  # fmt: skip
SUBJECTS = [
    "123", "١٢٣", "abc", "café", "caf", "a\ufeffb", "a\u00a0b", "a\x1cb", "a\nb", "a\n", "a\rb", "\n", "\u2028",
    "b\u2028", "x", "😀", "ABC", "Straße", "a-b_c", "&|~", "12-12", "12-13", "",
]  # fmt: skip


def test_patterns_match_what_javascript_matches():
    """Every pattern of a corpus on every subject, with JavaScript's flags: the same verdict as Node's ``RegExp``
    (``u``, as JSON Schema's validators compile ``pattern``). Python's own reading differs: ``\\d``, ``\\w`` and
    ``\\b`` take every script's digits and letters, ``$`` matches before a final newline, ``.`` takes ``\\r``,
    ``\\s`` lacks U+FEFF, ``[]`` and ``[^]`` are not classes, ``\\u{…}`` is not an escape."""
    flag_sets = {"": 0, "m": regex.MULTILINE, "s": regex.DOTALL, "i": regex.IGNORECASE}
    cases = [(p, f, s) for p in PATTERNS for f in flag_sets for s in SUBJECTS]
    javascript = run_module_script(
        f"const cases = {json.dumps(cases)};\nresult = cases.map(([p, f, s]) => new RegExp(p, f + 'u').test(s));"
    )
    ours = [js_search(js_pattern(p, flag_sets[f]), s) for p, f, s in cases]
    differ = [(p, f, s, js) for (p, f, s), js, py in zip(cases, javascript, ours, strict=True) if js != py]
    assert not differ, f"{len(differ)} of {len(cases)} differ (pattern, flags, subject, JavaScript's verdict): {differ}"
    schema = {"type": "object", "properties": {"zip": {"type": "string", "pattern": r"^\d{5}$"}}}
    with pytest.raises(InvalidArgumentsError, match="argument 'zip'"):
        validate_arguments("t", schema, {"zip": "12345\n"})


def test_what_only_python_reads_is_refused_and_a_huge_pattern_is_left_to_the_page():
    """Python's own syntax (recursion, verbs, fuzzy matches, ``a{,2}``…) is not JavaScript's: Node refuses each of
    these, and so does the check (``(?R)`` had taken 780 MB per call). A pattern whose counted repeats unroll past
    ``MAX_COST`` (``(?:(?:a{1000}){1000}){1000}``: gigabytes to compile, nothing in JavaScript) is not compiled: the
    argument goes to the page, which checks it."""
    javascript = run_module_script(
        f"result = {json.dumps(NOT_JAVASCRIPT)}.map((p) => {{ try {{ new RegExp(p, 'u'); return true; }}"
        " catch { return false; } });"
    )
    assert javascript == [False] * len(NOT_JAVASCRIPT)
    for text in NOT_JAVASCRIPT:
        with pytest.raises(regex.error) as refused:
            js_pattern(text)
        assert not isinstance(refused.value, PatternTooCostly), text
    huge = "(?:(?:(?:a{1000}){1000}){1000})"
    with pytest.raises(PatternTooCostly, match="unrolls to 1,000,000,000 items"):
        js_pattern(huge)
    schema = {"type": "object", "properties": {"word": {"type": "string", "pattern": huge}}}
    validate_arguments("t", schema, {"word": "b"})  # not checked here: the page decides
    recursive = {"type": "object", "properties": {"word": {"type": "string", "pattern": "(?R)"}}}
    with pytest.raises(InvalidArgumentsError, match=r"input schema is invalid: '\(\?R\)' is not a 'regex'"):
        validate_arguments("t", recursive, {"word": "a"})


SLOW_IMPORT = """
import sys, time
import lark
build = lark.Lark.__init__
def slow(self, *args, **kwargs):
    lark.Lark.__init__ = build
    time.sleep(3)  # as on a loaded machine
    build(self, *args, **kwargs)
lark.Lark.__init__ = slow
import webmcp_nb as wm
from webmcp_nb.browser.schema import load_checker
print("before:", "jsonschema" in sys.modules)
try:
    with {start} as browser:
        pass
except {error} as exc:
    pass
print("after:", load_checker().done())
"""
STARTS = {
    "launch": ("wm.launch()", "()"),
    "failed launch": ("wm.launch(executable='/bin/false', timeout=20)", "wm.BrowserNotFoundError"),
    "failed connect": ("wm.connect({port}, start_relay=False, timeout=5)", "wm.NotConnectedError"),
}


@pytest.mark.browser
@pytest.mark.parametrize("start", list(STARTS))
def test_a_browser_start_returns_with_the_argument_checker_loaded(start, tmp_path, monkeypatch):
    """The checker's import runs beside the browser's start, and the start waits for it, when it works and when it
    fails: never beside the caller's own work. CPython 3.11 builds ASTs thread-unsafely (a pydantic model's class, a
    traceback, lark's grammars): an eval's first model request failed with SystemError while the import ran, and so
    did pytest's next import after a failed ``connect()``."""
    call, error = STARTS[start]
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    script = SLOW_IMPORT.format(start=call.format(port=free_port()), error=error)
    script = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert script.returncode == 0, script.stderr
    assert script.stdout.splitlines() == ["before: False", "after: True"], script.stdout
