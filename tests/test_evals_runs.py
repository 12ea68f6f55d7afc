"""Eval runs end to end with the scripted model through the real openai client: webmcp-evals' local mode (tools
from a schema file, mocked outputs, no browser), a native suite on the flight demo in real Chromium (a pass, a
fail on the page's end state though the calls matched, a forbidden call), smoke mode, and the report's numbers."""

from __future__ import annotations

import dataclasses
import html
import json
import time
from pathlib import Path
from typing import Any

import pytest
from scripted_evals import FLIGHTS, HERE, PIZZA, SLOPPY, model

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.evals.report import pass_hat_k, wilson
from webmcp_nb.evals.stats import ALPHA
from webmcp_nb.testing import ScriptedServer, by_task, call, calls, say, slow


def test_their_local_mode_scores_two_models_with_mock_outputs(tmp_path: Path):
    suite = wm.evals.load(HERE / "evals.json", tools=HERE / "schema.json")
    with ScriptedServer(by_task(PIZZA)) as good, ScriptedServer(by_task(SLOPPY)) as sloppy:
        report = wm.evals.run(
            suite, models=[model(good), model(sloppy, "sloppy")], repeats=2, output=tmp_path, progress=False
        )
        assert report.mode == "local"
        shared = [r for r in good.requests if "pizza.example/p/42" in json.dumps(r["messages"])]
        assert shared  # the model got share_pizza's mockOutput
        seeded = next(r for r in good.requests if "Added 1 olive." in json.dumps(r["messages"]))
        assert any(m["role"] == "tool" for m in seeded["messages"])  # the case's functionresponse, as history
        usages = {"good": good.usages, "sloppy": sloppy.usages}

    runs = {(r.model, r.task, r.repeat): r for r in report.runs}
    assert len(runs) == 16 and {r.status for r in report.runs if r.model == "any:scripted"} == {"pass"}
    sloppy_runs = [r for r in report.runs if r.model == "any:sloppy"]
    assert sorted((r.task, r.status) for r in sloppy_runs if r.repeat == 1) == [
        ("Continue after a tool response", "pass"),
        ("Just chatting", "fail"),
        ("Small pizza with onion and pepper (unordered)", "pass"),
        ("Two mushrooms", "fail"),
    ]
    chat = runs[("any:sloppy", "Just chatting", 1)]
    assert [c.tool for c in chat.calls] == ["nonexistent_tool", "get_pizza"] and chat.calls[0].unknown
    assert [row["call"] for row in chat.trajectory] == [1]  # the unknown tool is left out, as theirs does
    olive = runs[("any:scripted", "Continue after a tool response", 1)]
    assert olive.calls[0].result == {"toppings": ["olive"]}  # the mock output is what `result` is matched against

    good_stats, sloppy_stats = report.models["any:scripted"], report.models["any:sloppy"]
    assert (good_stats["passed"], good_stats["failed"], good_stats["errors"]) == (8, 0, 0)
    assert (sloppy_stats["passed"], sloppy_stats["failed"]) == (4, 4)
    low, high = wilson(4, 8)
    assert sloppy_stats["success_rate"] == 0.5 and (sloppy_stats["wilson_low"], sloppy_stats["wilson_high"]) == (
        low,
        high,
    )
    assert round(low, 3) == 0.215 and round(high, 3) == 0.785
    assert sloppy_stats["pass_hat_k"] == 0.5 and pass_hat_k(1, 2, 2) == 0.0 and pass_hat_k(2, 3, 2) == 1 / 3
    assert sloppy_stats["invalid_calls"] == 2  # the unknown tool, twice
    assert good_stats["tool_accuracy"] == good_stats["argument_accuracy"] == 1.0
    assert sloppy_stats["argument_accuracy"] < sloppy_stats["tool_accuracy"] <= 1.0
    for name, stats in (("good", good_stats), ("sloppy", sloppy_stats)):
        tokens = sum(u["total_tokens"] for u in usages[name])
        assert stats["prompt_tokens"] + stats["completion_tokens"] == tokens
        cost = sum(u["prompt_tokens"] + 2 * u["completion_tokens"] for u in usages[name]) / 1e6
        assert stats["cost"] == pytest.approx(cost)
    assert good_stats["steps_mean"] == (4 + 1 + 0 + 1) / 4 and good_stats["expected_steps_mean"] == (4 + 1 + 0 + 1) / 4

    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["models"]["any:sloppy"]["passed"] == 4 and len(saved["runs"]) == 16
    html = (tmp_path / "report.html").read_text()
    assert "<script" not in html and "http" not in html.replace("http://www.w3.org/2000/svg", "").replace(
        "https://pizza.example", ""
    )
    assert wm.evals.EvalReport.load(tmp_path).models == report.models
    for run in report.runs:  # every run's recorded session is there, with its model turns
        session = wm.Session.load(report.session_path(run))
        assert session.filter("agent.turn.finished")


