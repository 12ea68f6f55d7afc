"""The relay admits only peers that prove the pairing secret (after proving it itself); page scripts cannot
reach it or forge bridge traffic."""

import asyncio
import json

import peers
import pytest
from node import run_module_script
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from webmcp_nb.link import auth


def test_a_page_cannot_open_a_websocket_to_the_relay(open_tab, browser):
    tab = open_tab("t/hostile.html")
    relay = browser.relay
    before = list(relay.refused)
    outcome = tab.call("dialRelay", port=relay.port).value
    assert outcome == {"browser": "refused", "client": "refused"}
    assert relay.refused[len(before) :][-2:] == [
        ("/browser", 403, "browsers must be the webmcp-nb extension"),
        ("/client", 403, "web pages may not connect to the relay"),
    ]


async def _dial(url, **headers):
    async with connect(url, additional_headers=headers, open_timeout=5) as ws:
        return await ws.recv()


@pytest.mark.parametrize(
    "path, headers, status",
    [
        ("/client", {"Origin": "http://127.0.0.1:8000"}, 403),
        ("/browser", {}, 403),
        ("/browser", {"Origin": "chrome-extension://abcdefghijklmnopabcdefghijklmnop"}, 403),
        ("/other", {}, 404),
    ],
)
def test_the_relay_turns_away_pages_and_foreign_origins_at_the_door(polyfill_browser, path, headers, status):
    relay = polyfill_browser.relay
    with pytest.raises(InvalidStatus) as info:
        asyncio.run(_dial(f"ws://127.0.0.1:{relay.port}{path}", **headers))
    assert info.value.response.status_code == status


@pytest.mark.parametrize("path, role", [("/client", "client"), ("/browser", "browser")])
def test_a_peer_without_the_secret_learns_a_nonce_and_is_closed(polyfill_browser, path, role):
    relay = polyfill_browser.relay

    async def impostor():
        headers = peers.ORIGIN if role == "browser" else {}
        async with connect(f"ws://127.0.0.1:{relay.port}{path}", additional_headers=headers) as ws:
            nonce = auth.new_nonce()
            await ws.send(json.dumps(auth.hello(role, nonce)))
            challenge = json.loads(await ws.recv())
            # Without the secret, the best an impostor can send is a guess (or the relay's own proof back).
            await ws.send(json.dumps(auth.proof(challenge["params"]["proof"])))
            received = [challenge]
            try:
                while True:
                    received.append(json.loads(await ws.recv()))
            except ConnectionClosed as closed:
                return received, closed.rcvd.code if closed.rcvd else None

    failures = relay.auth_failures[role]
    received, code = asyncio.run(impostor())
    assert [m["method"] for m in received] == ["auth.challenge"]  # no hello, no tab, no browser state
    assert set(received[0]["params"]) == {"nonce", "proof"} and relay.secret not in json.dumps(received)
    assert code == 1008 and relay.auth_failures[role] == failures + 1


def test_a_peer_that_says_nothing_is_closed_after_the_auth_time_limit(polyfill_browser):
    relay = polyfill_browser.relay

    async def silent():
        async with connect(f"ws://127.0.0.1:{relay.port}/client") as ws:
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 15)
            return info.value.rcvd.code

    assert asyncio.run(silent()) == 1008


def test_a_secret_holder_is_admitted_and_sees_the_state(polyfill_browser):
    relay = polyfill_browser.relay

    async def admitted():
        ws = await peers.client(relay.port, relay.secret)
        try:
            return json.loads(await ws.recv())
        finally:
            await ws.close()

    hello = asyncio.run(admitted())
    assert hello["method"] == "hello"
    assert [b["id"] for b in hello["params"]["browsers"]] == [polyfill_browser.id]


def test_python_and_the_extension_compute_the_same_proofs():
    # The worker's auth.js (WebCrypto) and auth.py (hmac) must agree, or no browser could ever connect; this
    # pins it on fixed inputs, including a lane's credentials checked the way the relay checks them.
    secret, role, peer, relay_nonce = "s3cret-" * 6, "browser", "A" * 43, "b" * 43
    found = run_module_script(
        f"""
        const m = await import('./worker/auth.js');
        const lane = await m.laneCredentials();
        result = {{
          proofs: [await m.relayProof({json.dumps(secret)}, '{role}', '{peer}', '{relay_nonce}'),
                   await m.peerProof({json.dumps(secret)}, '{role}', '{peer}', '{relay_nonce}')],
          lane,
        }};"""
    )
    assert found["proofs"] == [
        auth.relay_proof(secret, role, peer, relay_nonce),
        auth.peer_proof(secret, role, peer, relay_nonce),
    ]
    key, (prefix, key_id, nonce, frame_proof) = found["lane"]["key"], found["lane"]["protocol"].split(".")
    assert prefix == "webmcp-nb" and key_id == auth.lane_key_id(key)
    assert frame_proof == auth.lane_proof(key, "frame", nonce)
    assert found["lane"]["expect"] == auth.lane_proof(key, "relay", nonce)


def test_the_relay_listens_on_loopback_only(polyfill_browser):
    relay = polyfill_browser.relay
    assert relay.host == "127.0.0.1"
    assert all(s.getsockname()[0] == "127.0.0.1" for s in relay._server.sockets)


def test_forged_window_messages_have_no_effect(open_tab):
    tab = open_tab("t/hostile.html")
    before = set(tab.tools)
    assert tab.call("forge").value == "forged"
    tab.refresh_tools()
    assert set(tab.tools) == before and "evil" not in tab.tools
    assert tab.call("forge").value == "forged"  # calls still get their own results
