"""``webmcp-nb lint --skill skills/NAME``: a skill's SKILL.md says where it runs (match patterns Chrome takes), when it
was last verified against its site, and a smoke step — its fixture page and the calls to make there — which lint
runs in a real Chromium before linting the skill's tools. The shipped skills carry both and pass their smoke
steps."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import webmcp_nb as wm
from webmcp_nb.browser.skills import builtin_skills_path
from webmcp_nb.ci.config import LintConfig
from webmcp_nb.ci.lint import lint_skill
from webmcp_nb.ci.rules import skill as skill_rules

SHIPPED = ["dom", "search-form", "shop"]


def rules(page) -> list[str]:
    return [f.rule for f in page.findings]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_skills_say_when_they_were_verified_and_how_to_smoke_test_them(name: str):
    skill = wm.Skill.builtin(name)
    assert isinstance(skill.extra["verified"], datetime.date) and skill.extra["smoke"]["calls"]
    assert list(skill_rules.check({"match": skill.match, **skill.extra}, LintConfig())) == []


def test_the_smoke_steps_of_the_shipped_skills_pass_on_their_fixture_pages(polyfill_browser):
    for name in SHIPPED:
        page = lint_skill(builtin_skills_path() / name, polyfill_browser, config=LintConfig())
        assert not [r for r in rules(page) if r.startswith("skill-")], (name, page.findings)
        assert page.tools and page.notes[0].startswith("smoke step on demo:shop/")
        assert name not in polyfill_browser.skills  # uninstalled after
        # their tools are linted too, without an error: only dom's submitForm (high risk) submits; fill does not
        assert [(f.tool, f.rule) for f in page.findings if f.severity == "error"] == [], (name, page.findings)


def test_a_broken_skill_is_told_what_is_wrong_with_it(polyfill_browser, tmp_path: Path):
    folder = tmp_path / "shop"
    shutil.copytree(builtin_skills_path() / "shop", folder)
    text = (folder / "SKILL.md").read_text()
    front, body = text.split("---", 2)[1:]
    data = yaml.safe_load(front)
    data["match"] = ["*://127.0.0.1:shop/*", "shop.example/*"]
    data.pop("verified")
    data["smoke"]["calls"][0]["result"] = {"count": {"$gte": 3}}  # one knife in the demo shop
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(data)}---{body}")
    page = lint_skill(folder, polyfill_browser, config=LintConfig())
    assert rules(page)[:4] == ["skill-match-invalid", "skill-match-invalid", "skill-verified-missing",
                               "skill-smoke-failed"]  # fmt: skip
    failed = page.findings[3].message
    assert failed.startswith("on http://127.0.0.1:") and failed.endswith(
        "searchProducts({'query': 'knife'}) returned what the smoke step does not expect: count: expected ≥ 3, got 1"
    )
    # on a page it was not made for, its health check refuses it
    data["verified"] = (datetime.date.today() - datetime.timedelta(days=400)).isoformat()
    data["smoke"]["page"] = "demo:flights/"
    data["match"] = ["*://127.0.0.1/shop/*"]
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(data)}---{body}")
    page = lint_skill(folder, polyfill_browser, config=LintConfig())
    assert rules(page) == ["skill-verified-stale", "skill-health-failed"] and "demo shop" in page.findings[1].message
    # with no smoke step there is nothing to run: lint says how to write one
    data.pop("smoke")
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(data)}---{body}")
    page = lint_skill(folder, polyfill_browser, config=LintConfig(skill_verified_days=1000))
    assert rules(page) == ["skill-smoke-missing"] and "smoke:\n  page: demo:shop/" in page.findings[0].fix
    for smoke, said in [
        ({"page": "x.html"}, "calls is a non-empty list"),
        ({"page": "x.html", "calls": [{"tool": "t", "result": {"$regex": "x"}}]}, 'unknown constraint "$regex"'),
        ({"page": "x.html", "calls": [{"tool": "t"}], "wait": 1}, "unknown key 'wait'"),
    ]:
        [found] = skill_rules.check({"verified": datetime.date.today(), "smoke": smoke}, LintConfig())
        assert found.rule == "skill-smoke-missing" and said in found.message


def test_a_skills_fixture_page_can_live_beside_its_skill_md(polyfill_browser, tmp_path: Path):
    folder = tmp_path / "greeter"
    folder.mkdir()
    (folder / "fixture.html").write_text("<!doctype html><title>fixture</title><p id='who'>Ada</p>")
    (folder / "tools.js").write_text(
        "defineTool({name: 'readWho', description: 'The name shown.', annotations: {readOnlyHint: true},"
        " inputSchema: {type: 'object', properties: {}}}, async () => ({who: document.querySelector('#who')"
        ".textContent}));\n"
    )
    front = {"name": "greeter", "match": ["*://greeter.example/*"], "verified": datetime.date.today().isoformat(),
             "smoke": {"page": "fixture.html", "calls": [{"tool": "readWho", "result": {"who": "Ada"}}]}}  # fmt: skip
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(front)}---\nRead the name.\n")
    page = lint_skill(folder, polyfill_browser, config=LintConfig())
    assert page.findings == [] and page.tools == ["readWho"]


def test_the_command_lints_skills_and_exits_by_their_errors(tmp_path: Path):
    skills = builtin_skills_path()
    done = subprocess.run(
        [sys.executable, "-m", "webmcp_nb", "lint", "--skill", str(skills / "shop"), "--skill",
         str(skills / "search-form"), "--skill", str(skills / "dom"), "--junit", str(tmp_path / "skills.xml")],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skill shop (" in done.stdout and "smoke step on demo:shop/: 3 call(s)" in done.stdout
    assert "skill dom (" in done.stdout
    assert (tmp_path / "skills.xml").read_text().count("<testcase") == (1 + 5) + (1 + 2) + (1 + 12)  # skill, tools
