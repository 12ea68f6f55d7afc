"""webmcp-evals' matching rules and smoke compiler as ported, on hand-made cases of their shapes (every node
and constraint kind), and suites of both formats read from disk. No browser, no model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import webmcp_nb as wm
from webmcp_nb.evals import matcher
from webmcp_nb.evals.matcher import Call, concrete, matches, smoke_steps, tool_failure, trajectory

HERE = Path(__file__).parent / "evals"


# ----- arguments -----


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        ({"$pattern": "^2027-\\d{2}-\\d{2}$"}, "2027-01-15", True),
        ({"$pattern": "^2027"}, "x2027", False),
        ({"$pattern": "York"}, "New York", True),  # a search, not a full match
        ({"$pattern": "(?i)^new york$"}, "NEW YORK", True),
        ({"$pattern": "^new york$"}, "NEW YORK", False),
        ({"$pattern": "\\d"}, 5, False),  # only strings match a pattern
        ({"$pattern": "^(?<year>\\d{4})-\\k<year>$"}, "2024-2024", True),  # JavaScript's named groups
        ({"$pattern": "^(?<year>\\d{4})-\\k<year>$"}, "2024-2025", False),
        ({"$pattern": "(?<=New )York"}, "New York", True),  # a lookbehind stays one
        ({"$contains": "York"}, "New York", True),
        ({"$contains": "york"}, "New York", False),
        ({"$contains": "5"}, 5, False),
        ({"$gt": 1}, 2, True),
        ({"$gt": 2}, 2, False),
        ({"$gte": 2}, 2, True),
        ({"$lt": 2}, 1.5, True),
        ({"$lte": 120}, 121, False),
        ({"$gte": 1, "$lte": 3}, 3, True),
        ({"$gte": 1}, "2", False),  # numbers only: no coercion
        ({"$gte": 1}, True, False),  # a boolean is not a number
        ({"$type": "string"}, "x", True),
        ({"$type": "number"}, 1.5, True),
        ({"$type": "number"}, False, False),
        ({"$type": "boolean"}, False, True),
        ({"$type": "array"}, [], True),
        ({"$type": "object"}, {}, True),
        ({"$type": "object"}, [], False),
        ({"$type": "object"}, None, False),
        ({"$type": "null"}, None, True),
        ({"$type": "integer"}, 1, False),  # JavaScript's typeof has no "integer"
        ({"$any": True}, None, True),
        ({"$eq": "3"}, "1", False),  # ours: $eq as its name says (theirs passed it: a key their matcher ignores)
        ({"$eq": "3"}, "3", True),
        ({"$eq": 3}, 3.0, True),
        ({"$eq": 3}, "3", False),
        ({"$eq": {"a": 1}}, {"a": 1, "b": 2}, False),  # equal, not a subset
        ({"$eq": [1, {"a": 1}]}, [1, {"a": 1}], True),
        ({"$ne": "1"}, "1", False),
        ({"$ne": "1"}, "2", True),
        ({"$ne": 1}, True, True),
        ({"$in": ["a", "b"]}, "b", True),
        ({"$in": ["a", "b"]}, "c", False),
        ({"$in": [1, [2]]}, [2], True),
        ({"$in": []}, None, False),
        ({"$gte": 1, "$ne": 2}, 2, False),
        ({"a": 1}, {"a": 1, "b": 2}, True),  # objects: a subset
        ({"a": 1, "c": 3}, {"a": 1}, False),
        ({"a": {"$any": True}}, {}, False),  # $any needs the key
        ({"a": {"b": {"$contains": "x"}}}, {"a": {"b": "xyz", "c": 0}}, True),
        ({"$gt": 1, "b": 2}, {"b": 2}, False),  # mixed keys: not a constraint, a plain object
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),  # arrays: by position
        ([1, 2], [1, 2, 3], False),  # and length
        ([{"$gt": 0}, "a"], [1, "a"], True),
        (1, 1.0, True),
        (1, True, False),
        ("1", 1, False),
        (None, None, True),
        ({}, {"anything": 1}, True),
    ],
)
def test_arguments_match_as_webmcp_evals_match_them(expected, actual, ok):
    assert matches(expected, actual) is ok


def test_an_unknown_constraint_is_an_error_never_a_pass():
    # theirs let {"$unknown": 1} match anything; a check that cannot be made must not pass
    with pytest.raises(matcher.ConstraintError, match=r'unknown constraint "\$equals"; the known ones: \$pattern'):
        matches({"$equals": "3"}, "1")
    assert matcher.words({"$eq": 3, "$ne": 4}) == "= 3 and ≠ 4" and matcher.words({"$in": [1, "a"]}) == 'one of 1, "a"'
    assert concrete("k", {"$in": ["x", "y"]}) == "x" and concrete("k", {"$ne": "sample"}) == "other"


def test_bad_patterns_are_errors_not_failures():
    with pytest.raises(matcher.ConstraintError, match="inline flag"):
        matches({"$pattern": "(?x)a b"}, "ab")
    with pytest.raises(matcher.ConstraintError, match='\\$pattern "\\(unclosed" is not a valid'):  # as JSON
        matches({"$pattern": "(unclosed"}, "x")


# ----- trajectories -----


def run(expected, *calls):
    rows = trajectory(expected, [Call(name, args, result) for name, args, result in calls])
    return matcher.passed(rows), rows


def c(name, result=None, **arguments):
    return (name, arguments, result)


def test_the_top_level_is_ordered_and_arguments_are_optional():
    expected = [{"functionName": "a", "arguments": {"x": 1}}, {"functionName": "b"}]
    assert run(expected, c("a", x=1), c("b", anything="goes"))[0]
    assert not run(expected, c("b"), c("a", x=1))[0]
    assert not run(expected, c("a", x=2), c("b"))[0]
    ok, rows = run(expected, c("a", x=1))
    assert not ok and rows[-1].expected["functionName"] == "b" and rows[-1].actual is None  # a missing call


def test_any_extra_call_fails_the_case():
    ok, rows = run([{"functionName": "a"}], c("a"), c("a"))
    assert not ok and rows[-1] == matcher.Row(None, 1, "fail")


def test_no_call_expected():
    assert run(None)[0] and run([])[0]
    assert not run(None, c("a"))[0] and not run([], c("a"))[0]


def test_results_are_matched_when_given():
    expected = [{"functionName": "get", "result": {"items": {"$type": "array"}}}]
    assert run(expected, c("get", result={"items": [1]}))[0]
    assert not run(expected, c("get", result={"items": "none"}))[0]
    assert run([{"functionName": "f", "result": "pending form submission"}], c("f", "pending form submission"))[0]


def test_unordered_groups_match_in_any_order_with_the_best_pairing():
    group = {
        "unordered": [
            {"functionName": "add", "arguments": {"t": {"$contains": "o"}}},  # onion or olive
            {"functionName": "add", "arguments": {"t": "onion"}},
            {"functionName": "size"},
        ]
    }
    expected = [group, {"functionName": "share"}]
    # the greedy pairing (onion → the first node) would leave olive unmatched; the matching reassigns it
    assert run(expected, c("add", t="onion"), c("size"), c("add", t="olive"), c("share"))[0]
    assert run(expected, c("size"), c("add", t="olive"), c("add", t="onion"), c("share"))[0]
    assert not run(expected, c("size"), c("add", t="olive"), c("add", t="olive"), c("share"))[0]
    assert not run(expected, c("size"), c("add", t="onion"), c("share"))[0]  # one short


def test_nested_groups():
    expected = [
        {
            "unordered": [
                {"ordered": [{"functionName": "search"}, {"functionName": "filter"}]},
                {"functionName": "login"},
            ]
        }
    ]
    assert run(expected, c("login"), c("search"), c("filter"))[0]
    assert run(expected, c("search"), c("filter"), c("login"))[0]
    assert not run(expected, c("filter"), c("search"), c("login"))[0]  # the ordered part keeps its order
    nested = [{"ordered": [{"functionName": "a"}, {"unordered": [{"functionName": "b"}, {"functionName": "c"}]}]}]
    assert run(nested, c("a"), c("c"), c("b"))[0]


def test_optional_calls_may_be_skipped_or_made():
    expected = [{"functionName": "search"}, {"functionName": "peek", "optional": True}, {"functionName": "book"}]
    assert run(expected, c("search"), c("book"))[0]
    assert run(expected, c("search"), c("peek"), c("book"))[0]
    assert not run(expected, c("search"), c("peek"), c("peek"), c("book"))[0]
    assert run([{"functionName": "a"}, {"functionName": "z", "optional": True}], c("a"))[0]  # optional at the end
    group = [{"unordered": [{"functionName": "a"}, {"functionName": "b", "optional": True}]}]
    assert run(group, c("a"))[0] and run(group, c("b"), c("a"))[0]


def test_their_flat_unordered_group_looks_as_far_ahead_as_it_has_members():
    """A quirk kept on purpose: with an optional member skipped, the group's pool still takes the next call."""
    expected = [{"unordered": [{"functionName": "a"}, {"functionName": "b", "optional": True}]}, {"functionName": "x"}]
    assert not run(expected, c("a"), c("x"))[0]