def test_compare_says_what_got_better_or_worse_beyond_noise(tmp_path: Path):
    """Four repeats: 0/4 against 4/4 on a task is beyond noise (Fisher's exact test, p = 0.029); one repeat
    each (0/1 against 1/1) is not, nor is anything between single runs; an unchanged task differs in nothing but
    its time (which a machine's load can change)."""
    suite = wm.evals.load(HERE / "evals.json", tools=HERE / "schema.json")
    with ScriptedServer(by_task(SLOPPY)) as server:
        before = wm.evals.run(suite, models=[model(server)], repeats=4, output=tmp_path / "a", progress=False)
        once = wm.evals.run(suite, models=[model(server)], repeats=1, output=tmp_path / "c", progress=False)
    with ScriptedServer(by_task(PIZZA)) as server:
        after = wm.evals.run(suite, models=[model(server)], repeats=4, output=tmp_path / "b", progress=False)
        after_once = wm.evals.run(suite, models=[model(server)], repeats=1, output=tmp_path / "d", progress=False)
    comparison = after.compare(before)
    verdicts = {(c.model, c.task): c.verdict for c in comparison.changes}
    assert verdicts[("any:scripted", None)] == "better" and verdicts[("any:scripted", "Two mushrooms")] == "better"
    mushrooms = next(c for c in comparison.changes if c.task == "Two mushrooms")
    assert mushrooms.tests["success"] == pytest.approx(2 / 70)  # Fisher's exact test on 0/4 against 4/4
    assert "passed 0/4 → 4/4 (p = 0.029)" in mushrooms.why
    unchanged = next(c for c in comparison.changes if c.task == "Small pizza with onion and pepper (unordered)")
    assert unchanged.tests["success"] == 1.0 and unchanged.tests["tokens"] >= ALPHA  # the same passes and tokens
    # Only its time may differ beyond noise, when the machine's load changed between the runs (four each).
    assert unchanged.verdict == "no clear difference" or unchanged.tests["latency"] < ALPHA, unchanged.why
    counts = [sum(c.verdict == v for c in comparison.changes) for v in ("better", "worse", "no clear difference")]
    assert str(comparison).startswith("{} better, {} worse, {} with no clear difference".format(*counts))
    assert {c.verdict for c in before.compare(after).changes if c.task == "Two mushrooms"} == {"worse"}
    # 0/1 against 1/1 on each task: no pass rate or token count is beyond noise. Over all tasks each side has four
    # runs, so their times may be, when the machine's load changed between the runs (as for the unchanged task).
    single = after_once.compare(once)
    for change in single.changes:
        assert change.tests["success"] >= ALPHA and change.tests["tokens"] >= ALPHA, change.why
        assert change.verdict == "no clear difference" or change.tests["latency"] < ALPHA, change.why
    assert {c.verdict for c in single.changes if c.task is not None} == {"no clear difference"}, str(single)


