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
from enum import Enum
from typing import Any

from ._loop import in_package

__all__ = [
    "ErrorCode",
    "WebMCPError",
    "ProtocolError",
    "NotConnectedError",
    "PortInUseError",
    "BrowserCrashedError",
    "BrowserNotFoundError",
    "TabNotFoundError",
    "ToolNotFoundError",
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


class WebMCPError(Exception):
    """Base class; ``code`` is the stable protocol code, ``data`` any detail the peer sent."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

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

    def __init__(self, message: str, *, exit: Any = None, data: Any = None) -> None:
        super().__init__(message, data=data)
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


class InvalidArgumentsError(WebMCPError, ValueError):
    """Arguments do not match the tool's input schema; ``field`` names the offending one."""

    code = ErrorCode.INVALID_ARGS

    def __init__(self, message: str, *, field: str | None = None, data: Any = None) -> None:
        super().__init__(message, data=data)
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
    """A tool call needs the user's confirmation and nothing can ask for it (``agent.run()`` without
    ``on_confirm``): raised at once instead of blocking the kernel."""

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
    exc = cls(message, data=data)
    if code not in _BY_CODE:
        exc.message = f"{code}: {message}"
    return exc
