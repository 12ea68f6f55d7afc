"""Skills in a real browser: injection (also on strict-CSP and Trusted-Types pages), live reload, precedence,
per-tool switches, health checks, auto-injection, and the shipped skills."""

import time
from pathlib import Path

import pytest

import webmcp_nb as wm

COUNTER = """
async () => {
  document.body.dataset.calls = String(Number(document.body.dataset.calls || 0) + 1);
  return {version: 1, calls: Number(document.body.dataset.calls)};
}
"""


def probe_skill(name: str = "probe", match: tuple[str, ...] = ()) -> wm.Skill:
    skill = wm.Skill(name, match=list(match), description="A test skill")
    skill.add_tool("counter", COUNTER, description="Counts its calls in the page")
    skill.add_tool("greet", "async () => 'from the skill'", description="Greets", read_only=True)
    return skill


@pytest.fixture
def skills_cleanup(browser):
    yield
    for name in list(browser.skills):
        browser.skills.uninstall(name)


@pytest.mark.parametrize("prefix", ["", "csp/", "tt/"], ids=["plain", "strict-csp", "trusted-types"])
def test_shop_skill_end_to_end(open_tab, prefix, skills_cleanup):
    tab = open_tab(f"{prefix}shop/")
    assert len(tab.tools) == 0  # the shop has no WebMCP of its own
    result = tab.inject(wm.Skill.builtin("shop"))
    assert result.ok and {"searchProducts", "addToCart", "readCart"} <= set(result.tools)
    assert {t.source for t in tab.tools.values()} == {"shop"}
    assert tab.tools["readCart"].read_only and not tab.tools["addToCart"].read_only

    found = tab.call("searchProducts", query="lamp").value
    products = found["products"] if isinstance(found, dict) else found
    assert products and all("lamp" in p["name"].lower() for p in products)
    tab.call("addToCart", productId=products[0]["productId"], quantity=2)
    cart = tab.call("readCart").value
    assert [(line["productId"], line["quantity"]) for line in cart["lines"]] == [(products[0]["productId"], 2)]
    assert cart["total"] == pytest.approx(2 * products[0]["price"])


def test_reload_replaces_definitions_without_reloading_the_page(open_tab, skills_cleanup):
    tab = open_tab("shop/")
    skill = probe_skill()
    tab.inject(skill)
    assert tab.call("counter").value == {"version": 1, "calls": 1}
    count = len(tab.tools)

    skill.add_tool("counter", COUNTER.replace("version: 1", "version: 2"), description="Counts, v2")
    results = skill.reload()
    assert [r.tab_id for r in results] == [tab.id] and results[0].ok
    assert len(tab.tools) == count  # replaced, not duplicated
    assert tab.tools["counter"].description == "Counts, v2"
    assert tab.call("counter").value == {"version": 2, "calls": 2}  # the page kept its state


def test_a_skill_that_cannot_run_in_the_asked_tab_puts_back_the_version_before(open_tab, browser, skills_cleanup):
    tab = open_tab("shop/")
    skill = probe_skill()
    tab.inject(skill)
    closed_to_scripts = browser.open("chrome://version/")  # no extension script runs here
    try:
        skill.add_tool("counter", COUNTER.replace("version: 1", "version: 2"), description="Counts, v2")
        with pytest.raises(wm.SkillHealthError, match="could not run in tab"):
            closed_to_scripts.inject(skill)
        assert tab.tools["counter"].description == "Counts its calls in the page"  # v1 again, here too
        assert tab.call("counter").value["version"] == 1
    finally:
        closed_to_scripts.close()


def test_a_pages_own_tool_wins_and_tools_can_be_switched_off(open_tab, browser, source, skills_cleanup):
    tab = open_tab("t/own-tool.html")
    tab.inject(probe_skill())
    assert tab.tools["greet"].source == source and tab.call("greet").value == "from the page"
    assert tab.tools["counter"].source == "probe"
    (status,) = tab._info.skills
    assert status.shadowed == ["greet"]

    browser.skills.disable_tool("probe", "counter")
    tab.refresh_tools()
    assert "counter" not in tab.tools and browser.skills["probe"].disabled_tools == ["counter"]
    with pytest.raises(wm.ToolNotFoundError):
        tab.call("counter")
    browser.skills.enable_tool("probe", "counter")
    tab.refresh_tools()
    assert "counter" in tab.tools

    browser.skills.disable("probe")
    tab.refresh_tools()
    assert set(tab.tools) == {"greet"} and tab.tools["greet"].source == source
    browser.skills.enable("probe")
    tab.refresh_tools()
    assert tab.tools["counter"].source == "probe"


