"""One set of agent rules for both faces: the notebook's agent and the side panel's chat follow
``webmcp_nb/core/agent_rules.py``, whose data is generated into ``extension/chat/agent-rules.js``; the functions
that apply it exist in both languages and must give exactly the results in ``tests/vectors/agent_rules.json`` — Python
here, the real extension modules through Node. That includes which page tools a model is offered (``gate.Offer``:
a frame's only while its site may be read) and what the list says of those it held back."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from webmcp_nb.agent.model_io import Usage, assistant_message
from webmcp_nb.agent.model_tools import model_name, normalize_schema, tool_specs
from webmcp_nb.agent.providers import PRESETS, resolve_provider
from webmcp_nb.browser.gate import Offer
from webmcp_nb.browser.tools import Tool
from webmcp_nb.core import agent_rules
from webmcp_nb.core.agent_rules import (
    PROVIDERS,
    TEXTS,
    fill,
    js_module,
    needs_confirmation,
    open_call_text,
    provider_for_url,
    request_fields,
    resolve_policy,
    result_text,
    risk_of,
    stop_note,
)
from webmcp_nb.link.grants import origin_of
from webmcp_nb.link.protocol import ToolInfo

ROOT = Path(__file__).resolve().parents[1]
VECTORS = Path(__file__).parent / "vectors" / "agent_rules.json"


def expand(value: Any) -> Any:
    """``{"repeat": [text, n]}`` is ``text * n``; ``{"join": [parts]}`` the parts joined; everything else as is."""
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        if list(value) == ["repeat"]:
            return value["repeat"][0] * value["repeat"][1]
        if list(value) == ["join"]:
            return "".join(expand(v) for v in value["join"])
        return {k: expand(v) for k, v in value.items()}
    return value


def load() -> dict[str, Any]:
    return expand(json.loads(VECTORS.read_text(encoding="utf-8")))


def expected(vectors: dict[str, Any]) -> dict[str, list[Any]]:
    """What every face must give, section by section, in the shape ``agent_rules.mjs`` prints."""
    return {
        "risks": [c["risk"] for c in vectors["risks"]],
        "policies": [c["resolved"] for c in vectors["policies"]],
        "confirmations": [c["asks"] for c in vectors["confirmations"]],
        "schemas": [{"schema": c["expected"], "wrapped": c["wrapped"]} for c in vectors["schemas"]],
        "names": [c["expected"] for c in vectors["names"]],
        "tool_specs": [c["expected"] for c in vectors["tool_specs"]],
        "results": [c["expected"] for c in vectors["results"]],
        "stops": [c["expected"] for c in vectors["stops"]],
        "providers": [c["provider"] for c in vectors["providers"]],
        "requests": [c["expected"] for c in vectors["requests"]],
        "assistant_messages": [
            {"ids": c["expected_ids"], "message": c["expected"]} for c in vectors["assistant_messages"]
        ],
        "usages": [c["expected"] for c in vectors["usages"]],
        "offers": [c["expected"] for c in vectors["offers"]],
    }


class _Tab:
    """Just enough of a tab for ``Tool``: its own origin (a frame's tools say theirs)."""

    def __init__(self, origin: str = "") -> None:
        self.origin = origin


def python_results(vectors: dict[str, Any]) -> dict[str, list[Any]]:
    """Every case through the Python agent's own functions."""

    def policy(name: str) -> str | None:
        try:
            return resolve_policy(name)
        except ValueError:
            return None

    def names(case: dict[str, Any]) -> list[str]:
        taken: set[str] = set()
        out = []
        for name in case["names"]:
            out.append(model_name(name, taken))
            taken.add(out[-1])
        return out

    def specs(case: dict[str, Any]) -> list[dict[str, Any]]:
        tab = _Tab(case.get("page_origin", ""))
        tools = [Tool(tab, ToolInfo.model_validate(t)) for t in case["tools"]]  # type: ignore[arg-type]
        return [{"risk": s.tool.risk, "wrapped": s.wrapped, "function": s.function} for s in tool_specs(tools).values()]

    def result(case: dict[str, Any]) -> str:
        body = case["text"] if "template" not in case else fill(TEXTS[case["template"]], **case["values"])
        untrusted = (case["annotations"] or {}).get("untrustedContentHint") is True
        return result_text(case["tool"], case["status"], body, untrusted, case.get("limit", 16_000))

    def stop(case: dict[str, Any]) -> str:
        if case["kind"] == "note":
            return stop_note(case["reason"], **case["values"])
        return open_call_text(case["state"], case["reason"], **case["values"])

    def message(case: dict[str, Any]) -> dict[str, Any]:
        calls, history = assistant_message(
            case["content"],
            case["reasoning"],
            [dict(c) for c in case["calls"]],
            send_reasoning=PROVIDERS[case["provider"]]["quirks"]["send_reasoning"],
            prompt_mode=False,
            ids=itertools.count(1),
        )
        return {"ids": [c[0] for c in calls], "message": history}

    def offer(case: dict[str, Any]) -> dict[str, Any]:
        tab = SimpleNamespace(url=case["url"], origin=case["origin"], browser=None)
        offered = Offer(tab, lambda url: origin_of(url) in case["readable"])
        tools = [SimpleNamespace(name=t["name"], origin=t.get("origin")) for t in case["tools"]]
        return {"tools": [t.name for t in offered.select(tools)], "note": offered.note()}

    def usage(case: dict[str, Any]) -> dict[str, int] | None:
        found = Usage.from_api(case["raw"])
        return found.as_dict() if found else None

    return {
        "risks": [risk_of(c["annotations"]) for c in vectors["risks"]],
        "policies": [policy(c["name"]) for c in vectors["policies"]],
        "confirmations": [
            {risk: needs_confirmation(c["policy"], risk, c["allow_high_risk"]) for risk in ("low", "medium", "high")}
            for c in vectors["confirmations"]
        ],
        "schemas": [
            dict(zip(("schema", "wrapped"), normalize_schema(c["schema"]), strict=True)) for c in vectors["schemas"]
        ],
        "names": [names(c) for c in vectors["names"]],
        "tool_specs": [specs(c) for c in vectors["tool_specs"]],
        "results": [result(c) for c in vectors["results"]],
        "stops": [stop(c) for c in vectors["stops"]],
        "providers": [provider_for_url(c["base_url"]) for c in vectors["providers"]],
        "requests": [
            request_fields(PROVIDERS[c["provider"]]["quirks"], tools=c["tools"], stream=c["stream"])
            for c in vectors["requests"]
        ],
        "assistant_messages": [message(c) for c in vectors["assistant_messages"]],
        "usages": [usage(c) for c in vectors["usages"]],
        "offers": [offer(c) for c in vectors["offers"]],
    }


def compare(got: dict[str, list[Any]], want: dict[str, list[Any]], vectors: dict[str, Any], face: str) -> None:
    assert got.keys() == want.keys()
    for section, cases in want.items():
        assert len(got[section]) == len(cases), f"{face}: {section}"
        for i, (g, w) in enumerate(zip(got[section], cases, strict=True)):
            case = vectors[section][i]
            label = case.get("name") or case.get("base_url") or case.get("provider") or case.get("policy") or i
            assert g == w, f"{face}: {section}: {label}"


def test_the_extensions_agent_rules_js_is_generated_from_python() -> None:
    shipped = (ROOT / "extension" / "chat" / "agent-rules.js").read_text(encoding="utf-8")
    assert shipped == js_module(), "run python -m webmcp_nb.core.agent_rules"


def test_the_notebooks_agent_follows_every_case() -> None:
    vectors = load()
    compare(python_results(vectors), expected(vectors), vectors, "Python")


def test_the_side_panels_chat_follows_every_case() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the side panel's rules (extension/chat/agent-core.js) cannot be run here")
    run = subprocess.run(
        [node, str(VECTORS.parent / "agent_rules.mjs"), str(VECTORS), str(ROOT / "extension" / "chat")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    vectors = load()
    compare(json.loads(run.stdout), expected(vectors), vectors, "side panel")


def test_every_preset_and_policy_has_cases() -> None:
    vectors = load()
    assert {c["provider"] for c in vectors["requests"]} == set(PROVIDERS)
    assert {c["provider"] for c in vectors["providers"]} >= set(PROVIDERS) - {"any"}
    assert {c["policy"] for c in vectors["confirmations"]} >= set(agent_rules.CONFIRM["policies"])


def test_python_presets_are_the_rules() -> None:
    for name, preset in PROVIDERS.items():
        provider = PRESETS[name]
        assert (provider.base_url, provider.api_key_env, provider.default_model) == (
            preset["base_url"],
            preset["api_key_env"],
            preset["default_model"],
        )
        assert provider.quirks == preset["quirks"] and list(provider.hosts) == preset["hosts"]
    # a base URL without a preset's name gets that preset's quirks, as the side panel recognises it
    assert resolve_provider(None, "https://api.deepseek.com/v1").name == "deepseek"
    assert resolve_provider(None, "http://127.0.0.1:1/v1").name == "any"
    assert resolve_provider("openai", "https://api.deepseek.com/v1").name == "openai"  # a named preset wins


def _leaf_texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaf_texts(item)
    elif isinstance(value, str):
        yield value


def test_no_face_keeps_its_own_copy_of_a_text() -> None:
    """The texts the model reads live in agent_rules.py only: a copy elsewhere would drift."""
    texts = {agent_rules.SYSTEM_PROMPT.splitlines()[0], *agent_rules.PROMPT_MODE.splitlines()}
    for text in _leaf_texts(TEXTS):
        texts |= {part for part in re.split(r"\{\w+\}", text) if len(part) >= 24}
    sources = [*(ROOT / "extension").rglob("*.js"), *(ROOT / "webmcp_nb").rglob("*.py")]
    for path in sources:
        if path.name in ("agent-rules.js", "agent_rules.py"):
            continue
        source = path.read_text(encoding="utf-8")
        for text in texts:
            assert text not in source, f"{path.name} has its own copy of {text!r}"
