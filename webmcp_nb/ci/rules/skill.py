"""A skill's SKILL.md: match patterns Chrome takes, a ``verified`` date (when someone last checked the skill against
the live site: sites change under skills), and a smoke step — a fixture page and the calls to make on it — that
``webmcp-nb lint --skill`` runs. Its tools are then linted like any page's."""

from __future__ import annotations

import contextlib
import datetime
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..config import LintConfig
from ..findings import Finding, Rule

__all__ = ["RULES", "check", "SMOKE", "FAILED", "HEALTH", "smoke_calls"]

MATCH = Rule("skill-match-invalid", "skill", "error", "every match pattern is one Chrome takes")
VERIFIED = Rule("skill-verified-missing", "skill", "error", "SKILL.md says when the skill was verified (a date)")
STALE = Rule("skill-verified-stale", "skill", "warning", "the verified date is recent (skill-verified-days: 180)")
SMOKE = Rule("skill-smoke-missing", "skill", "error", "SKILL.md has a smoke step: a fixture page and calls")
HEALTH = Rule("skill-health-failed", "skill", "error", "the skill runs on its fixture page (its health check passes)")
FAILED = Rule("skill-smoke-failed", "skill", "error", "every smoke call succeeds with the result it expects")
RULES = (MATCH, VERIFIED, STALE, SMOKE, HEALTH, FAILED)

_PATTERN = re.compile(r"^(\*|https?|wss?|ftp|urn)://(\*|(\*\.)?[^/*:]+)(:(\*|\d+))?/.*$|^file:///.*$|^<all_urls>$")
SMOKE_CALL = {"tool", "arguments", "result"}
EXAMPLE = """smoke:
  page: demo:shop/                 # a file beside SKILL.md, demo:PATH (the bundled demos) or an http(s) URL
  calls:
    - {tool: searchProducts, arguments: {query: lamp}, result: {count: {$gte: 1}}}"""


def _skill(rule: Rule, message: str, fix: str) -> Finding:
    return Finding(rule.id, rule.severity, None, message, fix)


def check(front: Mapping[str, Any], config: LintConfig, today: datetime.date | None = None) -> Iterator[Finding]:
    """The findings of a SKILL.md's front matter (the smoke step's run is lint's, on the fixture page)."""
    today = today or datetime.date.today()
    match = front.get("match") or []
    for pattern in [match] if isinstance(match, str) else match if isinstance(match, list) else [match]:
        if not isinstance(pattern, str) or not _PATTERN.match(pattern):
            yield _skill(
                MATCH,
                f"match pattern {pattern!r} is not one Chrome takes",
                "Write scheme://host/path: *://shop.example/*, https://*.example.com/cart/*, or <all_urls>.",
            )
    verified = front.get("verified")
    if isinstance(verified, str):
        with contextlib.suppress(ValueError):
            verified = datetime.date.fromisoformat(verified)
    if isinstance(verified, datetime.datetime):
        verified = verified.date()
    if not isinstance(verified, datetime.date) or verified > today:
        shown = "none" if verified is None else repr(front.get("verified"))
        yield _skill(
            VERIFIED,
            f"verified is {shown}: SKILL.md must say when the skill was last checked against its site (a date, not "
            "in the future)",
            f"Check the skill on the live site, then add verified: {today.isoformat()} to its front matter.",
        )
    elif (today - verified).days > config.skill_verified_days:
        yield _skill(
            STALE,
            f"verified {verified.isoformat()}, {(today - verified).days} days ago (more than "
            f"{config.skill_verified_days}): its site may have changed since",
            "Check the skill on the live site again and update verified.",
        )
    problem = _smoke_problem(front.get("smoke"))
    if problem is not None:
        yield _skill(SMOKE, problem, f"Add a smoke step to the front matter, for example:\n{EXAMPLE}")


def _smoke_problem(smoke: Any) -> str | None:
    if smoke is None:
        return "SKILL.md has no smoke step: nothing shows the skill still works"
    if not isinstance(smoke, dict) or not isinstance(smoke.get("page"), str) or not smoke["page"].strip():
        return "smoke must be a mapping with page (the fixture page) and calls"
    if unknown := sorted(set(smoke) - {"page", "config", "calls"}):
        return f"smoke: unknown key {unknown[0]!r}; it has page, config and calls"
    if smoke.get("config") is not None and not isinstance(smoke["config"], dict):
        return "smoke: config is a mapping (the skill's config for the run)"
    calls = smoke.get("calls")
    if not isinstance(calls, list) or not calls:
        return "smoke: calls is a non-empty list of {tool, arguments, result}"
    from ...evals import matcher  # (the evals' package is large: imported when a skill is linted)

    for i, call in enumerate(calls):
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("tool"), str)
            or set(call) - {"tool", "arguments", "result"}
        ):
            return f"smoke: calls[{i}] is {{tool, arguments, result}} (arguments and result optional)"
        if call.get("arguments") is not None and not isinstance(call["arguments"], dict):
            return f"smoke: calls[{i}]: arguments is a mapping"
        try:
            matcher.check_constraints(call.get("result"))
        except matcher.ConstraintError as exc:
            return f"smoke: calls[{i}]: result: {exc}"
    return None


def smoke_calls(front: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """The smoke step's calls (a front matter that :func:`check` passed): tool, arguments, expected result (or
    ``matcher``'s ``{"$any": true}`` when none is given)."""
    return [
        (call["tool"], dict(call.get("arguments") or {}), call.get("result", {"$any": True}))
        for call in front["smoke"]["calls"]
    ]
