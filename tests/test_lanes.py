"""Lanes: a frame's own socket to the relay. Calls on loopback pages take it (batched both ways, any
script in the results), pages without a key are refused, and frames without a lane use the worker."""

from __future__ import annotations

import asyncio

import pytest
from lane_wait import lane_of

import webmcp_nb as wm

TEXTS = ["plain", "héllo wörld", "日本語のテキスト", "emoji 😀 and 🎉", "line\nbreak \u2028 separator", ""]


@pytest.fixture(params=["polyfill", "extension"])  # native WebMCP through the extension: the pipe needs no lanes
def lane_browser(request):
    return request.getfixturevalue(f"{request.param}_browser")


@pytest.fixture
def lanes_tab(lane_browser, server):
    tab = lane_browser.open(server.url("t/lanes.html"))
    yield tab
    tab.close()


def test_calls_on_a_loopback_page_take_its_lane(lane_browser, lanes_tab):
    lane = lane_of(lane_browser, lanes_tab)
    assert lane is not None
    before = lane.sent
    for text in TEXTS:
        assert lanes_tab.call("echo", text=text).value == {"text": text}
    assert lane.sent == before + len(TEXTS)


def test_each_frame_has_its_own_lane(lane_browser, server):
    tab = lane_browser.open(server.url("declarative/iframe-host.html"))
    try:
        greeting = tab.wait_for_tool("frameGreeting", timeout=5)
        assert greeting.frame_id != 0
        lane = lane_of(lane_browser, tab, frame=greeting.frame_id)
        assert lane is not None and lane is not lane_of(lane_browser, tab)
        sent = lane.sent
        assert greeting(name="Ada").value == "Hello, Ada from the frame"
        assert lane.sent == sent + 1
    finally:
        tab.close()


def test_calls_in_flight_leave_and_return_in_batches(lane_browser, lanes_tab):
    lane = lane_of(lane_browser, lanes_tab)
    sent, frames, received = lane.sent, lane.frames, lane.received

    async def together():
        echoes = [lanes_tab.acall("echo", text=text * 3) for text in TEXTS * 3]
        # finishing in the reverse order of sending: each result still reaches its own caller
        laters = [lanes_tab.acall("later", ms=(16 - i) * 10, tag=str(i)) for i in range(16)]
        return await asyncio.gather(*echoes, *laters)

    results = asyncio.run(together())
    assert [r.value["text"] for r in results[: len(TEXTS) * 3]] == [t * 3 for t in TEXTS * 3]
    assert [r.value["tag"] for r in results[len(TEXTS) * 3 :]] == [str(i) for i in range(16)]
    calls = len(TEXTS) * 3 + 16
    assert lane.sent == sent + calls
    assert lane.frames - frames < calls  # calls made together left together
    assert lane.received - received < calls  # results that finished together came back together


def test_a_page_script_without_the_key_is_refused(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("t/lanes.html"))
    try:
        lane = lane_of(polyfill_browser, tab)
        refused = polyfill_browser.relay.lanes.refused
        url = f"ws://127.0.0.1:{polyfill_browser.relay.port}/lane"
        refused_at_handshake = {"opened": False, "code": 1006}  # no WebSocket: not a byte of data was read
        assert tab.call("knock", url=url, protocols=[], timeout=10).value == refused_at_handshake
        guess = ["webmcp-nb." + "f" * 64]
        assert tab.call("knock", url=url, protocols=guess, timeout=10).value == refused_at_handshake
        assert polyfill_browser.relay.lanes.refused == refused + 2
        assert polyfill_browser.relay.lanes.find(polyfill_browser.id, tab.id, 0) is lane  # the real lane stands
        assert tab.call("echo", text="still mine").value == {"text": "still mine"}
    finally:
        tab.close()


@pytest.mark.browser
def test_lanes_off_and_pages_chrome_keeps_from_loopback_use_the_worker(server):
    public = f"--ip-address-space-overrides=127.0.0.1:{server.port}=public"
    with wm.launch(args=[public]) as browser:  # Local Network Access refuses the lane: the worker carries calls
        tab = browser.open(server.url("t/lanes.html"))
        assert lane_of(browser, tab, timeout=1.0) is None
        assert tab.call("echo", text="via the worker").value == {"text": "via the worker"}
    with wm.launch(args=[public], lanes="all") as browser:  # the check is off in this browser
        tab = browser.open(server.url("t/lanes.html"))
        assert lane_of(browser, tab) is not None
        assert tab.call("echo", text="on a lane").value == {"text": "on a lane"}


def test_a_lane_call_that_outlives_its_timeout_fails_and_the_lane_goes_on(lane_browser, lanes_tab):
    lane = lane_of(lane_browser, lanes_tab)
    with pytest.raises(wm.ToolTimeoutError, match=r'^"later" did not finish in 200 ms\. The page may still be'):
        lanes_tab.call("later", ms=5_000, tag="late", timeout=0.2)
    assert not lane.calls  # nothing left waiting
    assert lanes_tab.call("later", ms=1, tag="next").value == {"tag": "next"}


def test_arguments_javascript_cannot_parse_are_refused_before_they_leave(lanes_tab):
    with pytest.raises(wm.InvalidArgumentsError, match="JSON"):
        lanes_tab.call("later", ms=float("nan"), tag="x")
    assert lanes_tab.call("later", ms=1, tag="fine").value == {"tag": "fine"}


def test_launch_refuses_an_unknown_lanes_policy():
    with pytest.raises(ValueError, match="lanes"):
        wm.launch(lanes="sometimes")
