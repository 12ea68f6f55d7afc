"""The blocking API works while the calling thread runs an asyncio loop (as in Jupyter); the async twins
work under await from any loop; every blocking method has its twin."""

import asyncio
import gc
import inspect
import weakref

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


NOT_TWINS = {
    "Agent.run": "refuses to wait for a click the kernel could never deliver; arun waits",
    "ChatBridge.wait_answer": "refuses to wait for a bridged call's answer in a panel; await_answer waits",
}


def _pairs():
    """Every public ``aX`` coroutine function of the package and its subpackages (``wm.mcp``, ``wm.evals``):
    module functions (named ``evals.run``) and methods of public classes (``MCPServer.call``), with ``X``."""
    subpackages = [(getattr(wm, n), f"{n}.") for n in wm.__all__ if inspect.ismodule(getattr(wm, n))]
    for module, label in [(wm, ""), *subpackages]:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                members = vars(obj)
                for attr, fn in members.items():
                    if attr.startswith("a") and not attr.startswith("__") and inspect.iscoroutinefunction(fn):
                        yield f"{name}.{attr[1:]}", fn, members.get(attr[1:])
            elif name.startswith("a") and inspect.iscoroutinefunction(obj):
                yield f"{label}{name[1:]}", obj, getattr(module, name[1:], None)


def test_every_public_async_function_has_a_blocking_twin_made_from_it():
    pairs = list(_pairs())
    assert {
        "Tab.call",
        "Browser.open",
        "connect",
        "launch",
        "doctor",
        "replay_agent",
        "Agent.run",
        "MCPServer.call",
        "evals.run",
    } <= {p[0] for p in pairs}
    for name, afn, twin in pairs:
        assert twin is not None and not inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(afn), name
        if name not in NOT_TWINS:  # derived by _loop.blocking: the same signature and docs by construction
            assert getattr(twin, "__wrapped__", None) is afn and twin.__doc__ == afn.__doc__, name


def test_a_finished_callers_loop_is_not_kept_alive(polyfill_browser, server):
    loops = []

    async def cell():
        loops.append(weakref.ref(asyncio.get_running_loop()))
        tab = await polyfill_browser.aopen(server.url("flights/"))
        await tab.aclose()

    asyncio.run(cell())
    gc.collect()
    assert loops[0]() is None  # the hand-off back to it holds it weakly


def test_every_public_name_is_importable_and_listed_once():
    from webmcp_nb import _MODULE_OF

    subpackages = {"mcp", "evals"}
    assert set(wm.__all__) == set(_MODULE_OF) | {"__version__", "panel"} | subpackages
    assert len(wm.__all__) == len(set(wm.__all__))
    for name in wm.__all__:
        assert getattr(wm, name) is not None, name
