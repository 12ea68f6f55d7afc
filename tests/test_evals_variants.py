"""Tool variants: every task runs under each set of overrides, the model is shown the variant's text while the page
runs its own tool, and the report says which variant wins — by Fisher's exact test, or that there is no clear
difference — with each variant's text beside the page's. The shipped scripted model of the flights suite acts on
what setFilters' description says, so the variant truly changes what it does."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest
from looking import look

import webmcp_nb as wm
from webmcp_nb.evals.suite import SUITES
from webmcp_nb.testing import ScriptedServer, ScriptError, call, reads, say, script_from

VARIANTS = wm.evals.load_variants(SUITES / "flights.variants.yaml")
CLEARER = VARIANTS["clearer"]["setFilters"]["description"]


def test_variants_are_compared_with_their_intervals_and_their_text(tmp_path: Path) -> None:
    suite = wm.evals.builtin("flights")
    report = wm.evals.run(
        suite, models=["scripted:flights"], mode="local", variants=VARIANTS, repeats=4, output=tmp_path,
        progress=False,
    )  # fmt: skip
    assert report.variants == ["shipped", "clearer"]
    assert set(report.models) == {"scripted:flights [shipped]", "scripted:flights [clearer]"}
    assert (
        report.models["scripted:flights [shipped]"]["passed"] == 8
        and report.success_rate("scripted:flights [clearer]") == 1.0
    )
    comparison = report.compare_variants()
    verdicts = {(r.task, r.variant): r.verdict for r in comparison.results}
    assert verdicts[("direct flights", "clearer")] == "better"  # 4/4 against 0/4: p = 2/70
    assert verdicts[(None, "clearer")] == "no clear difference"  # 12/12 against 8/12: p = 0.093
    assert verdicts[("one-way under a budget", "clearer")] == "no clear difference"
    direct = (
        'scripted:flights on "direct flights": clearer is better than shipped (4/4 passed [51%–100%] against 0/4 '
        "[0%–49%]; Fisher's exact test p = 0.029)"
    )
    overall = "scripted:flights over all tasks: no clear difference between clearer and shipped (12/12 passed"
    text, page = str(report), (tmp_path / "report.html").read_text()
    for sentence in (direct, overall):
        assert sentence in text and html.escape(sentence) in page
    assert text.index(direct) < text.index(overall) and page.index(html.escape(direct)) < page.index(
        html.escape(overall)
    )  # the difference found leads, not "over all tasks: no clear difference"
    assert comparison.lines()[0] == direct
    page_own = next(t for t in suite.tools if t["name"] == "setFilters")["description"]
    assert f"      - {page_own}" in text and f"      + {CLEARER}" in text  # the variant's text beside the page's
    assert "<ins style='background:#dafbe1'> For direct (nonstop) flights only, set stops to [0].</ins>" in page
    assert report.to_json()["variants"]["baseline"] == "shipped"

    def overrides(variant: str) -> list[str]:
        run = next(r for r in report.runs if r.variant == variant)
        return [e.data["tool"] for e in wm.Session.load(report.session_path(run)).filter("override.set")]

    assert overrides("clearer") == ["setFilters"] and overrides("shipped") == []  # recorded in each run's session
    run_report = wm.Session.load(report.session_path(report.runs[0])).report()
    assert run_report.summary.model == "scripted:flights"  # as the eval names it, not its endpoint's "any:flights"
    assert "<code>scripted:flights</code>" in run_report.html
    assert wm.evals.EvalReport.load(tmp_path).compare_variants().results == comparison.results


@pytest.mark.browser
def test_a_variant_on_a_live_page_changes_what_the_model_reads_not_what_the_page_runs(tmp_path: Path) -> None:
    suite = wm.evals.builtin("flights")
    one = dataclasses.replace(suite, tasks=(suite.task("direct flights"),))
    report = wm.evals.run(
        one, models=["scripted:flights"], variants=VARIANTS, repeats=1, output=tmp_path, progress=False
    )
    runs = {r.variant: r for r in report.runs}
    assert runs["shipped"].status == "fail" and runs["clearer"].status == "pass", str(report)
    assert runs["shipped"].why == [
        "first expected call not met: setFilters(stops=[0]); call 2 was listFlights()",
        'page check failed: #applied-filters text: expected contains "Nonstop", the page showed ""',
    ]
    clearer = runs["clearer"]
    assert clearer.calls[1].tool == "setFilters" and clearer.calls[1].result["filters"]["stops"] == [
        0
    ]  # the page ran it
    change = clearer.overrides["setFilters"]["description"]
    assert change["variant"] == CLEARER and change["page"].startswith("Filters the flight results shown in the page.")
    assert all(c.passed for c in clearer.checks)  # the page shows the nonstop filter chip: its own tool did it


def test_a_scripted_model_acts_on_what_a_tool_says() -> None:
    step = reads("setFilters", "DIRECT", then=call("setFilters", stops=[0]), otherwise=say("no"))
    offered = {"tools": [{"type": "function", "function": {"name": "setFilters", "description": "direct only"}}]}
    assert step(offered).tool_calls == (("setFilters", {"stops": [0]}),)
    assert step({"tools": []}).content == "no"
    prompt_mode = {"messages": [{"role": "system", "content": "tools:\n- setFilters: for direct flights\n- other: x"}]}
    assert step(prompt_mode).tool_calls  # in prompt mode the tools are in the system message
    with ScriptedServer(script_from({"format": "webmcp-nb-scripted-model", "tasks": {"hi": [{"say": "Hello."}]}})):
        pass
    for data, where in [
        ({"format": "x"}, "not a scripted model"),
        ({"format": "webmcp-nb-scripted-model", "tasks": {"t": [{"shout": 1}]}}, "tasks['t'][0]: unknown step"),
        ({"format": "webmcp-nb-scripted-model", "tasks": {"t": [{"if": {"tool": "a"}}]}}, "if: is {tool: NAME"),
    ]:
        with pytest.raises(ScriptError, match=where.replace("[", "\\[").replace("]", "\\]")):
            script_from(data)
    with pytest.raises(wm.evals.SuiteError, match="shipped: flights, shop"):
        wm.evals.Model.parse("scripted:flight")


LAYOUT = """async () => {
  // Each line box of an element's text, by its top: more than one is a number broken over lines.
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  };
  const numeric = /^[-\\d\\s.,:%–\\[\\]\\/()=k$<pms]+$/;
  const broken = [...document.querySelectorAll('td')]
    .filter((td) => td.offsetParent && numeric.test(td.textContent.trim()) && lines(td) > 1)
    .map((td) => td.textContent.trim());
  const perModel = [...document.querySelectorAll('h2')].find((h) => h.textContent === 'Per model');
  const shown = perModel.nextElementSibling.querySelectorAll('th').length;
  const folded = perModel.nextElementSibling.nextElementSibling;
  // The calls list: each numbered line starts where the first does.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let text = walker.nextNode();
  while (text && !/^1\\. searchFlights/.test(text.data)) text = walker.nextNode();
  const left = (at) => {
    const range = document.createRange();
    range.setStart(text, at);
    range.setEnd(text, at + 1);
    return Math.round(range.getBoundingClientRect().left);
  };
  const starts = [...text.data.matchAll(/^\\d+\\./gm)].map((m) => left(m.index));
  return { broken, shown, folded: folded.localName, open: folded.open, starts };
}"""


@pytest.mark.browser
def test_the_reports_tables_keep_numbers_on_one_line_and_fold_the_rest(
    tmp_path: Path, polyfill_browser: wm.Browser
) -> None:
    """The per-model table had 16 columns: in a browser window its intervals and latencies broke over two to four lines,
    and the numbered calls under "calls:" started at the left edge after the first."""
    report = wm.evals.run(
        wm.evals.builtin("flights"), models=["scripted:flights"], mode="local", variants=VARIANTS, repeats=2,
        output=tmp_path, progress=False,
    )  # fmt: skip
    seen = look(polyfill_browser, tmp_path, "report.html", LAYOUT)  # the suite's headless window: 800 px or so wide
    assert seen["broken"] == [], seen["broken"]
    assert seen["shown"] <= 10 and (seen["folded"], seen["open"]) == ("details", False)
    assert len(seen["starts"]) == 3 and len(set(seen["starts"])) == 1, seen["starts"]
    assert "more numbers: steps / expected, tool acc." in report.html()