def test_a_case_from_their_suite_shape():
    cases = json.loads((HERE / "evals.json").read_text())
    first = cases[0]["expectedCall"]
    calls = [c("add_topping", topping="pepper"), c("set_pizza_size", size="Small"), c("add_topping", topping="onion")]
    assert run(first, *calls, c("share_pizza"))[0]
    assert run(first, *calls, c("get_pizza"), c("share_pizza"))[0]
    assert not run(first, *calls)[0]


# ----- smoke mode -----


def test_smoke_resolves_every_constraint_to_a_sample_value():
    assert concrete("q", {"$contains": "York"}) == "York"
    assert concrete("n", {"$gte": 2}) == 2 and concrete("n", {"$lt": 9}) == 9 and concrete("n", {"$eq": 4}) == 4
    assert concrete("code", {"$pattern": "^[A-Z]{3}$"}) == "a{3}"  # their simplification, as it is
    assert concrete("id", {"$pattern": "^order-\\d+$"}) == "order-123"
    assert concrete("x", {"$pattern": "^.*$"}) == "sample"
    assert concrete("name", {"$type": "string"}) == "sample"
    assert len(concrete("outboundDate", {"$type": "string"})) == 10  # a date key: tomorrow, YYYY-MM-DD
    assert concrete("n", {"$type": "number"}) == 1 and concrete("b", {"$type": "boolean"}) is True
    assert concrete("l", {"$type": "array"}) == [] and concrete("o", {"$type": "object"}) == {}
    assert concrete("k", {"$any": True}) == "sample"
    assert concrete("k", {"a": [{"$contains": "z"}], "$note": 1}) == {"a": ["z"]}


