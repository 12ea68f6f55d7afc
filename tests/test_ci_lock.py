"""Lock files and ``webmcp-nb diff``: a page's tools written the same on every load (and the same under native
WebMCP and the polyfill), and the changes between two versions classified as breaking or compatible — between
lock files, between live pages (tests/pages/lint/v1.html and v2.html: v2 removes a tool, adds a required argument
and narrows an enum), and on hand-made schemas for each kind of change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import webmcp_nb as wm
from webmcp_nb.ci.diff import diff
from webmcp_nb.ci.lock import LockError, ToolEntry, ToolLock

LOCK_V1 = Path(__file__).parent / "pages" / "lint" / "hotel-v1.lock.json"
"""The v1 page's lock, committed as a site commits its own (made with webmcp-nb tools URL --json)."""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webmcp_nb", *args], capture_output=True, text=True, timeout=180,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )  # fmt: skip


def test_a_lock_is_the_same_on_every_load_and_in_both_webmcp_modes(native_browser, polyfill_browser, server):
    texts = []
    for browser in (native_browser, native_browser, polyfill_browser):
        tab = browser.open(server.url("t/lint/v1.html"))
        texts.append(ToolLock.of_tab(tab).text())
        tab.close()
    assert texts[0] == texts[1] == texts[2] == LOCK_V1.read_text()
    data = json.loads(texts[0])
    assert [t["name"] for t in data["tools"]] == ["bookRoom", "listAmenities", "searchRooms"]  # sorted
    assert data["tools"][0]["annotations"] == {"consequentialHint": True}  # native's false ones left out
    assert "title" not in data["tools"][0]  # native's "" and the polyfill's none agree


def test_v1_to_v2_is_three_breaking_changes_and_three_compatible_ones(native_browser, server):
    tab = native_browser.open(server.url("t/lint/v2.html"))
    v2 = ToolLock.of_tab(tab)
    tab.close()
    changes = diff(ToolLock.read(LOCK_V1), v2)
    assert [(c.tool, c.what) for c in changes.breaking] == [
        ("listAmenities", "removed: agents, evals and scripts that call it fail"),
        ("searchRooms", "a required argument 'guests' was added: calls without it are refused"),
        ("searchRooms", 'sort: enum no longer takes "distance"'),
    ]
    assert sorted((c.tool, c.what) for c in changes.compatible) == [
        ("bookRoom", "description changed"),
        ("compareRooms", "added"),
        ("searchRooms", "an optional argument 'maxPrice' was added"),
    ]
    assert not diff(v2, v2).changes and "the tools are the same" in str(diff(v2, v2))
    back = diff(v2, ToolLock.read(LOCK_V1))  # the other way round: what was compatible is now breaking
    assert ("compareRooms", "removed: agents, evals and scripts that call it fail") in [
        (c.tool, c.what) for c in back.breaking
    ]
    assert ("searchRooms", "argument 'maxPrice' was removed: calls that pass it are refused") in [
        (c.tool, c.what) for c in back.breaking
    ]


def test_the_command_diffs_files_and_urls_and_exits_1_on_a_breaking_change(server, tmp_path: Path):
    v1, v2 = server.url("t/lint/v1.html"), server.url("t/lint/v2.html")
    pages = cli("diff", v1, v2, "--json")
    assert pages.returncode == 1 and "3 breaking change(s): the gate fails (exit 1)" in pages.stderr
    data = json.loads(pages.stdout)
    assert (data["old"], data["new"], data["breaking"], data["compatible"]) == (v1, v2, 3, 3)
    assert data["changes"][0] == {
        "kind": "breaking", "tool": "listAmenities", "what": "removed: agents, evals and scripts that call it fail"
    }  # fmt: skip
    lock = subprocess.run(  # the lock as the docs make it: webmcp-nb tools URL --json > tools.lock.json
        [sys.executable, "-m", "webmcp_nb", "tools", v2, "--json"], capture_output=True, text=True, timeout=180
    ).stdout
    (tmp_path / "v2.lock.json").write_text(lock)
    files = cli("diff", str(LOCK_V1), str(tmp_path / "v2.lock.json"))
    assert files.returncode == 1 and 'BREAKING    searchRooms: sort: enum no longer takes "distance"' in files.stdout
    allowed = cli("diff", str(LOCK_V1), str(tmp_path / "v2.lock.json"), "--allow-breaking")
    assert allowed.returncode == 0 and allowed.stdout == files.stdout and not allowed.stderr
    same = cli("diff", str(LOCK_V1), str(LOCK_V1))
    assert same.returncode == 0 and "the tools are the same" in same.stdout
    (tmp_path / "broken.json").write_text('{"tools": []}')
    wrong = cli("diff", str(LOCK_V1), str(tmp_path / "broken.json"))
    assert wrong.returncode == 2 and "broken.json: not a lock file" in wrong.stderr


