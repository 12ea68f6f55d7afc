"""Declarative <form toolname> tools and tools registered inside a same-origin iframe."""

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
