"""Lint's settings: the budgets (Google's WebMCP tool-design guidance by default), rules turned off, severities
changed, exceptions per rule (the tools a rule does not apply to), arguments for sample calls, and how old a
skill's ``verified`` date may be. Read from ``webmcp-lint.toml`` or ``[tool.webmcp-nb.lint]`` in
``pyproject.toml``, in the folder the command runs in or the nearest one above it::

    [tool.webmcp-nb.lint]
    budgets = { description = 800 }               # name 30, description 500, parameter 150, output 1500
    disable = ["name-numbered"]
    severity = { param-undescribed = "error" }
    exceptions = { description-length = ["searchFlights"] }
    samples = { listFlights = {}, getFlight = { id = "AF12" } }
    skill-verified-days = 180

A key it does not know, a rule id it does not know and a value of the wrong kind are refused, naming the file,
the key and what it takes: a misspelt exception must not pass silently."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .findings import SEVERITIES, Rule, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Budgets", "LintConfig", "ConfigError", "CONFIG_FILE", "find_config"]

CONFIG_FILE = "webmcp-lint.toml"
WAIT_FOR = 10.0
"""Seconds a page has to register a tool lint is told to wait for (``--wait-for``), on each load."""
PYPROJECT_TABLE = ("tool", "webmcp-nb", "lint")


class ConfigError(ValueError):
    """Lint's settings are wrong; the message names the file and the key."""


@dataclass(frozen=True)
class Budgets:
    """Characters a text may take before lint warns (Google's guidance for WebMCP tools)."""

    name: int = 30
    description: int = 500
    parameter: int = 150
    """A parameter's description."""
    output: int = 1500
    """A sample call's result, as JSON text."""


@dataclass(frozen=True)
class LintConfig:
    """What lint checks, and how loudly."""

    budgets: Budgets = field(default_factory=Budgets)
    disable: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    exceptions: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Rule id → the tools it does not apply to."""
    samples: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Tool name → the arguments of a sample call (any tool; without one, only read-only tools whose arguments
    the schema can fill are called)."""
    skill_verified_days: int = 180
    path: str | None = None
    """The file it was read from (``None``: the defaults)."""

    def applies(self, rule: str, tool: str | None) -> bool:
        """Whether ``rule`` checks ``tool`` (``None``: the page)."""
        return rule not in self.disable and (tool is None or tool not in self.exceptions.get(rule, ()))

    def severity_of(self, rule: Rule) -> Severity:
        return self.severity.get(rule.id, rule.severity)

    @classmethod
    def from_data(cls, data: Any, where: str) -> LintConfig:
        """Settings from a parsed table; ``ConfigError`` naming ``where`` and the key when one is wrong."""
        from .rules import RULES

        def wrong(key: str, takes: str) -> ConfigError:
            return ConfigError(f"{where}: {key}: {takes}")

        def rule_ids(key: str, ids: Any) -> list[str]:
            unknown = [i for i in ids if i not in RULES]
            if unknown:
                raise wrong(key, f"no rule {unknown[0]!r}; the rules: {', '.join(RULES)}")
            return list(ids)

        if not isinstance(data, dict):
            raise ConfigError(f"{where}: the lint settings are a table")
        keys = {"budgets", "disable", "severity", "exceptions", "samples", "skill-verified-days"}
        if unknown := sorted(set(data) - keys):
            raise ConfigError(f"{where}: unknown key {unknown[0]!r}; the keys: {', '.join(sorted(keys))}")
        budgets = data.get("budgets", {})
        names = [f.name for f in fields(Budgets)]
        if not isinstance(budgets, dict) or set(budgets) - set(names):
            raise wrong("budgets", f"a table of characters for {', '.join(names)}")
        for key, value in budgets.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise wrong(f"budgets.{key}", f"a whole number of characters, 1 or more, not {value!r}")
        disable = data.get("disable", [])
        if not isinstance(disable, list) or not all(isinstance(i, str) for i in disable):
            raise wrong("disable", "a list of rule ids")
        severity = data.get("severity", {})
        if not isinstance(severity, dict) or any(v not in SEVERITIES for v in severity.values()):
            raise wrong("severity", f"a table of rule id = {' | '.join(SEVERITIES)}")
        exceptions = data.get("exceptions", {})
        if not isinstance(exceptions, dict) or not all(
            isinstance(v, list) and all(isinstance(t, str) for t in v) for v in exceptions.values()
        ):
            raise wrong("exceptions", "a table of rule id = [tool names it does not apply to]")
        samples = data.get("samples", {})
        if not isinstance(samples, dict) or not all(isinstance(v, dict) for v in samples.values()):
            raise wrong("samples", "a table of tool name = {arguments of a sample call}")
        days = data.get("skill-verified-days", 180)
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise wrong("skill-verified-days", f"a whole number of days, 1 or more, not {days!r}")
        return cls(
            budgets=Budgets(**budgets),
            disable=frozenset(rule_ids("disable", disable)),
            severity={rule: severity[rule] for rule in rule_ids("severity", severity)},
            exceptions={rule: frozenset(exceptions[rule]) for rule in rule_ids("exceptions", exceptions)},
            samples={str(k): dict(v) for k, v in samples.items()},
            skill_verified_days=days,
            path=where,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> LintConfig:
        """The settings in ``path`` (a ``webmcp-lint.toml``, or a ``pyproject.toml``'s ``[tool.webmcp-nb.lint]``),
        else in the nearest such file from the current folder up, else the defaults."""
        file = Path(path) if path is not None else find_config()
        if file is None:
            return cls()
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{file}: cannot read it: {exc}") from None
        if file.name == CONFIG_FILE or (path is not None and file.name != "pyproject.toml"):
            return cls.from_data(data, str(file))
        for key in PYPROJECT_TABLE:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        return cls.from_data(data, f"{file} [{'.'.join(PYPROJECT_TABLE)}]")


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``webmcp-lint.toml``, or ``pyproject.toml`` with a ``[tool.webmcp-nb.lint]`` table, from
    ``start`` (the current folder) up."""
    folder = (start or Path.cwd()).resolve()
    for place in (folder, *folder.parents):
        if (place / CONFIG_FILE).is_file():
            return place / CONFIG_FILE
        project = place / "pyproject.toml"
        if project.is_file():
            try:
                data = tomllib.loads(project.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return project  # read again by load, which says what is wrong with it
            table: Any = data
            for key in PYPROJECT_TABLE:
                table = table.get(key) if isinstance(table, dict) else None
            if table is not None:
                return project
    return None
