"""The relay protocol: message shapes, method names and error codes, with no I/O in it.

The relay, the Python client and the extension all speak this. Messages are JSON objects:
requests ``{id, method, params}``, replies ``{id, result}`` or ``{id, error: {code, message, data}}``,
notifications ``{method, params}``. ``extension/protocol.js`` is generated from this module
(``python -m webmcp_nb.protocol``) and a test keeps the two equal.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .identity import DEFAULT_PORT, EXTENSION_ID, HOST_NAME

__all__ = [
    "PROTOCOL_VERSION",
    "DEFAULT_PORT",
    "EXTENSION_ID",
    "ErrorCode",
    "Method",
    "ToolInfo",
    "TabInfo",
    "SkillStatus",
    "InstalledSkill",
    "BrowserInfo",
    "Message",
    "RemoteError",
    "parse_message",
    "request",
    "reply",
    "error_body",
    "notification",
    "js_module",
]

PROTOCOL_VERSION = 2
"""Bumped on any incompatible change; peers say theirs in ``hello``. 2: peers authenticate first."""


class ErrorCode(str, Enum):
    """Stable error codes; each maps to one exception class in :mod:`webmcp_nb.errors`."""

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
    MODEL_ERROR = "MODEL_ERROR"
    INTERNAL = "INTERNAL"


class Method(str, Enum):
    """Method names. ``tab.*`` and ``tool.*`` requests go client → relay → browser."""

    HELLO = "hello"  # browser → relay (with its state), relay → client (with everyone's)
    PING = "ping"  # browser → relay keepalive, sent by the service worker
    TAB_UPDATED = "tab.updated"  # browser → relay → clients: a tab's url, title or tools changed
    TAB_REMOVED = "tab.removed"
    BROWSER_ADDED = "browser.added"  # relay → clients
    BROWSER_REMOVED = "browser.removed"
    TOOL_CALL = "tool.call"
    TAB_OPEN = "tab.open"
    TAB_NAVIGATE = "tab.navigate"
    TAB_RELOAD = "tab.reload"
    TAB_BACK = "tab.back"
    TAB_ACTIVATE = "tab.activate"
    TAB_CLOSE = "tab.close"
    TAB_SCREENSHOT = "tab.screenshot"
    TAB_SYNC = "tab.sync"  # ask a tab's frames to re-send their tools; replies with the tab
    SKILL_INSTALL = "skill.install"  # install or replace a skill and run it in matching tabs
    SKILL_UNINSTALL = "skill.uninstall"
    SKILL_UPDATE = "skill.update"  # enable/disable a skill or some of its tools
    SKILLS_UPDATED = "skills.updated"  # browser → relay → clients: the installed skills changed
    EVENTS_PUSH = "events.push"  # client → relay → browser: session events, for the side panel
    PANEL_EVENT = "panel.event"  # browser → relay → clients: something a side panel did (recorded by sessions)
    RELAY_CLIENTS = "relay.clients"  # relay → browsers: how many notebooks/clients are connected
    LANE_GRANT = "lane.grant"  # browser → relay: the key one frame will prove it has on /lane (see lanes.py)
    AUTH_HELLO = "auth.hello"  # peer → relay, first: role and nonce (see auth.py)
    AUTH_CHALLENGE = "auth.challenge"  # relay → peer: its nonce and its proof
    AUTH_PROOF = "auth.proof"  # peer → relay: the peer's proof
    AUTH_OK = "auth.ok"  # relay → peer: admitted
    RELAY_STATUS = "relay.status"  # client → relay: the relay's own state (for doctor)
    BROWSER_UPDATED = "browser.updated"  # browser → relay → clients: its settings changed (user scripts)


class ToolInfo(BaseModel):
    """A tool as the page declared it, plus where it lives."""

    model_config = ConfigDict(extra="ignore")

    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] | None = Field(default=None, alias="inputSchema")
    annotations: dict[str, Any] = Field(default_factory=dict)
    source: str = "native"
    """``native`` (the browser's WebMCP), ``polyfill`` (the extension's), or a skill's name."""
    frame_id: int = Field(default=0, alias="frameId")
    frame_url: str | None = Field(default=None, alias="frameUrl")


