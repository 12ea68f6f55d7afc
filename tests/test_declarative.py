"""Declarative <form toolname> tools and tools registered inside a same-origin iframe; forms that navigate, as in
Google's doors demo, many times in a row."""

import contextlib

import pytest
from eventually import eventually

import webmcp_nb as wm

HALLWAY = {"openGarden", "openCellar", "openAttic"}
ROOMS = {  # door → the room's tools on arrival
    "openGarden": {"lookAround_garden", "backToHallway"},
    "openCellar": {"lookAround_cellar", "backToHallway"},
    "openAttic": {"lightUp"},  # its way back becomes a tool when the light is on
}
ROUNDS = 4

BOOKING = {"name": "Ada", "guests": 2, "date": "2027-03-01", "time": "19:00", "seating": "indoor"}


def test_form_tool_is_listed_with_a_derived_schema(open_tab):
    tab = open_tab("declarative/")
    tool = tab.tools["bookTable"]
    props = tool.input_schema["properties"]
    assert {"name", "guests", "date", "time", "seating"} <= set(props)
    assert "19:00" in props["time"]["enum"]
    assert set(tool.input_schema["required"]) >= {"name", "guests"}


def test_form_tool_fills_submits_and_answers(open_tab):
    tab = open_tab("declarative/")
    result = tab.call("bookTable", BOOKING)
    assert result.value["booked"] is True
    assert result.value["name"] == "Ada"
    assert result.value["confirmation"].startswith("TD-")


def test_iframe_tools_are_listed_with_their_frame(open_tab):
    tab = open_tab("declarative/iframe-host.html")
    tab.wait_for_tool("frameGreeting", timeout=5)
    greeting = tab.tools["frameGreeting"]
    host = tab.tools["hostInfo"]
    assert host.frame_id == 0 and greeting.frame_id != 0
    assert greeting.info.frame_url.endswith("frame-tool.html")
    assert greeting(name="Ada").value == "Hello, Ada from the frame"
    assert host().value["page"]


def enter(tab: wm.Tab, door: str) -> None:
    """Call a form tool that submits and navigates: it answers, or its page goes before it can."""
    with contextlib.suppress(wm.NavigatedError):
        tab.call(door, timeout=10)


def shows(tab: wm.Tab, names: set[str], where: str, timeout: float = 10) -> None:
    """Wait until the tab lists exactly ``names``: a tool missing, or one of the previous page's left over, is a
    stale list."""
    eventually(lambda: set(tab.tools) == names, timeout, f"{where}: {tab.url} to list exactly {sorted(names)}")


def test_every_page_behind_a_navigating_form_tool_shows_its_tools_every_time(open_tab):
    tab = open_tab("t/doors/index.html")
    for round_ in range(ROUNDS):
        for door, room in ROOMS.items():
            shows(tab, HALLWAY, f"round {round_}, back in the hallway")
            enter(tab, door)
            shows(tab, room, f"round {round_}, behind {door}")
            if "lightUp" in room:
                tab.call("lightUp")  # sets toolname on a form already in the page, and nothing else
                shows(tab, {"backToHallway"}, f"round {round_}, the attic lit")
            enter(tab, "backToHallway")
    shows(tab, HALLWAY, "at the end")


@pytest.mark.browser
def test_closing_a_tab_right_after_a_navigating_call_leaves_the_browser_serving(server):
    # Chromium 156 with native WebMCP was seen to crash here (3 of 5 runs, elsewhere; not reproduced on this
    # machine). A crash must surface as BrowserCrashedError with its event, and a new launch must carry on.
    for _ in range(3):  # three four-round runs
        with wm.launch(native_webmcp=True) as browser:
            try:
                tab = browser.open(server.url("t/doors/index.html"))
                for door in [*ROOMS, "openGarden"]:
                    tab.wait_for_tool(door)
                    enter(tab, door)
                    if door == "openAttic":
                        tab.wait_for_tool("lightUp")
                        tab.call("lightUp")
                    tab.wait_for_tool("backToHallway")
                    enter(tab, "backToHallway")
                tab.wait_for_tool("openCellar")
                enter(tab, "openCellar")
                tab.close()  # right after the navigation began
                assert browser.open(server.url("t/doors/garden.html")).call("lookAround_garden").value == "the garden"
            except wm.BrowserCrashedError:
                assert browser.events.of_kind("browser.crashed") and browser.exit is not None
