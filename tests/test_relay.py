"""The relay on its own: clean errors for bad client traffic, idle exit in daemon mode, MCP sessions; and a
client's reconnection to it (what it says when it cannot, and when it restarts the daemon)."""

import asyncio
import json
from pathlib import Path

import peers
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from webmcp_nb.core.errors import NotConnectedError, PortInUseError
from webmcp_nb.link import auth
from webmcp_nb.link.connection import LOST, RELAY_WAIT, Connection
from webmcp_nb.link.home import read_secret
from webmcp_nb.link.relay import MAX_UNAUTHENTICATED, Relay


async def _client(relay: Relay, browsers: list | None = None):
    """An authenticated client; checks the browsers its hello lists unless ``browsers`` is None."""
    ws = await peers.client(relay.port, relay.secret)
    hello = json.loads(await ws.recv())
    assert hello["method"] == "hello"
    if browsers is not None:
        assert hello["params"]["browsers"] == browsers
    return ws


def test_bad_client_messages_get_clean_errors():
    async def scenario():
        relay = await Relay("a-test-secret-of-some-length").start()
        try:
            ws = await _client(relay, browsers=[])
            replies = []
            for raw in [
                "not json",
                '{"id": 1, "method": "tool.call"}',
                '{"id": 2, "method": "no.such", "params": {}}',
                '{"method": "tab.open", "params": {}}',
                '{"id": 3, "method": "tab.open", "params": {"browserId": "nobody"}}',
            ]:
                await ws.send(raw)
                replies.append(json.loads(await ws.recv()))
            await ws.close()
            return replies
        finally:
            await relay.close()

    replies = asyncio.run(scenario())
    assert [r["error"]["code"] for r in replies] == [
        "BAD_REQUEST",
        "NOT_CONNECTED",
        "UNKNOWN_METHOD",
        "BAD_REQUEST",
        "NOT_CONNECTED",
    ]
    assert [r.get("id") for r in replies] == [None, 1, 2, None, 3]
    assert "nobody" in replies[4]["error"]["message"]


def test_daemon_mode_exits_when_idle_but_not_while_a_client_is_connected():
    async def scenario():
        relay = await Relay("a-test-secret-of-some-length", idle_timeout=0.2).start()
        ws = await _client(relay, browsers=[])
        serving = asyncio.ensure_future(relay.serve_forever())
        await asyncio.sleep(1.0)
        still_up = not serving.done()
        await ws.close()
        await asyncio.wait_for(serving, 15)
        return still_up

    assert asyncio.run(scenario())


def test_only_the_browser_a_request_went_to_may_answer_it():
    async def fake_browser(relay: Relay, browser_id: str):
        return await peers.browser(relay.port, relay.secret, browser_id)

    async def scenario():
        relay = await Relay("a-test-secret-of-some-length").start()
        try:
            a, b = await fake_browser(relay, "A"), await fake_browser(relay, "B")
            client = await _client(relay, browsers=None)
            await client.send(json.dumps({"id": 7, "method": "tab.sync", "params": {"browserId": "A", "tabId": 1}}))
            forwarded = json.loads(await a.recv())
            while "id" not in forwarded:  # notifications (relay.clients) come first
                forwarded = json.loads(await a.recv())
            await b.send(json.dumps({"id": forwarded["id"], "result": "forged by B"}))
            await a.send(json.dumps({"id": forwarded["id"], "result": "from A"}))
            while True:
                message = json.loads(await client.recv())
                if message.get("id") == 7:
                    return message
        finally:
            await relay.close()

    assert asyncio.run(scenario()) == {"id": 7, "result": "from A"}


async def _reply(ws, request_id: int) -> dict:
    """The reply to ``request_id`` (notifications in between are skipped)."""
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == request_id:
            return message


