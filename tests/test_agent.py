"""The agent loop through the real openai client against the scripted OpenAI-compatible server, on the
real flight demo in a real browser."""

import threading
import time

import pytest
from eventually import eventually

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.testing import QUIRKS, Reply, ScriptedServer, call, fail, say, slow

TASK = "Find direct flights from London to New York and tell me how many there are."
FLIGHT_SCRIPT = [
    fail(429),  # transient: the SDK retries with backoff
    call("searchFlights", say="Searching first.", **DEMO_SEARCH),
    call("setFilters", stops=[0]),
    call("listFlights"),
    say("There are 4 direct flights."),
]


@pytest.fixture
def page(polyfill_browser, server):
    """Opens a page in the polyfill browser (the model's quirks do not depend on the browser's mode)."""
    opened = []

    def open_(path):
        opened.append(polyfill_browser.open(server.url(path)))
        return opened[-1]

    yield open_
    for tab in opened:
        tab.close()


@pytest.fixture
def flights(page):
    return page("flights/")


@pytest.fixture
def faults(page):
    return page("t/faults.html")


def agent_for(tab, model: ScriptedServer, **options) -> wm.Agent:
    options.setdefault("provider", "any")
    options.setdefault("evidence", "off")  # recorded, but without screenshots: these tests are about the loop
    return wm.Agent(tab, base_url=model.base_url, api_key="offline-key", model="scripted", **options)


@pytest.mark.parametrize("quirks", ["openai", "deepseek", "qwen", "glm", "moonshot", "ollama", "vllm"])
def test_multi_step_task_on_the_flight_demo_with_each_presets_quirks(flights, quirks):
    with ScriptedServer(FLIGHT_SCRIPT, quirks=quirks) as model:
        agent = agent_for(flights, model, provider=quirks, confirm="never")
        result = agent.run(TASK)
    assert result.answer == "There are 4 direct flights." and result.stopped is None
    assert [s.tool for s in result.steps] == ["searchFlights", "setFilters", "listFlights"]
    assert all(s.error is None for s in result.steps)
    assert {f["stops"] for f in result.steps[2].result} == {0}
    shown = flights.call("listFlights").value  # the page really changed: its own view is filtered
    assert len(shown) == 4 and {f["stops"] for f in shown} == {0}
    assert len(model.requests) == 5  # the 429 and its retry, then one request per step
    first_with_tools = next(r for r in model.requests if "tools" in r)
    assert [t["function"]["name"] for t in first_with_tools["tools"]] == ["searchFlights"]
    after_search = next(r for r in model.requests if any(m["role"] == "tool" for m in r["messages"]))
    assert {t["function"]["name"] for t in after_search["tools"]} >= {"setFilters", "listFlights"}


@pytest.mark.parametrize("explicit", [True, False], ids=["prompt-mode-preset", "prompt-mode-detected"])
def test_prompt_mode_completes_the_same_task(flights, explicit):
    with ScriptedServer(FLIGHT_SCRIPT, quirks="prompt") as model:
        agent = agent_for(flights, model, confirm="never", prompt_mode=True if explicit else None)
        result = agent.run(TASK)
    assert result.answer == "There are 4 direct flights."
    assert [s.tool for s in result.steps] == ["searchFlights", "setFilters", "listFlights"]
    assert agent.provider.prompt_mode
    system = model.requests[-1]["messages"][0]["content"]
    assert "<tool_call>" in system and "setFilters" in system
    if not explicit:
        assert any(e.kind == "model.prompt_mode" for e in result.events)


def test_what_an_endpoint_refuses_is_not_sent_again(flights):
    with ScriptedServer(FLIGHT_SCRIPT, quirks="deepseek") as model:  # an unknown host: no preset's quirks
        agent = agent_for(flights, model, confirm="never")
        result = agent.run(TASK)
    assert result.answer == "There are 4 direct flights." and agent.provider.tool_choice is None
    assert model.refusals == ["tool_choice is not supported"]
    assert not any("tool_choice" in r for r in model.requests[1:])


