"""JUnit XML, what CI systems read: lint's (a test case per tool, errors as failures) and evals' (``webmcp-nb eval …
--junit``: a test case per task, model and variant, failing below the threshold with each run's reason in words),
parsed back as XML whatever text the page or the model put in them."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from scripted_evals import HERE, PIZZA, SLOPPY

from webmcp_nb.ci.findings import Finding
from webmcp_nb.ci.report import LintedPage, LintReport
from webmcp_nb.testing import ScriptedServer, by_task

HOSTILE = "\x1b[2K\x00\x08\ud800</failure>]]><![CDATA[\u202e\"' & <script>x</script>\ufffe"


def cases(root: ET.Element) -> dict[tuple[str | None, str | None], ET.Element]:
    return {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}


def test_lint_junit_is_a_test_case_per_tool_and_holds_any_page_text():
    findings = [
        Finding("model-instructions", "error", f"tool{HOSTILE}", f"says {HOSTILE}", f"fix {HOSTILE}"),
        Finding("markup", "warning", f"tool{HOSTILE}", HOSTILE, "plain"),
        Finding("name-duplicate", "error", "twice", "two frames", "rename"),
        Finding("no-tools", "error", None, "none", "register"),
    ]
    report = LintReport([LintedPage(f"http://x/{HOSTILE}", [f"tool{HOSTILE}", "twice", "clean"], findings)])
    root = ET.fromstring(report.junit().encode())
    suite = root.find("testsuite")
    assert suite is not None and (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "3", "0")
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names[0] == "(the page)" and names[2:] == ["twice", "clean"] and len(names) == 4
    hostile = next(case for case in suite.iter("testcase") if case.get("name", "").startswith("tool"))
    failure = hostile.find("failure")
    assert failure is not None and failure.get("message") == "1 error: model-instructions"
    text = (failure.text or "") + (hostile.findtext("system-out") or "") + (hostile.get("name") or "")
    assert "<U+001B>[2K" in text and "<U+202E>" in text and "</failure>]]>" in text and "\x1b" not in text
    assert suite.find("testcase[@name='clean']/failure") is None


def test_eval_junit_is_a_test_case_per_task_model_and_variant_with_the_reasons(tmp_path: Path):
    variants = tmp_path / "variants.yaml"
    variants.write_text(yaml.safe_dump({"page": {}, "terse": {"share_pizza": {"description": "Share it."}}}))
    with ScriptedServer(by_task(PIZZA)) as good, ScriptedServer(by_task(SLOPPY)) as sloppy:
        done = subprocess.run(
            [
                sys.executable, "-m", "webmcp_nb", "eval", "local", "-e", str(HERE / "evals.json"), "-t",
                str(HERE / "schema.json"), "-m", f"any:good@{good.base_url}", "-m", f"any:sloppy@{sloppy.base_url}",
                "--variants", str(variants), "-o", str(tmp_path / "out"), "--junit", str(tmp_path / "eval.xml"),
                "--quiet",
            ],
            capture_output=True, text=True, timeout=240, env={**os.environ},
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    root = ET.parse(tmp_path / "eval.xml").getroot()
    found = cases(root)
    assert len(found) == 16  # 4 tasks, 2 models, 2 variants
    assert root.get("tests") == "16" and root.get("failures") == "4" and root.get("errors") == "0"
    assert {c for c, _ in found} == {
        "evals.any:good [page]", "evals.any:good [terse]", "evals.any:sloppy [page]", "evals.any:sloppy [terse]"
    }  # fmt: skip
    assert all(case.find("failure") is None for (c, _), case in found.items() if c.startswith("evals.any:good"))
    mushrooms = found[("evals.any:sloppy [page]", "Two mushrooms")].find("failure")
    assert mushrooms is not None and mushrooms.get("message", "").startswith("0/1 runs passed (threshold 100%): ")
    assert "repeat 1: fail: " in (mushrooms.text or "") and "count" in (mushrooms.text or "")
    calzone = found[("evals.any:sloppy [page]", "Just chatting")]
    said = calzone.find("failure").get("message")  # type: ignore[union-attr]
    assert said == "0/1 runs passed (threshold 100%): expected no tool call; call 2 was get_pizza()"
    assert "runs/" in (calzone.findtext("system-out") or "")  # the run's session, for the report's reader