@pytest.mark.browser
def test_a_native_suite_on_the_flight_demo(tmp_path: Path, polyfill_browser: wm.Browser):
    suite = wm.evals.load(HERE / "flights.yaml")
    with ScriptedServer(by_task(FLIGHTS)) as server:
        report = wm.evals.run(suite, models=[model(server)], output=tmp_path, concurrency=2, progress=False)
        usages = list(server.usages)
    runs = {r.task: r for r in report.runs}
    direct, state, forbidden = runs["direct"], runs["state"], runs["forbidden"]

    assert direct.status == "pass" and direct.reasons == []
    assert [c.tool for c in direct.calls] == ["searchFlights", "setFilters", "listFlights"]
    assert [c.passed for c in direct.checks] == [True] * 5  # the answer and four page checks
    observed = {next(iter(c.check)): c.observed for c in direct.checks}
    assert "origin=LON" in observed["url"] and observed["selector"]  # what the page showed, kept
    assert direct.answer == "There are 4 direct flights."

    assert state.status == "fail" and state.reasons == [
        'page check failed: #applied-filters text: expected contains "Nonstop", the page showed ""'
    ]
    assert all(row["outcome"] == "pass" for row in state.trajectory)  # the calls matched
    assert state.checks[0].observed == ""  # no filter chip on the page

    assert forbidden.status == "fail" and forbidden.reasons == ["forbidden call (call 2): resetFilters()"]
    page, text = (report.directory / "report.html").read_text(), str(report)
    for reason in state.reasons + forbidden.reasons:  # what the page showed, and the call, in both views
        assert html.escape(reason) in page and reason in text

    stats = report.models["any:scripted"]
    assert (stats["runs"], stats["passed"], stats["failed"], stats["errors"]) == (3, 1, 2, 0)
    assert stats["success_rate"] == pytest.approx(1 / 3)
    assert (stats["wilson_low"], stats["wilson_high"]) == pytest.approx(wilson(1, 3))
    assert stats["steps_mean"] == pytest.approx((3 + 1 + 2) / 3)
    assert stats["expected_steps_mean"] == pytest.approx((2 + 1 + 1) / 3)
    assert stats["prompt_tokens"] + stats["completion_tokens"] == sum(u["total_tokens"] for u in usages)
    assert stats["tool_accuracy"] == 1.0 and stats["invalid_calls"] == 0
    assert stats["model_p50_ms"] > 0 and stats["tool_p50_ms"] > 0
    assert stats["latency_p50_ms"] >= stats["model_p50_ms"]

    session = wm.Session.load(report.session_path(direct))
    answered = session.filter("confirmation.answered")
    assert answered and {e.data["by"] for e in answered} == {"eval policy"}  # unattended, and recorded
    assert "offline" not in (report.directory / direct.session / "session.jsonl").read_text()

    tab = polyfill_browser.open(wm.evals.job.resolve_url("demo:flights/"))  # the session replays, no key needed
    try:
        replay = wm.replay_agent(session, tab, progress=False)
    finally:
        tab.close()
    assert replay.ok, str(replay)
    rescored = wm.evals.rescore(session, suite.task("direct"))  # no browser, no key
    assert rescored.status == "pass" and [c.tool for c in rescored.calls] == [c.tool for c in direct.calls]
    assert [c.observed for c in rescored.checks] == [c.observed for c in direct.checks]
    edited = dataclasses.replace(suite.task("direct"), forbid_calls=("listFlights",))
    stricter = wm.evals.rescore(session, edited)
    assert stricter.status == "fail" and stricter.reasons == ["forbidden call (call 3): listFlights()"]


@pytest.mark.browser
def test_smoke_runs_the_expected_calls_with_no_model(tmp_path: Path):
    report = wm.evals.run(wm.evals.builtin("flights"), mode="smoke", output=tmp_path, progress=False)
    assert report.ok() and {r.model for r in report.runs} == {"smoke"}
    direct = next(r for r in report.runs if r.task == "direct flights")
    assert [c.tool for c in direct.calls] == ["searchFlights", "setFilters"]  # optional listFlights skipped
    assert all(c.passed for c in direct.checks)

    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            [
                {
                    "name": "bad date",
                    "messages": [{"role": "user", "type": "message", "content": "search"}],
                    "expectedCall": [
                        {
                            "functionName": "searchFlights",
                            "arguments": {**DEMO_SEARCH, "outboundDate": "2027-02-30"},  # not a real date
                        }
                    ],
                }
            ]
        )
    )
    failed = wm.evals.run(broken, mode="smoke", start_url="demo:flights/", output=tmp_path / "b", progress=False)
    (run,) = failed.runs
    assert run.status == "fail" and "must be a real date" in run.reasons[0] and not failed.ok()
    assert [row["outcome"] for row in run.trajectory] == ["fail"]  # the step that failed


def test_smoke_mode_on_a_suite_with_no_expected_call_says_so(tmp_path: Path):
    chat = wm.evals.suite.parse({"format": "webmcp-nb-evals", "tasks": [{"name": "chat", "prompt": "Hello"}]})
    with pytest.raises(wm.evals.SuiteError, match="nothing to run in smoke mode"):
        wm.evals.run(chat, mode="smoke", start_url="demo:flights/", output=tmp_path, progress=False)


@pytest.mark.parametrize("repeats", [0, -2, 1.5, True])
def test_repeats_that_plan_no_run_are_refused_naming_the_argument(tmp_path: Path, repeats: Any):
    """0 used to run the suite's default and a negative count to fail with an IndexError from inside."""
    with pytest.raises(ValueError, match=r"repeats must be a whole number of runs, 1 or more") as refused:
        wm.evals.run(
            wm.evals.builtin("flights"), models=["scripted:flights"], repeats=repeats, mode="local",
            output=tmp_path / "out", progress=False,
        )  # fmt: skip
    assert repr(repeats) in str(refused.value) and not (tmp_path / "out").exists()  # before any run