def test_the_11th_tool_call_is_refused_and_the_model_told(faults):
    def script(request):
        return call("received") if "tools" in request else say("I stopped, as told.")

    with ScriptedServer(script) as model:
        result = agent_for(faults, model).run("Check again and again.")
    assert len(result.steps) == 10 and result.stopped == "max_tool_calls"
    assert result.answer == "I stopped, as told."
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 11 and "Refused: the limit of 10 tool calls" in tool_messages[-1]["content"]
    assert "tools" not in model.requests[-1]


def test_a_hanging_tool_times_out_and_the_model_hears_it(faults):
    with ScriptedServer([call("hang"), say("The tool hung.")]) as model:
        result = agent_for(faults, model, tool_timeout=1, confirm="never").run("Use hang.")
    (step,) = result.steps
    assert step.error.startswith("TIMEOUT") and result.answer == "The tool hung."
    assert 'status="error"' in model.requests[-1]["messages"][-1]["content"]


def test_the_turn_timeout_stops_a_runaway_loop(faults):
    with ScriptedServer(lambda request: slow(call("received"), 0.3)) as model:
        agent = agent_for(faults, model, turn_timeout=2, max_tool_calls=1000)
        result = agent.run("Loop forever.")
    assert result.stopped == "turn_timeout" and result.answer is None
    assert 1 <= len(result.steps) < 20
    assert "stopped after 2 s" in agent.messages[-1]["content"]  # the next turn's model is told


def test_confirmation_approve_and_deny_through_a_callback(flights):
    asked = []

    def decide(request: wm.ConfirmationRequest) -> bool:
        asked.append(request.tool)
        return request.tool == "searchFlights"

    script = [call("searchFlights", **DEMO_SEARCH), call("setFilters", stops=[0]), say("Searched; filter refused.")]
    with ScriptedServer(script) as model:
        result = agent_for(flights, model, on_confirm=decide).run(TASK)
    assert asked == ["searchFlights", "setFilters"]  # listFlights would not be asked: it is read-only
    assert [s.confirmed for s in result.steps] == [True, False]
    assert "denied" in result.steps[1].error
    assert len(flights.call("listFlights").value) == 15  # the denied filter never ran
    denied = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "The user denied this action" in denied["content"]


def test_run_without_a_way_to_answer_fails_fast(flights):
    with ScriptedServer([call("searchFlights", **DEMO_SEARCH)]) as model:
        agent = agent_for(flights, model)
        started = time.monotonic()
        with pytest.raises(wm.ConfirmationRequiredError, match=r"agent\.start"):
            agent.run(TASK)
    assert time.monotonic() - started < 10
    assert flights.tools.keys() == {"searchFlights"}  # nothing ran


def test_start_returns_at_once_and_a_confirmation_is_answered_from_elsewhere(flights):
    script = [call("searchFlights", **DEMO_SEARCH), say("Done.")]
    with ScriptedServer(script) as model:
        agent = agent_for(flights, model)
        run = agent.start(TASK)
        (request,) = eventually(lambda: run.pending, 10, "a confirmation")
        assert request.tool == "searchFlights" and not run.done
        answered = threading.Thread(target=run.approve)  # any thread, e.g. a widget callback
        answered.start()
        answered.join()
        result = run.result(timeout=20)
    assert result.answer == "Done." and result.steps[0].confirmed is True
    kinds = [e.kind for e in result.events]
    assert kinds.index("confirmation.requested") < kinds.index("confirmation.answered") < kinds.index("tool.called")


def test_the_first_answer_wins_when_two_come_at_once(flights):
    """Both panels and a cell may answer one confirmation at once: an answer given before the loop had settled the
    first was told it won too, and named itself as the one who answered."""
    with ScriptedServer([call("searchFlights", **DEMO_SEARCH), say("Done.")]) as model:
        agent = agent_for(flights, model)
        run = agent.start(TASK)
        (request,) = eventually(lambda: run.pending, 10, "a confirmation")
        first = agent.answer(request.id, True, by="the notebook panel")
        answers = [first, agent.answer(request.id, False, by="a cell")]
        result = run.result(timeout=20)
    assert answers == [True, False] and result.steps[0].confirmed is True
    (answered,) = [e for e in result.events if e.kind == "confirmation.answered"]
    assert answered.data["by"] == "the notebook panel"


