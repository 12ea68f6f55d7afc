"""The relay protocol: message shapes, method names and error codes, with no I/O in it.

The relay, the Python client and the extension all speak this. Messages are JSON objects:
requests ``{id, method, params}``, replies ``{id, result}`` or ``{id, error: {code, message, data}}``,
notifications ``{method, params}``. ``extension/shared/protocol.js`` is generated from this module
(``python -m webmcp_nb.link.protocol``) and a test keeps the two equal.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ..core.errors import ErrorCode
from .identity import DEFAULT_PORT, EXTENSION_ID, HOST_NAME

__all__ = [
    "PROTOCOL_VERSION",
    "DEFAULT_PORT",
    "EXTENSION_ID",
    "ErrorCode",
    "Method",
    "ToolInfo",
    "ToolKey",
    "ToolChanges",
    "PAGE_SOURCES",
    "tool_group",
    "apply_tool_changes",
    "TabInfo",
    "SkillStatus",
    "InstalledSkill",
    "BrowserInfo",
    "SessionInfo",
    "Message",
    "RemoteError",
    "parse_message",
    "request",
    "reply",
    "error_body",
    "notification",
    "PanelEvent",
    "PANEL_EVENT_DATA",
    "parse_panel_event",
    "js_module",
]

PROTOCOL_VERSION = 2
"""Bumped on any incompatible change; peers say theirs in ``hello``. 2: peers authenticate first, and
``tab.updated`` carries tool changes."""


class Method(str, Enum):
    """Method names. ``tab.*`` and ``tool.*`` requests go client → relay → browser."""

    HELLO = "hello"  # browser → relay (with its state), relay → client (with everyone's)
    PING = "ping"  # browser → relay keepalive, sent by the service worker
    TAB_UPDATED = "tab.updated"  # browser → relay → clients: a tab's url, title or tools changed (see ToolChanges)
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
    TAB_TOOL_ORDER = "tab.toolOrder"  # relay → browser: the order in which each frame registered its native tools
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
    REQUEST_CANCEL = "request.cancel"  # client → relay: it gave up on a request (a tool call is cancelled in the page)
    TOOL_CANCEL = "tool.cancel"  # relay → browser: cancel the worker-path call with this ``callId``
    SESSION_REGISTER = "session.register"  # client → relay: an MCP client's session (client name, pid) → its id
    SESSION_BIND = "session.bind"  # client → relay: bind the client's session to a tab (one session per tab)
    SESSION_CLOSE = "session.close"  # client or browser (its side panel) → relay: end a session
    SESSIONS_UPDATED = "sessions.updated"  # relay → clients and browsers: every session, after any change
    SESSION_EVENTS = "session.events"  # relay → other clients: what a session's client did (its event stream)
    GRANTS_CHECK = "grants.check"  # client or browser → relay: may this be done on this site? (asks if never granted)
    GRANTS_LIST = "grants.list"  # client or browser → relay: the grants, whether they are enforced, the asks waiting
    GRANTS_ANSWER = "grants.answer"  # client or browser → relay: a view's answer to an ask (the first one wins)
    GRANTS_REVOKE = "grants.revoke"  # client or browser → relay: forget a site's grant (it asks again)
    GRANTS_UPDATED = "grants.updated"  # relay → clients and browsers: the grants as they are now
    GRANT_EVENT = "grant.event"  # relay → clients and browsers: an ask, answer, refusal or change, as an event
    BRIDGE_OPEN = "bridge.open"  # client → relay → browser: run the chat-site bridge in a tab (see webmcp_nb/bridge)
    BRIDGE_SEND = "bridge.send"  # client → relay → browser: a message to a tab's bridge (relay → browser: close it)
    BRIDGE_EVENT = "bridge.event"  # browser → relay → the client that opened the bridge: what its page side says


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
    document_id: str | None = Field(default=None, alias="documentId")
    """Chrome's id of the document that registered the tool (the extension takes it from the frame's port, not
    from the page). A call names it, and the extension refuses the call (``STALE_TOOL``) when the frame shows
    another document by then: a tool is bound to the document that registered it."""
    origin: str | None = None
    """The origin of the frame that registered the tool (the port's, not what the page says): in an iframe, not
    necessarily the page's own."""


PAGE_SOURCES = ("native", "polyfill")
"""The sources of a page's own tools; any other source is a skill's name."""

ToolKey = tuple[int, str]
"""A tool's place in its tab: ``(frame id, name)``, unique in the tab's list."""

T = TypeVar("T")


class ToolChanges(BaseModel):
    """How a tab's tool list changed since its previous ``tab.updated``, so a change to one tool of thousands
    moves one tool. ``tab.updated`` carries either the whole list (``tab.tools``, as in ``hello``) or this.

    Applied by :func:`apply_tool_changes`, the same way by the worker, the relay and clients, so all three
    keep the same order.
    """

    model_config = ConfigDict(extra="ignore")

    removed: list[tuple[int, str]] = Field(default_factory=list)
    """Keys ``[frameId, name]`` of tools that are gone."""
    upserted: list[ToolInfo] = Field(default_factory=list)
    """Tools that are new or changed, new ones in the order they join."""
    order: list[tuple[int, str]] | None = None
    """Every key in the list's order, when applying the rest would not give it (a tool that left and came back
    between two pushes)."""


def tool_group(source: str, frame_id: int) -> tuple[int, int]:
    """Where a tool's group stands in a tab's list: the page's own tools first, then skill tools; each by frame
    (the top frame, 0, first). Inside a group tools keep the order in which they joined."""
    return (0 if source in PAGE_SOURCES else 1, frame_id)


def apply_tool_changes(
    tools: dict[ToolKey, T],
    removed: Iterable[ToolKey],
    upserted: Iterable[tuple[ToolKey, T]],
    group: Callable[[T], tuple[int, int]],
    order: Iterable[ToolKey] | None = None,
) -> dict[ToolKey, T]:
    """A tab's tools after a change: ``removed`` keys dropped, each upserted tool put in place of the one with
    its key or appended, then a stable sort by :func:`tool_group` if an appended tool broke it, or the keys put
    in ``order`` when it is given. Mutates and returns ``tools`` (a new dict when it had to be reordered)."""
    for key in removed:
        tools.pop(key, None)
    last = tools[next(reversed(tools))] if tools else None  # what appended tools follow
    appended: list[T] = []
    for key, tool in upserted:
        if key not in tools:
            appended.append(tool)
        tools[key] = tool
    if order is not None:
        ordered = {key: tools[key] for key in order if key in tools}
        return ordered | tools if len(ordered) < len(tools) else ordered
    if appended:  # the list was in order before: only the appended tools can break it (a check of those alone)
        groups = [group(tool) for tool in ([last] if last is not None else []) + appended]
        if any(a > b for a, b in itertools.pairwise(groups)):
            return dict(sorted(tools.items(), key=lambda item: group(item[1])))
    return tools


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
    tools_omitted: int = Field(default=0, alias="toolsOmitted")
    """Tools the page has that the mirror left out: a frame over its bound (see docs/security.md). They are
    still callable by name."""
    origin: str = ""
    """The origin of the tab's top frame (the page's own origin), as the extension knows it."""
    webmcp: str = ""
    """Which WebMCP the top frame has: ``native``, ``testing`` (Chrome 146–149), or ``polyfill`` (the extension's);
    empty until its bridge reported (pages that are not secure contexts never do)."""
    target_id: str | None = Field(default=None, alias="targetId")
    """The tab's DevTools target, when the browser is one the library launched with its DevTools pipe: the relay
    then takes the page's native tools from the pipe (the extension leaves them out of the tab's tools)."""


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


class SessionInfo(BaseModel):
    """An MCP client's session in the relay (``webmcp-nb mcp``): who it is and the tab it is bound to."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    client: str = ""
    """The MCP client's name, as it introduced itself (``claude-ai``, ``Visual Studio Code``…)."""
    pid: int = 0
    browser_id: str | None = Field(default=None, alias="browserId")
    tab_id: int | None = Field(default=None, alias="tabId")
    started: float = 0.0
    """Unix time the session registered."""
    last_activity: float = Field(default=0.0, alias="lastActivity")
    """Unix time of its last request through the relay."""
    calls: int = 0
    """Tool calls it made."""


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


# ----- what a side panel may report (panel.event) -----

PanelName = Annotated[str, StringConstraints(max_length=1_000)]
PanelText = Annotated[str, StringConstraints(max_length=200_000)]
MAX_PANEL_JSON_CHARS = 1_000_000
MAX_PANEL_RESULT_CHARS = 4_000_000
"""A hand call's result text: the browser's default result cap (``DEFAULT_MAX_RESULT_CHARS``)."""


def _bounded_json(value: Any) -> Any:
    try:
        size = len(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        raise ValueError("not JSON") from None
    if size > MAX_PANEL_JSON_CHARS:
        raise ValueError(f"over {MAX_PANEL_JSON_CHARS} characters of JSON")
    return value


PanelJson = Annotated[Any, AfterValidator(_bounded_json)]


class _PanelData(BaseModel):
    """The data of one kind of panel event: its own fields only, strictly typed."""

    model_config = ConfigDict(extra="ignore", strict=True)


class ToolCalledData(_PanelData):
    """A call made by hand in the panel (or by its chat), before it runs."""

    tool: PanelName
    arguments: PanelJson = None


class ToolReturnedData(_PanelData):
    """Its result, as the page's JSON text."""

    tool: PanelName
    text: Annotated[str, StringConstraints(max_length=MAX_PANEL_RESULT_CHARS)]


class ToolFailedData(_PanelData):
    """Its failure: an error code and message."""

    tool: PanelName
    code: PanelName
    message: PanelText


class ToolDeniedData(_PanelData):
    """A chat tool call the user refused."""

    tool: PanelName
    arguments: PanelJson = None


class ConfirmationAnswerData(_PanelData):
    """The panel's answer to a notebook agent's confirmation (the notebook applies the first answer)."""

    id: PanelName
    approved: bool


class ConfirmationRequestedData(_PanelData):
    """The panel's chat asks the user."""

    id: PanelName
    tool: PanelName
    arguments: PanelJson = None
    read_only: bool = False
    risk: Literal["low", "medium", "high"] | None = None
    provenance: PanelName | None = None


class ConfirmationAnsweredData(_PanelData):
    """The user answered the chat."""

    id: PanelName
    tool: PanelName
    arguments: PanelJson = None
    approved: bool
    by: PanelName = ""


class ChatMessageData(_PanelData):
    """A message the user typed into the chat."""

    role: PanelName
    text: PanelText
    model: PanelName | None = None


class ModelToolCall(_PanelData):
    """One tool call in a model reply."""

    id: PanelName | None = None
    name: PanelName
    arguments: PanelJson = None


class UsageData(_PanelData):
    """Tokens a chat request (or turn) used, as the endpoint reported them."""

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    total_tokens: int = Field(default=0, ge=0)


class ModelResponseData(_PanelData):
    """The chat model's reply."""

    content: PanelText | None = None
    tool_calls: list[ModelToolCall] = Field(default_factory=list, max_length=100)
    usage: UsageData | None = None


class AgentLimitData(_PanelData):
    """The chat hit a safety valve (tool calls or time per turn)."""

    limit: PanelName
    tool: PanelName | None = None
    seconds: float | None = Field(default=None, allow_inf_nan=False)


class AgentErrorData(_PanelData):
    """The chat's turn failed."""

    error: PanelName
    message: PanelText


class AgentTurnFinishedData(_PanelData):
    """The chat's turn ended."""

    answer: PanelText | None = None
    stopped: PanelName | None = None
    steps: int = Field(default=0, ge=0)
    usage: UsageData | None = None
    error: PanelText | None = None


PANEL_EVENT_DATA: dict[str, type[_PanelData]] = {
    "tool.called": ToolCalledData,
    "tool.returned": ToolReturnedData,
    "tool.failed": ToolFailedData,
    "tool.denied": ToolDeniedData,
    "confirmation.answer": ConfirmationAnswerData,
    "confirmation.requested": ConfirmationRequestedData,
    "confirmation.answered": ConfirmationAnsweredData,
    "chat.message": ChatMessageData,
    "model.response": ModelResponseData,
    "agent.limit": AgentLimitData,
    "agent.error": AgentErrorData,
    "agent.turn.finished": AgentTurnFinishedData,
}
"""The kinds of event a side panel sends (``extension/worker/panel-hub.js``: hand calls and confirmation answers;
``extension/chat/chat-loop.js``: its chat), each with its fields. Nothing else (evidence above all) comes from a
panel."""


class PanelEvent(BaseModel):
    """A ``panel.event`` as the relay forwards it and ``Browser`` records it: a known kind, typed and bounded
    fields, ``data.origin`` always ``"sidepanel"``."""

    model_config = ConfigDict(extra="ignore", strict=True)

    kind: Literal[tuple(PANEL_EVENT_DATA)]  # type: ignore[valid-type]
    tab_id: int | None = None
    url: Annotated[str, StringConstraints(max_length=8_192)] | None = None
    ts: float | None = Field(default=None, allow_inf_nan=False)
    duration_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    data: dict[str, Any] = Field(default_factory=dict)


def parse_panel_event(raw: Any, origin: str = "sidepanel") -> PanelEvent | None:
    """``raw`` as a :class:`PanelEvent` (its data reduced to the kind's own fields), or ``None`` when it is not
    one a side panel sends: an unknown kind, wrong types, over a size limit. The relay drops such events before
    broadcasting them and ``Browser`` before recording them. ``origin`` marks where it came from (``mcp`` for
    what an MCP client's session did, which is held to the same kinds)."""
    if not isinstance(raw, dict):
        return None
    try:
        event = PanelEvent.model_validate(raw)
        data = PANEL_EVENT_DATA[event.kind].model_validate(event.data)
    except ValidationError:
        return None
    event.data = {**data.model_dump(exclude_unset=True), "origin": origin}
    return event


def _log_words() -> dict[str, Any]:
    """How both views speak of events (``describe.py``): filter groups, problem kinds, quiet kinds, who acted."""
    from ..core.describe import ANSWERED, ASKERS, FAMILIES, LEVEL_WORDS, PROBLEMS, QUIET, WHY_NOT
    from ..core.events import ORIGINS

    words = {"LOG_FAMILIES": FAMILIES, "LOG_PROBLEMS": sorted(PROBLEMS), "LOG_QUIET": sorted(QUIET), "ORIGINS": ORIGINS}
    return words | {"ASKERS": ASKERS, "GRANT_ANSWERED": ANSWERED, "GRANT_LEVELS": LEVEL_WORDS, "GRANT_WHY_NOT": WHY_NOT}


def js_module() -> str:
    """The extension's ``protocol.js``: the same constants, so both sides spell them alike."""
    from .grant_asks import ASK_TIMEOUT

    consts = {
        "PROTOCOL_VERSION": PROTOCOL_VERSION,
        "DEFAULT_PORT": DEFAULT_PORT,
        "HOST_NAME": HOST_NAME,
        "ErrorCode": {c.name: c.value for c in ErrorCode},
        "Method": {m.name: m.value for m in Method},
        "PANEL_EVENT_KINDS": list(PANEL_EVENT_DATA),
        "PAGE_SOURCES": list(PAGE_SOURCES),
        "GRANT_ASK_TIMEOUT_S": ASK_TIMEOUT,
        **_log_words(),
    }
    lines = ["// Generated by `python -m webmcp_nb.link.protocol` from webmcp_nb/link/protocol.py. Do not edit.", ""]
    for name, value in consts.items():
        text = json.dumps(value, indent=2)
        frozen = isinstance(value, dict | list)
        lines.append(f"export const {name} = " + (f"Object.freeze({text});" if frozen else f"{text};"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[2] / "extension" / "shared" / "protocol.js"
    target.write_text(js_module())
    print(f"wrote {target}")
