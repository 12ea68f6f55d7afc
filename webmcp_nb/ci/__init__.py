"""The site author's CI gate: lint a page's tools (rules with ids, severities and fixes; text, JSON, JUnit), lock
them in a file and diff two versions (breaking or compatible), JUnit for evals, and the pytest plugin.

Names are imported on first use: the pytest plugin (``pytest_plugin``, loaded into every test suite of an
environment that has webmcp-nb) imports this package and must cost nothing there.

Uses: core, link, browser, demo, evals.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assertions import assert_tools_match
    from .config import LintConfig
    from .diff import ToolDiff, diff
    from .lint import alint, alint_skill, lint, lint_skill
    from .lock import ToolEntry, ToolLock
    from .report import LintReport

__all__ = [
    "lint", "alint", "lint_skill", "alint_skill", "LintConfig", "LintReport", "ToolLock", "ToolEntry", "diff",
    "ToolDiff", "assert_tools_match",
]  # fmt: skip

_WHERE = {
    "lint": ("lint", "alint", "lint_skill", "alint_skill"),
    "config": ("LintConfig",),
    "report": ("LintReport",),
    "lock": ("ToolLock", "ToolEntry"),
    "diff": ("diff", "ToolDiff"),
    "assertions": ("assert_tools_match",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'webmcp_nb.ci' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