def test_smoke_steps_follow_the_authored_order_without_optional_calls():
    nodes = [
        {
            "unordered": [
                {"functionName": "b", "arguments": {"q": {"$contains": "x"}}},
                {"functionName": "a", "arguments": {}},
            ]
        },
        {"functionName": "peek", "arguments": {}, "optional": True},
        {"ordered": [{"functionName": "c", "arguments": {"n": {"$gt": 3}}}]},
    ]
    assert smoke_steps("case", nodes) == [("b", {"q": "x"}), ("a", {}), ("c", {"n": 3})]
    with pytest.raises(ValueError, match="requires an arguments object"):
        smoke_steps("case", [{"functionName": "a"}])
    with pytest.raises(ValueError, match="at least one required tool call"):
        smoke_steps("case", [{"functionName": "a", "arguments": {}, "optional": True}])


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        ("Error: no such flight", True),
        ("error occurred", True),
        ("errors are fine here", False),
        ({"success": False}, True),
        ({"isError": True}, True),
        ({"error": "bad date"}, True),
        ({"error": {"code": 1}}, False),
        ('{"error": "as JSON text"}', True),
        ({"count": 3}, False),
        ([1, 2], False),
    ],
)
def test_smoke_reads_failures_in_results_as_they_do(result, failed):
    assert (tool_failure(result) is not None) is failed