BISTRO = [
    {
        "name": "a form the guest submits",
        "messages": [{"role": "user", "type": "message", "content": "[pending] Book a table for Bob on the terrace"}],
        "expectedCall": [
            {
                "functionName": "bookTable",
                "arguments": {"name": {"$contains": "Bob"}, "seating": "Terrace"},
                "result": "pending form submission",
            }
        ],
    },
    {
        "name": "a form that submits itself",
        "messages": [{"role": "user", "type": "message", "content": "[auto] Book for Ann"}],
        "expectedCall": [{"functionName": "quickBook", "result": {"$pattern": "^Hello Ann"}}],
    },
    {
        "name": "MCP-style results",
        "messages": [{"role": "user", "type": "message", "content": "[mcp] What's on, and ask the kitchen"}],
        "expectedCall": [
            {"functionName": "menu", "result": "Soup of the day"},
            {"functionName": "kitchen", "result": {"error": "kitchen closed"}},
        ],
    },
]
BISTRO_SCRIPT = {
    "[pending]": [calls(("bookTable", {"name": "Bob", "seating": "Terrace"})), say("Press Book to confirm.")],
    "[auto]": [calls(("quickBook", {"name": "Ann"})), say("Booked.")],  # (a tool argument called "name")
    "[mcp]": [call("menu"), call("kitchen"), say("Soup; the kitchen is closed.")],
}


@pytest.mark.browser
def test_their_browser_mode_results_and_forms_a_person_must_submit(tmp_path: Path, server):
    cases = tmp_path / "bistro.json"
    cases.write_text(json.dumps(BISTRO))
    with ScriptedServer(by_task(BISTRO_SCRIPT)) as model_server:
        report = wm.evals.run(
            cases, models=[model(model_server)], start_url=server.url("t/bistro.html"), output=tmp_path / "out",
            native_webmcp=True, progress=False,  # the browser's own WebMCP, as theirs
        )  # fmt: skip
        offered = {t["function"]["name"] for r in model_server.requests for t in r.get("tools", [])}
    runs = {r.task: r for r in report.runs}
    assert {name: r.status for name, r in runs.items()} == dict.fromkeys(runs, "pass"), [
        r.reasons for r in runs.values()
    ]
    assert runs["a form the guest submits"].calls[0].result == "pending form submission"
    assert runs["a form that submits itself"].calls[0].result == "Hello Ann, see you soon."
    assert [c.result for c in runs["MCP-style results"].calls] == ["Soup of the day", {"error": "kitchen closed"}]
    assert "webmcp_nb_evals_probe" not in offered  # the probe that recognised the form is never the model's tool
    session = wm.Session.load(report.session_path(runs["a form the guest submits"]))
    assert [e.data["tool"] for e in session.filter("eval.pending_submission")] == ["bookTable"]
    suite = wm.evals.load(cases)
    for run in report.runs:  # from eval.json: the pending result and no probe call, as the run scored them
        rescored = wm.evals.rescore(report.session_path(run), suite.task(run.task))
        assert rescored.status == "pass" and rescored.calls == run.calls, run.task


@pytest.mark.browser
def test_the_harness_own_check_during_a_slow_call_is_not_a_step_of_the_replay(
    tmp_path: Path, server, polyfill_browser: wm.Browser
):
    """A call that runs over a second makes the harness look for a form waiting for a person: a call of its own in
    the middle of the model's turn. The session says the harness made it, and a replay (which makes no such call)
    agrees with the recording."""
    cases = tmp_path / "slow.json"
    task = {"role": "user", "type": "message", "content": "[slow] Is there a waitlist?"}
    cases.write_text(json.dumps([{"name": "slow", "messages": [task], "expectedCall": [{"functionName": "waitlist"}]}]))
    page = server.url("t/bistro.html")
    with ScriptedServer(by_task({"[slow]": [call("waitlist"), say("Two are waiting.")]})) as model_server:
        report = wm.evals.run(cases, models=[model(model_server)], start_url=page, output=tmp_path, progress=False)
    (run,) = report.runs
    assert run.status == "pass", run.reasons
    session = wm.Session.load(report.session_path(run))
    probes = [e for e in session.filter("tool.called") if e.data["tool"] == "webmcp_nb_evals_probe"]
    assert probes and {e.data["origin"] for e in probes} == {"evals"}
    assert "eval harness" in session.report().html
    tab = polyfill_browser.open(page)
    try:
        replay = wm.replay_agent(session, tab, progress=False)
    finally:
        tab.close()
    assert replay.ok and replay.steps == 1, str(replay)