def test_await_arun_and_follow_up_turns_keep_the_conversation(flights):
    import asyncio

    script = [say("Hello."), call("searchFlights", **DEMO_SEARCH), say("Searched.")]
    with ScriptedServer(script) as model:
        agent = agent_for(flights, model, confirm="never")
        first = asyncio.run(agent.arun("Hi"))
        second = agent.run("Now search.")
    assert (first.answer, second.answer) == ("Hello.", "Searched.")
    roles = [m["role"] for m in model.requests[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool"]


def test_tool_results_are_delimited_bounded_and_marked_untrusted(faults):
    script = [call("readComments"), call("huge", mb=1), call("ns_echo", word="hi"), say("ok")]
    with ScriptedServer(script) as model:
        result = agent_for(faults, model, confirm="never", max_result_chars=5000).run("Read the comments.")
    tools = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert tools[0].startswith('<tool_result tool="readComments" status="ok" untrusted="true">')
    assert "IGNORE PREVIOUS INSTRUCTIONS" in tools[0] and tools[0].endswith("</tool_result>")
    assert len(tools[1]) < 5200 and "more characters cut" in tools[1]
    assert result.steps[2].tool == "ns.echo" and result.steps[2].result == "hi"  # the provider-safe name mapped back
    offered = {t["function"]["name"]: t["function"] for t in model.requests[0]["tools"]}
    assert "returns untrusted content)" in offered["readComments"]["description"]
    echo = offered["ns_echo"]["parameters"]
    assert echo == {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    assert "untrusted" in model.requests[0]["messages"][0]["content"]  # the system prompt explains the mark


def test_events_stream_while_the_turn_runs(flights):
    seen = []
    with ScriptedServer([Reply(content="A fairly long answer streamed in pieces.")]) as model:
        agent = agent_for(flights, model)
        agent.events.subscribe(lambda e: seen.append(e.kind))
        agent.run("Say something.")
    assert seen[0] == "agent.turn.started" and seen[-1] == "agent.turn.finished"
    deltas = [i for i, k in enumerate(seen) if k == "model.delta"]
    assert len(deltas) > 2 and deltas[-1] < seen.index("model.response")


def test_the_same_task_on_native_webmcp(native_browser, server):
    tab = native_browser.open(server.url("flights/"))
    try:
        with ScriptedServer(FLIGHT_SCRIPT) as model:
            result = agent_for(tab, model, confirm="never").run(TASK)
        assert result.answer == "There are 4 direct flights." and not any(s.error for s in result.steps)
        assert tab.tools["listFlights"].source == "native" and len(tab.call("listFlights").value) == 4
    finally:
        tab.close()


def test_active_skills_instructions_join_the_system_prompt(page):
    tab = page("shop/")
    tab.inject(wm.Skill.builtin("shop"))
    try:
        with ScriptedServer([say("ok")]) as model:
            agent_for(tab, model).run("What is in the cart?")
        system = model.requests[0]["messages"][0]["content"]
        assert "## Skill: shop" in system and wm.Skill.builtin("shop").instructions[:60] in system
        assert "offline-key" not in str(model.requests)  # the key travels in the header only
    finally:
        tab._browser.skills.uninstall("shop")


def test_presets_and_keys(monkeypatch):
    from webmcp_nb.agent.providers import PRESETS, resolve_provider

    assert set(QUIRKS) >= set(PRESETS) - {"any"}
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(wm.ConfigurationError, match="DEEPSEEK_API_KEY") as missing:
        resolve_provider("deepseek", None).api_key()
    assert missing.value.data == {"variable": "DEEPSEEK_API_KEY"}
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    assert resolve_provider("deepseek", None).api_key() == "sk-test"
    with pytest.raises(wm.ConfigurationError, match="unknown provider"):
        resolve_provider("nope", None)
    with pytest.raises(wm.ConfigurationError, match="base_url"):
        resolve_provider("any", None)
