"""The relay: a WebSocket server on 127.0.0.1 between browsers (the extension) and clients (kernels, CLI).

Browsers connect to ``/browser`` (with ``Origin: chrome-extension://<our id>``, so web pages are turned away
at the door), clients to ``/client`` (with no ``Origin``: a web page always sends one), or live in the same
process (:class:`~webmcp_nb.link.connection.LocalConnection`). Either kind is admitted only after proving it knows
the pairing secret, and only after the relay proved it too (:mod:`webmcp_nb.link.auth`); until then a peer may
send a few kilobytes, for a few seconds, and only a few peers may be at that stage at once; a peer of another
local account is turned away before it takes one of those places (Linux: its socket's owner, from ``/proc``),
so the limit meters this account's own peers only. The relay mirrors
every browser's tabs so a client that connects later gets the whole state in its ``hello``, and forwards
``tab.*``/``tool.*`` requests to the browser a client names. A tool call goes straight to the frame's lane
(:mod:`webmcp_nb.link.lanes`) when it has one, else through the browser's service worker.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import json
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol, cast
from urllib.parse import urlsplit

from pydantic import ValidationError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from .._version import __version__
from . import auth
from ._sockets import send_soon, spawn
from .grant_asks import POLL_EVERY, AskRefused, GrantAsks
from .grants import GrantStore
from .lanes import LaneFailure, Lanes, Settle
from .listeners import socket_owner
from .protocol import (
    EXTENSION_ID,
    PAGE_SOURCES,
    PROTOCOL_VERSION,
    BrowserInfo,
    ErrorCode,
    InstalledSkill,
    Method,
    RemoteError,
    SessionInfo,
    ToolKey,
    apply_tool_changes,
    error_body,
    notification,
    parse_message,
    parse_panel_event,
    tool_group,
)

__all__ = [
    "Relay",
    "RelayClient",
    "Refusal",
    "Frame",
    "FORWARDED_METHODS",
    "MAX_MESSAGE_BYTES",
    "PRE_AUTH_MAX_BYTES",
    "MAX_UNAUTHENTICATED",
    "AUTH_TIMEOUT",
]

log = logging.getLogger(__name__)

FORWARDED_METHODS = frozenset(
    m.value
    for m in (
        Method.TOOL_CALL,
        Method.TAB_OPEN,
        Method.TAB_NAVIGATE,
        Method.TAB_RELOAD,
        Method.TAB_BACK,
        Method.TAB_ACTIVATE,
        Method.TAB_CLOSE,
        Method.TAB_SCREENSHOT,
        Method.TAB_SYNC,
        Method.SKILL_INSTALL,
        Method.SKILL_UNINSTALL,
        Method.SKILL_UPDATE,
        Method.BRIDGE_OPEN,
        Method.BRIDGE_SEND,
    )
)
"""Client requests the relay passes on to the browser named by ``params.browserId``."""

MAX_MESSAGE_BYTES = 128 * 1024 * 1024
"""Largest message from an admitted peer: room for a result at any ``max_result_chars`` a user sets."""
PRE_AUTH_MAX_BYTES = 4096
"""Largest message before a peer has proved the secret (the auth messages are a few hundred bytes)."""
MAX_UNAUTHENTICATED = 16
"""Peers that may be authenticating at once; further handshakes are refused (503) until one finishes."""
AUTH_TIMEOUT = 5.0
"""Seconds a peer has to complete authentication, incomplete messages included."""
HELLO_TIMEOUT = 10.0
SESSION_IDLE_EXIT = 60.0
"""Seconds a daemon stays up after its last MCP session ended, when no notebook is connected."""
ACTIVITY_PUSH = 1.0
"""Sessions' activity (last request, calls) is broadcast at most this often; binding changes at once."""
MAX_CLIENT_NAME = 200
CLOSED_BY_USER = "the user closed this MCP session (in a side panel or a notebook); it can do nothing more"


class Frame:
    """One message to a client: the dict, and its JSON text made only if a socket needs it (once)."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message

    @cached_property
    def text(self) -> str:
        return json.dumps(self.message)


class RelayClient(Protocol):
    """What the relay needs of a client: somewhere to deliver replies and notifications."""

    def deliver(self, frame: Frame) -> None: ...


class DevToolsRoute(Protocol):
    """A launched browser's pages through its DevTools pipe (:mod:`webmcp_nb.devtools`): the page's own native tools
    of each tab it reaches, listed and called there rather than through the extension. It tells the relay of
    changes through :meth:`Relay.devtools_changed`."""

    def bind(self, tab_id: int, target_id: str | None) -> tuple[list[dict[str, Any]], int]:
        """Tab ``tab_id`` shows target ``target_id`` (the extension said; ``None``: not known): its tools and how
        many were left out."""
        ...

    def call(self, tab_id: int, params: dict[str, Any], settle: Settle) -> Callable[[], None] | None:
        """Start a ``tool.call``; what cancels it, or ``None`` when this way does not reach the tab."""
        ...

    async def settled(self, tab_id: int) -> None:
        """Once what the tab's page reported so far is in the mirror."""
        ...