def test_a_failing_health_check_registers_nothing_and_says_why(open_tab, skills_cleanup):
    tab = open_tab("shop/")
    skill = probe_skill().health_check("() => document.querySelector('#checkout') ? true : 'no #checkout button'")
    with pytest.raises(wm.SkillHealthError, match="no #checkout button"):
        tab.inject(skill)
    tab.refresh_tools()
    assert len(tab.tools) == 0
    (status,) = tab._info.skills
    assert not status.ok and status.reason == "no #checkout button"

    broken = wm.Skill("broken").define("tools.js", "defineTool({name: 'x'}, async () => 1); throw new Error('oops');")
    with pytest.raises(wm.SkillHealthError, match=r"tools\.js threw: oops"):
        tab.inject(broken)


def test_auto_injection_after_navigation_and_reload(open_tab, browser, server, skills_cleanup):
    tab = open_tab("t/landing.html")
    results = browser.skills.install(probe_skill(match=("*://127.0.0.1/t/faults.html",)))
    assert results == []  # no open tab matches yet
    tab.navigate(server.url("t/faults.html"))
    assert tab.wait_for_tool("counter", timeout=10).source == "probe"
    tab.call("counter")
    tab.reload()
    assert tab.wait_for_tool("counter", timeout=10)
    assert tab.call("counter").value["calls"] == 1  # a fresh page, a fresh injection

    browser.skills.uninstall("probe")
    tab.refresh_tools()
    assert "counter" not in tab.tools and "probe" not in browser.skills
    tab.reload()
    assert "counter" not in tab.tools


def test_dom_skill_fills_and_submits_a_form_and_reads_the_result(open_tab, skills_cleanup):
    tab = open_tab("t/signup.html")
    tab.inject(wm.Skill.builtin("dom"))
    assert tab.tools["readPage"].read_only and not tab.tools["click"].read_only
    page = tab.call("readPage").value
    assert page["title"] == "Sign up" and page["forms"][0]["fields"]

    tab.call("fill", target={"label": "Full name"}, value="Ada Lovelace")
    tab.call("fill", target={"label": "Email address"}, value="ada@example.org")
    tab.call("select", target={"label": "Plan"}, value="pro")
    tab.call("check", target={"label": "I accept the terms"})
    tab.call("click", target={"role": "button", "text": "Sign up"})
    tab.call("waitFor", text="Welcome Ada", timeoutMs=5000)
    assert "Welcome Ada Lovelace <ada@example.org> on the pro plan" in tab.call("readPage").value["text"]


def test_dom_skill_submits_only_through_submit_form_which_presses_enter_in_a_field_in_no_form(open_tab, skills_cleanup):
    tab = open_tab("t/signup.html")
    tab.inject(wm.Skill.builtin("dom"))
    assert (tab.tools["fill"].risk, tab.tools["submitForm"].risk) == ("medium", "high")
    tab.call("fill", target={"label": "Full name"}, value="Ada Lovelace")
    tab.call("fill", target={"label": "Email address"}, value="ada@example.org")
    tab.call("check", target={"label": "I accept the terms"})
    # fill takes no submit: the schema check refuses it before the page sees the call (nothing filled, nothing sent)
    with pytest.raises(wm.InvalidArgumentsError, match="submit"):
        tab.call("fill", target={"label": "Full name"}, value="Grace Hopper", submit=True)
    page = tab.call("readPage").value
    assert page["forms"][0]["fields"][0]["value"] == "Ada Lovelace" and "Welcome" not in page["text"]

    # submitForm on a field of a form submits that form
    sent = tab.call("submitForm", target={"label": "Full name"}).value
    assert sent["submitted"] is True and "pressedEnter" not in sent
    assert "Welcome Ada Lovelace <ada@example.org> on the free plan" in sent["messages"]

    # on a field in no form (a search box the page's script runs) it presses Enter there, as fill's submit did
    filled = tab.call("fill", target={"label": "Find a topic"}, value="tides").value
    assert "pressedEnter" not in filled and "Topics about" not in tab.call("readPage").value["text"]
    searched = tab.call("submitForm", target={"label": "Find a topic"}).value
    assert searched["pressedEnter"]["ref"] == filled["filled"]["ref"] and "submitted" not in searched
    assert searched["messages"][-1] == "Topics about tides"

    # anything else in no form is not something to submit: the error says what to do instead
    with pytest.raises(wm.ToolError) as info:
        tab.call("submitForm", target={"role": "heading", "text": "Sign up for the newsletter"})
    assert info.value.reason == "TARGET_NOT_FOUND" and "not in a <form>" in str(info.value)
    assert "fill" not in str(info.value)  # it no longer points at fill's submit


