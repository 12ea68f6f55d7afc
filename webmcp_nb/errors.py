"""Exceptions: one class per protocol error code, so callers can catch exactly what they expect."""

from __future__ import annotations

from typing import Any

from .protocol import ErrorCode

__all__ = [
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
    "InternalError",
    "error_from_code",
]


class WebMCPError(Exception):
    """Base class; ``code`` is the stable protocol code, ``data`` any detail the peer sent."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ProtocolError(WebMCPError):
    """A peer sent something that is not a valid message, or named an unknown method."""

    code = ErrorCode.BAD_REQUEST


class NotConnectedError(WebMCPError, ConnectionError):
    """The relay or the browser is not (or no longer) connected."""

    code = ErrorCode.NOT_CONNECTED


class PortInUseError(NotConnectedError):
    """Something that is not this account's relay holds the relay's port; nothing was sent to it but a nonce.

    ``port`` is the port, ``holder`` what is known of the program holding it (pid, user, command)."""

    def __init__(self, port: int, why: str) -> None:
        from .listeners import describe_holder

        self.port = port
        self.holder = describe_holder(port)
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


class ToolNotFoundError(WebMCPError, LookupError):
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
