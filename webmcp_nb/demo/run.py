"""``webmcp-nb demo``: headless Chromium with the extension on the bundled flight demo, tools listed
and called, printed readably. It is README command 1 and the smoke test of a fresh machine."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..agent.agent import Agent
from ..browser.browser import Browser
from ..browser.launch import launch
from ..browser.skills import Skill
from ..core.display import clip
from ..recording.session import Session
from ..replay.replay import replay_agent
from ..testing import ScriptedServer, call, say
from .server import DemoServer, serve_demo

__all__ = ["run_demo", "DEMO_SEARCH"]

DEMO_SEARCH: dict[str, Any] = {
    "origin": "LON",
    "destination": "NYC",
    "tripType": "round-trip",
    "outboundDate": "2027-01-15",
    "inboundDate": "2027-01-22",
    "passengers": 2,
}


def _show_tools(tab: object) -> None:
    for tool in tab.tools.values():  # type: ignore[attr-defined]
        marks = tool.source + (", read-only" if tool.read_only else "")
        print(f"  • {tool.name}{tool.__signature__}  [{marks}]")
        print(f"      {clip(tool.description, 100)}")


def run_demo(
    *, headless: bool = True, native_webmcp: bool = False, report: Path = Path("webmcp-nb-demo-report.html")
) -> int:
    """Run the demo; returns the process exit code."""
    with serve_demo() as server:
        started = time.perf_counter()
        with launch(headless=headless, native_webmcp=native_webmcp) as browser:
            print(f"Launched Chromium with the webmcp-nb extension in {time.perf_counter() - started:.1f} s")
            print(f"  {browser.info.user_agent if browser.info else ''}")
            tab = browser.open(server.url("flights/"))
            print(f"\nOpened {tab.url} — {tab.title!r}. Its tools:")
            _show_tools(tab)

            print(f"\nCalling searchFlights({', '.join(f'{k}={v!r}' for k, v in DEMO_SEARCH.items())})")
            result = tab.call("searchFlights", DEMO_SEARCH)
            print(f"  → {result.value} ({result.duration_ms:.1f} ms)")

            tab.wait_for_tool("listFlights", timeout=10)
            print("\nThe results view registered more tools:")
            _show_tools(tab)

            flights = tab.call("listFlights").value
            print(f"\nlistFlights → {len(flights)} flights; the five cheapest:")
            for f in sorted(flights, key=lambda f: f["price"])[:5]:
                print(
                    f"  {f['id']:<8} {f['airline']:<22} {f['origin']}→{f['destination']}  "
                    f"{f['departureTime']}–{f['arrivalTime']}  stops {f['stops']}  {f['price']:>7.2f} {f['currency']}"
                )
            direct = tab.call("setFilters", stops=[0]).value
            print(f"\nsetFilters(stops=[0]) → {direct['count']} direct flights of {direct['total']}")

            _shop(browser, server.url("shop/"))
            _replay(browser, server, report)
    return 0


DEMO_SESSION = Path(__file__).parent / "sessions" / "flights-agent"
"""An agent run on the flight demo, recorded with a scripted model; `webmcp-nb demo` replays it."""

DEMO_TASK = "Find direct flights from London to New York on 2027-01-15 (back on the 22nd) for 2 and count them."
DEMO_SCRIPT = [
    call("searchFlights", say="Searching the flights first.", **DEMO_SEARCH),
    call("setFilters", say="Keeping direct flights only.", stops=[0]),
    call("listFlights"),
    say("There are 4 direct flights from London to New York on 15 January."),
]


def _replay(browser: Browser, server: DemoServer, report: Path) -> None:
    recorded = Session.load(DEMO_SESSION)
    tab = browser.open(server.url(urlsplit(recorded.first_url or "/flights/").path))
    print(f"\nReplaying the recorded agent session {recorded.header.id} ({len(recorded)} events) with no API key:")
    result = replay_agent(recorded, tab, progress=False)
    print(f"  {result}")
    assert result.session is not None
    result.session.report(report)
    print(f"  HTML report of the replay: {report.resolve()}")


def record_demo_session(directory: Path = DEMO_SESSION) -> Path:
    """Record DEMO_SCRIPT as an agent session (maintainers run this when the format changes)."""
    shutil.rmtree(directory, ignore_errors=True)
    with serve_demo() as server, launch() as browser, ScriptedServer(DEMO_SCRIPT, quirks="openai") as model:
        tab = browser.open(server.url("flights/"))
        session = Session(
            browser,
            directory=directory,
            evidence="off",
            title="Direct flights, LON → NYC",
            model="scripted",
            provider="openai",
        )
        agent = Agent(
            tab,
            base_url=model.base_url,
            api_key="not-a-real-key",
            model="scripted",
            session=session,
            on_confirm=lambda request: True,
        )
        agent.run(DEMO_TASK)
        session.close()
    return directory


def _shop(browser: Browser, url: str) -> None:
    """The shop has no WebMCP: the shipped ``shop`` skill gives it tools."""
    shop = browser.open(url)
    print(f"\nOpened {shop.url}: {len(shop.tools)} tools of its own. Injecting the 'shop' skill…")
    shop.inject(Skill.builtin("shop"))
    _show_tools(shop)
    found = shop.call("searchProducts", query="lamp").value
    print(f"\nsearchProducts(query='lamp') → {[p['name'] for p in found['products']]}")
    first = found["products"][0]
    shop.call("addToCart", productId=first["productId"], quantity=2)
    cart = shop.call("readCart").value
    lines = ", ".join(f"{line['quantity']} × {line['name']}" for line in cart["lines"])
    print(f"addToCart({first['productId']!r}, quantity=2); readCart → {lines}, total {cart['total']:.2f}")
