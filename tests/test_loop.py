"""The blocking API works while the calling thread runs an asyncio loop (as in Jupyter); the async twins
work under await from any loop; every blocking method has its twin."""

import asyncio
import gc
import inspect
import weakref

import pytest

import webmcp_nb as wm


def test_blocking_calls_work_inside_a_running_loop(polyfill_browser, server):
    async def cell():
        assert asyncio.get_running_loop().is_running()
        tab = polyfill_browser.open(server.url("t/faults.html"))  # blocking, inside the loop
        try:
            return tab.call("received").value
        finally:
            tab.close()

    assert asyncio.run(cell()) == []


def test_async_twins_work_under_await(polyfill_browser, server):
    async def cell():
        tab = await polyfill_browser.aopen(server.url("flights/"))
        try:
            tool = await tab.await_for_tool("searchFlights", timeout=5)
            results = await asyncio.gather(*(tab.acall("searchFlights", SEARCH) for _ in range(5)))
            assert await tool.acall(**SEARCH)
            return [r.value["count"] for r in results]
        finally:
            await tab.aclose()

    counts = asyncio.run(cell())
    assert len(counts) == 5 and len(set(counts)) == 1 and counts[0] > 0


SEARCH = {
    "origin": "PAR",
    "destination": "TYO",
    "tripType": "one-way",
    "outboundDate": "2027-02-01",
    "inboundDate": "2027-02-08",
    "passengers": 1,
}


@pytest.mark.parametrize("cls", [wm.Browser, wm.Tab])
def test_every_async_method_has_a_blocking_twin_with_the_same_signature(cls):
    asyncs = {n for n, f in vars(cls).items() if n.startswith("a") and inspect.iscoroutinefunction(f)}
    assert asyncs, cls
    for name in asyncs:
        twin = getattr(cls, name[1:])
        assert not inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(cls, name)), name
        assert twin.__doc__ == getattr(cls, name).__doc__


def test_module_level_twins():
    assert inspect.signature(wm.launch) == inspect.signature(wm.alaunch)
    assert inspect.signature(wm.connect) == inspect.signature(wm.aconnect)


def test_a_finished_callers_loop_is_not_kept_alive(polyfill_browser, server):
    loops = []

    async def cell():
        loops.append(weakref.ref(asyncio.get_running_loop()))
        tab = await polyfill_browser.aopen(server.url("flights/"))
        await tab.aclose()

    asyncio.run(cell())
    gc.collect()
    assert loops[0]() is None  # the hand-off back to it holds it weakly