def entry(name: str = "t", schema: dict | None = None, **fields) -> ToolEntry:
    return ToolEntry(name, fields.pop("description", "d"), input_schema=schema, **fields)


def changed(old: ToolEntry, new: ToolEntry) -> list[tuple[str, str]]:
    return [(c.kind, c.what) for c in diff(ToolLock.of([old]), ToolLock.of([new])).changes]


def prop(**schema) -> dict:
    return {"type": "object", "properties": {"x": schema}}


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (prop(type="integer"), prop(type="string"), ("breaking", 'x: type changed from "integer" to "string"')),
        (prop(type="integer"), prop(type=["integer", "null"]), ("compatible", "x: type widened")),
        (prop(type="integer"), prop(type="number"), ("compatible", "x: type widened")),
        (prop(type="string"), prop(type="string", minLength=2), ("breaking", "x: minLength tightened to 2")),
        (prop(type="number", maximum=9), prop(type="number", maximum=5), ("breaking", "x: maximum tightened from 9")),
        (prop(type="number", maximum=5), prop(type="number", maximum=9), ("compatible", "x: maximum loosened")),
        (prop(type="number", minimum=1), prop(type="number"), ("compatible", "x: minimum 1 dropped")),
        (prop(type="string"), prop(type="string", pattern="^a"), ("breaking", 'x: pattern added: "^a"')),
        (prop(type="string", pattern="^a"), prop(type="string", pattern="^b"), ("breaking", "x: pattern changed to")),
        (prop(type="string"), prop(type="string", enum=["a"]), ("breaking", 'x: now limited to "a"')),
        (prop(enum=["a"]), prop(enum=["a", "b"]), ("compatible", 'x: enum now also takes "b"')),
        (prop(type="string"), prop(type="string", const="a"), ("breaking", 'x: now limited to "a"')),
        (prop(type="array", items={"type": "string"}), prop(type="array", items={"type": "integer"}),
         ("breaking", 'x[]: type changed from "string" to "integer"')),
        (prop(type="object", properties={"y": {"type": "string"}}),
         prop(type="object", properties={"y": {"type": "string"}}, required=["y"]),
         ("breaking", "argument 'x.y' is now required: calls without it are refused")),
        ({"type": "object", "properties": {"x": {}}, "required": ["x"]}, {"type": "object", "properties": {"x": {}}},
         ("compatible", "argument 'x' is no longer required")),
        ({"type": "object", "properties": {"x": {}}},
         {"type": "object", "properties": {}, "additionalProperties": True},
         ("compatible", "argument 'x' was removed (the schema still takes any argument)")),
        (prop(default=1), prop(default=2), ("compatible", "x: default changed from 1 to 2")),
        # every keyword that changes is a change: those the diff weighs, and any other (breaking unless dropped)
        (prop(anyOf=[{"type": "string"}, {"type": "number"}]), prop(anyOf=[{"type": "string"}]),
         ("breaking", 'x: anyOf: no longer takes {"type": "number"}')),
        (prop(anyOf=[{"type": "string"}]), prop(anyOf=[{"type": "string"}, {"type": "null"}]),
         ("compatible", 'x: anyOf: now also takes {"type": "null"}')),
        (prop(type="string"), prop(type="string", oneOf=[{"const": "a"}, {"const": "b"}]),
         ("breaking", "x: oneOf added")),
        (prop(), {**prop(), "allOf": [{"required": ["x"]}]}, ("breaking", "allOf added")),
        (prop(type="string"), prop(type="string", **{"not": {"const": "a"}}), ("breaking", 'x: not added: {"const"')),
        ({**prop(**{"$ref": "#/$defs/a"}), "$defs": {"a": {"properties": {"y": {}}}}},
         {**prop(**{"$ref": "#/$defs/a"}), "$defs": {"a": {"properties": {"y": {}}, "required": ["y"]}}},
         ("breaking", "argument '$defs/a.y' is now required")),
        (prop(**{"$ref": "#/$defs/a"}), prop(**{"$ref": "#/$defs/b"}),
         ("breaking", 'x: $ref changed from "#/$defs/a"')),
        (prop(), {**prop(), "additionalProperties": False},
         ("breaking", "no other arguments than those named are taken now: calls that pass one are refused")),
        ({**prop(), "additionalProperties": {"type": "string"}},
         {**prop(), "additionalProperties": {"type": "integer"}},
         ("breaking", '*: type changed from "string" to "integer"')),
        (prop(type="array"), prop(type="array", uniqueItems=False), ("compatible", "x: uniqueItems set to false")),
        ({"type": "object", "properties": {"x": True}}, {"type": "object", "properties": {"x": False}},
         ("breaking", "x: schema changed from true to false")),
        (prop(enum=["a" * 130 + "1", "b"]), prop(enum=["a" * 130 + "2", "b"]), ("breaking", "x: enum no longer takes")),
        (prop(enum=["a", "b"]), prop(const="a"), ("breaking", 'x: const no longer takes "b"')),
    ],
)  # fmt: skip
def test_each_kind_of_schema_change_is_classified(before: dict, after: dict, expected: tuple[str, str]):
    found = changed(entry(schema=before), entry(schema=after))
    assert any(kind == expected[0] and what.startswith(expected[1]) for kind, what in found), found


