"""The notebook panel's widgets against a real browser: Call, confirmation cards, the log, chat, skills —
driven by the same button clicks a user makes (``button.click()``), never waiting in a cell."""

import re

import ipywidgets as W
import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.core import _loop
from webmcp_nb.core.describe import counted, family
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link.connection import Connection
from webmcp_nb.testing import ScriptedServer, call, say
from webmcp_nb.views import SchemaForm


@pytest.fixture
def flights(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("flights/"))
    yield tab
    tab.close()


def test_clicking_call_runs_the_tool_and_shows_the_result(flights):
    panel = wm.panel(flights)
    assert [name for _, name in panel.tools.list.options] == ["searchFlights"]
    panel.tools.select("searchFlights")
    assert panel.tools.call_button.disabled is False and "origin" in panel.tools.details.value
    panel.tools.form.fill(DEMO_SEARCH)
    panel.tools.call_button.click()
    eventually(lambda: "count" in panel.tools.result.value)
    assert "searchFlights → ok" in panel.tools.result.value
    eventually(lambda: "listFlights" in [n for _, n in panel.tools.list.options])  # the page's new tools
    assert panel.tools.list.value == "searchFlights" and panel.tools.form.value["origin"] == "LON"  # kept
    assert "count" in panel.tools.result.value
    assert "tool.returned" in panel.operations.value
    panel.close()


def test_a_bad_call_shows_the_error_in_the_panel_and_the_log(flights):
    panel = wm.panel(flights)
    panel.tools.select("searchFlights")
    panel.tools.form.fill({**DEMO_SEARCH, "origin": "London"})
    panel.tools.call_button.click()
    eventually(lambda: "InvalidArgumentsError" in panel.tools.result.value)
    assert "origin" in panel.tools.result.value
    # the browser is shared with other tests: its log may hold their refusals too
    refused = eventually(lambda: [line for line in lines(panel) if "tool.refused" in line and "London" in line])
    assert "origin=&quot;London&quot;" in refused[-1] and "refused before the page saw it" in refused[-1]
    assert "notebook panel" in refused[-1]  # who acted
    panel.close()


def lines(panel) -> list[str]:
    return [line.value for line in panel.operations.lines.children]


def test_each_log_line_says_what_happened_and_who_did_it(polyfill_browser, server):
    panel = wm.panel(polyfill_browser)
    tab = polyfill_browser.open(server.url("flights/"))
    try:
        tab.call("searchFlights", DEMO_SEARCH)
        tab.wait_for_tool("listFlights")
        shown = eventually(lambda: "\n".join(lines(panel)) if "+listFlights" in "\n".join(lines(panel)) else "")
        assert f"opened {server.url('flights/')} (1 tool)" in shown  # the URL
        assert "+listFlights +setFilters +resetFilters (4 tools)" in shown  # the names added
        # the browser is shared with other tests: their calls may be in its log too; this test's are the newest
        called = [line for line in lines(panel) if "tool.called" in line and "searchFlights(" in line][-1]
        assert "searchFlights(origin=&quot;LON&quot;, destination=&quot;NYC&quot;" in called and "notebook" in called
        returned = [line for line in lines(panel) if "tool.returned" in line and "searchFlights →" in line][-1]
        assert "searchFlights → {&quot;message&quot;: &quot;Found" in returned and " ms · notebook" in returned

        panel.operations.show.value = "page"  # the filter
        shown_kinds = {re.search(r"<b[^>]*>([\w.]+)</b>", line).group(1) for line in lines(panel)}
        assert "navigation" in shown_kinds and "tools.changed" in shown_kinds  # (others' browser.* events too)
        assert {family(kind) for kind in shown_kinds} == {"page"}, shown_kinds
        panel.operations.show.value = "problems"  # (the browser is shared: earlier tests' refusals show here)
        assert all("background:#fff1f0" in line for line in lines(panel)) and "tool.called" not in str(lines(panel))
        panel.operations.show.value = "everything"

        with wm.Session(polyfill_browser, evidence="off") as notes:
            for i in range(300):
                notes.note(f"note {i}")
        assert len(lines(panel)) <= 250 and "note 299" in lines(panel)[-1]  # bounded, newest last
    finally:
        panel.close()
        tab.close()


def _another_client(browser: wm.Browser) -> wm.Browser:
    """Another notebook's view of ``browser``: a client of its relay over a socket (closing it leaves the browser)."""

    async def connect() -> wm.Browser:
        connection = Connection(browser.relay.port, browser.relay.secret)
        client = wm.Browser(connection)
        await connection.open()
        await client._wait_bound(20, lambda: "")
        return client

    return _loop.run(connect())