async def _next(ws, method: str) -> dict:
    """The next message of ``method`` (others in between are skipped), within 5 s."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if message.get("method") == method:
            return message


def test_mcp_sessions_hold_one_tab_each_unless_forced_and_end_with_their_client():
    async def scenario():
        relay = await Relay("a-test-secret-of-some-length").start()
        try:
            await peers.browser(relay.port, relay.secret, "B", tabs=[{"id": 1}, {"id": 2}])
            first, second, notebook = [await _client(relay) for _ in range(3)]
            for n, ws in enumerate((first, second), 1):
                register = {"client": f"c{n}", "pid": n}
                await ws.send(json.dumps({"id": 1, "method": "session.register", "params": register}))
                assert (await _reply(ws, 1))["result"]["session"]["client"] == f"c{n}"
            bind = {"browserId": "B", "tabId": 1}
            await first.send(json.dumps({"id": 2, "method": "session.bind", "params": bind}))
            assert (await _reply(first, 2))["result"]["session"]["tabId"] == 1
            await second.send(json.dumps({"id": 2, "method": "session.bind", "params": bind}))
            refused = (await _reply(second, 2))["error"]
            assert refused["code"] == "TAB_IN_USE" and "c1" in refused["message"]
            await second.send(json.dumps({"id": 3, "method": "session.bind", "params": {**bind, "force": True}}))
            assert (await _reply(second, 3))["result"]["session"]["tabId"] == 1
            await notebook.send(json.dumps({"id": 1, "method": "relay.status", "params": {}}))
            sessions = (await _reply(notebook, 1))["result"]["sessions"]
            assert {s["client"]: s["tabId"] for s in sessions} == {"c1": None, "c2": 1}
            await second.close()
            while True:  # the session ends with its client, and everyone is told
                message = json.loads(await notebook.recv())
                if message.get("method") == "sessions.updated" and len(message["params"]["sessions"]) == 1:
                    return message["params"]["sessions"][0]["client"]
        finally:
            await relay.close()

    assert asyncio.run(scenario()) == "c1"


def test_a_daemon_exits_soon_after_its_last_mcp_session_when_no_notebook_is_connected():
    async def scenario():
        relay = await Relay("a-test-secret-of-some-length", idle_timeout=3600, session_idle_timeout=0.2).start()
        serving = asyncio.ensure_future(relay.serve_forever())
        ws = await _client(relay)
        await ws.send(json.dumps({"id": 1, "method": "session.register", "params": {"client": "c", "pid": 1}}))
        await _reply(ws, 1)
        await ws.close()
        await asyncio.wait_for(serving, 15)  # not the hour a notebook's departure would give it

    asyncio.run(scenario())


async def _drop(connection: Connection) -> None:
    """Close the client's socket under it, as a network hiccup would, and wait until it has noticed."""
    lost = asyncio.Event()
    connection.add_listener(lambda method, params: lost.set() if method == LOST else None)
    assert connection._ws is not None
    await connection._ws.close()
    await lost.wait()


def test_a_reconnect_that_cannot_read_the_secret_says_why_and_keeps_trying(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("WEBMCP_NB_HOME", str(tmp_path))
    secret, path, moved = read_secret(), tmp_path / "secret", tmp_path / "secret-elsewhere"

    async def scenario():
        relay = await Relay(secret).start()
        connection = Connection(relay.port, read_secret)
        try:
            await connection.open(timeout=5)
            path.rename(moved)
            path.symlink_to(moved)  # read_secret refuses a symlink
            await _drop(connection)
            with pytest.raises(NotConnectedError) as info:
                await connection.wait_ready()
            path.unlink()
            moved.rename(path)
            await connection.wait_ready(10)  # the reconnect loop did not die with the error
            return str(info.value)
        finally:
            await connection.close()
            await relay.close()

    message = asyncio.run(scenario())
    assert "cannot read the pairing secret safely" in message and "delete the file" in message, message


def test_a_request_waits_for_the_relay_its_client_restarts_but_not_for_one_that_died():
    """The daemon ``connect()`` starts takes seconds to import the library: a call made meanwhile waits for it,
    rather than failing after :data:`RELAY_WAIT`; a daemon that exited is not waited for."""

    class Daemon:  # what on_refused returns: the process it started (``poll()`` is None while it runs)
        def __init__(self) -> None:
            self.exit_code: int | None = None

        def poll(self) -> int | None:
            return self.exit_code

    async def scenario():
        secret = "a-test-secret-of-some-length"
        relay = await Relay(secret).start()
        daemon, relays = Daemon(), [relay]

        def restart() -> Daemon:
            async def come_up() -> None:
                await asyncio.sleep(3 * RELAY_WAIT)
                if daemon.exit_code is None:
                    relays.append(await Relay(secret, port=relay.port).start())

            asyncio.get_running_loop().create_task(come_up())
            return daemon

        connection = Connection(relay.port, secret, on_refused=restart)
        try:
            await connection.open(timeout=5)
            await relay.close()
            await connection.wait_ready()  # the relay restarted three times RELAY_WAIT later
            assert connection.ready and len(relays) == 2
            daemon.exit_code = 1  # the next one dies at once: nothing is waited for
            lost = asyncio.Event()
            connection.add_listener(lambda method, _: lost.set() if method == LOST else None)
            await relays[-1].close()
            await asyncio.wait_for(lost.wait(), 10)  # (the client learns of the close a moment later)
            with pytest.raises(NotConnectedError) as gone:
                await connection.wait_ready()
            return str(gone.value)
        finally:
            await connection.close()
            for each in relays:
                await each.close()

    assert "no relay is running" in asyncio.run(scenario())


async def opened(relay: Relay, attempts: int = 3) -> Connection:
    """A client connection to ``relay``, set up. A client gives a WebSocket handshake 2 s (a port that accepts and
    never answers is another program's, said at once); on a loaded machine a handshake with the relay in this very
    loop has taken longer (PortInUseError), so the setup dials again."""
    for attempt in range(attempts):
        connection = Connection(relay.port, relay.secret)
        try:
            await connection.open(timeout=5)
            return connection
        except PortInUseError:
            await connection.close()
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@pytest.mark.timeout(60)
def test_a_request_gives_up_on_a_port_that_accepts_and_never_answers():
    """Dials that each hang to their handshake limit must not keep a request waiting past its own limit."""

    async def scenario() -> str:
        relay = await Relay("a-test-secret-of-some-length").start()
        connection = await opened(relay)
        silent: asyncio.base_events.Server | None = None
        try:
            port = relay.port
            await relay.close()
            silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)  # accepts, says nothing
            with pytest.raises(NotConnectedError) as gone:
                await connection.wait_ready(1.0)
            return str(gone.value)
        finally:
            await connection.close()
            if silent is not None:
                silent.close()

    assert "not connected to the relay" in asyncio.run(scenario())


