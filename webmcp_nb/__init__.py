"""webmcp-nb: a Jupyter notebook workbench for WebMCP.

``wm.launch()`` starts a headless Chromium with the extension; ``wm.connect()`` attaches to your own
Chrome through the relay daemon. Then ``tab.tools`` lists a page's tools and ``tab.call(...)`` runs one.
"""

from ._version import __version__
from .agent import Agent, AgentResult, AgentRun, ConfirmationRequest, Step
from .browser import PNG, Browser, Tab, UserScriptsWarning
from .connect import aconnect, connect
from .demo_server import DemoServer, serve_demo
from .errors import (
    BrowserCrashedError,
    BrowserNotFoundError,
    ConfirmationRequiredError,
    InvalidArgumentsError,
    ModelError,
    NavigatedError,
    NotConnectedError,
    ResultTooLargeError,
    SkillHealthError,
    TabNotFoundError,
    ToolError,
    ToolNotFoundError,
    ToolTimeoutError,
    WebMCPError,
)
from .launch import alaunch, launch
from .replay import ReplayReport, areplay_agent, areplay_calls, replay_agent, replay_calls
from .session import Session
from .skills import InjectionResult, Skill, SkillHealthWarning
from .tools import Tool, ToolMap, ToolResult, ToolsOmittedWarning

__all__ = [
    "__version__",
    "Agent",
    "AgentResult",
    "AgentRun",
    "ConfirmationRequest",
    "Step",
    "ConfirmationRequiredError",
    "connect",
    "aconnect",
    "launch",
    "alaunch",
    "Browser",
    "Tab",
    "Tool",
    "ToolMap",
    "ToolResult",
    "ToolsOmittedWarning",
    "PNG",
    "UserScriptsWarning",
    "Skill",
    "panel",
    "Session",
    "ReplayReport",
    "replay_agent",
    "replay_calls",
    "areplay_agent",
    "areplay_calls",
    "InjectionResult",
    "SkillHealthWarning",
    "SkillHealthError",
    "DemoServer",
    "serve_demo",
    "WebMCPError",
    "BrowserCrashedError",
    "BrowserNotFoundError",
    "InvalidArgumentsError",
    "ModelError",
    "NavigatedError",
    "NotConnectedError",
    "ResultTooLargeError",
    "TabNotFoundError",
    "ToolError",
    "ToolNotFoundError",
    "ToolTimeoutError",
]


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext webmcp_nb``: adds the ``%%webmcp_skill`` cell magic."""
    from .magic import load_ipython_extension as load

    load(ipython)


def panel(target: Browser | Tab, **options: object) -> object:
    """The notebook panel (ipywidgets) for a browser or a tab: status, tools, chat, skills, log, confirmations."""
    from .widgets import panel as make

    return make(target, **options)  # type: ignore[arg-type]