def test_a_skill_injected_by_hand_follows_its_tab(open_tab, server, skills_cleanup):
    tab = open_tab("t/signup.html")
    tab.inject(wm.Skill.builtin("dom"))
    tab.call("click", target={"text": "Sign up"})  # stays on the page
    tab.navigate(server.url("shop/"))
    assert tab.wait_for_tool("readPage", timeout=10).source == "dom"
    assert tab.call("readPage").value["title"] == tab.title


def test_dom_skill_missing_target_fails_fast_with_a_code(open_tab, skills_cleanup):
    tab = open_tab("t/signup.html")
    tab.inject(wm.Skill.builtin("dom"))
    started = time.monotonic()
    with pytest.raises(wm.ToolError) as info:
        tab.call("click", target={"text": "Buy now"}, timeout=10)
    assert info.value.reason == "TARGET_NOT_FOUND" and "Buy now" in str(info.value)
    assert time.monotonic() - started < 10  # it did not wait for the call timeout
    with pytest.raises(wm.ToolError) as info:
        tab.call("waitFor", text="never there", timeoutMs=300)
    assert info.value.reason == "TIMEOUT"


def test_search_form_skill_is_configured_by_selectors(open_tab, skills_cleanup):
    tab = open_tab("shop/")
    unconfigured = wm.Skill.builtin("search-form").configure(input="#no-such-box")
    with pytest.raises(wm.SkillHealthError, match="#no-such-box"):
        tab.inject(unconfigured)
    skill = wm.Skill.builtin("search-form").configure(input="#search", results=".product-card")
    tab.inject(skill)
    found = tab.call("search", query="lamp").value
    records = found["results"] if isinstance(found, dict) else found
    assert records and all("lamp" in r["text"].lower() for r in records)


@pytest.mark.browser
def test_user_scripts_off_is_detected_and_explained(server):
    with pytest.warns(wm.UserScriptsWarning, match="Allow User Scripts") as caught:
        browser = wm.launch(user_scripts=False)
    assert [w.filename for w in caught] == [__file__]  # it points at the user's line, not the library's loop
    with browser:
        tab = browser.open(server.url("shop/"))
        with pytest.raises(wm.PermissionDeniedError, match="chrome://extensions/\\?id="):
            tab.inject(probe_skill())


def test_skill_files_round_trip(tmp_path: Path):
    skill = probe_skill(match=("*://example.org/*",)).health_check("() => true").configure(limit=3)
    skill.instructions = "Call counter before greet."
    loaded = wm.Skill.load(skill.save(tmp_path / "probe"))
    assert loaded.fragments == skill.fragments and list(loaded.fragments) == ["counter", "greet", "health-check"]
    assert (loaded.name, loaded.match, loaded.config, loaded.instructions) == (
        "probe",
        ["*://example.org/*"],
        {"limit": 3},
        "Call counter before greet.",
    )
    shipped = wm.Skill.builtin("shop")
    again = wm.Skill.load(shipped.save(tmp_path / "shop"))
    assert again.tools_js == shipped.tools_js and again.fragments == shipped.fragments
    assert again.extra == shipped.extra and set(again.extra) == {"verified", "smoke"}  # what lint reads, kept

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text("---\nname: plain\nmatch: '*://example.org/*'\n---\nBe nice.\n")
    (plain / "tools.js").write_text("defineTool({name: 'a', description: 'A'}, async () => 1);\n")
    loaded = wm.Skill.load(plain)
    assert list(loaded.fragments) == ["tools.js"] and loaded.match == ["*://example.org/*"]
    assert wm.Skill.load(loaded.save(tmp_path / "plain2")).tools_js == (plain / "tools.js").read_text()


def test_bad_skill_names_and_front_matter_are_refused(tmp_path: Path):
    with pytest.raises(wm.InvalidArgumentsError, match="skill name"):
        wm.Skill("has space")
    (tmp_path / "SKILL.md").write_text("no front matter")
    with pytest.raises(wm.InvalidArgumentsError, match="front matter"):
        wm.Skill.load(tmp_path)