# ----- suites -----


def test_their_files_load_as_they_are():
    suite = wm.evals.load(HERE / "evals.json", tools=HERE / "schema.json")
    assert suite.kind == "webmcp-evals" and len(suite) == 4
    assert [t.name for t in suite.tasks][2] == "Just chatting" and suite.tasks[2].expected is None
    assert {t["name"] for t in suite.tools} == {"add_topping", "set_pizza_size", "get_pizza", "share_pizza"}
    assert suite.tasks[3].messages[-1]["type"] == "functionresponse"


def test_a_native_suite(tmp_path: Path):
    (tmp_path / "site.yaml").write_text(
        """
format: webmcp-nb-evals
version: 1
start_url: demo:flights/
repeats: 2
models: ["deepseek:deepseek-chat"]
skills: [shop]
max_tool_calls: 5
tasks:
  - name: search
    prompt: Find flights
    expectedCall: [{functionName: searchFlights}]
    forbid_calls: [resetFilters]
    expect_answer: {$contains: flights}
    expect_state:
      - {url: {$contains: "origin=LON"}}
      - {selector: "#flight-list li", count: {$gte: 1}}
      - {selector: "#result-count", text: {$contains: Showing}}
      - {tool: listFlights, arguments: {}, result: {$type: array}}
"""
    )
    suite = wm.evals.load(tmp_path / "site.yaml")
    task = suite.tasks[0]
    assert (suite.name, suite.repeats, suite.skills) == ("site", 2, ("shop",))
    assert suite.models == ("deepseek:deepseek-chat",)
    assert task.messages == ({"role": "user", "type": "message", "content": "Find flights"},)
    assert task.forbid_calls == ("resetFilters",) and len(task.expect_state) == 4
    assert task.expect_answer == {"$contains": "flights"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format: other\ntasks: []", "not an eval suite"),
        ("format: webmcp-nb-evals\ntasks: []", "non-empty list"),
        ("format: webmcp-nb-evals\nversion: 9\ntasks: [{prompt: x}]", "version 9"),
        ("format: webmcp-nb-evals\ntasks: [{prompt: x, expect_stat: []}]", "unknown keys"),
        ("format: webmcp-nb-evals\ntasks: [{prompt: x, expect_state: [{selector: a}]}]", "a check is"),
        ("format: webmcp-nb-evals\ntasks: [{prompt: x, expectedCall: [{name: a}]}]", "functionName"),
        ("format: webmcp-nb-evals\ntasks: [{name: a, prompt: x}, {name: a, prompt: y}]", "unique"),
        ("format: webmcp-nb-evals\nrepeats: 0\ntasks: [{prompt: x}]", "repeats: a whole number of runs, 1 or more"),
    ],
)
def test_a_wrong_suite_says_what_is_wrong(tmp_path: Path, text: str, message: str):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(wm.evals.SuiteError, match=message):
        wm.evals.load(tmp_path / "bad.yaml")


