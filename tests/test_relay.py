"""The relay on its own: clean errors for bad client traffic, idle exit in daemon mode, MCP sessions."""

import asyncio
import json

import peers

from webmcp_nb.relay import Relay


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
