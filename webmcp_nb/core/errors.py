"""Exceptions: one class per protocol error code, so callers can catch exactly what they expect; each message
says what went wrong and what to do next.

In IPython and Jupyter an uncaught ``WebMCPError`` shows the user's frames only: its traceback ends at the
user's line (the call into webmcp-nb), then the message. The library's frames stay on the exception
(``%debug`` and ``traceback`` see them); IPython's own convention marks the public entry points
``__tracebackhide__`` (:mod:`webmcp_nb.core._loop`), and ``_render_traceback_`` is IPython's hook for an exception
to show itself.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ._loop import in_package

__all__ = [
    "ErrorCode",
    "Hint",
    "NOTEBOOK_STEPS",
    "WebMCPError",
    "ProtocolError",
    "NotConnectedError",
    "PortInUseError",
    "BrowserCrashedError",
    "BrowserNotFoundError",
    "TabNotFoundError",
    "ToolNotFoundError",
    "StaleToolError",
    "InvalidArgumentsError",
    "ToolError",
    "ToolTimeoutError",
    "NavigatedError",
    "PermissionDeniedError",
    "ConfirmationDeniedError",
    "ConfirmationRequiredError",
    "ResultTooLargeError",
    "SkillHealthError",
    "ModelError",
    "TabInUseError",
    "ConfigurationError",
    "InternalError",
    "error_from_code",
    "user_traceback",
]


def user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` from the first frame that is not marked ``__tracebackhide__`` (IPython's own frame that runs a
    cell is), up to the last frame before the library's: where the user called it. ``tb`` itself when no
    frame of the user's comes before the library's (an error raised from inside, in a callback)."""
    entries: list[types.TracebackType] = []
    entry = tb
    while entry is not None and entry.tb_frame.f_locals.get("__tracebackhide__"):
        entry = entry.tb_next
    while entry is not None and not in_package(entry.tb_frame):
        entries.append(entry)
        entry = entry.tb_next
    if not entries or entry is None:
        return tb
    kept: types.TracebackType | None = None
    for item in reversed(entries):
        kept = types.TracebackType(kept, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return kept


class ErrorCode(str, Enum):
    """Stable error codes; each maps to one exception class below, and travels in the relay's error replies
    (:mod:`webmcp_nb.link.protocol`)."""

    BAD_REQUEST = "BAD_REQUEST"
    UNKNOWN_METHOD = "UNKNOWN_METHOD"
    NOT_CONNECTED = "NOT_CONNECTED"
    BROWSER_NOT_FOUND = "BROWSER_NOT_FOUND"
    TAB_NOT_FOUND = "TAB_NOT_FOUND"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    STALE_TOOL = "STALE_TOOL"
    INVALID_ARGS = "INVALID_ARGS"
    TOOL_ERROR = "TOOL_ERROR"
    TIMEOUT = "TIMEOUT"
    NAVIGATED = "NAVIGATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    CONFIRMATION_DENIED = "CONFIRMATION_DENIED"
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
    RESULT_TOO_LARGE = "RESULT_TOO_LARGE"
    SKILL_UNHEALTHY = "SKILL_UNHEALTHY"
    TAB_IN_USE = "TAB_IN_USE"
    MODEL_ERROR = "MODEL_ERROR"
    INTERNAL = "INTERNAL"


@dataclass(frozen=True)
class Hint:
    """What to do next, as a named step that each face words its own way: a notebook user is told
    ``tab.wait_for_tool(...)``, an MCP client ``list_page_tools``, a shell user a command line. ``values`` fill the
    step's words (``{name!r}``, ``{limit:g}``…)."""

    step: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def words(self, steps: Mapping[str, str]) -> str:
        """This step in a face's words (``steps``: step → template), or ``""`` when that face has none for it."""
        template = steps.get(self.step)
        return template.format(**self.values) if template else ""


NOTEBOOK_STEPS: dict[str, str] = {
    "wait_for_tool": "If the page registers it later, wait with tab.wait_for_tool({name!r}).",
    "no_tools_yet": (
        "This page registers no tools (yet): wait with tab.wait_for_tool({name!r}), or give it tools with a "
        "skill, e.g. tab.inject(wm.Skill.builtin('dom'))."
    ),
    "see_arguments": "The page did not see the call; help(tab.tools[{tool!r}]) shows every argument.",
    "see_server_arguments": (
        "MCP server {server} did not see the call; help(server.tools[{tool!r}]), on the server wm.mcp.connect() "
        "returned, shows every argument."
    ),
    "longer_timeout": (
        "The page may still be running it. A slower tool needs a longer limit: tab.call(..., timeout=SECONDS) "
        "(this call had {limit:g} s; wm.launch(call_timeout=...) changes the default)."
    ),
    "check_page": "It may or may not have taken effect: look at the page (tab.url, tab.tools) before calling again.",
    "relist": "It was not called. tab.tools has what the page offers now.",
    "relaunch": "Start another with wm.launch().",
    "reconnect": "Call wm.connect() again (it starts the relay), or run `webmcp-nb doctor` to see what is wrong.",
    "choose_browser": "Choose one with wm.connect(browser_id=...).",
    "set_key": (
        "Set it in the kernel's environment (os.environ[{variable!r}] = '…' in a cell, or in the shell that starts "
        "Jupyter) or pass api_key='…'."
    ),
    "force_tab": "Bind with force to take it over.",
}
"""The notebook's words for each step: what ``str(error)`` and ``error.message`` end with. Other faces keep their
own (``mcp/server.py`` for MCP clients, ``cli.py`` for a shell) and render ``error.worded(steps)``."""


class WebMCPError(Exception):
    """Base class; ``code`` is the stable protocol code, ``data`` any detail the peer sent. ``what`` says what went
    wrong; ``hint`` (if any) what to do next, which ``message`` words for a notebook user and ``worded(steps)``
    for another face."""

    code: ErrorCode = ErrorCode.INTERNAL
    hint: Hint | None = None

    def __init__(self, message: str, *, data: Any = None, hint: Hint | None = None) -> None:
        super().__init__(message)
        self.what = message
        self.data = data
        if hint is not None:
            self.hint = hint
        self.message = self.worded(NOTEBOOK_STEPS)
        self.args = (self.message,)

    def worded(self, steps: Mapping[str, str]) -> str:
        """What went wrong, then the next step in the words of a face (``steps``: see :data:`NOTEBOOK_STEPS`)."""
        step = self.hint.words(steps) if self.hint is not None else ""
        return f"{self.what.rstrip()} {step}" if step else self.what

    def with_hint(self, hint: Hint) -> WebMCPError:
        """Set the next step (an error from the browser says only what happened); returns the error."""
        self.hint = hint
        return self.restate(self.what)

    def restate(self, what: str) -> WebMCPError:
        """Say what went wrong in other words (more detail); the next step stays; returns the error."""
        self.what = what
        self.message = self.worded(NOTEBOOK_STEPS)
        self.args = (self.message,)
        return self

    def __str__(self) -> str:
        return self.message

    def _render_traceback_(self) -> list[str]:
        """IPython's hook: the traceback as IPython formats it, cut to the user's frames."""
        from IPython.core.getipython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("no IPython shell")  # IPython falls back to its usual traceback
        stb: list[str] = shell.InteractiveTB.structured_traceback(
            type(self), self, user_traceback(self.__traceback__), tb_offset=0
        )
        return stb


class ProtocolError(WebMCPError):
    """A peer sent something that is not a valid message, or named an unknown method."""

    code = ErrorCode.BAD_REQUEST


class NotConnectedError(WebMCPError, ConnectionError):
    """The relay or the browser is not (or no longer) connected."""

    code = ErrorCode.NOT_CONNECTED


class PortInUseError(NotConnectedError):
    """Something that is not this account's relay holds the relay's port; nothing was sent to it but a nonce.

    ``port`` is the port, ``holder`` what is known of the program holding it (pid, user, command)."""

    def __init__(self, port: int, why: str, *, holder: str) -> None:
        self.port = port
        self.holder = holder
        super().__init__(
            f"port {port} is in use by another program ({self.holder}): {why}. Stop that program, or use "
            f"another port: set WEBMCP_NB_PORT (and the same port in the extension's options). "
            "`webmcp-nb doctor` shows who holds the port.",
            data={"port": port, "holder": self.holder},
        )


class BrowserCrashedError(NotConnectedError):
    """The Chromium that ``launch()`` started is gone without being closed (it crashed or was killed);
    ``exit`` says how it ended (``browser.exit`` too). Start another with ``wm.launch()``."""

    def __init__(self, message: str, *, exit: Any = None, data: Any = None, hint: Hint | None = None) -> None:
        super().__init__(message, data=data, hint=hint)
        self.exit = exit


class BrowserNotFoundError(WebMCPError, LookupError):
    """No browser with the extension answered; the message says how to connect one."""

    code = ErrorCode.BROWSER_NOT_FOUND


class TabNotFoundError(WebMCPError, LookupError):
    code = ErrorCode.TAB_NOT_FOUND


class ToolNotFoundError(WebMCPError, KeyError):
    """No tool of that name in the tab (``tab.call`` and ``tab.tools[name]`` alike); the message lists the
    tab's tools, the closest names, and how to wait for one the page registers later. A ``KeyError``, so
    ``name in tab.tools`` and ``tab.tools.get(name)`` work as for any mapping."""

    code = ErrorCode.TOOL_NOT_FOUND


class StaleToolError(ToolNotFoundError):
    """The tool was listed by a document the tab no longer shows: the page navigated, reloaded or replaced a
    frame since (even if the new page registers a tool of the same name). The call was not made. A
    ``ToolNotFoundError``, so code that handles a missing tool handles this too."""

    code = ErrorCode.STALE_TOOL
    hint = Hint("relist")


class InvalidArgumentsError(WebMCPError, ValueError):
    """Arguments do not match the tool's input schema; ``field`` names the offending one."""

    code = ErrorCode.INVALID_ARGS

    def __init__(self, message: str, *, field: str | None = None, data: Any = None, hint: Hint | None = None) -> None:
        super().__init__(message, data=data, hint=hint)
        self.field = field


class ToolError(WebMCPError):
    """The page's tool threw or rejected; the message is the page's own.

    ``reason`` is the machine-readable code a skill tool attached (``TARGET_NOT_FOUND``, ...), if any.
    """

    code = ErrorCode.TOOL_ERROR

    @property
    def reason(self) -> str | None:
        return self.data.get("code") if isinstance(self.data, dict) else None


class ToolTimeoutError(WebMCPError, TimeoutError):
    """A call or wait ran past its time limit."""

    code = ErrorCode.TIMEOUT


class NavigatedError(WebMCPError):
    """The page navigated away or closed while a call was running."""

    code = ErrorCode.NAVIGATED


class PermissionDeniedError(WebMCPError, PermissionError):
    code = ErrorCode.PERMISSION_DENIED


class ConfirmationDeniedError(WebMCPError):
    code = ErrorCode.CONFIRMATION_DENIED


class ConfirmationRequiredError(WebMCPError):
    """A tool call needs the user's confirmation and a blocking call cannot wait for it (``agent.run()`` without
    ``on_confirm``, ``bridge.wait_answer()`` while a bridged call waits for a panel): raised at once instead of
    blocking the kernel."""

    code = ErrorCode.CONFIRMATION_REQUIRED


class ResultTooLargeError(WebMCPError):
    """The tool's result exceeded the size cap; ``data`` holds ``size`` and ``limit`` in bytes."""

    code = ErrorCode.RESULT_TOO_LARGE


class SkillHealthError(WebMCPError):
    """A skill was not registered in a tab: its health check failed or its tools.js threw."""

    code = ErrorCode.SKILL_UNHEALTHY


class ModelError(WebMCPError):
    """The model endpoint failed (unreachable, refusing, answering nonsense) after the SDK's retries; the
    ``openai`` exception is the ``__cause__``."""

    code = ErrorCode.MODEL_ERROR


class TabInUseError(WebMCPError):
    """Another MCP session is bound to the tab; bind with ``force`` to take it over."""

    code = ErrorCode.TAB_IN_USE
    hint = Hint("force_tab")


class ConfigurationError(WebMCPError, ValueError):
    """The library is not set up for what was asked: no API key for the model (the message names the
    environment variable to set), an unknown provider or confirmation policy, a preset without a default
    model, ``provider="any"`` without ``base_url``. Raised in Python before anything is sent; it has no
    protocol code of its own (``BAD_REQUEST``)."""

    code = ErrorCode.BAD_REQUEST


class AgentBusyError(WebMCPError, RuntimeError):
    """The agent is running a turn. One agent runs one turn at a time: a second would add its message
    between the first turn's tool calls and their results. Raised in Python; no protocol code of its own."""

    code = ErrorCode.BAD_REQUEST


class InternalError(WebMCPError):
    code = ErrorCode.INTERNAL


_BY_CODE: dict[str, type[WebMCPError]] = {
    cls.code.value: cls
    for cls in (
        ProtocolError,
        NotConnectedError,
        BrowserNotFoundError,
        TabNotFoundError,
        ToolNotFoundError,
        StaleToolError,
        InvalidArgumentsError,
        ToolError,
        ToolTimeoutError,
        NavigatedError,
        PermissionDeniedError,
        ConfirmationDeniedError,
        ConfirmationRequiredError,
        ResultTooLargeError,
        SkillHealthError,
        ModelError,
        TabInUseError,
        InternalError,
    )
}
_BY_CODE[ErrorCode.UNKNOWN_METHOD.value] = ProtocolError


def error_from_code(code: str, message: str, data: Any = None) -> WebMCPError:
    """The exception for a remote error; unknown codes become :class:`InternalError`."""
    cls = _BY_CODE.get(code, InternalError)
    return cls(message if code in _BY_CODE else f"{code}: {message}", data=data)
