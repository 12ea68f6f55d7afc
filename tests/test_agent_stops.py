"""However a turn of the notebook's agent ends — its time limit, the call limit, a denial, a failure, the user
stopping it — every tool call in the conversation keeps a result that says what became of it, so the next turn
is accepted by a strict OpenAI-compatible server (``ScriptedServer`` refuses an unanswered ``tool_call`` with a
400, as real providers do). Also: token usage per request and per turn, and risk levels with the confirmation
policies that go by them. The side panel's chat is held to the same in ``test_sidepanel.py``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import openai
import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.agent.providers import PRESETS
from webmcp_nb.testing import Quirks, ScriptedServer, call, calls, fail, say


@pytest.fixture
def page(polyfill_browser, server):
    """Opens pages of the test server in the polyfill browser; closes them after the test."""
    opened = []

    def open_(path: str) -> wm.Tab:
        opened.append(polyfill_browser.open(server.url(path)))
        return opened[-1]

    yield open_
    for tab in opened:
        tab.close()


def agent_for(tab: wm.Tab, model: ScriptedServer, **options: Any) -> wm.Agent:
    options.setdefault("provider", "any")
    options.setdefault("evidence", "off")
    return wm.Agent(tab, base_url=model.base_url, api_key="offline-key", model="scripted", **options)


def framed(tool: str, text: str, status: str = "error") -> str:
    return f'<tool_result tool="{tool}" status="{status}">\n{text}\n</tool_result>'


def opening(tool: str, text: str) -> str:
    """The start of an error result of ``tool`` whose text starts with ``text``."""
    return f'<tool_result tool="{tool}" status="error">\n{text}'


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def users(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


# ----- each way a turn stops, then the next turn -----


def test_the_time_limit_answers_the_calls_it_left_open(page):
    tab = page("t/risk.html")
    script = [calls(("setNote", {"text": "x"}), ("readNote", {})), say("Hello again.")]
    with ScriptedServer(script) as model:
        agent = agent_for(tab, model, turn_timeout=1.5)
        first = agent.start("Change the note.").result(timeout=30)  # nobody answers the confirmation
        second = agent.run("Anything else?")
    assert first.stopped == "turn_timeout" and first.answer is None
    assert second.answer == "Hello again." and model.refusals == []
    waiting = "Not run: it was waiting for the user's confirmation when the turn reached its time limit of 1.5 s."
    assert tool_results(model.requests[-1]) == [
        framed("setNote", waiting),
        framed("readNote", "Not run: the turn reached its time limit of 1.5 s before it started."),
    ]
    assert users(model.requests[-1])[-2:] == [
        "[The previous turn was stopped after 1.5 s (its time limit), before an answer.]",
        "Anything else?",
    ]
    assert first.steps[0].error == waiting and tab.call("readNote").value == {"note": ""}  # nothing ran


def test_the_call_limit_refuses_even_calls_made_without_tools(page):
    tab = page("t/faults.html")

    def script(request: dict[str, Any]) -> Any:  # calls forever, offered tools or not, until the second task
        return say("Second turn.") if users(request)[-1] == "And now?" else call("received")

    with ScriptedServer(script) as model:
        agent = agent_for(tab, model)
        first = agent.run("Check again and again.")
        second = agent.run("And now?")
    assert first.stopped == "max_tool_calls" and first.answer is None and len(first.steps) == 10
    assert second.answer == "Second turn." and model.refusals == []
    assert len(model.requests) == 13 and "tools" not in model.requests[11]  # the last request of turn one
    results = tool_results(model.requests[-1])
    refused = opening("received", "Refused: the limit of 10 tool calls in one turn is reached.")
    assert len(results) == 12 and all(r.startswith(refused) for r in results[10:])
    assert all('status="ok"' in r for r in results[:10])


def test_a_denial_leaves_the_rest_of_its_reply_unrun(page):
    tab = page("t/risk.html")
    script = [calls(("setNote", {"text": "x"}), ("readNote", {})), say("I will ask first."), say("Fine.")]
    with ScriptedServer(script) as model:
        agent = agent_for(tab, model, on_confirm=lambda request: False)
        first = agent.run("Change the note.")
        second = agent.run("OK?")
    assert first.answer == "I will ask first." and first.stopped is None
    assert [(s.tool, s.confirmed) for s in first.steps] == [("setNote", False)]
    assert second.answer == "Fine." and model.refusals == []
    assert tool_results(model.requests[-1]) == [
        framed("setNote", "The user denied this action. Do not retry it; ask the user what to do instead."),
        framed(
            "readNote",
            "Not run: the user denied setNote just before, in the same reply. Ask the user what to do instead.",
        ),
    ]
    assert not [e for e in first.events if e.kind == "tool.called"]


def test_a_model_failure_then_another_turn(page):
    tab = page("t/risk.html")
    script = [call("readNote"), fail(500, "upstream down", retry_after_ms=None), say("Back.")]
    with ScriptedServer(script) as model:
        agent = agent_for(tab, model, max_retries=0)
        with pytest.raises(wm.ModelError):
            agent.run("Read the note.")
        second = agent.run("Try again.")
    assert second.answer == "Back." and model.refusals == []
    assert tool_results(model.requests[-1]) == [framed("readNote", '{"note":""}', "ok")]
    note = users(model.requests[-1])[-2]
    assert note.startswith("[The previous turn failed before an answer: MODEL_ERROR: the model endpoint failed")
    finished = [e for e in agent.events.of_kind("agent.turn.finished") if e.tab_id == tab.id]
    assert finished[0].data["stopped"] == "error" and "MODEL_ERROR" in finished[0].data["error"]


def test_a_confirmation_nobody_can_give_then_another_turn(page):
    tab = page("t/risk.html")
    with ScriptedServer([call("setNote", text="x"), say("Done.")]) as model:
        agent = agent_for(tab, model)
        with pytest.raises(wm.ConfirmationRequiredError):
            agent.run("Change the note.")  # a blocking run without on_confirm cannot wait for a click
        agent.confirm = "never"
        second = agent.run("Never mind.")
    assert second.answer == "Done." and model.refusals == []
    (result,) = tool_results(model.requests[-1])
    waiting = "Not run: it was waiting for the user's confirmation when the turn failed (CONFIRMATION_REQUIRED: "
    assert result.startswith(opening("setNote", waiting))


def test_stopping_a_turn_while_the_page_runs_a_call(page):
    tab = page("t/faults.html")
    with ScriptedServer([call("hang"), say("After the stop.")]) as model:
        agent = agent_for(tab, model, confirm="never", tool_timeout=60)
        run = agent.start("Use hang.")
        eventually(lambda: [e for e in agent.events.of_kind("tool.called") if e.tab_id == tab.id])
        run.cancel()
        first = run.result(timeout=10)
        second = agent.run("And now?")
    interrupted = (
        "Interrupted: the page was running it when the user stopped the turn; it may or may not have taken effect."
    )
    assert first.stopped == "cancelled" and first.steps[0].error == interrupted
    assert second.answer == "After the stop." and model.refusals == []
    assert tool_results(model.requests[-1]) == [framed("hang", interrupted)]
    assert users(model.requests[-1])[-2] == "[The user stopped the previous turn before an answer.]"


def test_stopping_a_turn_waiting_for_a_confirmation(page):
    tab = page("t/risk.html")
    with ScriptedServer([call("sendPayment", amount=5), say("Nothing was paid.")]) as model:
        agent = agent_for(tab, model)
        run = agent.start("Pay 5.")
        eventually(lambda: run.pending)
        run.cancel()
        first = run.result(timeout=10)
        second = agent.run("Did you pay?")
    assert first.stopped == "cancelled" and not run.pending
    assert second.answer == "Nothing was paid." and model.refusals == []
    assert tool_results(model.requests[-1]) == [
        framed("sendPayment", "Not run: it was waiting for the user's confirmation when the user stopped the turn.")
    ]
    assert tab.call("readNote").value == {"note": ""}


def test_one_turn_at_a_time_and_a_stale_handle_stops_nothing(page):
    tab = page("t/risk.html")
    script = [call("sendPayment", amount=5), say("Not paid."), call("sendPayment", amount=6), say("Paid 6.")]
    with ScriptedServer(script) as model:
        agent = agent_for(tab, model)
        panel = wm.panel(tab, agent=agent)
        try:
            run = agent.start("Pay 5.")
            eventually(lambda: run.pending)
            with pytest.raises(wm.AgentBusyError, match="running a turn"):
                agent.start("No, wait.")  # its message would land between the call and its result
            with pytest.raises(wm.AgentBusyError):
                agent.run("No, wait.")
            panel.chat.input.value = "No, wait."
            assert panel.chat.send() is None  # the panel's chat says so, and keeps what was typed
            assert "AgentBusyError" in panel.chat.transcript.value and panel.chat.input.value == "No, wait."
            run.deny()
            assert run.result(timeout=10).answer == "Not paid."
            second = agent.start("Pay 6.")
            eventually(lambda: second.pending)
            run.cancel()  # the first turn's handle: its turn is over, the second goes on
            second.approve()
            assert second.result(timeout=10).answer == "Paid 6." and model.refusals == []
        finally:
            panel.close()
    users = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0].endswith("\n\nPay 5.") and users[1:] == ["Pay 6."]  # no "No, wait." in the conversation


def test_the_strict_server_refuses_an_unanswered_tool_call():
    client = openai.OpenAI(api_key="k", max_retries=0)
    call_message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
    }
    with ScriptedServer([say("never")]) as model:
        client = client.with_options(base_url=model.base_url)
        for messages, reason in [
            ([{"role": "user", "content": "x"}, call_message, {"role": "user", "content": "y"}], "c1"),
            ([{"role": "user", "content": "x"}, call_message], "c1"),
            ([{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c9", "content": "r"}], "c9"),
        ]:
            with pytest.raises(openai.BadRequestError, match=reason):
                client.chat.completions.create(model="m", messages=messages)
        answered = [
            {"role": "user", "content": "x"},
            call_message,
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ]
        assert client.chat.completions.create(model="m", messages=answered).choices[0].message.content == "never"


# ----- token usage -----


def test_token_usage_per_request_and_per_turn(page):
    tab = page("t/risk.html")
    with ScriptedServer([call("readNote"), say("Empty.")]) as model:
        result = agent_for(tab, model).run("Read the note.")
    per_request = [e.data["usage"] for e in result.events if e.kind == "model.response"]
    assert per_request == model.usages and all(u["total_tokens"] > 0 for u in per_request)
    totals = {k: sum(u[k] for u in per_request) for k in per_request[0]}
    assert result.usage is not None and result.usage.as_dict() == totals
    (finished,) = [e for e in result.events if e.kind == "agent.turn.finished"]
    assert finished.data["usage"] == totals
    assert all(r["stream"] and r["stream_options"] == {"include_usage": True} for r in model.requests)
    assert f"{totals['total_tokens']:,} tokens" in result._repr_mimebundle_()["text/plain"]


def test_token_usage_without_streaming_and_from_an_endpoint_that_refuses_stream_options(page):
    tab = page("t/risk.html")
    with ScriptedServer([say("One body.")]) as model:
        provider = replace(PRESETS["any"], base_url=model.base_url, stream=False)
        result = agent_for(tab, model, provider=provider).run("Hi")
    assert "stream" not in model.requests[0] and result.usage is not None
    assert result.usage.as_dict() == model.usages[0]
    with ScriptedServer([say("No usage here.")], quirks=Quirks(reject_stream_options=True)) as model:
        agent = agent_for(tab, model)
        result = agent.run("Hi")
    assert result.answer == "No usage here." and result.usage is None
    assert model.refusals == ["stream_options is not supported"] and "stream_options" not in model.requests[1]
    assert agent.provider.stream_usage is False


# ----- risk and the confirmation policies -----


def test_every_tool_has_a_risk_and_the_model_reads_it(page):
    tab = page("t/risk.html")
    assert {name: tool.risk for name, tool in tab.tools.items()} == {
        "readNote": "low",
        "setNote": "medium",
        "sendPayment": "high",
        "publishNote": "high",
    }
    assert "high risk" in repr(tab.tools["sendPayment"]) and "read-only" in repr(tab.tools["readNote"])
    with ScriptedServer([say("ok")]) as model:
        agent_for(tab, model).run("What can you do?")
    offered = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
    source = f"from {tab.origin}"  # and where each tool comes from: the page's own origin here
    assert offered["sendPayment"] == f"Sends money ({source}; risk: high)"
    assert offered["readNote"] == f"The note ({source}; risk: low, read-only)"
    assert offered["setNote"] == f"Replaces the note ({source}; risk: medium)"
    assert "high (it submits, sends, pays, deletes or publishes)" in model.requests[0]["messages"][0]["content"]


def test_native_webmcp_keeps_only_the_consequential_hint(native_browser, server):
    tab = native_browser.open(server.url("t/risk.html"))
    try:
        assert tab.tools["sendPayment"].source == "native"
        assert {name: tool.risk for name, tool in tab.tools.items()} == {
            "readNote": "low",
            "setNote": "medium",
            "sendPayment": "high",  # by consequentialHint: Chromium drops destructiveHint
            "publishNote": "medium",  # Chromium drops a page's own annotations: a native page cannot declare risk
        }
    finally:
        tab.close()


ALL = ["readNote", "setNote", "sendPayment", "publishNote"]


@pytest.mark.parametrize(
    "confirm, allow_high_risk, asked",
    [
        ("never", False, ["sendPayment", "publishNote"]),
        ("never", True, []),
        ("high", False, ["sendPayment", "publishNote"]),
        ("medium", False, ["setNote", "sendPayment", "publishNote"]),
        ("always", False, ALL),
        ("always", True, ALL),
    ],
)
def test_confirmation_policies_ask_by_risk(page, confirm, allow_high_risk, asked):
    tab = page("t/risk.html")
    seen: list[tuple[str, str]] = []

    def approve(request: wm.ConfirmationRequest) -> bool:
        seen.append((request.tool, request.risk))
        return True

    script = [calls(("readNote", {}), ("setNote", {"text": "x"}), ("sendPayment", {"amount": 5}), ("publishNote", {}))]
    with ScriptedServer([*script, say("All done.")]) as model:
        agent = agent_for(tab, model, confirm=confirm, allow_high_risk=allow_high_risk, on_confirm=approve)
        result = agent.run("Do everything.")
    assert [tool for tool, _ in seen] == asked
    assert dict(seen) == {tool: tab.tools[tool].risk for tool in asked}
    assert [s.tool for s in result.steps] == ALL and not any(s.error for s in result.steps)
    assert [s.confirmed for s in result.steps] == [True if s.tool in asked else None for s in result.steps]
    requested = [e.data for e in result.events if e.kind == "confirmation.requested"]
    assert [(d["tool"], d["risk"]) for d in requested] == seen


def test_the_old_policy_name_still_works(page):
    tab = page("t/risk.html")
    with ScriptedServer([say("ok")]) as model, pytest.warns(DeprecationWarning, match="medium"):
        agent = agent_for(tab, model, confirm="non-readonly")
    assert agent.confirm == "medium"
    with pytest.raises(wm.ConfigurationError, match="'never', 'high', 'medium', 'always'"):
        wm.Agent(tab, base_url="http://127.0.0.1:1/v1", api_key="k", model="m", confirm="sometimes")


def test_skills_declare_high_risk(page):
    tab = page("t/risk.html")
    skill = wm.Skill("risky", match=["*://127.0.0.1/t/risk.html"])
    skill.add_tool(
        "wipeNote", "async () => { document.getElementById('note').textContent = ''; return true; }", risk="high"
    )
    skill.define("shout", "defineTool({name: 'shout', description: 'Shouts', risk: 'high'}, async () => 'HEY');")
    skill.add_tool("peek", "async () => document.title", read_only=True)
    browser = tab._browser
    browser.skills.install(skill)
    dom = wm.Skill.builtin("dom")
    tab.inject(dom)
    try:
        tab.wait_for_tool("submitForm")
        assert tab.tools["wipeNote"].annotations["risk"] == "high"
        assert {n: tab.tools[n].risk for n in ("wipeNote", "shout", "peek")} == {
            "wipeNote": "high",
            "shout": "high",
            "peek": "low",
        }
        assert tab.tools["submitForm"].risk == "high" and tab.tools["readPage"].risk == "low"
        assert tab.tools["click"].risk == "medium"
    finally:
        browser.skills.uninstall("risky")
        browser.skills.uninstall("dom")