class _SocketClient:
    """A client on ``/client``."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection

    def deliver(self, frame: Frame) -> None:
        send_soon(self.connection, frame.text)


@dataclass
class _BrowserPeer:
    connection: ServerConnection
    info: BrowserInfo
    tabs: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Each tab as last reported, without its tools."""
    tools: dict[int, dict[ToolKey, dict[str, Any]]] = field(default_factory=dict)
    """Each tab's tools by key, in the mirror's order (``apply_tool_changes``): the extension's, and the page's
    native tools the DevTools pipe reports for a tab it reaches."""
    page_tools: dict[int, dict[str, list[int]]] = field(default_factory=dict)
    """Per tab, the frames that have each of the page's own tools, top frame first (what a lane can run;
    skill tools run in the worker)."""
    targets: dict[int, str] = field(default_factory=dict)
    """Per tab, the DevTools target it shows, when the browser is reached through its DevTools pipe."""
    devtools: dict[int, set[ToolKey]] = field(default_factory=dict)
    """Per tab, the keys of the tools the DevTools pipe reported (the extension leaves those out)."""
    devtools_omitted: dict[int, int] = field(default_factory=dict)

    def state(self) -> dict[str, Any]:
        data = self.info.model_dump(by_alias=True, exclude={"tabs"})
        data["tabs"] = [self.whole(tab_id) for tab_id in self.tabs]
        return data

    def fields(self, tab_id: int) -> dict[str, Any]:
        """The tab as clients get it, without its tools: tools left out by the pipe counted with the extension's."""
        tab = self.tabs[tab_id]
        extra = self.devtools_omitted.get(tab_id, 0)
        return {**tab, "toolsOmitted": (tab.get("toolsOmitted") or 0) + extra} if extra else tab

    def whole(self, tab_id: int) -> dict[str, Any]:
        return {**self.fields(tab_id), "tools": list(self.tools.get(tab_id, {}).values())}

    def set_tab(self, tab: dict[str, Any], changes: dict[str, Any] | None = None) -> dict[str, Any] | bool | None:
        """Take a tab as the extension reports it: whole (``tab.tools``), or its fields and ``changes``
        (``ToolChanges``) to the tools it had; the pipe's tools of the tab stay. Returns the changes clients are to
        apply (``None`` for a whole tab), or ``False`` for malformed changes, refused whole, so the mirror never
        drifts from the browser's by part of a message."""
        tab_id = tab["id"]
        ours = self.devtools.get(tab_id, set())
        piped = tab_id in self.targets  # the page's native tools are the pipe's: the extension's are not taken
        if changes is None:
            tools: dict[ToolKey, dict[str, Any]] = {k: v for k, v in self.tools.get(tab_id, {}).items() if k in ours}
            for tool in tab.get("tools") or ():
                if (key := _tool_key(tool)) is not None and key not in ours and not (piped and _native(tool)):
                    tools.setdefault(key, tool)
            self.tools[tab_id] = apply_tool_changes({}, (), tools.items(), _group)
            self.page_tools[tab_id] = index = cast(dict[str, list[int]], {})
            for key, tool in self.tools[tab_id].items():
                _index(index, key, tool)
        else:
            removed, upserted = _keys(changes.get("removed")), _keyed(changes.get("upserted"))
            order = None if changes.get("order") is None else _keys(changes["order"])
            if removed is None or upserted is None or (order is None and changes.get("order") is not None):
                return False
            tools = self.tools.get(tab_id, {})
            if ours or piped:  # the extension never names the pipe's tools: keep them, first in any order it gives
                removed = [k for k in removed if k not in ours]
                upserted = {k: v for k, v in upserted.items() if k not in ours and not (piped and _native(v))}
                if order is not None:
                    order = [k for k in tools if k in ours] + [k for k in order if k not in ours]
                changes = {"removed": removed, "upserted": list(upserted.values()), "order": order}
            index = self.page_tools.setdefault(tab_id, {})
            for key in {*removed, *upserted}:
                if (old := tools.get(key)) is not None:
                    _unindex(index, key, old)
            self.tools[tab_id] = apply_tool_changes(tools, removed, upserted.items(), _group, order)
            for key, tool in upserted.items():
                _index(index, key, tool)
        self.tabs[tab_id] = {k: v for k, v in tab.items() if k != "tools"}
        return changes

    def set_devtools(self, tab_id: int, removed: list[ToolKey], upserted: list[dict[str, Any]], whole: bool) -> None:
        """The pipe's tools of a tab: what changed, or (``whole``) all of them in place of those it had."""
        ours = self.devtools.setdefault(tab_id, set())
        tools, index = self.tools.setdefault(tab_id, {}), self.page_tools.setdefault(tab_id, {})
        if whole:
            removed = list(ours)
        keyed = [((tool["frameId"], tool["name"]), tool) for tool in upserted]
        # an entry of the extension's under one of the pipe's keys (it reported the tab before it knew the pipe
        # serves it) goes first, so the pipe's joins in its own order: the caller tells clients the same
        taken = [key for key, _ in keyed if key in tools and key not in ours]
        removed[:0] = taken
        gone = [key for key in removed if key in ours or key in taken]
        for key in gone:
            ours.discard(key)
            if (old := tools.get(key)) is not None:
                _unindex(index, key, old)
        for key, tool in keyed:
            if (old := tools.get(key)) is not None:
                _unindex(index, key, old)
            ours.add(key)
            _index(index, key, tool)
        self.tools[tab_id] = apply_tool_changes(tools, gone, keyed, _group)

    def drop_tab(self, tab_id: Any) -> bool:
        self.page_tools.pop(tab_id, None)
        self.tools.pop(tab_id, None)
        self.targets.pop(tab_id, None)
        self.devtools.pop(tab_id, None)
        self.devtools_omitted.pop(tab_id, None)
        return self.tabs.pop(tab_id, None) is not None

    def skill_tool(self, tab_id: int, name: Any, frame: Any) -> bool:
        """Whether a call for ``name`` (in ``frame``, if given) is for a skill's tool, which the worker runs."""
        tools = self.tools.get(tab_id, {})
        ours = self.devtools.get(tab_id, set())
        if frame is not None:
            tool = tools.get((frame, name))
            return tool is not None and (frame, name) not in ours and tool.get("source") not in PAGE_SOURCES
        if any(key[1] == name for key in ours):
            return False
        return any(key[1] == name and tool.get("source") not in PAGE_SOURCES for key, tool in tools.items())


def _native(tool: dict[str, Any]) -> bool:
    return bool(tool.get("source", "native") == "native")


def _other_account(connection: ServerConnection) -> int | None:
    """The uid of a peer that belongs to another local account, or ``None`` (this account's, or not known: then
    it is metered with this account's peers)."""
    uid = socket_owner(connection.remote_address[:2], connection.local_address[:2])
    return uid if uid is not None and hasattr(os, "getuid") and uid != os.getuid() else None


def _tool_key(tool: Any) -> ToolKey | None:
    if not isinstance(tool, dict):
        return None
    frame, name = tool.get("frameId", 0), tool.get("name")
    return (frame, name) if _is_int(frame) and isinstance(name, str) else None


def _keys(raw: Any) -> list[ToolKey] | None:
    if raw is None:
        return []
    if not isinstance(raw, list):
        return None
    keys = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and _is_int(item[0]) and isinstance(item[1], str)):
            return None
        keys.append((item[0], item[1]))
    return keys


def _keyed(raw: Any) -> dict[ToolKey, dict[str, Any]] | None:
    """Upserted tools by key (the last one wins if a key repeats)."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        return None
    keyed = {}
    for tool in raw:
        if (key := _tool_key(tool)) is None:
            return None
        keyed[key] = tool
    return keyed


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _group(tool: dict[str, Any]) -> tuple[int, int]:
    return tool_group(tool.get("source", "native"), tool.get("frameId", 0))


def _index(index: dict[str, list[int]], key: ToolKey, tool: dict[str, Any]) -> None:
    if tool.get("source", "native") in PAGE_SOURCES:
        bisect.insort(index.setdefault(key[1], []), key[0])


def _unindex(index: dict[str, list[int]], key: ToolKey, tool: dict[str, Any]) -> None:
    frames = index.get(key[1])
    if tool.get("source", "native") in PAGE_SOURCES and frames and key[0] in frames:
        frames.remove(key[0])
        if not frames:
            del index[key[1]]


@dataclass
class _Session:
    """An MCP client's session: its client connection, what ``sessions.updated`` says of it, and the tabs it
    opened (closed when it ends)."""

    owner: RelayClient
    info: SessionInfo
    opened: set[tuple[str, int]] = field(default_factory=set)
    """``(browser id, tab id)`` of each tab its ``tab.open`` requests made."""


@dataclass
class _Pending:
    client: RelayClient
    client_id: int
    browser_id: str
    opener: _Session | None = None
    """The session whose ``tab.open`` this is: the tab is its to close when it ends."""
    method: str = ""


class _Answer:
    """The relay's own request to a browser: its reply, into a future."""

    def __init__(self, future: asyncio.Future[dict[str, Any]]) -> None:
        self.future = future

    def deliver(self, frame: Frame) -> None:
        if not self.future.done():
            self.future.set_result(frame.message)