def test_the_status_shows_the_browser_as_it_is(flights, polyfill_browser, server):
    browser = _another_client(polyfill_browser)
    panel = wm.panel(browser.tab(flights.id))
    try:
        panel.tools.select("searchFlights")
        assert panel.tools.call_button.disabled is False
        before = len(browser.tabs)  # (the browser is shared: other tests' tabs may be open)
        assert f"browser connected · {counted(before, 'tab')}" in panel.status.state.value
        shop = polyfill_browser.open(server.url("shop/"))  # opened elsewhere, no tools: no event in this stream
        eventually(lambda: f"browser connected · {counted(before + 1, 'tab')}" in panel.status.state.value)
        assert shop.id in [tab_id for _, tab_id in panel.status.picker.options]
        shop.close()
        eventually(lambda: f"browser connected · {counted(before, 'tab')}" in panel.status.state.value)

        browser.close()
        assert "browser closed" in panel.status.state.value and "connected" not in panel.status.state.value
        assert panel.status.picker.options == () and "tabs" not in panel.status.state.value
        assert panel.tools.list.options == () and panel.tools.call_button.disabled
        assert "The browser is closed" in panel.tools.hint.value
    finally:
        panel.close()
        browser.close()


def test_a_page_without_tools_says_what_to_do(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("shop/"))
    panel = wm.panel(tab)
    try:
        assert "This page has no WebMCP tools" in panel.tools.hint.value and "wait_for_tool" in panel.tools.hint.value
        assert panel.tools.inject_dom in panel.tools.children and panel.tools.call_button not in panel.tools.children
        panel.tools.inject_dom.click()  # the hint's next step, as a button
        eventually(lambda: "readPage" in [name for _, name in panel.tools.list.options])
        assert panel.tools.inject_dom not in panel.tools.children and "pick one" in panel.tools.hint.value
        eventually(lambda: "dom" in panel.skills.toggles)  # the Skills section shows it
    finally:
        panel.close()
        polyfill_browser.skills.uninstall("dom")
        tab.close()


def test_approve_and_deny_cards_resolve_a_running_agents_requests(flights, polyfill_browser):
    """Answered, a card folds to its verdict (it stayed whole with greyed buttons); the last three answered stay;
    when the browser closes, every card goes."""
    script = [
        call("searchFlights", **DEMO_SEARCH), call("setFilters", stops=[0]), call("setFilters", stops=[1]),
        call("resetFilters"), say("Searched, not filtered."),
    ]  # fmt: skip
    browser = _another_client(polyfill_browser)
    tab = browser.tab(flights.id)
    panel = wm.panel(tab)
    try:
        with ScriptedServer(script) as model:
            agent = wm.Agent(tab, base_url=model.base_url, api_key="k", model="m", evidence="off", session=False)
            run = agent.start("search, then filter")  # returns at once; the cards answer
            cards = []
            for approve in [True, False, True, True]:
                card = eventually(lambda: [c for c in panel.cards.values() if all(c is not k for k in cards)])[0]
                assert {card.approve, card.deny} == set(card.children[1].children)  # side by side, never apart
                assert card.children[1].layout.flex == "0 0 auto"
                (card.approve if approve else card.deny).click()
                cards.append(card)
            result = run.result(timeout=30)
        assert result.answer == "Searched, not filtered."
        assert [s.confirmed for s in result.steps] == [True, False, True, True]
        first, second, *_ = cards
        eventually(lambda: all(card.answered for card in cards))
        assert second.children == (second.text,) and "<details" in second.text.value  # folded: no greyed buttons
        assert "✗ denied setFilters (notebook panel)</summary>" in second.text.value
        assert "✓ approved resetFilters (notebook panel)</summary>" in cards[3].text.value
        assert first not in panel.confirmations.children and list(panel.cards.values()) == cards[1:]
        for kind in ("agent.turn.started", "confirmation.requested", "tool.called", "tool.denied"):
            assert kind in panel.operations.value, kind
        browser.close()
        assert panel.confirmations.children == () and panel.cards == {}
    finally:
        panel.close()
        browser.close()


def test_the_tab_picker_lists_pages_first_and_a_tab_keeps_nothing_of_the_last(flights, polyfill_browser, server):
    blank = polyfill_browser.open("about:blank")
    shop = polyfill_browser.open(server.url("shop/"))
    panel = wm.panel(flights)
    try:
        labels = dict((tab_id, label) for label, tab_id in panel.status.picker.options)
        order = [tab_id for _, tab_id in panel.status.picker.options]
        blanks = [t.id for t in polyfill_browser.tabs if t.url == "about:blank"]
        assert blank.id in blanks and order[-len(blanks) :] == blanks  # pages first
        assert labels[flights.id].endswith("(1 tool)") and labels[shop.id].endswith("(0 tools)")

        panel.tools.select("searchFlights")
        panel.tools.form.fill(DEMO_SEARCH)
        panel.tools.call_button.click()
        eventually(lambda: "searchFlights → ok" in panel.tools.result.value)
        panel.status.picker.value = shop.id  # a page without tools: nothing of flights' call stays
        assert panel.tab is shop and "This page has no WebMCP tools" in panel.tools.hint.value
        assert panel.tools.result.value == "" and panel.tools.details.value == ""
        panel.status.picker.value = flights.id
        assert panel.tools.result.value == "" and "pick one" in panel.tools.hint.value
    finally:
        panel.close()
        shop.close()
        blank.close()