class SkillStatus(BaseModel):
    """How a skill fared in one tab: whether its health check passed, its tools, those the page shadows."""

    model_config = ConfigDict(extra="ignore")

    name: str
    version: str = ""
    ok: bool = True
    reason: str | None = None
    tools: list[str] = Field(default_factory=list)
    shadowed: list[str] = Field(default_factory=list)
    frame_id: int = Field(default=0, alias="frameId")


class TabInfo(BaseModel):
    """One tab as the extension mirrors it."""

    model_config = ConfigDict(extra="ignore")

    id: int
    url: str = ""
    title: str = ""
    active: bool = False
    status: str = ""
    tools: list[ToolInfo] = Field(default_factory=list)
    skills: list[SkillStatus] = Field(default_factory=list)


class InstalledSkill(BaseModel):
    """A skill installed in a browser, as its extension reports it."""

    model_config = ConfigDict(extra="ignore")

    name: str
    version: str = ""
    description: str = ""
    match: list[str] = Field(default_factory=list)
    priority: float = 0
    enabled: bool = True
    disabled_tools: list[str] = Field(default_factory=list, alias="disabledTools")


class BrowserInfo(BaseModel):
    """A connected browser: who it is and what tabs it has."""

    model_config = ConfigDict(extra="ignore")

    id: str
    user_agent: str = Field(default="", alias="userAgent")
    extension_version: str = Field(default="", alias="extensionVersion")
    user_scripts: bool = Field(default=False, alias="userScripts")
    """Whether the extension may run skills (Chrome's "Allow User Scripts" toggle is on)."""
    skills: list[InstalledSkill] = Field(default_factory=list)
    tabs: list[TabInfo] = Field(default_factory=list)


class RemoteError(BaseModel):
    """The ``error`` member of a reply."""

    code: str
    message: str
    data: Any = None


class Message(BaseModel):
    """Any protocol message; which kind it is follows from which members are present."""

    model_config = ConfigDict(extra="forbid")

    id: int | None = None
    method: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: RemoteError | None = None

    @property
    def is_request(self) -> bool:
        return self.id is not None and self.method is not None

    @property
    def is_notification(self) -> bool:
        return self.id is None and self.method is not None

    @property
    def is_reply(self) -> bool:
        return self.id is not None and self.method is None


def parse_message(raw: str | bytes) -> Message:
    """Parse one frame; raises ``ValueError`` with a readable reason when it is not a protocol message."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("a message must be a JSON object")
    try:
        msg = Message.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise ValueError(f"{where}: {first['msg']}") from None
    if msg.method is None and msg.id is None:
        raise ValueError("a message needs a method or an id")
    return msg


def request(id: int, method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"id": id, "method": method, "params": params or {}})


def reply(id: int, result: Any) -> str:
    return json.dumps({"id": id, "result": result})


def error_body(code: ErrorCode | str, message: str, data: Any = None) -> dict[str, Any]:
    """The ``error`` member of a reply."""
    error: dict[str, Any] = {"code": ErrorCode(code).value, "message": message}
    if data is not None:
        error["data"] = data
    return error


def notification(method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"method": method, "params": params or {}})


def js_module() -> str:
    """The extension's ``protocol.js``: the same constants, so both sides spell them alike."""
    consts = {
        "PROTOCOL_VERSION": PROTOCOL_VERSION,
        "DEFAULT_PORT": DEFAULT_PORT,
        "HOST_NAME": HOST_NAME,
        "ErrorCode": {c.name: c.value for c in ErrorCode},
        "Method": {m.name: m.value for m in Method},
    }
    lines = ["// Generated by `python -m webmcp_nb.protocol` from webmcp_nb/protocol.py. Do not edit.", ""]
    for name, value in consts.items():
        text = json.dumps(value, indent=2)
        lines.append(f"export const {name} = " + (f"Object.freeze({text});" if isinstance(value, dict) else f"{text};"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "extension" / "protocol.js"
    target.write_text(js_module())
    print(f"wrote {target}")
