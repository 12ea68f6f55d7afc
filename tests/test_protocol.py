"""The protocol module: one source of truth for both sides, and clean errors for malformed messages."""

from pathlib import Path

import pytest

from webmcp_nb import errors
from webmcp_nb.protocol import ErrorCode, js_module, parse_message

ROOT = Path(__file__).resolve().parents[1]


def test_the_extensions_protocol_js_is_generated_from_python():
    assert (ROOT / "extension" / "protocol.js").read_text() == js_module(), "run python -m webmcp_nb.protocol"


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