def test_a_busy_relay_is_not_restarted_but_a_gone_one_is():
    async def scenario():
        relay = await Relay("a-test-secret-of-some-length").start()
        restarts: list[int] = []
        connection = Connection(relay.port, relay.secret, on_refused=lambda: restarts.append(1))
        try:
            await connection.open(timeout=5)
            # Peers that say nothing hold every authentication slot: the relay answers 503 until they go.
            silent = [await connect(f"ws://127.0.0.1:{relay.port}/client") for _ in range(MAX_UNAUTHENTICATED)]
            await _drop(connection)
            with pytest.raises(NotConnectedError) as busy:
                await connection.wait_ready()
            busy_restarts = len(restarts)
            for ws in silent:
                await ws.close()
            await connection.wait_ready(10)
            await relay.close()
            with pytest.raises(NotConnectedError) as gone:
                await connection.wait_ready()
            return str(busy.value), busy_restarts, str(gone.value), len(restarts)
        finally:
            await connection.close()
            await relay.close()

    busy, busy_restarts, gone, restarts = asyncio.run(scenario())
    assert "busy authenticating others" in busy and busy_restarts == 0, busy
    assert "no relay is running" in gone and restarts >= 1, gone


def test_a_relay_that_cannot_read_its_secret_says_so_to_the_peer():
    def unreadable() -> str:
        raise PermissionError("secret: cannot read the pairing secret safely (a symlink); delete the file")

    async def scenario():
        relay = await Relay(unreadable).start()
        try:
            async with connect(f"ws://127.0.0.1:{relay.port}/client") as ws:
                await ws.send(json.dumps(auth.hello("client", auth.new_nonce())))
                with pytest.raises(ConnectionClosed) as info:
                    await ws.recv()
                return info.value.rcvd
        finally:
            await relay.close()

    closed = asyncio.run(scenario())
    assert closed is not None and closed.code == 1011 and "cannot read its pairing secret" in closed.reason


def test_a_session_the_user_closed_can_do_nothing_more_at_once():
    """The session's server exits once it hears of the close; in between, the relay does nothing it asks."""

    async def scenario():
        relay = await Relay("a-test-secret-of-some-length").start()
        try:
            browser = await peers.browser(relay.port, relay.secret, "B", tabs=[{"id": 1}])
            mcp, notebook = await _client(relay), await _client(relay)
            await mcp.send(json.dumps({"id": 1, "method": "session.register", "params": {"client": "c", "pid": 1}}))
            session = (await _reply(mcp, 1))["result"]["session"]["id"]
            call = {"browserId": "B", "tabId": 1, "name": "send", "arguments": {}}
            await mcp.send(json.dumps({"id": 99, "method": "tool.call", "params": call}))  # under way at the close
            forwarded = await _next(browser, "tool.call")
            await notebook.send(json.dumps({"id": 1, "method": "session.close", "params": {"sessionId": session}}))
            assert (await _reply(notebook, 1))["result"] == {"closed": session}
            stopped = (await asyncio.wait_for(_reply(mcp, 99), 5))["error"]  # not its result, if the page finishes
            assert stopped["code"] == "PERMISSION_DENIED" and "user closed this MCP session" in stopped["message"]
            cancel = await _next(browser, "tool.cancel")
            assert cancel["params"] == {"callId": forwarded["params"]["callId"]}, cancel
            await browser.send(json.dumps({"id": forwarded["id"], "result": {"sent": True}}))
            events = {"browserId": "B", "events": [{"type": "tool.called", "data": {}}]}
            await mcp.send(json.dumps({"method": "events.push", "params": events}))
            asks = [("tool.call", call), ("tab.open", {"browserId": "B", "url": "https://example.com"})]
            asks.append(("session.register", {"client": "c", "pid": 1}))
            for n, (method, params) in enumerate(asks, 2):
                await mcp.send(json.dumps({"id": n, "method": method, "params": params}))
                refused = (await asyncio.wait_for(_reply(mcp, n), 5))["error"]  # (a forwarded ask: no answer)
                assert refused["code"] == "PERMISSION_DENIED" and "user closed this MCP session" in refused["message"]
            with pytest.raises(asyncio.TimeoutError):  # none of it reached the browser
                while True:
                    frame = json.loads(await asyncio.wait_for(browser.recv(), 0.5))
                    assert frame.get("method") not in ("tool.call", "tab.open", "events.push"), frame
        finally:
            await relay.close()

    asyncio.run(scenario())
