"""webmcp-nb: a Jupyter notebook workbench for WebMCP.

``wm.launch()`` starts a headless Chromium with the extension; ``wm.connect()`` attaches to your own
Chrome through the relay daemon. Then ``tab.tools`` lists a page's tools and ``tab.call(...)`` runs one.

Names are imported on first use, so the relay daemon and the native-messaging host (which import a few
submodules) start without loading the agent, widgets and their dependencies.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .agent import Agent, AgentResult, AgentRun, ConfirmationRequest, Step
    from .browser import Browser, UserScriptsWarning
    from .connect import BrowserSummary, abrowsers, aconnect, browsers, connect
    from .demo_server import DemoServer, serve_demo
    from .doctor import Diagnosis, adoctor, doctor
    from .errors import (
        AgentBusyError,
        BrowserCrashedError,
        BrowserNotFoundError,
        ConfigurationError,
        ConfirmationRequiredError,
        InvalidArgumentsError,
        ModelError,
        NavigatedError,
        NotConnectedError,
        PermissionDeniedError,
        PortInUseError,
        ResultTooLargeError,
        SkillHealthError,
        TabInUseError,
        TabNotFoundError,
        ToolError,
        ToolNotFoundError,
        ToolTimeoutError,
        WebMCPError,
    )
    from .evals.suite import Model
    from .launch import alaunch, launch
    from .replay import ReplayReport, areplay_agent, areplay_calls, replay_agent, replay_calls
    from .report import Report
    from .session import Session
    from .skills import InjectionResult, Skill, SkillHealthWarning
    from .tab import PNG, Tab
    from .tools import Tool, ToolMap, ToolResult, ToolsOmittedWarning

_WHERE = {
    "agent": ("Agent", "AgentResult", "AgentRun", "ConfirmationRequest", "Step"),
    "browser": ("Browser", "UserScriptsWarning"),
    "connect": ("BrowserSummary", "abrowsers", "aconnect", "browsers", "connect"),
    "demo_server": ("DemoServer", "serve_demo"),
    "doctor": ("Diagnosis", "adoctor", "doctor"),
    "errors": (
        "AgentBusyError",
        "BrowserCrashedError",
        "BrowserNotFoundError",
        "ConfigurationError",
        "ConfirmationRequiredError",
        "InvalidArgumentsError",
        "ModelError",
        "NavigatedError",
        "NotConnectedError",
        "PermissionDeniedError",
        "PortInUseError",
        "ResultTooLargeError",
        "SkillHealthError",
        "TabInUseError",
        "TabNotFoundError",
        "ToolError",
        "ToolNotFoundError",
        "ToolTimeoutError",
        "WebMCPError",
    ),
    "evals.suite": ("Model",),
    "launch": ("alaunch", "launch"),
    "replay": ("ReplayReport", "areplay_agent", "areplay_calls", "replay_agent", "replay_calls"),
    "report": ("Report",),
    "session": ("Session",),
    "skills": ("InjectionResult", "Skill", "SkillHealthWarning"),
    "tab": ("PNG", "Tab"),
    "tools": ("Tool", "ToolMap", "ToolResult", "ToolsOmittedWarning"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "__version__",
    "panel",
    "mcp",
    "evals",
    "Model",
    "Agent",
    "AgentResult",
    "AgentRun",
    "ConfirmationRequest",
    "Step",
    "PNG",
    "Browser",
    "Tab",
    "UserScriptsWarning",
    "BrowserSummary",
    "abrowsers",
    "aconnect",
    "browsers",
    "connect",
    "DemoServer",
    "serve_demo",
    "Diagnosis",
    "adoctor",
    "doctor",
    "AgentBusyError",
    "BrowserCrashedError",
    "BrowserNotFoundError",
    "ConfigurationError",
    "ConfirmationRequiredError",
    "InvalidArgumentsError",
    "ModelError",
    "NavigatedError",
    "NotConnectedError",
    "PermissionDeniedError",
    "PortInUseError",
    "ResultTooLargeError",
    "SkillHealthError",
    "TabInUseError",
    "TabNotFoundError",
    "ToolError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "WebMCPError",
    "alaunch",
    "launch",
    "ReplayReport",
    "areplay_agent",
    "areplay_calls",
    "replay_agent",
    "replay_calls",
    "Report",
    "Session",
    "InjectionResult",
    "Skill",
    "SkillHealthWarning",
    "Tool",
    "ToolMap",
    "ToolResult",
    "ToolsOmittedWarning",
]


class _Package(types.ModuleType):
    """This package: importing a submodule that shares a name with one of ours (``connect``, ``launch``,
    ``doctor``) must not replace the function by the module, as Python's import system would."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (isinstance(value, types.ModuleType) and name in _MODULE_OF):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name == "mcp":  # MCP both ways (webmcp_nb.mcp): the SDK is an optional extra, imported when used
        return importlib.import_module(".mcp", __name__)
    if name == "evals":  # the subpackage, imported on first use like the rest
        return importlib.import_module(".evals", __name__)
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'webmcp_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext webmcp_nb``: adds the ``%%webmcp_skill`` cell magic."""
    from .magic import load_ipython_extension as load

    load(ipython)


def panel(target: Browser | Tab, **options: object) -> object:
    """The notebook panel (ipywidgets) for a browser or a tab: status, tools, chat, skills, log, confirmations."""
    from .widgets import panel as make

    return make(target, **options)  # type: ignore[arg-type]