def test_chat_streams_the_agents_answer(flights):
    with ScriptedServer([call("searchFlights", **DEMO_SEARCH), say("I found 15 flights for you.")]) as model:
        agent = wm.Agent(flights, base_url=model.base_url, api_key="k", model="m", confirm="never", evidence="off")
        panel = wm.panel(flights, agent=agent)
        panel.chat.input.value = "Find flights"
        panel.chat.send_button.click()
        eventually(lambda: "I found 15 flights for you." in panel.chat.transcript.value)
    assert "→ searchFlights" in panel.chat.transcript.value and "Find flights" in panel.chat.transcript.value
    panel.close()


def test_skills_section_switches_skills(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("shop/"))
    try:
        tab.inject(wm.Skill.builtin("shop"))
        panel = wm.panel(tab)
        eventually(lambda: "shop" in panel.skills.toggles)
        switch = panel.skills.toggles["shop"]
        switch.value = False
        panel.refresh()  # a redraw before the browser has reported the change keeps the user's click
        assert panel.skills.toggles["shop"] is switch and switch.value is False
        eventually(lambda: not polyfill_browser.skills["shop"].enabled)
        eventually(lambda: len(tab.tools) == 0 or (tab.refresh_tools() and len(tab.tools) == 0))
        switch.value = True
        eventually(lambda: polyfill_browser.skills["shop"].enabled)
        polyfill_browser.skills.disable("shop")  # a change made elsewhere moves the switch
        eventually(lambda: switch.value is False)
        panel.close()
    finally:
        polyfill_browser.skills.uninstall("shop")
        tab.close()


def test_schema_form_covers_the_json_schema_types():
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer"},
            "price": {"type": "number"},
            "exact": {"type": "boolean"},
            "sort": {"type": "string", "enum": ["price", "rating"]},
            "stops": {"type": "array", "items": {"type": "integer"}},
            "range": {"type": "object", "properties": {"from": {"type": "number"}, "to": {"type": "number"}}},
        },
        "required": ["query"],
    }
    form = SchemaForm(schema)
    kinds = {f.name: type(f.widget) for f in form.fields}
    assert kinds["query"] is W.Text and kinds["sort"] is W.Dropdown and kinds["exact"] is W.Dropdown
    assert kinds["range"] is SchemaForm and form.fields[0].name == "query"  # required first
    values = {
        "query": "lamp",
        "limit": 3,
        "price": 9.5,
        "exact": True,
        "sort": "rating",
        "stops": [0, 1],
        "range": {"from": 1},
    }
    form.fill(values)
    assert form.value == values
    form.as_json.value = True  # the JSON editor starts from what the form holds
    assert '"lamp"' in form.editor.value
    form.editor.value = '{"query": "desk"}'
    assert form.value == {"query": "desk"}
    odd = SchemaForm({"type": "string"})  # nothing to generate: the JSON editor is the form
    assert odd.as_json.value is True


def test_risk_in_the_tool_list_on_cards_and_the_chats_policy(polyfill_browser, server):
    tab = polyfill_browser.open(server.url("t/risk.html"))
    panel = wm.panel(tab)
    try:
        labels = {name: label for label, name in panel.tools.list.options}
        assert labels["readNote"].endswith("[polyfill, read-only]")
        assert labels["setNote"].endswith("[polyfill, medium risk]")
        assert labels["sendPayment"].endswith("[polyfill, high risk]")
        panel.tools.select("publishNote")
        assert "[high risk]" in panel.tools.details.value
        with ScriptedServer([call("sendPayment", amount=5), say("Paid.")]) as model:
            agent = wm.Agent(tab, base_url=model.base_url, api_key="k", model="m", confirm="never", evidence="off")
            run = agent.start("pay 5")  # high risk asks even with confirm="never"
            card = eventually(lambda: list(panel.cards.values()))[0]
            assert card.risk == "high" and "[high risk]" in card.text.value
            card.approve.click()
            assert run.result(timeout=30).answer == "Paid."
        chat = wm.panel(tab, agent=agent).chat
        assert chat.confirm.value == "never"
        assert chat.confirm.layout.min_width == "min(24em, 100%)"  # "medium- and high-risk tools" whole, not cut
        chat.confirm.value = "always"
        assert agent.confirm == "always"
        assert [value for _, value in chat.confirm.options] == ["never", "high", "medium", "always"]
    finally:
        panel.close()
        tab.close()
