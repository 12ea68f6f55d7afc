"""Lint a page's tools from the tool mirror the notebook shows: ``wm.lint(tab)`` in a cell, ``webmcp-nb lint URL``
in CI. Besides reading the tools, it loads the page a second time in a tab of its own (to see that the names are
the same on every load) and, there, calls the tools it may call to measure their output: read-only tools whose
arguments the schema can fill, and those the settings give arguments for (``samples``). A skill is linted on its
fixture page after its smoke step has run there (``alint_skill``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core._loop import blocking, on_loop
from ..core.agent_rules import risk_of
from ..core.errors import ConfigurationError, SkillHealthError, WebMCPError
from .config import WAIT_FOR, LintConfig
from .findings import Finding, Rule
from .lock import ToolEntry, ToolLock
from .report import LintedPage, LintReport
from .rules import PageTools, Sample, check_page, hints
from .rules import skill as skill_rules
from .rules.base import as_dict, as_list

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..browser.tab import Tab

__all__ = ["alint", "lint", "alint_skill", "lint_skill", "lint_lock", "page_tools"]

SAMPLE_TIMEOUT = 5.0
"""Seconds a sample call may take."""
DEMO = "demo:"
"""A page of the bundled demos, served on 127.0.0.1 by this process (``demo:shop/``)."""


def _entries(tab: Tab) -> tuple[list[ToolEntry], set[str]]:
    tools = tab.tools.every_frame()
    return [ToolEntry.of(t) for t in tools], {t.name for t in tools if t.source not in ("native", "polyfill")}


def _sample_arguments(entry: ToolEntry, config: LintConfig) -> dict[str, Any] | None:
    """The arguments of a sample call of ``entry``: the settings', or for a read-only tool what its schema says
    of each required parameter (its default, first example, first enum value or const); ``None``: no call."""
    if entry.name in config.samples:
        return dict(config.samples[entry.name])
    if risk_of(entry.annotations) != "low":
        return None
    schema = as_dict(entry.input_schema)
    props = as_dict(schema.get("properties"))
    arguments: dict[str, Any] = {}
    for name in as_list(schema.get("required")):
        prop = as_dict(props.get(name))
        if "default" in prop:
            arguments[name] = prop["default"]
        elif isinstance(prop.get("examples"), list) and prop["examples"]:
            arguments[name] = prop["examples"][0]
        elif isinstance(prop.get("enum"), list) and prop["enum"]:
            arguments[name] = prop["enum"][0]
        elif "const" in prop:
            arguments[name] = prop["const"]
        else:
            return None
    return arguments


async def _sample(tab: Tab, entry: ToolEntry, arguments: dict[str, Any]) -> Sample:
    try:
        result = await tab.acall(entry.name, arguments, timeout=SAMPLE_TIMEOUT)
    except WebMCPError as exc:
        return Sample(arguments, error=f"{exc.code.value}: {exc.what}")
    return Sample(arguments, text=result.text)


async def _declarative(tab: Tab, names: list[str]) -> dict[str, bool]:
    """Which of ``names`` are declarative forms, and whether each submits itself (``toolautosubmit``), asked of the
    page's DOM through the evals' read-only probe skill, injected into ``tab`` alone (no match pattern) and
    uninstalled after; nothing when skills cannot run there."""
    if not names:
        return {}
    import json

    from ..evals.hosts import PROBE, PROBE_TOOL, probe_skill

    probe = probe_skill(tab.url)
    probe.match = []
    found: dict[str, bool] = {}
    try:
        await tab.ainject(probe)
        for name in names:
            form = f"form[toolname={json.dumps(name)}]"
            if (await tab.acall(PROBE_TOOL, {"selector": form})).value.get("count"):
                waits = (await tab.acall(PROBE_TOOL, {"selector": f"{form}:not([toolautosubmit])"})).value
                found[name] = not waits.get("count")
    except WebMCPError:
        return found
    finally:
        with contextlib.suppress(WebMCPError):
            await tab.browser.skills.auninstall(PROBE)
    return found


async def page_tools(
    tab: Tab,
    config: LintConfig,
    *,
    second_load: bool = True,
    sample_calls: bool = True,
    wait_for: Sequence[str] = (),
) -> PageTools:
    """What lint reads of ``tab``: its tools, and, in a second tab of the same URL, their names again, the sample
    calls' results and which tools are declarative forms that wait for the person (``second_load=False``: the
    sample calls in ``tab`` itself, and neither the names again nor the forms, which needs a skill in the tab)."""
    entries, skill_tools = _entries(tab)
    page = PageTools(tab.url, tab.origin, entries, config, skill_tools=skill_tools)
    other: Tab | None = None
    try:
        if second_load:
            other = await tab.browser.aopen(tab.url)
            for name in wait_for:  # what the page registers late, as on the first load
                with contextlib.suppress(WebMCPError):
                    await other.await_for_tool(name, WAIT_FOR)
            page.again = _entries(other)[0]
        where = other or tab
        listed = {entry.name for entry in (page.again if page.again is not None else entries)}
        if sample_calls:
            firsts = {e.name: e for e in reversed(entries)}  # a call by name reaches the top frame's tool
            for name, entry in reversed(firsts.items()):
                arguments = _sample_arguments(entry, config)
                if arguments is not None and name in listed:
                    page.samples[name] = await _sample(where, entry, arguments)
        candidates = [
            e.name
            for e in entries
            if e.name in listed and e.name not in skill_tools and hints.acts(e) is not None
            and risk_of(e.annotations) != "high"
        ]  # fmt: skip
        if other is not None:
            page.declarative = await _declarative(other, candidates)
    finally:
        if other is not None:
            with contextlib.suppress(WebMCPError):
                await other.aclose()
    return page


def _notes(page: PageTools) -> list[str]:
    notes = []
    if page.again is not None:
        notes.append("loaded twice: names compared")
    if page.samples:
        notes.append(f"sample calls: {', '.join(page.samples)}")
    return notes


@on_loop
async def alint(
    tab: Tab,
    *,
    config: LintConfig | str | os.PathLike[str] | None = None,
    second_load: bool = True,
    sample_calls: bool = True,
    wait_for: Sequence[str] = (),
) -> LintReport:
    """Lint the tools ``tab`` offers (every frame's, and skills' injected there): names, schemas, budgets,
    annotations and text aimed at the model, each finding with its rule, severity and fix.

    ``config``: settings, or the file to read them from (default: ``webmcp-lint.toml`` or ``pyproject.toml``'s
    ``[tool.webmcp-nb.lint]`` from the current folder up). ``second_load``: load the page again in a tab of its
    own to check that its names are stable, and make the sample calls there (the tab you pass is left as it is).
    ``sample_calls``: call read-only tools (and those ``samples`` names) to measure their output. ``wait_for``: tools
    the page registers late (after a fetch), which the second load waits for as the first one did."""
    settings = config if isinstance(config, LintConfig) else LintConfig.load(config)
    page = await page_tools(tab, settings, second_load=second_load, sample_calls=sample_calls, wait_for=wait_for)
    return LintReport([LintedPage(tab.url, [e.where for e in page.entries], check_page(page), _notes(page))],
                      settings.path)  # fmt: skip


lint = blocking(alint)


def lint_lock(path: str | os.PathLike[str], config: LintConfig) -> LintedPage:
    """Lint the tools of a lock file: every rule that reads the tools' own fields (not the second load's or the
    sample calls', which need the page)."""
    lock = ToolLock.read(path)
    page = PageTools(str(path), "", list(lock.tools), config)
    return LintedPage(lock.source, [e.where for e in lock.tools], check_page(page), ["a lock file: not loaded"])


