"""Lint's rules, one module per family: ``names``, ``schema``, ``budgets``, ``hints`` (the annotations family),
``poisoning`` (each a ``check(page)`` over a page's tools) and ``skill`` (a SKILL.md's front matter). ``RULES`` is
every rule by id, in the order the docs list them."""

from __future__ import annotations

from ..findings import SEVERITIES, Finding, Rule
from . import budgets, hints, names, poisoning, schema, skill
from .base import PageTools, Sample

__all__ = ["RULES", "FAMILIES", "PageTools", "Sample", "check_page"]

FAMILIES = (names, schema, budgets, hints, poisoning)
"""The families that check a page's tools."""
RULES: dict[str, Rule] = {rule.id: rule for family in (*FAMILIES, skill) for rule in family.RULES}


def check_page(page: PageTools) -> list[Finding]:
    """Every finding on ``page`` that its settings keep (rules turned off and exceptions left out), at the
    severity the settings give its rule; the page's own first, then by tool in the page's order, the worst first."""
    config = page.config
    order: dict[str, int] = {}
    for entry in page.entries:
        order.setdefault(entry.name, len(order))
    kept = [
        Finding(f.rule, config.severity_of(RULES[f.rule]), f.tool, f.message, f.fix, f.origin)
        for family in FAMILIES
        for f in family.check(page)
        if config.applies(f.rule, f.tool)
    ]
    return sorted(
        kept, key=lambda f: (-1 if f.tool is None else order.get(f.tool, len(order)), SEVERITIES.index(f.severity))
    )
