"""webmcp-nb: a Jupyter notebook workbench for WebMCP.

``wm.launch()`` starts a headless Chromium with the extension; ``wm.connect()`` attaches to your own
Chrome through the relay daemon. Then ``tab.tools`` lists a page's tools and ``tab.call(...)`` runs one.

Names are imported on first use, so the relay daemon and the native-messaging host (which import a few
submodules) start without loading the agent, widgets and their dependencies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .agent.agent import Agent, AgentResult, AgentRun, ConfirmationRequest, Step
    from .bridge.bridge import ChatBridge, ChatSiteWarning, achat_bridge, chat_bridge
    from .browser.browser import Browser, UserScriptsWarning
    from .browser.launch import alaunch, launch
    from .browser.skills import InjectionResult, Skill, SkillHealthWarning
    from .browser.tab import PNG, Tab
    from .browser.tools import Tool, ToolMap, ToolResult, ToolsOmittedWarning
    from .ci.lint import alint, lint
    from .core.errors import (
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
        StaleToolError,
        TabInUseError,
        TabNotFoundError,
        ToolError,
        ToolNotFoundError,
        ToolTimeoutError,
        WebMCPError,
    )
    from .demo.server import DemoServer, serve_demo
    from .evals.suite import Model
    from .link.grants import grants
    from .own_chrome.connect import BrowserSummary, abrowsers, aconnect, browsers, connect
    from .own_chrome.doctor import Diagnosis, adoctor, doctor
    from .recording.report import Report
    from .recording.session import Session
    from .replay.replay import ReplayReport, areplay_agent, areplay_calls, replay_agent, replay_calls

_WHERE = {
    "agent.agent": ("Agent", "AgentResult", "AgentRun", "ConfirmationRequest", "Step"),
    "browser.browser": ("Browser", "UserScriptsWarning"),
    "bridge.bridge": ("ChatBridge", "ChatSiteWarning", "achat_bridge", "chat_bridge"),
    "own_chrome.connect": ("BrowserSummary", "abrowsers", "aconnect", "browsers", "connect"),
    "demo.server": ("DemoServer", "serve_demo"),
    "own_chrome.doctor": ("Diagnosis", "adoctor", "doctor"),
    "core.errors": (
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
        "StaleToolError",
        "TabInUseError",
        "TabNotFoundError",
        "ToolError",
        "ToolNotFoundError",
        "ToolTimeoutError",
        "WebMCPError",
    ),
    "evals.suite": ("Model",),
    "link.grants": ("grants",),
    "browser.launch": ("alaunch", "launch"),
    "replay.replay": ("ReplayReport", "areplay_agent", "areplay_calls", "replay_agent", "replay_calls"),
    "recording.report": ("Report",),
    "recording.session": ("Session",),
    "browser.skills": ("InjectionResult", "Skill", "SkillHealthWarning"),
    "browser.tab": ("PNG", "Tab"),
    "browser.tools": ("Tool", "ToolMap", "ToolResult", "ToolsOmittedWarning"),
    "ci.lint": ("alint", "lint"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "__version__",
    "panel",
    "mcp",
    "evals",
    "Model",
    "grants",
    "Agent",
    "AgentResult",
    "AgentRun",
    "ConfirmationRequest",
    "Step",
    "PNG",
    "Browser",
    "Tab",
    "UserScriptsWarning",
    "ChatBridge",
    "ChatSiteWarning",
    "achat_bridge",
    "chat_bridge",
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
    "StaleToolError",
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
    "alint",
    "lint",
]


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
    from .views.magic import load_ipython_extension as load

    load(ipython)


def panel(target: Browser | Tab, **options: object) -> object:
    """The notebook panel (ipywidgets) for a browser or a tab: status, tools, chat, skills, log, confirmations."""
    from .views import panel as make

    return make(target, **options)  # type: ignore[arg-type]
