"""A client's link to the relay: requests matched to replies, notifications to listeners.

Two transports share that logic: :class:`Connection`, a WebSocket to a relay in another process (the
daemon), with reconnection and backoff when it goes away; and :class:`LocalConnection`, for the relay a
launched browser runs in this very process, where messages are handed over as dicts (no socket, no JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from ..core.errors import Hint, NotConnectedError, PortInUseError, ToolTimeoutError, error_from_code
from . import auth
from ._sockets import spawn
from .listeners import describe_holder
from .protocol import Method, notification, parse_message, request
from .relay import MAX_MESSAGE_BYTES, PRE_AUTH_MAX_BYTES

if TYPE_CHECKING:
    from .relay import Frame, Relay

__all__ = ["Connection", "LocalConnection", "LOST", "RELAY_WAIT"]

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]

LOST = "connection.lost"
"""What listeners get when the socket to the relay drops; a fresh ``hello`` follows the reconnect."""

HANDSHAKE_TIMEOUT = 2.0
"""Seconds the relay has to answer the WebSocket handshake (a silent listener must not stall a cell)."""
AUTH_TIMEOUT = 2.0
"""Seconds the relay has to prove the secret once the socket is open."""
RELAY_WAIT = 2.0
"""Seconds a request waits for a lost relay connection to come back before it fails."""
START_WAIT = 20.0
"""Seconds a request waits, instead, for a relay that ``on_refused`` is starting (it imports the library first)."""


class Starting(Protocol):
    """A relay process being started: ``poll()`` is ``None`` while it runs (``subprocess.Popen``)."""

    def poll(self) -> int | None: ...


class _Link:
    """What both transports share: waiting requests, listeners, and dispatch of what the relay sends."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._listeners: list[Listener] = []
        self._ready = asyncio.Event()

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(method, params)`` for each notification; returns what stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            log.warning("bad message from relay: %r", type(message))
            return
        method = message.get("method")
        if method is None:
            rid = message.get("id")
            future = self._waiting.pop(rid, None) if isinstance(rid, int) else None
            if future is None or future.done():
                return
            error = message.get("error")
            if isinstance(error, dict):
                code, text = str(error.get("code", "INTERNAL")), str(error.get("message", ""))
                future.set_exception(error_from_code(code, text, error.get("data")))
            else:
                future.set_result(message.get("result"))
            return
        params = message.get("params")
        if method == Method.HELLO.value:
            self._ready.set()
        self._emit(str(method), params if isinstance(params, dict) else {})

    def _emit(self, method: str, params: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("listener failed on %s", method)

    def _fail_all(self, exc: Exception) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(exc)
        self._waiting.clear()

    async def _await_reply(self, rid: int, future: asyncio.Future[Any], method: str, timeout: float) -> Any:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(timeout, _expire, future, f"{method} got no answer within {timeout:g} s")
        try:
            return await future
        except asyncio.CancelledError:  # the caller gave up: a tool call is cancelled in the page, an ask withdrawn
            if method in (Method.TOOL_CALL.value, Method.GRANTS_CHECK.value):
                spawn(self.notify(Method.REQUEST_CANCEL.value, {"id": rid}))
            raise
        finally:
            timer.cancel()
            self._waiting.pop(rid, None)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        raise NotImplementedError


def _expire(future: asyncio.Future[Any], message: str) -> None:
    if not future.done():
        future.set_exception(ToolTimeoutError(message))


class LocalConnection(_Link):
    """A client of a relay running on this loop in this process (``launch()``): no socket in between."""

    def __init__(self, relay: Relay) -> None:
        super().__init__()
        self._relay = relay
        self._attached = False

    def deliver(self, frame: Frame) -> None:
        self._dispatch(frame.message)

    @property
    def ready(self) -> bool:
        return self._attached

    async def wait_ready(self, limit: float = 0.0) -> None:
        if not self._attached:
            raise NotConnectedError("the connection was closed")

    async def open(self, timeout: float = 10.0) -> None:
        self._relay.attach(self)
        self._attached = True

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send one request and wait for its reply; remote errors raise their mapped exception."""
        if not self._attached:
            raise NotConnectedError("the connection was closed")
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        self._relay.request(self, rid, method, params)
        return await self._await_reply(rid, future, method, timeout)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self._attached:
            self._relay.notify(self, method, params)

    async def close(self) -> None:
        if self._attached:
            self._attached = False
            self._relay.detach(self)
        self._fail_all(NotConnectedError("the connection was closed"))


class Connection(_Link):
    """One client connection to the relay on 127.0.0.1:``port``, authenticated with the pairing secret.

    Runs on the library's loop. Before sending anything else it makes the relay prove it knows the secret
    (:mod:`webmcp_nb.link.auth`); a listener that cannot is not our relay, and gets nothing but a nonce. Listeners
    get every notification as ``(method, params)``, and ``hello`` again after each reconnect.
    ``on_refused`` is called when nothing listens on the port any more (``connect()`` restarts the daemon); it
    returns the relay process it started, if any, and requests wait up to :data:`START_WAIT` for that one.
    """

    def __init__(
        self,
        port: int,
        secret: str | Callable[[], str],
        *,
        on_refused: Callable[[], Starting | None] | None = None,
    ) -> None:
        super().__init__()
        self.port = port
        self.url = f"ws://127.0.0.1:{port}/client"
        self._secret: Callable[[], str] = secret if callable(secret) else (lambda: secret)
        self._on_refused = on_refused
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closed = False
        self._wake = asyncio.Event()
        self.relay_info: dict[str, Any] = {}
        """What the relay said of itself when it proved the secret: ``relayVersion``, ``pid``."""
        self.last_error: NotConnectedError | None = None
        """Why the last attempt to (re)connect failed."""
        self._nothing_listens = False
        """Whether the last dial was refused: only then is the relay gone (a busy relay answers 503)."""
        self._starting: tuple[Starting, float] | None = None
        """The relay ``on_refused`` started and the monotonic time it must answer by."""
        self._dialing = False
        """Whether a dial is under way (it ends within the handshake and authentication limits)."""

    @property
    def refused(self) -> bool:
        """Whether the last dial was refused: nothing listens on the port (a busy relay answers, with 503)."""
        return self._nothing_listens

    @property
    def ready(self) -> bool:
        """Whether the link to the relay is up (authenticated, ``hello`` received)."""
        return self._ws is not None and self._ready.is_set()

    async def open(self, timeout: float = 10.0) -> None:
        """Connect once; raises ``NotConnectedError`` (nothing listens), or ``PortInUseError`` (something that
        is not this account's relay listens), within a few seconds either way."""
        await self._connect(timeout)
        self._reader = asyncio.create_task(self._read_forever())
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def _connect(self, timeout: float) -> None:
        self._dialing = True
        try:
            self._ws = await self._dial(timeout)
            self.last_error, self._starting = None, None
        except NotConnectedError as exc:
            self.last_error = exc
            raise
        finally:
            self._dialing = False

    async def _dial(self, timeout: float) -> ClientConnection:
        self._nothing_listens = False
        try:
            ws = await connect(
                self.url,
                max_size=PRE_AUTH_MAX_BYTES,  # as the relay does: nothing big from a listener yet to prove itself
                compression=None,
                open_timeout=min(timeout, HANDSHAKE_TIMEOUT),
                ping_interval=20,
                ping_timeout=40,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status == 503:
                raise NotConnectedError(f"the relay on port {self.port} is busy authenticating others") from None
            raise _port_in_use(self.port, f"it answered HTTP {status} instead of the relay's handshake") from None
        except ConnectionRefusedError:
            self._nothing_listens = True
            raise NotConnectedError(f"no relay is running on 127.0.0.1:{self.port}") from None
        except (InvalidHandshake, asyncio.TimeoutError, EOFError) as exc:
            raise _port_in_use(self.port, f"it did not complete a WebSocket handshake ({_reason(exc)})") from None
        except OSError as exc:
            raise NotConnectedError(f"cannot reach 127.0.0.1:{self.port}: {exc}") from None
        try:
            self.relay_info = await asyncio.wait_for(self._authenticate(ws), AUTH_TIMEOUT)
        except (auth.AuthError, asyncio.TimeoutError, ConnectionClosed, ValueError) as exc:
            await _hang_up(ws)
            raise _port_in_use(
                self.port,
                "it did not prove this account's pairing secret "
                f"({_reason(exc)}): another user's relay, a relay with another WEBMCP_NB_HOME, or an impostor",
            ) from None
        except BaseException:  # the secret could not be read, or we were cancelled: leave no socket behind
            await _hang_up(ws)
            raise
        return ws

    async def _authenticate(self, ws: ClientConnection) -> dict[str, Any]:
        """The client's side of :mod:`webmcp_nb.link.auth`: nothing but a nonce leaves before the relay's proof, and
        nothing over :data:`PRE_AUTH_MAX_BYTES` is taken in before it."""
        nonce = auth.new_nonce()
        await ws.send(json.dumps(auth.hello("client", nonce)))
        challenge = parse_message(await ws.recv())
        if challenge.method != Method.AUTH_CHALLENGE.value:
            raise auth.AuthError(f"expected auth.challenge, got {challenge.method or 'a reply'}")
        relay_nonce, secret = auth.read_nonce(challenge.params.get("nonce")), self._secret()
        if not auth.check(auth.relay_proof(secret, "client", nonce, relay_nonce), challenge.params.get("proof")):
            raise auth.AuthError("a wrong proof")
        # The relay has proved itself, and sends nothing (auth.ok, then a hello of any size) before our proof.
        ws.protocol.max_message_size = MAX_MESSAGE_BYTES
        await ws.send(json.dumps(auth.proof(auth.peer_proof(secret, "client", nonce, relay_nonce))))
        admitted = parse_message(await ws.recv())
        if admitted.method != Method.AUTH_OK.value:
            raise auth.AuthError("the relay did not admit this client")
        return admitted.params

    async def _read_forever(self) -> None:
        backoff = 0.2
        while not self._closed:
            assert self._ws is not None
            try:
                async for raw in self._ws:
                    try:
                        message = json.loads(raw)
                    except ValueError as exc:
                        log.warning("bad message from relay: %s", exc)
                        continue
                    self._dispatch(message)
            except ConnectionClosed:
                pass
            self._ready.clear()
            self._fail_all(NotConnectedError("the connection to the relay was lost"))
            self._emit(LOST, {})
            while not self._closed:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), backoff)
                self._wake.clear()
                try:
                    await self._connect(timeout=HANDSHAKE_TIMEOUT)
                    backoff = 0.2
                    break
                except Exception as exc:  # keep trying; an impostor on the port gets only nonces
                    log.info("reconnecting to relay: %s", _reason(exc))
                    if not isinstance(exc, NotConnectedError):  # e.g. the secret file became unreadable
                        self.last_error = NotConnectedError(f"reconnecting failed: {_reason(exc)}")
                    if self._on_refused is not None and self._nothing_listens:
                        self._restart()
                    backoff = 0.2 if self._relay_starting() else min(backoff * 2, 5.0)

    def _restart(self) -> None:
        """Ask for a new relay (``on_refused``); a failure to start one is kept as the reason, not raised."""
        assert self._on_refused is not None
        try:
            process = self._on_refused()
            if process is not None:
                self._starting = (process, time.monotonic() + START_WAIT)
        except Exception as exc:
            log.warning("could not restart the relay: %s", _reason(exc))
            self.last_error = NotConnectedError(f"the relay is gone and restarting it failed: {_reason(exc)}")

    def _relay_starting(self) -> bool:
        """Whether a relay ``on_refused`` started is still running and within its time to answer."""
        if self._starting is None:
            return False
        process, deadline = self._starting
        return process.poll() is None and time.monotonic() < deadline

    async def wait_ready(self, limit: float = RELAY_WAIT) -> None:
        """Return once the link is up, reconnecting now rather than at the end of the backoff; with the relay
        gone, raise ``NotConnectedError`` within ``limit`` seconds, saying why and what to do. A dial under way
        is let finish, and a relay being restarted gets up to :data:`START_WAIT`."""
        deadline = time.monotonic() + limit
        last_dial = deadline + HANDSHAKE_TIMEOUT + AUTH_TIMEOUT  # a dial under way at the deadline ends by then
        self._wake.set()
        while not self.ready:
            now = time.monotonic()
            if now >= deadline and not self._relay_starting() and not (self._dialing and now < last_dial):
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready.wait(), 0.25)
        if not self.ready:
            why = self.last_error.message if self.last_error else "the connection to the relay was lost"
            raise NotConnectedError(
                f"not connected to the relay on 127.0.0.1:{self.port}: {why}.", hint=Hint("reconnect")
            )

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send one request and wait for its reply; remote errors raise their mapped exception.

        With the relay gone this fails within :data:`RELAY_WAIT` seconds, saying why and what to do."""
        await self.wait_ready(min(timeout, RELAY_WAIT))
        assert self._ws is not None
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        try:
            await self._ws.send(request(rid, method, params))
        except ConnectionClosed:
            self._waiting.pop(rid, None)
            raise NotConnectedError("the connection to the relay was lost") from None
        return await self._await_reply(rid, future, method, timeout)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification; dropped when the connection is down (nothing waits for it)."""
        if self._ws is not None and self._ready.is_set():
            with contextlib.suppress(ConnectionClosed):
                await self._ws.send(notification(method, params))

    async def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail_all(NotConnectedError("the connection was closed"))


async def _hang_up(ws: ClientConnection) -> None:
    """Drop the socket to a listener that has not proved the secret, owing it no closing handshake: one that
    never answers it would hold the caller for the library's 10 s close timeout."""
    ws.transport.abort()
    await ws.wait_closed()


def _port_in_use(port: int, why: str) -> PortInUseError:
    """The error for a listener on our port that is not this account's relay, naming who holds the port."""
    return PortInUseError(port, why, holder=describe_holder(port))


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