@contextlib.asynccontextmanager
async def _fixture(folder: Path, page: str) -> AsyncIterator[str]:
    """The URL of a skill's fixture page, served here while it is used: ``demo:PATH`` (the bundled demos), a file
    beside SKILL.md, or an http(s) URL as it is."""
    from ..demo.server import DemoServer

    if page.startswith(("http://", "https://")):
        yield page
        return
    routes = None if page.startswith(DEMO) else {"/": folder}
    with DemoServer(routes) as server:
        yield server.url(page.removeprefix(DEMO))


@on_loop
async def alint_skill(
    path: str | os.PathLike[str], browser: Browser, *, config: LintConfig | None = None
) -> LintedPage:
    """Lint a skill: its SKILL.md (match patterns, a ``verified`` date, a smoke step), then its smoke step on its
    fixture page in ``browser`` — injected into that tab alone, each call made and its result matched — and its
    tools as they registered. The skill is uninstalled from ``browser`` after, or installed again as it was when
    this process had installed it (``ConfigurationError`` when another process had: its installation would be
    lost)."""
    from ..browser.skills import Skill

    settings = config or LintConfig.load()
    folder = Path(path)
    skill = Skill.load(folder)
    front = {"match": skill.match, **skill.extra}
    target = f"skill {skill.name} ({folder})"
    findings = list(skill_rules.check(front, settings))
    if any(f.rule == skill_rules.SMOKE.id for f in findings):
        return LintedPage(target, [], findings, ["no smoke step: its tools were not loaded"])
    smoke = skill.extra["smoke"]
    skill.configure(**(smoke.get("config") or {}))
    skill.match = []  # injected into the fixture's tab alone: no other tab of the browser gets it
    before = browser.skills.source(skill.name) if skill.name in browser.skills else None
    if skill.name in browser.skills and before is None:
        raise ConfigurationError(
            f"skill {skill.name!r} is installed in this browser by another process: lint it in a browser of its own "
            "(webmcp-nb lint --skill launches one), so that its installation here is not replaced"
        )
    tab: Tab | None = None
    page = PageTools("", "", [], settings, skill=skill.name)
    try:
        async with _fixture(skill.path or folder, smoke["page"]) as url:
            try:
                tab = await browser.aopen(url)
            except WebMCPError as exc:
                findings.append(_failed(skill_rules.FAILED, f"its fixture page {url} did not load: {exc.what}"))
                return LintedPage(target, [], findings)
            try:
                await tab.ainject(skill)
            except SkillHealthError as exc:
                findings.append(_failed(skill_rules.HEALTH, f"it did not run on its fixture page {url}: {exc.what}"))
                return LintedPage(target, [], findings)
            except WebMCPError as exc:
                findings.append(_failed(skill_rules.FAILED, f"the browser did not take it: {exc.what}"))
                return LintedPage(target, [], findings)
            calls = skill_rules.smoke_calls(front)
            for tool, arguments, expected in calls:
                problem = await _smoke_call(tab, tool, arguments, expected, page)
                if problem is not None:
                    findings.append(_failed(skill_rules.FAILED, f"on {url}, {problem}"))
                    break
            page.entries = [ToolEntry.of(t) for t in tab.tools.every_frame() if t.source == skill.name]
            page.skill_tools = {e.name for e in page.entries}
            page.url, page.origin = tab.url, tab.origin
    finally:
        if tab is not None:
            with contextlib.suppress(WebMCPError):
                await tab.aclose()
        with contextlib.suppress(WebMCPError):
            if before is not None:  # the skill as this process had installed it, with its match patterns
                await browser.skills.ainstall(before)
            elif skill.name in browser.skills:
                await browser.skills.auninstall(skill.name)
    notes = [f"smoke step on {smoke['page']}: {len(calls)} call(s)"]
    return LintedPage(target, [e.where for e in page.entries], findings + check_page(page), notes)