def test_a_report_file_from_elsewhere_loads_or_says_what_is_wrong_with_it(tmp_path: Path):
    """A report.json written by a newer version (keys this one does not know) loads; one hand-edited or cut short
    is refused with an error naming the file and the run, never a raw KeyError or TypeError."""
    from webmcp_nb.evals.job import CallRow, RunRecord

    run = RunRecord("r1", "t", "m", 1, "local", status="pass", calls=[CallRow("search", {"q": 1}, {"n": 2})])
    folder = wm.evals.EvalReport([run], suite="s", mode="local", directory=tmp_path).save()
    data = json.loads((folder / "report.json").read_text())
    data["runs"][0] |= {"from_a_newer_version": 1}
    data["runs"][0]["calls"][0] |= {"also_newer": True}
    (folder / "report.json").write_text(json.dumps(data))
    (again,) = wm.evals.EvalReport.load(folder).runs
    assert again.calls == run.calls and again.status == "pass"
    for broken, said in [
        ("{not json", "Expecting property name"),
        (json.dumps({"runs": "none"}), "it has no list of runs"),
        (json.dumps({**data, "runs": [{"run_id": "r1", "model": "m"}]}), "run 'r1' lacks task, repeat, mode"),
        (json.dumps({**data, "runs": [{**data["runs"][0], "calls": ["search"]}]}), "run 'r1': a CallRow must be"),
        (json.dumps({**data, "repeats": "three"}), "invalid literal for int()"),
    ]:
        (folder / "report.json").write_text(broken)
        with pytest.raises(ValueError, match=r"report\.json is not an eval report webmcp-nb can read") as refused:
            wm.evals.EvalReport.load(folder)
        assert said in str(refused.value), str(refused.value)


@pytest.mark.parametrize("cap", [None, 1])
def test_a_cap_on_concurrent_requests_per_provider(tmp_path: Path, cap: int | None):
    """Two runs at once. The first request is answered after HOLD seconds: with a cap of one request at a time,
    the next request can only arrive after that answer (cause and effect, not a race); without it, the other
    run's first request arrives while the first is held."""
    suite = wm.evals.load(HERE / "evals.json", tools=HERE / "schema.json")
    arrivals: list[float] = []
    script = by_task(PIZZA)
    hold = 2.0

    def hold_the_first(body: dict) -> Any:
        arrivals.append(time.monotonic())
        reply = script(body)
        return slow(reply, hold) if len(arrivals) == 1 else reply

    with ScriptedServer(hold_the_first) as server:
        limits = {server.base_url: cap} if cap else None
        report = wm.evals.run(
            suite, models=[model(server)], concurrency=2, provider_limits=limits, output=tmp_path, progress=False
        )
    assert report.success_rate() == 1.0
    second_while_first_held = arrivals[1] - arrivals[0] < hold
    assert second_while_first_held is (cap is None), arrivals[:2]


def test_a_setup_error_is_not_retried_and_cases_that_share_a_name_get_their_own_runs(tmp_path: Path):
    mushrooms = {"role": "user", "type": "message", "content": "Add two mushrooms"}
    expected = [{"functionName": "add_topping", "arguments": {"topping": "mushroom", "count": 2}}]
    cases = [
        {"name": "bad pattern", "messages": [mushrooms], "expectedCall": [{"functionName": "add_topping",
            "arguments": {"topping": {"$pattern": "("}}}]},  # not a regular expression: the suite is wrong
        {"name": "twice", "messages": [mushrooms], "expectedCall": expected},
        {"name": "twice", "messages": [mushrooms], "expectedCall": expected},
        {"messages": [mushrooms], "expectedCall": expected},  # unnamed: named after the first message
        {"messages": [mushrooms], "expectedCall": expected},
    ]  # fmt: skip
    file = tmp_path / "cases.json"
    file.write_text(json.dumps(cases))
    suite = wm.evals.load(file, tools=HERE / "schema.json")
    names = ["bad pattern", "twice", "twice (2)", "Add two mushrooms", "Add two mushrooms (2)"]
    assert [t.name for t in suite.tasks] == names
    with ScriptedServer(by_task(PIZZA)) as server:
        report = wm.evals.run(suite, models=[model(server)], retries=1, output=tmp_path / "out", progress=False)
    runs = {r.task: r for r in report.runs}
    bad = runs["bad pattern"]
    assert (bad.status, bad.error_kind, bad.timings["attempts"]) == ("error", "setup", 1)  # a retry would end so too
    assert [runs[name].status for name in names[1:]] == ["pass"] * 4
    assert len({r.session for r in report.runs}) == 5
    for run in report.runs:  # each run kept its own session folder
        session = wm.Session.load(report.session_path(run))
        assert session.header.eval_run == run.run_id
