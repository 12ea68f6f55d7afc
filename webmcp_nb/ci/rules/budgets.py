"""Budgets: the characters a tool's name, description, each parameter's description and a sample call's output may
take (Google's guidance for WebMCP tools: 30, 500, 150 and 1,500; ``budgets`` in the settings). A model reads all
of it on every request: past these, it costs tokens and attention that the page's other tools need."""

from __future__ import annotations

from collections.abc import Iterator

from ...core.display import clip
from ..findings import Finding, Rule
from .base import PageTools, found, parameters, shown

__all__ = ["RULES", "check"]

NAME = Rule("name-length", "budgets", "warning", "a name fits the name budget (30 characters)")
DESCRIPTION = Rule("description-length", "budgets", "warning", "a description fits its budget (500 characters)")
PARAMETER = Rule("param-description-length", "budgets", "warning", "a parameter's description fits (150 characters)")
OUTPUT = Rule("output-length", "budgets", "warning", "a sample call's result fits the output budget (1,500 characters)")
SAMPLE = Rule("sample-call-failed", "budgets", "info", "the sample call lint makes to measure the output succeeds")
RULES = (NAME, DESCRIPTION, PARAMETER, OUTPUT, SAMPLE)


def check(page: PageTools) -> Iterator[Finding]:
    budgets = page.config.budgets
    sampled: set[str] = set()
    for entry in page.entries:
        if len(entry.name) > budgets.name:
            yield found(
                NAME,
                entry,
                f"its name is {len(entry.name)} characters (budget {budgets.name})",
                "Shorten it to a verb and an object (searchFlights, addToCart).",
            )
        if len(entry.description) > budgets.description:
            yield found(
                DESCRIPTION,
                entry,
                f"its description is {len(entry.description):,} characters (budget {budgets.description:,})",
                "Say what it does and when to use it; move details to the parameters' descriptions.",
            )
        for where, prop, _ in parameters(entry.input_schema):
            about = prop.get("description")
            if isinstance(about, str) and len(about) > budgets.parameter:
                yield found(
                    PARAMETER,
                    entry,
                    f"parameter {where!r}'s description is {len(about):,} characters (budget {budgets.parameter})",
                    "Say what it means and its form in a line; an enum or a pattern says the rest.",
                )
        sample = page.samples.get(entry.name)
        if sample is None or entry.name in sampled:  # a call by name reaches the top frame's tool of that name
            continue
        sampled.add(entry.name)
        if sample.error is not None:
            yield found(
                SAMPLE,
                entry,
                f"a sample call with {shown(sample.arguments)} failed, so its output was not measured: "
                f"{clip(sample.error, 300)}",
                "Give it arguments that work under samples in the lint settings, or leave it (info only).",
            )
        elif sample.text is not None and len(sample.text) > budgets.output:
            yield found(
                OUTPUT,
                entry,
                f"a sample call with {shown(sample.arguments)} returned {len(sample.text):,} characters "
                f"(budget {budgets.output:,})",
                "Return what the model needs to decide its next step (ids, names, counts), not the whole record.",
            )