lint_skill = blocking(alint_skill)


def _failed(rule: Rule, message: str) -> Finding:
    return Finding(rule.id, rule.severity, None, message, "Fix the skill, or its smoke step, until it passes here.")


async def _smoke_call(tab: Tab, tool: str, arguments: dict[str, Any], expected: Any, page: PageTools) -> str | None:
    """Make one smoke call; what went wrong in words, or ``None``. Its result is kept as the tool's sample."""
    from ..evals import matcher  # (the evals' package is large: imported when a skill is linted)

    try:
        result = await tab.acall(tool, arguments, timeout=SAMPLE_TIMEOUT * 2)
    except WebMCPError as exc:
        page.samples[tool] = Sample(arguments, error=exc.what)
        return f"{tool}({arguments}) failed: {exc.code.value}: {exc.what}"
    page.samples[tool] = Sample(arguments, text=result.text)
    if (failure := matcher.tool_failure(result.value)) is not None:
        return f"{tool}({arguments}): {failure}"
    try:
        rows = matcher.explain(expected, result.value)
    except matcher.ConstraintError as exc:
        return f"{tool}: its expected result cannot be checked: {exc}"
    if rows:
        said = "; ".join(f"{where or 'the result'}: expected {wanted}, got {got}" for where, wanted, got in rows[:5])
        return f"{tool}({arguments}) returned what the smoke step does not expect: {said}"
    return None
