"""The protocol module: one source of truth for both sides, and clean errors for malformed messages."""

from pathlib import Path

import pytest

from webmcp_nb.core import errors
from webmcp_nb.link.protocol import ErrorCode, apply_tool_changes, js_module, parse_message, tool_group

ROOT = Path(__file__).resolve().parents[1]


def test_the_extensions_protocol_js_is_generated_from_python():
    shipped = (ROOT / "extension" / "shared" / "protocol.js").read_text()
    assert shipped == js_module(), "run python -m webmcp_nb.link.protocol"


def test_every_error_code_maps_to_its_own_exception_class():
    for code in ErrorCode:
        exc = errors.error_from_code(code.value, "m")
        assert isinstance(exc, errors.WebMCPError)
        if code is not ErrorCode.UNKNOWN_METHOD:
            assert exc.code is code
    assert isinstance(errors.error_from_code("TIMEOUT", "m"), TimeoutError)
    assert isinstance(errors.error_from_code("INVALID_ARGS", "m"), ValueError)
    assert isinstance(errors.error_from_code("SOMETHING_NEW", "m"), errors.InternalError)


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("not json", "not JSON"),
        ("[1]", "JSON object"),
        ("{}", "method or an id"),
        ('{"id": "x", "method": "m"}', "id"),
        ('{"method": "m", "params": []}', "params"),
        ('{"method": "m", "extra": 1}', "extra"),
    ],
)
def test_malformed_messages_get_a_readable_reason(raw, reason):
    with pytest.raises(ValueError, match=reason):
        parse_message(raw)


def test_message_kinds():
    assert parse_message('{"id": 1, "method": "tool.call", "params": {}}').is_request
    assert parse_message('{"method": "ping"}').is_notification
    assert parse_message('{"id": 1, "result": null}').is_reply


def test_tool_changes_keep_places_append_new_tools_and_group_them():
    page = lambda frame, name: {"frameId": frame, "name": name, "source": "native"}  # noqa: E731
    skill = lambda frame, name: {"frameId": frame, "name": name, "source": "shop"}  # noqa: E731
    group = lambda t: tool_group(t["source"], t["frameId"])  # noqa: E731
    tools = {(t["frameId"], t["name"]): t for t in (page(0, "a"), page(0, "b"), page(3, "c"), skill(0, "s"))}
    changed = {**page(0, "b"), "description": "new"}
    upserted = [((0, "b"), changed), ((0, "d"), page(0, "d")), ((1, "e"), page(1, "e"))]
    tools = apply_tool_changes(tools, [(0, "a")], upserted, group)
    assert list(tools) == [(0, "b"), (0, "d"), (1, "e"), (3, "c"), (0, "s")] and tools[(0, "b")] is changed
    tools = apply_tool_changes(tools, [], [], group, order=[(0, "d"), (0, "b"), (1, "e"), (3, "c"), (0, "s")])
    assert list(tools) == [(0, "d"), (0, "b"), (1, "e"), (3, "c"), (0, "s")]