class Refusal(NamedTuple):
    """A peer the relay turned away: where it knocked, the status it got, and why."""

    path: str
    status: int
    reason: str


class Relay:
    """The relay server. ``await relay.start()`` binds; ``relay.port`` is the port it got.

    ``secret`` is the pairing secret, or a function returning the current one (the daemon re-reads its file
    for every peer, so a rotated secret takes effect at once). ``idle_timeout`` (seconds) makes it stop by
    itself once no client has been connected that long (daemon mode); ``None`` keeps it running until
    :meth:`close`. ``enforce_grants``: whether ``grants.check`` holds its browsers to the user's per-site grants
    (``grants``, default the user's file): the daemon does, ``launch()``'s relay only when asked to.
    """

    def __init__(
        self,
        secret: str | Callable[[], str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        extension_id: str = EXTENSION_ID,
        idle_timeout: float | None = None,
        session_idle_timeout: float = SESSION_IDLE_EXIT,
        grants: GrantStore | None = None,
        enforce_grants: bool = False,
    ) -> None:
        self._secret: Callable[[], str] = secret if callable(secret) else (lambda: secret)
        self.host = host
        self.port = port
        self.extension_id = extension_id
        self.idle_timeout = idle_timeout
        self.session_idle_timeout = session_idle_timeout
        self.refused: list[Refusal] = []
        """The last 100 refused peers, newest last: HTTP statuses for handshakes refused at the door, 1008 for a
        peer that failed authentication or whose first message was not a valid hello, each with its reason."""
        self.auth_failures: Counter[str] = Counter()
        """Peers that did not prove the secret, by role (``browser``, ``client``)."""
        self.other_accounts: Counter[int] = Counter()
        """Peers of other local accounts turned away at the door, by uid."""
        self.browser_connections = 0
        """How many browser connections were admitted (a reconnecting worker adds one)."""
        self._browsers: dict[str, _BrowserPeer] = {}
        self._clients: set[RelayClient] = set()
        self._authenticating: set[ServerConnection] = set()
        self.lanes = Lanes(lambda browser_id: browser_id in self._browsers)
        """Frames' direct sockets; ``lanes.refused`` counts handshakes refused for a missing or wrong key."""
        self._pending: dict[int, _Pending] = {}
        self._cancellers: dict[tuple[RelayClient, int], Callable[[], None]] = {}
        """How to cancel each tool call in flight, by (client, the client's request id)."""
        self._sessions: dict[str, _Session] = {}
        self._cut_off: set[RelayClient] = set()
        """Clients whose MCP session the user closed: nothing they ask is done from then on (their process exits
        once it hears of the close; until then it must not act)."""
        self._bridges: dict[str, tuple[RelayClient, str, Any]] = {}
        """Chat-site bridges by id: the client that opened each, its browser and tab (it alone hears the bridge)."""
        self._activity_push: asyncio.TimerHandle | None = None
        self._ids = itertools.count(1)
        self._server: Server | None = None
        self._last_client = time.monotonic()
        self._last_left_with_session = False
        self._idle_task: asyncio.Task[None] | None = None
        self.grant_asks = GrantAsks(
            grants if grants is not None else GrantStore(),
            enforce=enforce_grants,
            emit=self._grant_event,
            push=self._grants_updated,
        )
        """Per-site grants: checks, the asks waiting for the user, their answers."""
        self._grants_task: asyncio.Task[None] | None = None
        self.devtools: DevToolsRoute | None = None
        """How a launched browser's native page tools are listed and called, if not through its extension."""

    @property
    def secret(self) -> str:
        """The pairing secret peers must prove they know (never sent over any socket)."""
        return self._secret()

    # ----- lifecycle -----

    async def start(self, sock: socket.socket | None = None) -> Relay:
        """Listen on ``host``:``port``, or on ``sock``, a socket bound and listening already (a browser started
        before the relay was told to dial it: :mod:`webmcp_nb.browser.early`)."""
        self._server = await serve(
            self._handle,
            None if sock else self.host,
            None if sock else self.port,
            sock=sock,
            process_request=self._admit,
            select_subprotocol=_select_subprotocol,
            max_size=PRE_AUTH_MAX_BYTES,
            compression=None,
            close_timeout=2,
            ping_interval=20,
            ping_timeout=40,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        if self.idle_timeout is not None:
            self._idle_task = asyncio.create_task(self._exit_when_idle())
        self._grants_task = asyncio.create_task(self._watch_grants())
        return self

    async def close(self) -> None:
        if self._idle_task:
            self._idle_task.cancel()
        if self._grants_task:
            self._grants_task.cancel()
        if self._server:
            self._server.close()
            await self._server.wait_closed()

    async def serve_forever(self) -> None:
        assert self._server is not None, "call start() first"
        with contextlib.suppress(asyncio.CancelledError):
            await self._server.wait_closed()

    async def _exit_when_idle(self) -> None:
        """Daemon mode: stop once no client is connected, ``idle_timeout`` after the last one left — or
        ``session_idle_timeout`` when the last to leave was an MCP session (no notebook is waiting for it). A peer
        still proving the secret holds it up (within its time limit): it may be the client that was coming."""
        assert self.idle_timeout is not None
        while True:
            await asyncio.sleep(min(self.idle_timeout, self.session_idle_timeout, 5.0))
            limit = self.session_idle_timeout if self._last_left_with_session else self.idle_timeout
            if not self._clients and not self._authenticating and time.monotonic() - self._last_client > limit:
                log.info("no client for %.0f s: exiting", limit)
                assert self._server is not None
                self._server.close()
                return

    async def _watch_grants(self) -> None:
        """Changes to the grant file made elsewhere (``webmcp-nb grants``, ``wm.grants``) reach the views within a
        second; every check reads the file anyway."""
        self.grant_asks.refresh()
        while True:
            await asyncio.sleep(POLL_EVERY)
            if self._clients or self._browsers:
                self.grant_asks.refresh()

    @property
    def browsers(self) -> list[dict[str, Any]]:
        """Every connected browser's state, as sent in ``hello``."""
        return [peer.state() for peer in self._browsers.values()]

    def status(self) -> dict[str, Any]:
        """What ``relay.status`` answers an authenticated client (``webmcp-nb doctor`` shows it)."""
        return {
            "relayVersion": __version__,
            "pid": os.getpid(),
            "port": self.port,
            "clients": len(self._clients),
            "browsers": self.browsers,
            "authFailures": dict(self.auth_failures),
            "otherAccounts": {str(uid): count for uid, count in self.other_accounts.items()},
            "refused": len(self.refused),
            "sessions": self.sessions,
        }

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """Every MCP session, as ``sessions.updated`` sends them."""
        return [session.info.model_dump(by_alias=True) for session in self._sessions.values()]

    # ----- admission -----

    async def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        origin = request.headers.get("Origin")
        if (uid := _other_account(connection)) is not None:  # before it can take an authentication place
            self.other_accounts[uid] += 1
            log.warning("turned away a peer of another account (uid %d) on %s", uid, path)
            return self._refuse(connection, path, 403, "this relay serves its own account only\n")
        if path == "/lane":  # a content script, with the page's Origin: admitted by the key it proves
            offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
            if await self.lanes.admit(connection, offered):
                return None
            return self._refuse(connection, path, 403, "no lane was granted with this key\n")
        if path == "/browser":
            if origin != f"chrome-extension://{self.extension_id}":
                return self._refuse(connection, path, 403, "browsers must be the webmcp-nb extension\n")
        elif path == "/client":
            if origin is not None:
                return self._refuse(connection, path, 403, "web pages may not connect to the relay\n")
        else:
            return self._refuse(connection, path, 404, "unknown path\n")
        if len(self._authenticating) >= MAX_UNAUTHENTICATED:
            return self._refuse(connection, path, 503, "too many peers are authenticating; try again\n")
        return None

    def _refuse(self, connection: ServerConnection, path: str, status: int, text: str) -> Response:
        self._note_refused(path, status, text.strip())
        return connection.respond(status, text)

    def _note_refused(self, path: str, status: int, reason: str) -> None:
        self.refused.append(Refusal(path, status, reason))
        del self.refused[:-100]

    async def _handle(self, connection: ServerConnection) -> None:
        path = urlsplit(connection.request.path).path if connection.request else ""
        if path == "/lane":
            connection.protocol.max_message_size = MAX_MESSAGE_BYTES
            await self.lanes.serve(connection)
            return
        role = "browser" if path == "/browser" else "client"
        if not await self._authenticate(connection, path, role):
            return
        connection.protocol.max_message_size = MAX_MESSAGE_BYTES
        if role == "browser":
            await self._serve_browser(connection)
        else:
            await self._serve_client(connection)

    async def _authenticate(self, connection: ServerConnection, path: str, role: str) -> bool:
        """The relay's side of :mod:`webmcp_nb.link.auth`; a peer that fails it is closed having learnt one nonce."""
        self._authenticating.add(connection)
        try:
            await asyncio.wait_for(self._exchange_proofs(connection, role), AUTH_TIMEOUT)
        except (auth.AuthError, ValueError, asyncio.TimeoutError, ConnectionClosed) as exc:
            self.auth_failures[role] += 1
            why = f"authentication failed ({type(exc).__name__}): {exc}"
            self._note_refused(path, 1008, why)
            log.info("refused a %s peer: %s", role, why)
            await connection.close(1008, "authentication failed")
            return False
        except OSError as exc:  # the daemon's secret file became unsafe to read (a symlink, another owner's)
            log.error("cannot check a %s peer: %s", role, exc)
            await connection.close(1011, "the relay cannot read its pairing secret; run webmcp-nb doctor")
            return False
        finally:
            self._authenticating.discard(connection)
        return True

    async def _exchange_proofs(self, connection: ServerConnection, role: str) -> None:
        first = parse_message(await connection.recv())
        if first.method != Method.AUTH_HELLO.value or first.params.get("role") != role:
            raise auth.AuthError(f"expected auth.hello for a {role}, got {first.method}")
        peer_nonce, relay_nonce, secret = auth.read_nonce(first.params.get("nonce")), auth.new_nonce(), self.secret
        mine = auth.relay_proof(secret, role, peer_nonce, relay_nonce)
        await connection.send(json.dumps(auth.challenge(relay_nonce, mine)))
        second = parse_message(await connection.recv())
        expected = auth.peer_proof(secret, role, peer_nonce, relay_nonce)
        if second.method != Method.AUTH_PROOF.value or not auth.check(expected, second.params.get("proof")):
            raise auth.AuthError("a wrong proof")
        await connection.send(json.dumps(auth.ok(__version__, os.getpid())))

    # ----- browsers -----

    async def _serve_browser(self, connection: ServerConnection) -> None:
        try:
            first = parse_message(await asyncio.wait_for(connection.recv(), HELLO_TIMEOUT))
            if first.method != Method.HELLO.value:
                raise ValueError("the first message must be hello")
            info = BrowserInfo.model_validate(first.params)
        except (ValueError, asyncio.TimeoutError, ConnectionClosed) as exc:
            why = f"bad hello ({type(exc).__name__}): {exc}"
            self._note_refused("/browser", 1008, why)
            log.info("refused a browser: %s", why)
            await connection.close(1008, why[:120])  # the limit of a close frame's reason
            return
        peer = _BrowserPeer(connection, info)
        for tab in info.tabs:
            peer.set_tab(tab.model_dump(by_alias=True))
            self._bind_devtools(peer, tab.id)
        self.browser_connections += 1
        previous = self._browsers.get(info.id)
        self._browsers[info.id] = peer
        if previous:
            self._fail_pending(info.id, "the browser reconnected")
            await previous.connection.close()
        self._broadcast(Method.BROWSER_ADDED, {"browser": peer.state()})
        send_soon(connection, notification(Method.RELAY_CLIENTS, {"count": len(self._clients)}))
        send_soon(connection, notification(Method.SESSIONS_UPDATED, {"sessions": self.sessions}))
        send_soon(connection, notification(Method.GRANTS_UPDATED, self.grant_asks.state()))
        try:
            async for raw in connection:
                self._on_browser_message(peer, raw)
        except ConnectionClosed:
            pass
        finally:
            self.grant_asks.withdraw(peer)
            if self._browsers.get(info.id) is peer:
                del self._browsers[info.id]
                self._fail_pending(info.id, "the browser disconnected")
                self._broadcast(Method.BROWSER_REMOVED, {"browserId": info.id})
                self._unbind_where(lambda s: s.browser_id == info.id)

    def _on_browser_message(self, peer: _BrowserPeer, raw: str | bytes) -> None:
        try:
            msg = parse_message(raw)
        except ValueError as exc:
            log.warning("bad message from browser %s: %s", peer.info.id, exc)
            return
        if msg.is_request and msg.method in _GRANT_METHODS:  # the side panel's chat and cards
            self._grant_request(peer, msg.id, msg.method, msg.params, peer.info.id, _BrowserReplies(peer))
        elif msg.is_reply:
            assert msg.id is not None
            pending = self._pending.get(msg.id)
            if pending is None or pending.browser_id != peer.info.id:
                return  # not ours to answer: only the browser a request went to may reply to it
            del self._pending[msg.id]
            if pending.opener is not None:
                _note_opened(pending.opener, peer.info.id, msg.result, msg.error)
            out: dict[str, Any] = {"id": pending.client_id}
            if msg.error is not None:
                out["error"] = msg.error.model_dump(exclude_none=True)
            else:
                out["result"] = msg.result
            self._cancellers.pop((pending.client, pending.client_id), None)
            tab_id = msg.result.get("tabId") if isinstance(msg.result, dict) else None
            if self.devtools is not None and pending.method in _SETTLED_ACTIONS and tab_id in peer.targets:
                spawn(self._deliver_settled(self.devtools, pending.client, Frame(out), tab_id))
            else:
                pending.client.deliver(Frame(out))
        elif msg.method == Method.LANE_GRANT.value:
            self.lanes.grant(peer.info.id, msg.params)
        elif msg.method == Method.TAB_UPDATED.value:
            tab, changes = msg.params.get("tab"), msg.params.get("changes")  # passed on as they are: clients validate
            if not isinstance(tab, dict) or not _is_int(tab.get("id")) or not isinstance(changes, dict | None):
                return
            taken = peer.set_tab(tab, changes)
            if taken is False:
                log.warning("malformed tool changes from browser %s: ignored", peer.info.id)
                return
            if self._bind_devtools(peer, tab["id"]):  # the pipe's tools join (or leave): the whole tab goes out
                self._broadcast(Method.TAB_UPDATED, {"browserId": peer.info.id, "tab": peer.whole(tab["id"])})
                return
            if self.devtools is not None:
                tab = peer.fields(tab["id"])
            pushed = {"browserId": peer.info.id, "tab": tab}
            self._broadcast(Method.TAB_UPDATED, pushed if taken is None else {**pushed, "changes": taken})
        elif msg.method == Method.SKILLS_UPDATED.value:
            try:
                peer.info.skills = [InstalledSkill.model_validate(s) for s in msg.params.get("skills") or []]
            except ValidationError:
                return
            skills = [s.model_dump(by_alias=True) for s in peer.info.skills]
            self._broadcast(Method.SKILLS_UPDATED, {"browserId": peer.info.id, "skills": skills})
        elif msg.method == Method.BROWSER_UPDATED.value:
            if isinstance(msg.params.get("userScripts"), bool):
                peer.info.user_scripts = msg.params["userScripts"]
                update: dict[str, Any] = {"browserId": peer.info.id, "userScripts": peer.info.user_scripts}
                self._broadcast(Method.BROWSER_UPDATED, update)
        elif msg.method == Method.PANEL_EVENT.value:
            event = parse_panel_event(msg.params.get("event"))  # only what a side panel sends, typed and bounded
            if event is not None:
                self._broadcast(Method.PANEL_EVENT, {"browserId": peer.info.id, "event": event.model_dump()})
        elif msg.method == Method.TAB_REMOVED.value:
            tab_id = msg.params.get("tabId")
            if self.devtools is not None and _is_int(tab_id) and tab_id in peer.targets:
                self.devtools.bind(tab_id, None)
            if peer.drop_tab(tab_id):
                self._broadcast(Method.TAB_REMOVED, {"browserId": peer.info.id, "tabId": tab_id})
                self._unbind_where(lambda s: s.browser_id == peer.info.id and s.tab_id == tab_id)
        elif msg.method == Method.SESSION_CLOSE.value:  # the user closed it in a side panel
            self._close_session(msg.params.get("sessionId"))
        elif msg.method == Method.BRIDGE_EVENT.value:
            bridge = self._bridges.get(msg.params.get("bridgeId"))  # type: ignore[arg-type]
            if bridge is not None and bridge[1] == peer.info.id and isinstance(msg.params.get("message"), dict):
                owner, _, tab_id = bridge
                params = {"browserId": peer.info.id, "tabId": tab_id, **msg.params}
                owner.deliver(Frame({"method": Method.BRIDGE_EVENT.value, "params": params}))

    @staticmethod
    async def _deliver_settled(devtools: DevToolsRoute, client: RelayClient, frame: Frame, tab_id: int) -> None:
        """A tab action's reply, once the tools its page registered meanwhile are in the mirror (the pipe and the
        extension's socket are read side by side: either may be ahead)."""
        await devtools.settled(tab_id)
        client.deliver(frame)

    def _fail_pending(self, browser_id: str, why: str) -> None:
        for rid, pending in list(self._pending.items()):
            if pending.browser_id == browser_id:
                del self._pending[rid]
                self._cancellers.pop((pending.client, pending.client_id), None)
                pending.client.deliver(_error_frame(pending.client_id, ErrorCode.NOT_CONNECTED, why))

    # ----- clients -----

    def attach(self, client: RelayClient) -> None:
        """A client joined: it gets ``hello`` with every browser's state; browsers learn the client count."""
        self._clients.add(client)
        self._last_client = time.monotonic()
        self._tell_browsers_clients()
        hello = {
            "protocolVersion": PROTOCOL_VERSION,
            "relayVersion": __version__,
            "browsers": self.browsers,
            "sessions": self.sessions,
            "grants": self.grant_asks.state(),
        }
        client.deliver(Frame({"method": Method.HELLO.value, "params": hello}))

    def detach(self, client: RelayClient) -> None:
        self._clients.discard(client)
        self._cut_off.discard(client)
        self._last_client = time.monotonic()
        self._tell_browsers_clients()
        self._stop_work_of(client)
        owned = [sid for sid, session in self._sessions.items() if session.owner is client]
        self._last_left_with_session = bool(owned)
        for sid in owned:
            self._close_tabs_of(self._sessions.pop(sid))
        if owned:
            self._sessions_changed()

    def _stop_work_of(self, client: RelayClient, answer: str | None = None) -> None:
        """Stop what ``client`` has under way: its calls (the page need not finish what nobody may wait for), its
        grant asks, its chat bridges (the page side takes its bar away). Each request of its still waiting is
        refused with ``answer``, if the client is there to read it."""
        waiting = [rid for rid, pending in self._pending.items() if pending.client is client]
        answered = {self._pending.pop(rid).client_id for rid in waiting}
        cancels = [key for key in self._cancellers if key[0] is client]
        answered |= {client_id for _, client_id in cancels}
        if answer is not None:
            for client_id in answered:
                client.deliver(_error_frame(client_id, ErrorCode.PERMISSION_DENIED, answer))
        for key in cancels:
            self._cancellers.pop(key)()
        self.grant_asks.withdraw(client)
        for bridge_id, (owner, browser_id, tab_id) in list(self._bridges.items()):
            if owner is client:
                del self._bridges[bridge_id]
                if (peer := self._browsers.get(browser_id)) is not None:
                    close = {"tabId": tab_id, "bridgeId": bridge_id, "message": {"type": "close"}}
                    send_soon(peer.connection, notification(Method.BRIDGE_SEND, close))

    async def _serve_client(self, connection: ServerConnection) -> None:
        client = _SocketClient(connection)
        self.attach(client)
        try:
            async for raw in connection:
                self._on_client_message(client, raw)
        except ConnectionClosed:
            pass
        finally:
            self.detach(client)

    def _on_client_message(self, client: _SocketClient, raw: str | bytes) -> None:
        try:
            msg = parse_message(raw)
        except ValueError as exc:
            client.deliver(_error_frame(None, ErrorCode.BAD_REQUEST, str(exc)))
            return
        if msg.is_notification:
            self.notify(client, msg.method or "", msg.params)
        elif msg.is_request:
            assert msg.id is not None and msg.method is not None
            self.request(client, msg.id, msg.method, msg.params)
        else:
            client.deliver(_error_frame(msg.id, ErrorCode.BAD_REQUEST, "clients may only send requests"))

    def notify(self, client: RelayClient, method: str, params: dict[str, Any]) -> None:
        """A client's notification: ``events.push`` (for a browser's side panels, and for the other clients when
        it comes from an MCP session) and ``request.cancel`` (the client gave up on a request)."""
        if method == Method.EVENTS_PUSH.value:
            if client in self._cut_off:
                return  # a session the user closed: its events go nowhere
            peer = self._browsers.get(params.get("browserId"))  # type: ignore[arg-type]
            if peer is not None:
                send_soon(peer.connection, notification(Method.EVENTS_PUSH, {"events": params.get("events")}))
                session = self._session_of(client)
                if session is not None and isinstance(params.get("events"), list):
                    update = {"sessionId": session.info.id, "browserId": peer.info.id, "events": params["events"]}
                    self._broadcast(Method.SESSION_EVENTS, update, but=client)
        elif method == Method.REQUEST_CANCEL.value:
            cancel = self._cancellers.pop((client, params.get("id")), None)  # type: ignore[arg-type]
            if cancel is not None:
                cancel()
        else:
            client.deliver(_error_frame(None, ErrorCode.BAD_REQUEST, "clients may only send requests"))

    def request(self, client: RelayClient, client_id: int, method: str, params: dict[str, Any]) -> None:
        """A client's request; its reply is delivered to ``client`` when it comes."""
        if method == Method.RELAY_STATUS.value:
            client.deliver(Frame({"id": client_id, "result": self.status()}))
            return
        if client in self._cut_off:
            client.deliver(_error_frame(client_id, ErrorCode.PERMISSION_DENIED, CLOSED_BY_USER))
            return
        if method in _GRANT_METHODS:
            self._grant_request(client, client_id, method, params, params.get("browserId"), client)
            return
        if method in _SESSION_METHODS:
            try:
                result = _SESSION_METHODS[method](self, client, params)
            except _Refused as exc:
                client.deliver(_error_frame(client_id, exc.code, exc.message))
                return
            client.deliver(Frame({"id": client_id, "result": result}))
            return
        if method not in FORWARDED_METHODS:
            client.deliver(_error_frame(client_id, ErrorCode.UNKNOWN_METHOD, f"unknown method {method!r}"))
            return
        browser_id = params.get("browserId")
        peer = self._browsers.get(browser_id) if isinstance(browser_id, str) else None
        if peer is None:
            client.deliver(_error_frame(client_id, ErrorCode.NOT_CONNECTED, f"no browser {browser_id!r} connected"))
            return
        if (session := self._session_of(client)) is not None:
            self._note_activity(session, method)
        if method == Method.BRIDGE_OPEN.value:
            bridge_id, owner = params.get("bridgeId"), self._bridges.get(params.get("bridgeId"))  # type: ignore[arg-type]
            if not isinstance(bridge_id, str) or not 0 < len(bridge_id) <= 64 or (owner and owner[0] is not client):
                client.deliver(_error_frame(client_id, ErrorCode.BAD_REQUEST, "bridge.open needs a new bridgeId"))
                return
            self._bridges[bridge_id] = (client, peer.info.id, params.get("tabId"))
        if method == Method.TOOL_CALL.value and (
            self._call_on_devtools(client, client_id, peer, params)
            or self._call_on_lane(client, client_id, peer, params)
        ):
            return
        rid = next(self._ids)
        opener = session if method == Method.TAB_OPEN.value else None
        self._pending[rid] = _Pending(client, client_id, peer.info.id, opener, method)
        params = {k: v for k, v in params.items() if k != "browserId"}
        if method == Method.TOOL_CALL.value:
            params["callId"] = rid
            connection = peer.connection
            self._cancellers[(client, client_id)] = lambda: send_soon(
                connection, notification(Method.TOOL_CANCEL, {"callId": rid})
            )
        send_soon(peer.connection, json.dumps({"id": rid, "method": method, "params": params}))

    def _call_on_devtools(
        self, client: RelayClient, client_id: int, peer: _BrowserPeer, params: dict[str, Any]
    ) -> bool:
        """Run a page tool through the DevTools pipe, if the browser is reached that way and the tab is one it knows;
        ``False`` leaves it to the lanes and the worker (skill tools run there)."""
        tab_id = params.get("tabId")
        if self.devtools is None or not _is_int(tab_id) or tab_id not in peer.targets:
            return False
        if peer.skill_tool(tab_id, params.get("name"), params.get("frameId")):
            return False
        settled = False

        def settle(result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
            nonlocal settled
            settled = True
            self._cancellers.pop((client, client_id), None)
            client.deliver(Frame({"id": client_id, "error": error} if error else {"id": client_id, "result": result}))

        cancel = self.devtools.call(tab_id, params, settle)
        if cancel is None:
            return False
        if not settled:
            self._cancellers[(client, client_id)] = cancel
        return True

    def _bind_devtools(self, peer: _BrowserPeer, tab_id: int) -> bool:
        """Tell the pipe which target a tab shows, when the extension says something new of it; its tools then
        join the tab's (those of the target it showed before leave). Whether anything changed."""
        if self.devtools is None:
            return False
        target = peer.tabs.get(tab_id, {}).get("targetId")
        target = target if isinstance(target, str) and target else None
        if peer.targets.get(tab_id) == target:
            return False
        if target is None:
            peer.targets.pop(tab_id, None)
        else:
            peer.targets[tab_id] = target
        tools, omitted = self.devtools.bind(tab_id, target)
        peer.set_devtools(tab_id, [], tools, whole=True)
        peer.devtools_omitted[tab_id] = omitted
        return True

    def devtools_changed(
        self, tab_id: int, removed: list[ToolKey], upserted: list[dict[str, Any]], omitted: int
    ) -> None:
        """What changed in a tab's native tools, as the DevTools pipe reports it: into the mirror, and to clients."""
        peer = next((p for p in self._browsers.values() if tab_id in p.targets), None)
        if peer is None:
            return
        removed = list(removed)
        peer.set_devtools(tab_id, removed, upserted, whole=False)  # (adds what it replaced of the extension's)
        peer.devtools_omitted[tab_id] = omitted
        changes = {"removed": [list(key) for key in removed], "upserted": upserted}
        self._broadcast(Method.TAB_UPDATED, {"browserId": peer.info.id, "tab": peer.fields(tab_id), "changes": changes})

    async def tool_order(self, tab_id: int) -> list[dict[str, Any]]:
        """The order in which each frame of tab ``tab_id`` registered its page tools, as the extension saw them
        (``[{frameId, url, names}]``, the browser's word, unchecked; empty when no browser answers): for the DevTools
        pipe, whose browser reports a document's tools sorted by name when it reports them all at once."""
        peer = next((p for p in self._browsers.values() if tab_id in p.targets), None)
        if peer is None:
            return []
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        rid = next(self._ids)
        self._pending[rid] = _Pending(_Answer(answer), 0, peer.info.id, method=Method.TAB_TOOL_ORDER.value)
        request = {"id": rid, "method": Method.TAB_TOOL_ORDER.value, "params": {"tabId": tab_id}}
        send_soon(peer.connection, json.dumps(request))
        try:
            result = (await answer).get("result")
        finally:
            self._pending.pop(rid, None)
        frames = result.get("frames") if isinstance(result, dict) else None
        return frames if isinstance(frames, list) else []

    def _call_on_lane(self, client: RelayClient, client_id: int, peer: _BrowserPeer, params: dict[str, Any]) -> bool:
        """Run a page tool over its frame's lane, if the frame has one; ``False`` leaves it to the worker."""
        tab_id, name, wanted = params.get("tabId"), params.get("name"), params.get("frameId")
        frames = peer.page_tools.get(tab_id, {}).get(name) if isinstance(tab_id, int) else None  # type: ignore[arg-type]
        if not frames or (wanted is not None and wanted not in frames):
            return False
        frame_id = frames[0] if wanted is None else wanted
        lane = self.lanes.find(peer.info.id, tab_id, frame_id)  # type: ignore[arg-type]
        document = params.get("documentId")
        if lane is None or (document is not None and lane.document_id not in (None, document)):
            return False  # another document's lane: the worker knows which document the frame shows now

        def settle(result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
            self._cancellers.pop((client, client_id), None)
            client.deliver(Frame({"id": client_id, "error": error} if error else {"id": client_id, "result": result}))

        timeout_ms, max_chars = params.get("timeoutMs", 30_000), params.get("maxResultChars", 4_000_000)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (timeout_ms, max_chars)):
            return False  # the worker answers such a request as it always has
        call_id = self.lanes.next_call_id()
        try:
            lane.call(call_id, name, params.get("args") or {}, timeout_ms, max_chars, settle)  # type: ignore[arg-type]
        except LaneFailure:
            return False
        self._cancellers[(client, client_id)] = lambda: lane.cancel(call_id)
        return True

    # ----- per-site grants -----

    def _grant_request(
        self, requester: object, request_id: Any, method: Any, params: dict[str, Any], browser_id: Any, to: RelayClient
    ) -> None:
        """A ``grants.*`` request from a client or a browser (``browser_id``: the browser it concerns)."""
        asks, from_browser = self.grant_asks, isinstance(requester, _BrowserPeer)
        by = "sidepanel" if from_browser else str(params.get("by") or "panel")[:40]

        def answer(result: dict[str, Any] | None, error: tuple[ErrorCode, str] | None) -> None:
            self._cancellers.pop((to, request_id), None)
            to.deliver(_error_frame(request_id, *error) if error else Frame({"id": request_id, "result": result}))

        if method == Method.GRANTS_CHECK.value:
            if not from_browser:  # a client may give up on it (request.cancel)
                self._cancellers[(to, request_id)] = lambda: asks.withdraw(requester, request_id)
            browser = browser_id if isinstance(browser_id, str) else None
            asks.check(
                params, browser_id=browser, url_of_tab=self._url_of_tab, requester=requester, request_id=request_id,
                reply=answer,
            )  # fmt: skip
            return
        try:
            if method == Method.GRANTS_LIST.value:
                answer(asks.state(), None)
            elif method == Method.GRANTS_ANSWER.value:
                answer(asks.answer(params, by=by), None)
            else:
                answer(asks.revoke(params, by=by), None)
        except AskRefused as exc:
            answer(None, (exc.code, exc.message))

    def _url_of_tab(self, browser_id: str | None, tab_id: Any) -> str | None:
        peer = self._browsers.get(browser_id) if browser_id is not None else None
        tab = peer.tabs.get(tab_id) if peer is not None and _is_int(tab_id) else None
        return str(tab.get("url", "")) if tab is not None else None

    def _grant_event(self, browser_id: str | None, event: dict[str, Any]) -> None:
        """An ask, answer, refusal or change: to every client, and to the browser it concerns (all of them for a
        change), whose side panels show it."""
        self._broadcast(Method.GRANT_EVENT, {"browserId": browser_id, "event": event})
        text = notification(Method.GRANT_EVENT, {"event": event})
        for peer in self._browsers.values():
            if browser_id is None or peer.info.id == browser_id:
                send_soon(peer.connection, text)

    def _grants_updated(self, state: dict[str, Any]) -> None:
        self._broadcast(Method.GRANTS_UPDATED, state)
        text = notification(Method.GRANTS_UPDATED, state)
        for peer in self._browsers.values():
            send_soon(peer.connection, text)

    # ----- MCP sessions -----

    def _session_of(self, client: RelayClient) -> _Session | None:
        return next((s for s in self._sessions.values() if s.owner is client), None)

    def _register(self, client: RelayClient, params: dict[str, Any]) -> dict[str, Any]:
        """``session.register``: the client (an MCP server process) is a session from now until it leaves; again,
        it renames its session (the MCP client's name is known only once it introduced itself)."""
        name, pid = params.get("client"), params.get("pid")
        if not isinstance(name, str) or not isinstance(pid, int) or isinstance(pid, bool):
            raise _Refused(ErrorCode.BAD_REQUEST, "session.register needs client (a string) and pid (an integer)")
        session, now = self._session_of(client), time.time()
        if session is None:  # one session per client connection; registering again renames it
            info = SessionInfo(id=uuid.uuid4().hex[:12], started=now)
            session = self._sessions[info.id] = _Session(client, info)
        session.info.client, session.info.pid, session.info.last_activity = name[:MAX_CLIENT_NAME], pid, now
        self._sessions_changed()
        return {"session": session.info.model_dump(by_alias=True)}

    def _bind(self, client: RelayClient, params: dict[str, Any]) -> dict[str, Any]:
        """``session.bind``: the client's session takes a tab (``tabId`` null lets it go). A tab another session
        holds is refused with ``TAB_IN_USE`` unless ``force``, which unbinds that session."""
        session = self._session_of(client)
        if session is None:
            raise _Refused(ErrorCode.BAD_REQUEST, "register a session first (session.register)")
        browser_id, tab_id, force = params.get("browserId"), params.get("tabId"), params.get("force") is True
        if tab_id is None:
            session.info.browser_id = session.info.tab_id = None
            self._sessions_changed()
            return {"session": session.info.model_dump(by_alias=True)}
        peer = self._browsers.get(browser_id) if isinstance(browser_id, str) else None
        if peer is None:
            raise _Refused(ErrorCode.NOT_CONNECTED, f"no browser {browser_id!r} connected")
        if not _is_int(tab_id) or tab_id not in peer.tabs:
            raise _Refused(ErrorCode.TAB_NOT_FOUND, f"no tab {tab_id!r} in browser {browser_id}")
        for other in self._sessions.values():
            if other is not session and other.info.browser_id == browser_id and other.info.tab_id == tab_id:
                if not force:
                    raise _Refused(
                        ErrorCode.TAB_IN_USE,
                        f"tab {tab_id} is held by session {other.info.id} ({other.info.client or 'a client'}, "
                        f"pid {other.info.pid})",
                    )
                other.info.browser_id = other.info.tab_id = None
        session.info.browser_id, session.info.tab_id = browser_id, tab_id
        session.info.last_activity = time.time()
        self._sessions_changed()
        return {"session": session.info.model_dump(by_alias=True)}

    def _close(self, client: RelayClient, params: dict[str, Any]) -> dict[str, Any]:
        """``session.close`` from a client (a notebook's panel): the session ends; its owner sees it gone."""
        if not self._close_session(params.get("sessionId")):
            raise _Refused(ErrorCode.BAD_REQUEST, f"no session {params.get('sessionId')!r}")
        return {"closed": params.get("sessionId")}

    def _close_session(self, session_id: Any) -> bool:
        """The user closed a session (a side panel's or a notebook panel's Close): its client is cut off at once."""
        if not isinstance(session_id, str) or (session := self._sessions.pop(session_id, None)) is None:
            return False
        self._cut_off.add(session.owner)
        self._stop_work_of(session.owner, CLOSED_BY_USER)
        self._close_tabs_of(session)
        self._sessions_changed()
        return True

    def _close_tabs_of(self, session: _Session) -> None:
        """A session ended: the tabs it opened close with it (those still open that no other session holds), so
        a client started again and again leaves no tabs behind."""
        held = {(s.info.browser_id, s.info.tab_id) for s in self._sessions.values()}
        for browser_id, tab_id in session.opened:
            peer = self._browsers.get(browser_id)
            if peer is not None and tab_id in peer.tabs and (browser_id, tab_id) not in held:
                close = {"id": next(self._ids), "method": Method.TAB_CLOSE.value, "params": {"tabId": tab_id}}
                send_soon(peer.connection, json.dumps(close))  # its reply answers nobody

    def _unbind_where(self, held: Callable[[SessionInfo], bool]) -> None:
        """Sessions whose tab went away (closed, or its browser left) are bound to nothing."""
        changed = False
        for session in self._sessions.values():
            if session.info.tab_id is not None and held(session.info):
                session.info.browser_id = session.info.tab_id = None
                changed = True
        if changed:
            self._sessions_changed()

    def _note_activity(self, session: _Session, method: str) -> None:
        session.info.last_activity = time.time()
        session.info.calls += method == Method.TOOL_CALL.value
        if self._activity_push is None:
            self._activity_push = asyncio.get_running_loop().call_later(ACTIVITY_PUSH, self._sessions_changed)

    def _sessions_changed(self) -> None:
        """Tell every client and browser (side panels show sessions) what the sessions are now."""
        if self._activity_push is not None:
            self._activity_push.cancel()
            self._activity_push = None
        params = {"sessions": self.sessions}
        self._broadcast(Method.SESSIONS_UPDATED, params)
        text = notification(Method.SESSIONS_UPDATED, params)
        for peer in self._browsers.values():
            send_soon(peer.connection, text)

    # ----- sending -----

    def _tell_browsers_clients(self) -> None:
        """Side panels show whether a notebook is connected; the standalone chat needs to know."""
        text = notification(Method.RELAY_CLIENTS, {"count": len(self._clients)})
        for peer in self._browsers.values():
            send_soon(peer.connection, text)

    def _broadcast(self, method: Method, params: dict[str, Any], *, but: RelayClient | None = None) -> None:
        frame = Frame({"method": method.value, "params": params})
        for client in list(self._clients):
            if client is not but:
                client.deliver(frame)


class _Refused(Exception):
    """A session request the relay refuses, with the error code to answer."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


_SESSION_METHODS: dict[str, Callable[[Relay, RelayClient, dict[str, Any]], dict[str, Any]]] = {
    Method.SESSION_REGISTER.value: Relay._register,
    Method.SESSION_BIND.value: Relay._bind,
    Method.SESSION_CLOSE.value: Relay._close,
}


def _note_opened(session: _Session, browser_id: str, result: Any, error: RemoteError | None) -> None:
    """The tab a session's ``tab.open`` made: from the reply, or from the error of a page that did not load (the
    tab stays, on its error page)."""
    source = error.data if error is not None else result
    tab_id = source.get("tabId") if isinstance(source, dict) else None
    if isinstance(tab_id, int) and not isinstance(tab_id, bool):
        session.opened.add((browser_id, tab_id))


_SETTLED_ACTIONS = frozenset(
    m.value for m in (Method.TAB_OPEN, Method.TAB_NAVIGATE, Method.TAB_RELOAD, Method.TAB_BACK, Method.TAB_SYNC)
)
"""Tab actions whose reply says the tab's tools are in the mirror: with the DevTools pipe, the pipe's too."""

_GRANT_METHODS = frozenset(
    m.value for m in (Method.GRANTS_CHECK, Method.GRANTS_LIST, Method.GRANTS_ANSWER, Method.GRANTS_REVOKE)
)
"""Grant requests, answered by the relay itself, from clients and from browsers (their side panels)."""


class _BrowserReplies:
    """Where the relay's replies to a browser's own requests go: its socket."""

    def __init__(self, peer: _BrowserPeer) -> None:
        self.peer = peer

    def deliver(self, frame: Frame) -> None:
        send_soon(self.peer.connection, frame.text)


def _select_subprotocol(connection: ServerConnection, subprotocols: Sequence[Subprotocol]) -> Subprotocol | None:
    """A lane offers its key's proof as its subprotocol (checked in ``_admit``); nobody else offers one."""
    offered = Lanes.key_of(subprotocols)
    return Subprotocol(offered) if offered else None


def _error_frame(client_id: int | None, code: ErrorCode, message: str) -> Frame:
    return Frame({"id": client_id, "error": error_body(code, message)})
