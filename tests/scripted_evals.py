"""The scripted models the eval tests use: what each "model" does on each hand-made task (by_task scripts),
and how a test names one."""

from __future__ import annotations

from pathlib import Path

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.testing import ScriptedServer, call, say

HERE = Path(__file__).parent / "evals"
"""The hand-made suites: webmcp-evals-shaped evals.json and schema.json, and a native flights.yaml."""


def model(server: ScriptedServer, name: str = "scripted") -> wm.Model:
    return wm.Model("any", name, base_url=server.base_url, price_input=1.0, price_output=2.0)


PIZZA = {
    "A small pizza": [
        call("set_pizza_size", size="Small"),
        call("add_topping", topping="pepper"),
        call("add_topping", topping="onion"),
        call("share_pizza"),
        say("Shared it."),
    ],
    "two mushrooms": [call("add_topping", topping="mushroom", count=2), say("Added.")],
    "calzone": [say("A folded pizza.")],
    "Add an olive": [say("(not asked: the case starts with a call)"), call("get_pizza"), say("Olive.")],
}
SLOPPY = {
    **PIZZA,
    "two mushrooms": [call("add_topping", topping="mushroom"), say("Added.")],  # count missing
    "calzone": [call("nonexistent_tool"), call("get_pizza"), say("A folded pizza.")],  # an unknown tool, a call
}


FLIGHTS = {
    "[direct]": [
        call("searchFlights", **DEMO_SEARCH),
        call("setFilters", stops=[0]),
        call("listFlights"),
        say("There are 4 direct flights."),
    ],
    "[state]": [call("searchFlights", **DEMO_SEARCH), say("Here are the flights.")],
    "[forbidden]": [call("searchFlights", **DEMO_SEARCH), call("resetFilters"), say("Done.")],
}
