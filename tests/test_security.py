"""The relay admits only our extension and token holders; page scripts cannot forge bridge traffic."""

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


def test_a_page_cannot_open_a_websocket_to_the_relay(open_tab, browser):
    tab = open_tab("t/hostile.html")
    relay = browser.relay
    before = list(relay.refused)
    outcome = tab.call("dialRelay", port=relay.port).value
    assert outcome == {"browser": "refused", "client": "refused"}
    assert relay.refused[len(before) :][-2:] == [("/browser", 403), ("/client", 403)]


async def _dial(url, **headers):
    async with connect(url, additional_headers=headers, open_timeout=5) as ws:
        return await ws.recv()


@pytest.mark.parametrize(
    "path, headers, status",
    [
        ("/client", {}, 401),
        ("/client", {"Authorization": "Bearer wrong"}, 401),
        ("/client", {"Origin": "http://127.0.0.1:8000"}, 403),
        ("/browser", {}, 403),
        ("/browser", {"Origin": "chrome-extension://abcdefghijklmnopabcdefghijklmnop"}, 403),
        ("/other", {}, 404),
    ],
)
def test_the_relay_refuses_clients_without_token_and_foreign_origins(polyfill_browser, path, headers, status):
    relay = polyfill_browser.relay
    with pytest.raises(InvalidStatus) as info:
        asyncio.run(_dial(f"ws://127.0.0.1:{relay.port}{path}", **headers))
    assert info.value.response.status_code == status


def test_a_token_holder_is_admitted_and_sees_the_state(polyfill_browser):
    relay = polyfill_browser.relay
    hello = json.loads(asyncio.run(_dial(f"ws://127.0.0.1:{relay.port}/client", Authorization=f"Bearer {relay.token}")))
    assert hello["method"] == "hello"
    assert [b["id"] for b in hello["params"]["browsers"]] == [polyfill_browser.id]


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