def test_a_suite_with_an_unknown_constraint_is_refused_as_it_loads_in_both_formats(tmp_path: Path):
    theirs = [
        {"messages": [{"role": "user", "content": "x"}], "expectedCall": [{"functionName": "a", "arguments": {}}]},
        {
            "messages": [{"role": "user", "content": "y"}],
            "expectedCall": [{"ordered": [{"functionName": "b", "arguments": {"q": [{"$regex": "^x"}]}}]}],
        },
    ]
    (tmp_path / "evals.json").write_text(json.dumps(theirs))
    with pytest.raises(wm.evals.SuiteError) as refused:
        wm.evals.load(tmp_path / "evals.json")
    message = str(refused.value)
    assert "case 2 expectedCall[0][0]: arguments.q[0]: unknown constraint" in message and '"$regex"' in message
    assert "the known ones: $pattern, $contains, $gt, $gte, $lt, $lte, $type, $any, $eq, $ne, $in" in message
    native = """format: webmcp-nb-evals
tasks:
  - prompt: x
    expectedCall: [{functionName: a, arguments: {n: {$eq: 3}, m: {$in: [1, 2]}, o: {$ne: 0}}}]
    expect_answer: {$eq: "3"}
    expect_state:
      - {selector: "#count", text: {$eq: "3"}}
"""
    (tmp_path / "good.yaml").write_text(native)
    assert wm.evals.load(tmp_path / "good.yaml").tasks[0].expect_answer == {"$eq": "3"}
    for wrong, where in [
        ('{selector: "#count", text: {$equal: "3"}}', "expect_state[0]: text: unknown constraint"),
        ("{tool: t, arguments: {}, result: {a: {$in: 3}}}", "expect_state[0]: result.a: $in takes a list"),
    ]:
        (tmp_path / "bad.yaml").write_text(native.replace('{selector: "#count", text: {$eq: "3"}}', wrong))
        with pytest.raises(wm.evals.SuiteError, match=re.escape(where)):
            wm.evals.load(tmp_path / "bad.yaml")
    (tmp_path / "bad.yaml").write_text(native.replace('expect_answer: {$eq: "3"}', "expect_answer: {$regex: x}"))
    with pytest.raises(wm.evals.SuiteError, match=re.escape("tasks[0] expect_answer: unknown constraint")):
        wm.evals.load(tmp_path / "bad.yaml")


def test_models_are_parsed_and_keys_are_not_part_of_them():
    model = wm.Model.parse("deepseek:deepseek-chat")
    assert model.label == "deepseek:deepseek-chat" and wm.Model.parse("deepseek").label.startswith("deepseek:")
    local = wm.Model.parse("any:scripted@http://127.0.0.1:9/v1")
    assert (local.provider, local.model, local.base_url) == ("any", "scripted", "http://127.0.0.1:9/v1")
    assert "key" not in {f for f in wm.Model.__dataclass_fields__ if f != "api_key_env"}
    assert wm.Model("openai", "m", price_input=1.0, price_output=2.0).cost(1_000_000, 500_000) == 2.0
    with pytest.raises(wm.evals.SuiteError, match="unknown provider"):
        wm.Model.parse("nope:x")


@pytest.mark.parametrize("name", ["flights", "shop"])
def test_the_shipped_suites_load(name: str):
    suite = wm.evals.builtin(name)
    assert suite.start_url == f"demo:{name}/" and len(suite) >= 2
    for task in suite.tasks:
        if task.expected:
            assert smoke_steps(task.name, task.expected)


# ----- values as theirs spell them -----


def test_a_null_result_and_an_error_object_read_as_in_javascript():
    from webmcp_nb.evals.hosts import unwrap
    from webmcp_nb.evals.job import conversation

    seeded = (
        {"role": "model", "type": "functioncall", "name": "get_pizza", "arguments": {}},
        {"role": "user", "type": "functionresponse", "name": "get_pizza", "response": {"result": None, "size": 1}},
        {"role": "user", "type": "message", "content": "And now?"},
    )
    history, task = conversation(seeded)
    assert task == "And now?" and '{"result": null, "size": 1}' in history[1]["content"]  # response?.result ?? response
    assert unwrap({"isError": True, "why": "é"}) == {"error": '{"isError":true,"why":"é"}'}  # JSON.stringify


def test_the_printed_report_shows_bidirectional_controls_in_page_text():
    run = wm.evals.RunRecord("r", "t", "any:m", 1, "browser", status="fail", reasons=["page said \u202eevil"])
    printed = str(wm.evals.EvalReport([run]))
    assert "page said <U+202E>evil" in printed and "\u202e" not in printed
