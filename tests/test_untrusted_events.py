"""What side panels and session folders hand the library is checked before it is used: ``panel.event`` carries
only the kinds a side panel sends, each with typed and bounded fields (one check, ``parse_panel_event``, in the
relay and in ``Browser``), never evidence; the session report reads only screenshots the session wrote; and no
tool name makes a session write outside its folder."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from pathlib import Path
from typing import Any

import peers

import webmcp_nb as wm
from webmcp_nb.core import _loop
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.link.protocol import PANEL_EVENT_DATA, Method, parse_panel_event
from webmcp_nb.link.relay import Relay
from webmcp_nb.recording.session import EVIDENCE_FILE, evidence_file

ROOT = Path(__file__).resolve().parents[1]
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt do not leak\n-----END OPENSSH PRIVATE KEY-----\n"

# What the side panel sends, shaped as extension/worker/panel-hub.js and extension/chat/chat-loop.js build it.
LEGITIMATE = [
    {"kind": "tool.called", "data": {"tool": "searchFlights", "arguments": {"origin": "LON"}}},
    {"kind": "tool.returned", "duration_ms": 12.5, "data": {"tool": "searchFlights", "text": '{"count": 15}'}},
    {"kind": "tool.failed", "duration_ms": 3, "data": {"tool": "boom", "code": "TOOL_ERROR", "message": "kaboom 42"}},
    {"kind": "tool.denied", "data": {"tool": "searchFlights", "arguments": {}}},
    {"kind": "confirmation.answer", "data": {"id": "a1b2c3", "approved": True}},
    {
        "kind": "confirmation.requested",
        "data": {"id": "sc-1", "tool": "t", "arguments": {}, "read_only": False, "risk": "high"},
    },
    {
        "kind": "confirmation.answered",
        "data": {"id": "sc-1", "tool": "t", "arguments": {}, "approved": False, "by": "sidepanel"},
    },
    {"kind": "chat.message", "data": {"role": "user", "text": "Find flights", "model": "scripted"}},
    {
        "kind": "model.response",
        "data": {
            "content": None,
            "tool_calls": [{"id": "c1", "name": "searchFlights", "arguments": {"a": 1}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
        },
    },
    {"kind": "agent.limit", "data": {"limit": "max_tool_calls", "tool": "listFlights"}},
    {"kind": "agent.limit", "data": {"limit": "turn_timeout", "seconds": 60}},
    {"kind": "agent.error", "data": {"error": "ModelError", "message": "The model endpoint answered 500"}},
    {"kind": "agent.turn.finished", "data": {"answer": None, "stopped": "cancelled", "steps": 0, "usage": None}},
]

FORGED = [
    {"kind": "evidence.screenshot", "data": {"tool": "t", "phase": "before", "file": "../../.ssh/id_ed25519"}},
    {"kind": "evidence.failed", "data": {"tool": "t", "error": "x"}},
    {"kind": "note", "data": {"text": "a note from nowhere"}},
    {"kind": "navigation", "data": {}},
    {"kind": "panel", "data": {}},
    {"kind": "tool.called", "data": {"arguments": {}}},  # no tool
    {"kind": "tool.called", "tab_id": True, "data": {"tool": "t"}},  # a bool is not a tab id
    {"kind": "tool.called", "tab_id": "3", "data": {"tool": "t"}},
    {"kind": "confirmation.answer", "data": {"id": "x", "approved": "yes"}},
    {"kind": "tool.returned", "duration_ms": -1, "data": {"tool": "t", "text": "1"}},
    {"kind": "tool.called", "data": {"tool": "t" * 1_001}},
    {"kind": "chat.message", "data": {"role": "user", "text": "x" * 200_001}},
    {"kind": "tool.called", "data": {"tool": "t", "arguments": {"blob": "x" * 1_000_001}}},
    {"kind": "model.response", "data": {"tool_calls": [{"name": "t"}] * 101}},
    {"kind": "model.response", "data": {"usage": {"prompt_tokens": -1}}},
    {"kind": "confirmation.requested", "data": {"id": "x", "tool": "t", "risk": "none at all"}},
    {"kind": "tool.called", "data": "not an object"},
    "not an event",
    None,
]


def test_the_kinds_accepted_are_exactly_those_the_side_panel_sends() -> None:
    sent = set()
    for name in ("worker/panel-hub.js", "chat/chat-loop.js"):
        sent |= set(re.findall(r"\bemit\(\s*'([a-z_.]+)'", (ROOT / "extension" / name).read_text()))
    assert sent == set(PANEL_EVENT_DATA)


def test_every_event_a_panel_sends_is_accepted_with_its_own_fields() -> None:
    for raw in LEGITIMATE:
        forged_extra = {**raw, "data": {**raw["data"], "file": "../x", "kind": "evidence.screenshot"}}
        event = parse_panel_event({**forged_extra, "tab_id": 7, "url": "http://127.0.0.1/", "ts": 1.0})
        assert event is not None, raw
        assert event.kind == raw["kind"] and event.tab_id == 7
        assert event.data == {**raw["data"], "origin": "sidepanel"}  # the extra fields are gone


def test_evidence_unknown_kinds_wrong_types_and_oversized_fields_are_refused() -> None:
    for raw in FORGED:
        assert parse_panel_event(raw) is None, str(raw)[:200]


def test_the_relay_forwards_only_valid_panel_events() -> None:
    async def scenario() -> list[dict[str, Any]]:
        relay = await Relay("a-test-secret-of-some-length").start()
        try:
            client = await peers.client(relay.port, relay.secret)
            await client.recv()  # hello
            peer = await peers.browser(relay.port, relay.secret, "B")
            for event in [*FORGED, LEGITIMATE[0], {**LEGITIMATE[4], "data": {"id": "z", "approved": True}}]:
                await peer.send(json.dumps({"method": Method.PANEL_EVENT.value, "params": {"event": event}}))
            await peer.send(json.dumps({"method": "tab.updated", "params": {"tab": {"id": 1}}}))  # a fence
            received = []
            while True:
                message = json.loads(await asyncio.wait_for(client.recv(), 10))
                if message.get("method") == Method.PANEL_EVENT.value:
                    received.append(message["params"])
                elif message.get("method") == Method.TAB_UPDATED.value:
                    return received
        finally:
            await relay.close()

    received = asyncio.run(scenario())
    assert [(r["browserId"], r["event"]["kind"]) for r in received] == [
        ("B", "tool.called"),
        ("B", "confirmation.answer"),
    ]
    assert received[0]["event"]["data"] == {**LEGITIMATE[0]["data"], "origin": "sidepanel"}


def test_a_forged_evidence_event_never_reaches_the_session_or_its_report(polyfill_browser, tmp_path: Path) -> None:
    secret = tmp_path / "id_ed25519"
    secret.write_text(SECRET)
    browser = polyfill_browser

    async def deliver(event: Any) -> None:  # as the connection does with each notification, on the loop
        browser._on_event(Method.PANEL_EVENT.value, {"browserId": browser.id, "event": event})

    with wm.Session(browser, directory=tmp_path / "s", evidence="off"):
        for file in (str(secret), "../id_ed25519"):
            _loop.run(deliver({"kind": "evidence.screenshot", "data": {"tool": "t", "phase": "before", "file": file}}))
        _loop.run(deliver(LEGITIMATE[0]))
    loaded = wm.Session.load(tmp_path / "s")
    assert [e.kind for e in loaded] == ["tool.called"] and loaded.events[0].data["origin"] == "sidepanel"
    report = loaded.report().html
    assert "do not leak" not in report and base64.b64encode(secret.read_bytes()).decode()[:40] not in report


def test_the_report_embeds_only_screenshots_the_session_wrote(polyfill_browser, server, tmp_path: Path) -> None:
    tab = polyfill_browser.open(server.url("flights/"))
    try:
        with wm.Session(polyfill_browser, directory=tmp_path / "shared", evidence="all") as session:
            tab.call("searchFlights", DEMO_SEARCH)
    finally:
        tab.close()
    folder = session.directory
    shots = [e.data["file"] for e in session.filter("evidence.screenshot")]  # (the browser is shared: others' too)
    assert len([e for e in session.filter("evidence.screenshot", tab_id=tab.id)]) == 2
    assert all(EVIDENCE_FILE.fullmatch(s) for s in shots)

    # A session folder as someone might share it: events naming files outside it, a link, a pipe, a fake.
    secret = tmp_path / "id_ed25519"
    secret.write_text(SECRET)
    (folder / "0097-link-before.png").symlink_to(secret)
    (folder / "0098-fake-after.png").write_text(SECRET)
    os.mkfifo(folder / "0099-pipe-before.png")
    names = [
        "../id_ed25519",
        str(secret),
        "0097-link-before.png",
        "0098-fake-after.png",
        "0099-pipe-before.png",
        "0001-../../id_ed25519-before.png",
        42,
    ]
    last = session.events[-1]
    with (folder / "session.jsonl").open("a") as jsonl:
        for i, name in enumerate(names):
            forged = {**last.model_dump(), "seq": last.seq + 1 + i, "kind": "evidence.screenshot"}
            forged["data"] = {"tool": "t", "phase": "before", "file": name}
            jsonl.write(json.dumps(forged) + "\n")

    loaded = wm.Session.load(folder)
    report = loaded.report().html
    assert report.count("src='data:image/png;base64,") == len(shots)  # the session's own screenshots
    assert report.count("(missing evidence)") == len(names)
    assert "do not leak" not in report
    assert base64.b64encode(SECRET.encode()).decode()[:40] not in report
    copy = loaded.save(tmp_path / "copy")  # the session and its screenshots; not the link, not the pipe
    assert sorted(p.name for p in copy.iterdir()) == sorted(["session.jsonl", *shots, "0098-fake-after.png"])


def test_screenshot_names_stay_in_the_session_folder(polyfill_browser, tmp_path: Path) -> None:
    for tool in ("../../../outside", "/etc/cron.d/x", "a\\b", "<img src=x>", "\u202egnp.exe", "", "x" * 500, ".."):
        name = evidence_file(12, tool, "after")
        assert EVIDENCE_FILE.fullmatch(name) and Path(name).name == name and name != "..", name
    with wm.Session(polyfill_browser, directory=tmp_path / "s", evidence="all") as session:
        trap = tmp_path / "planted-target"
        (tmp_path / "s" / evidence_file(1, "../../x", "before")).symlink_to(trap)  # left in a shared folder
        name = session._write_evidence("../../x", "before", b"\x89PNG\r\n\x1a\n...")
    assert not trap.exists()  # never written through the link
    assert (tmp_path / "s" / name).read_bytes().startswith(b"\x89PNG") and not (tmp_path / "s" / name).is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]
