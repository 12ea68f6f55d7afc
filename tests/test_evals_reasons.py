"""Every run that does not pass says why — in report.json, the HTML report, the notebook's display, the printed
text and the run's own session report — for each kind of failure: an argument against its constraint, the wrong
tool, a call never made, a call left over, a forbidden call, the answer, a stop at the call limit, a regular
expression that ran out of time, a suite that is wrong (setup) and an endpoint that refused. Local mode (tools
from the flight demo's schema, the scripted model through the real openai client): no browser."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

import webmcp_nb as wm
from webmcp_nb.evals.suite import SUITES
from webmcp_nb.testing import ScriptedServer, by_task, call, fail, say, slow

LONG = "Here is everything. " * 40

SUITE = {
    "format": "webmcp-nb-evals",
    "name": "reasons",
    "tools": str(SUITES / "flights.tools.json"),
    "max_tool_calls": 2,
    "tasks": [
        {"name": "args", "prompt": "[args] up to 900", "expectedCall": [
            {"functionName": "setFilters", "arguments": {"maxPrice": {"$lte": 900}}}]},
        {"name": "wrong tool", "prompt": "[wrong] direct only", "expectedCall": [
            {"functionName": "setFilters", "arguments": {"stops": [0]}}]},
        {"name": "never made", "prompt": "[missing] search and filter", "expectedCall": [
            {"functionName": "searchFlights"}, {"functionName": "setFilters", "arguments": {"stops": [0]}}]},
        {"name": "left over", "prompt": "[extra] list", "expectedCall": [{"functionName": "listFlights"}]},
        {"name": "forbidden", "prompt": "[forbidden] show all", "forbid_calls": ["resetFilters"],
         "expectedCall": [{"functionName": "resetFilters", "optional": True}]},
        {"name": "answer", "prompt": "[answer] how many?", "expectedCall": None, "expect_answer": {"$contains": "4"}},
        {"name": "limit", "prompt": "[limit] list", "expectedCall": [{"functionName": "listFlights"}]},
        {"name": "regex", "prompt": "[regex] from where?", "expectedCall": [
            {"functionName": "searchFlights", "arguments": {"origin": {"$pattern": "^(a|a)*$"}}}]},
        {"name": "setup", "prompt": "[setup] from where?", "expectedCall": [
            {"functionName": "searchFlights", "arguments": {"origin": {"$pattern": "("}}}]},
        {"name": "endpoint", "prompt": "[endpoint] hello", "expectedCall": None},
    ],
}  # fmt: skip

SCRIPT = {
    "[args]": [call("setFilters", maxPrice=1200), say("Done.")],
    "[wrong]": [call("listFlights"), say("Done.")],
    "[missing]": [call("searchFlights", origin="LON"), say("Done.")],
    "[extra]": [call("listFlights"), call("resetFilters"), say("Done.")],
    "[forbidden]": [call("resetFilters"), say("Done.")],
    "[answer]": [say(LONG)],
    "[limit]": [call("listFlights"), call("listFlights"), call("listFlights"), say("Enough.")],
    "[regex]": [call("searchFlights", origin="a" * 40 + "!"), say("Done.")],
    "[setup]": [call("searchFlights", origin="LON"), say("Done.")],
    "[endpoint]": [fail(400, "\x1b[2K\rno such model")],
}

WHY = {
    "args": ["first expected call not met (call 1): setFilters.maxPrice: expected ≤ 900, got 1200"],
    "wrong tool": ["first expected call not met: setFilters(stops=[0]); call 1 was listFlights()"],
    "never made": [
        "first expected call not met: setFilters(stops=[0]) was never made (the model made 1 call the trajectory "
        "counts)"
    ],
    "left over": ["unexpected call 2: resetFilters() (no expected call is left for it)"],
    "forbidden": ["forbidden call (call 1): resetFilters()"],
    "answer": [f'answer: expected contains "4", got {json.dumps(LONG)}'],
    "limit": [
        "the agent stopped: it reached the limit of 2 tool calls (max_tool_calls)",
        "unexpected call 2: listFlights() (no expected call is left for it)",
    ],
    "regex": [
        "first expected call not met (call 1): searchFlights.origin: expected matches /^(a|a)*$/, got "
        f'"{"a" * 40}!" (the match took over 1 s and was stopped: counted as no match)'
    ],
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> wm.evals.EvalReport:
    folder = tmp_path_factory.mktemp("reasons")
    suite = wm.evals.suite.parse(SUITE)
    with ScriptedServer(by_task(SCRIPT)) as model:
        return wm.evals.run(
            suite, models=[wm.Model("any", "m", base_url=model.base_url)], retries=0, output=folder / "out",
            progress=False,
        )  # fmt: skip


def test_each_failed_run_says_why_in_the_record_the_text_and_the_html(report: wm.evals.EvalReport) -> None:
    runs = {r.task: r for r in report.runs}
    assert {name: runs[name].why for name in WHY} == WHY
    assert runs["setup"].status == "error" and runs["setup"].why[0].startswith(
        'setup error: $pattern "(" is not a valid regular expression'
    )
    endpoint = runs["endpoint"].why[0]
    assert (
        endpoint.startswith("endpoint error: ModelError: the model endpoint refused the request") and "400" in endpoint
    )
    unmet = runs["args"].unmet
    assert unmet is not None and unmet["rows"] == [["setFilters.maxPrice", "≤ 900", "1200"]]  # side by side
    assert unmet["got"]["arguments"] == {"maxPrice": 1200} and unmet["expected"]["functionName"] == "setFilters"

    text = str(report)
    saved = json.loads((report.directory / "report.json").read_text())
    page = (report.directory / "report.html").read_text()
    shown = report._repr_mimebundle_()
    for name, reasons in WHY.items():
        for reason in reasons:
            assert reason in text, name
            assert html.escape(reason if len(reason) < 400 else reason[:400]) in page, name
            assert html.escape(reason[:400]) in shown["text/html"], name
        assert next(r for r in saved["runs"] if r["task"] == name)["reasons"] == reasons
    assert f"ERROR any:m · endpoint #1:\n      {endpoint[:40]}" in text
    assert "\x1b" not in text and "<U+001B>[2K<U+000D>no such model" in text  # the endpoint's text, made visible
    assert "<td style" in page and "argument</th>" in page  # the unmet call's arguments as a table
    assert shown["text/plain"] == text


def test_a_failed_runs_session_report_opens_with_the_verdict(report: wm.evals.EvalReport) -> None:
    run = next(r for r in report.runs if r.task == "args")
    folder = report.session_path(run)
    assert folder is not None
    page = (folder / "report.html").read_text()
    head = page[: page.index("<h2>Timeline</h2>")]
    assert "<div class='wm-outcome bad'>Eval: failed</div>" in head
    assert html.escape(WHY["args"][0]) in head and "wm-outcome ok" not in head
    assert "Problems (0)" not in page
    session = wm.Session.load(folder)
    (verdict,) = session.filter("verdict")
    assert verdict.kind == "verdict.fail" and verdict.data["reasons"] == WHY["args"]
    assert session.report().summary.verdict == ("eval", "fail", WHY["args"])
    passed = wm.Session.load(report.session_path(next(r for r in report.runs if r.task == "forbidden")))
    assert [e.kind for e in passed.filter("verdict")] == ["verdict.fail"]


def test_the_report_a_person_reads(report: wm.evals.EvalReport) -> None:
    page = (report.directory / "report.html").read_text()
    links = re.findall(r"href='([^']*)'", page)
    assert links and all(re.fullmatch(r"\./runs/[a-z0-9-]+/report\.html", link) for link in links), links
    for link in set(links):  # each run's mark opens its session's report, inside the eval's folder
        assert (report.directory / link).is_file()
    grid = page[page.index("<h2>Per task") : page.index("<h2>Why runs")]
    assert grid.count("title='fail · repeat 1: ") == 8 and "title='error · repeat 1: setup error" in grid
    assert "errors: 1 setup, 1 endpoint" in report._head() and "1 setup, 1 endpoint" in page  # named, not "2 (0/1)"
    assert "<details><summary style='cursor:pointer'>Here is everything." in page  # a long answer folds, whole
    assert LONG.strip() in html.unescape(page) and "more characters]" not in page
    svg = page[page.index("<svg") : page.index("</svg>")]
    labels = [float(y) for y in re.findall(r'<text x="0" y="([\d.]+)">', svg)]
    bars = [float(y) for y in re.findall(r'<rect x="0" y="([\d.]+)" width="500"', svg)]
    assert len(labels) == len(bars) == 11  # the model, and each of its ten tasks
    assert all(label < bar for label, bar in zip(labels, bars, strict=True))  # every label above its bar
    shown = report._repr_mimebundle_()["text/html"]
    for part in ("<h2>Per task: the runs side by side</h2>", "<h2>Why runs did not pass (10)</h2>", "<svg"):
        assert part in shown
    assert shown.count('<rect x="0"') == page.count('<rect x="0"')  # the per-task bars too


def test_a_link_in_a_shared_report_is_never_followed_outside_the_eval(report: wm.evals.EvalReport, tmp_path: Path):
    data = json.loads((report.directory / "report.json").read_text())
    for i, run in enumerate(data["runs"]):
        run["session"] = ["javascript:alert(1)//", "../../../etc", "https://example.com/x", "/abs/runs/x"][i % 4]
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "report.json").write_text(json.dumps(data))
    page = wm.evals.EvalReport.load(shared).html()
    assert "href=" not in page and "javascript:alert(1)//" in page  # shown as text, never a link


@pytest.mark.parametrize(
    ("pattern", "value", "timed_out"),
    [("^(\\w+\\s?)+$", "a" * 40 + "!", False), ("^(a|a)*$", "a" * 40 + "!", True)],
)
def test_a_pathological_pattern_never_freezes_the_process(pattern: str, value: str, timed_out: bool) -> None:
    """``^(\\w+\\s?)+$`` froze Python's ``re`` for good (the GIL held); the regex engine answers it, and a pattern
    even it cannot finish is stopped after a second: no match, and the reason says so."""
    assert wm.evals.matcher.matches({"$pattern": pattern}, value) is False
    (row,) = wm.evals.matcher.explain({"$pattern": pattern}, value)
    assert ("took over 1 s" in row[2]) is timed_out


def test_a_run_stopped_by_its_time_limit_says_so(tmp_path: Path) -> None:
    suite = wm.evals.suite.parse(
        {
            "format": "webmcp-nb-evals",
            "tools": str(SUITES / "flights.tools.json"),
            "turn_timeout": 2,
            "tasks": [
                {"name": "slow", "prompt": "[slow] hi", "expectedCall": None, "expect_answer": {"$contains": "hi"}}
            ],
        }
    )
    with ScriptedServer(by_task({"[slow]": [slow(say("hi"), 6)]})) as model:  # answers after the turn's limit
        report = wm.evals.run(
            suite, models=[wm.Model("any", "m", base_url=model.base_url)], output=tmp_path, progress=False
        )
    (run,) = report.runs
    why = [
        "the agent stopped: the turn ran out of its time limit of 2 s",
        'answer: expected contains "hi", got no answer',
    ]
    assert run.status == "fail" and run.stopped == "turn_timeout" and run.why == why
    page = (tmp_path / "report.html").read_text()
    assert all(reason in str(report) and html.escape(reason) in page for reason in why)
