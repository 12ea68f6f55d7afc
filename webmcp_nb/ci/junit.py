"""JUnit XML, the results format CI systems read, for lint and for evals.

Lint: one test suite per target (a page, a lock file, a skill) and one test case per tool, plus a case named
``(the page)`` for what concerns the page (or the skill) as a whole, so that every tool shows as a test: a case
fails (``<failure>``) when it has findings of severity ``error``, each with its rule, message and fix; warnings
and infos are in its ``<system-out>``.

Evals: one test suite per eval and one test case per task, model and variant: it fails (``<failure>``) when its
runs' success rate is below the threshold, saying why each run that did not pass failed, in words; a run that
ended in an error (the browser, the endpoint, the suite) makes it an ``<error>``.

Page and model text is made visible (no terminal controls) and stripped of what XML 1.0 cannot hold."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.display import visible
from .findings import Finding

if TYPE_CHECKING:
    from ..evals.job import RunRecord
    from ..evals.report import EvalReport
    from .report import LintReport

__all__ = ["lint_junit", "eval_junit"]

_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
PAGE_CASE = "(the page)"


def _text(value: object) -> str:
    """Any text as XML 1.0 holds it: controls shown as ``<U+001B>``, lone surrogates and non-characters dropped."""
    return _NOT_XML.sub("\ufffd", visible(value))


def _element(parent: ET.Element, tag: str, text: str | None = None, **attributes: object) -> ET.Element:
    element = ET.SubElement(parent, tag, {key: _text(value) for key, value in attributes.items()})
    if text is not None:
        element.text = _text(text)
    return element


def _document(root: ET.Element) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _finding_text(finding: Finding) -> str:
    return f"{finding.severity} {finding.rule}: {finding.message}\n  fix: {finding.fix}"


def lint_junit(report: LintReport) -> str:
    """A lint report as JUnit XML (see the module's docstring)."""
    failures = 0
    root = ET.Element("testsuites", {"name": "webmcp-nb lint"})
    cases = 0
    for page in report.pages:
        by_tool: dict[str | None, list[Finding]] = {None: []}
        by_tool.update({name: [] for name in page.tools})
        for finding in page.findings:
            by_tool.setdefault(finding.tool, []).append(finding)
        failed = sum(any(f.severity == "error" for f in found) for found in by_tool.values())
        suite = _element(root, "testsuite", name=page.target, tests=len(by_tool), failures=failed, errors=0)
        for tool, found in by_tool.items():
            case = _element(suite, "testcase", classname=page.target, name=PAGE_CASE if tool is None else tool)
            errors = [f for f in found if f.severity == "error"]
            if errors:
                rules = ", ".join(dict.fromkeys(f.rule for f in errors))
                _element(
                    case, "failure", "\n".join(map(_finding_text, errors)),
                    message=f"{len(errors)} error{'s' if len(errors) != 1 else ''}: {rules}", type="lint",
                )  # fmt: skip
            if rest := [f for f in found if f.severity != "error"]:
                _element(case, "system-out", "\n".join(map(_finding_text, rest)))
        failures += failed
        cases += len(by_tool)
    root.set("tests", str(cases))
    root.set("failures", str(failures))
    root.set("errors", "0")
    return _document(root)


def _why(run: RunRecord) -> str:
    return f"repeat {run.repeat}: {run.status}: " + ("; ".join(run.why) or "(no reason recorded)")


def eval_junit(report: EvalReport, threshold: float = 1.0) -> str:
    """An eval report as JUnit XML (see the module's docstring); ``threshold``: the success rate a test case's runs
    must reach, as ``webmcp-nb eval --threshold`` takes it."""
    root = ET.Element("testsuites", {"name": f"webmcp-nb eval {report.suite}"})
    suite = _element(root, "testsuite", name=f"{report.suite} ({report.mode} mode)")
    counts = {"tests": 0, "failures": 0, "errors": 0}
    for config in report.configs:
        for task in report.task_names:
            runs: Sequence[RunRecord] = [r for r in report.runs if r.config == config and r.task == task]
            if not runs:
                continue
            counts["tests"] += 1
            seconds = sum(float(r.timings.get("total_ms") or 0) for r in runs) / 1000
            case = _element(suite, "testcase", classname=f"{report.suite}.{config}", name=task, time=f"{seconds:.3f}")
            judged = [r for r in runs if r.status != "error"]
            passed = sum(r.status == "pass" for r in judged)
            errors = [r for r in runs if r.status == "error"]
            failing = [r for r in judged if r.status != "pass"]
            if errors:
                counts["errors"] += 1
                _element(
                    case, "error", "\n".join(_why(r) for r in errors),
                    message=f"{len(errors)} of {len(runs)} runs ended in an error: {errors[0].why[0]}",
                    type=errors[0].error_kind or "internal",
                )  # fmt: skip
            elif judged and passed / len(judged) < threshold:
                counts["failures"] += 1
                _element(
                    case, "failure", "\n".join(_why(r) for r in failing),
                    message=f"{passed}/{len(judged)} runs passed (threshold {threshold:.0%}): "
                    + "; ".join(failing[0].why),
                    type="eval",
                )  # fmt: skip
            sessions = [str(report.session_path(r)) for r in runs if report.session_path(r) is not None]
            if sessions:
                _element(case, "system-out", "sessions:\n" + "\n".join(sessions))
    for key, value in counts.items():
        suite.set(key, str(value))
        root.set(key, str(value))
    return _document(root)