def test_the_same_values_written_another_way_are_no_change():
    assert changed(entry(schema=prop(enum=["a"])), entry(schema=prop(const="a"))) == []
    either = [{"type": "string"}, {"type": "null"}]
    assert changed(entry(schema=prop(anyOf=either)), entry(schema=prop(anyOf=either[::-1]))) == []
    assert changed(entry(schema=None), entry(schema={})) == []


def test_renames_moves_and_risk_changes_are_breaking(tmp_path: Path):
    base = entry("searchRooms", {"type": "object", "properties": {}}, description="Searches.")
    assert changed(base, replace(base, name="findRooms")) == [
        ("breaking", "renamed to 'findRooms': calls by the old name fail")
    ]
    assert changed(base, replace(base, origin="https://widget.example")) == [
        ("breaking", "moved to a frame of https://widget.example: a model is told where a tool is from")
    ]
    reading = replace(base, annotations={"readOnlyHint": True})
    assert changed(reading, base) == [
        ("breaking", "no longer read-only: agents that ran it unasked now ask, or refuse")
    ]
    assert changed(base, replace(base, annotations={"consequentialHint": True})) == [
        ("breaking", "now high risk: agents ask before every call; unattended ones refuse it")
    ]
    assert changed(base, reading) == [("compatible", "risk lowered from medium to low")]
    high = replace(base, annotations={"consequentialHint": True})
    assert changed(high, replace(base, annotations={"destructiveHint": True})) == [
        ("compatible", "annotation consequentialHint changed from true to false"),
        ("compatible", "annotation destructiveHint changed from false to true"),
    ]  # as high a risk, said another way: still a change of the lock
    assert changed(base, replace(base, title="Search", annotations={"readOnlyHint": False})) == [
        ("compatible", 'title changed from null to "Search"')  # a false annotation is the default: no change
    ]
    wrong = [("[]", "not a lock file"), ('{"format": "webmcp-nb-tools", "tools": [{}]}', "each tool is an object")]
    for text, said in wrong:
        (tmp_path / "x.json").write_text(text)
        with pytest.raises(LockError, match=said):
            ToolLock.read(tmp_path / "x.json")


def test_a_tab_matches_its_lock_or_the_assertion_says_what_changed(native_browser, server):
    from webmcp_nb.ci import assert_tools_match

    tab = native_browser.open(server.url("t/lint/v1.html"))
    assert_tools_match(tab, LOCK_V1)
    tab.navigate(server.url("t/lint/v2.html"))
    with pytest.raises(AssertionError) as failed:
        assert_tools_match(tab, LOCK_V1)
    message = str(failed.value)
    assert "differ from" in message and "3 breaking, 3 compatible" in message
    assert "BREAKING    listAmenities: removed" in message and f"webmcp-nb tools {tab.url} --json >" in message
    extended = ToolLock.of([*ToolLock.read(LOCK_V1).tools, entry("compareRooms")])
    with pytest.raises(AssertionError):
        assert_tools_match(tab, extended, allow_compatible=True)  # still breaking
    assert_tools_match(tab, ToolLock.of_tab(tab))
    assert isinstance(tab, wm.Tab)
    tab.close()


def test_page_text_a_terminal_cannot_print_is_shown_by_its_code(tmp_path: Path):
    """A page's JavaScript string may hold a lone surrogate, which no output encodes: the commands show it as
    <U+D800> (they raised UnicodeEncodeError, exit 1 as if the gate had failed)."""
    before = entry("getA", prop(type="string"), title="A\ud800", description="Reads \udfff a.")
    ToolLock.of([before]).write(tmp_path / "old.json")
    ToolLock.of([replace(before, title="B\ud800")]).write(tmp_path / "new.json")
    listed = cli("tools", str(tmp_path / "old.json"))
    assert listed.returncode == 0 and "getA: Reads <U+DFFF> a." in listed.stdout, listed.stderr
    changes = cli("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert changes.returncode == 0 and 'title changed from "A<U+D800>" to "B<U+D800>"' in changes.stdout, changes.stderr
