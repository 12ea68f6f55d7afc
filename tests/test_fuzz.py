"""Protocol fuzzing: random frames at the relay, from a client and from a browser. Nothing crashes, every
malformed client message gets a clean error reply, and the relay keeps serving."""

import json

import peers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webmcp_nb.core import _loop
from webmcp_nb.link.grants import GrantStore
from webmcp_nb.link.protocol import ErrorCode
from webmcp_nb.link.relay import Relay

# websockets draws its keepalive pings' payloads from the global `random` module, in the background threads of the
# other browsers this worker holds open; Hypothesis sees the state move while it generates and warns. Not ours.
pytestmark = pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
CODES = {c.value for c in ErrorCode}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
methods = st.sampled_from(
    [
        *("tool.call", "tab.open", "hello", "ping", "events.push", "nope", "", "skill.install"),
        *("grants.check", "grants.answer", "grants.revoke", "grants.list"),
    ]
)
messages = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=200),
    st.fixed_dictionaries(
        {"method": methods | st.text(max_size=10)},
        optional={"id": json_values, "params": json_values, "result": json_values, "error": json_values},
    ).map(json.dumps),
)


@pytest.fixture(scope="module")
def relay(tmp_path_factory):
    grants = GrantStore(tmp_path_factory.mktemp("grants") / "grants.json")
    relay = _loop.run(Relay("a-fuzzing-secret-of-some-length", grants=grants, enforce_grants=True).start())
    yield relay
    _loop.run(relay.close())


@pytest.fixture(scope="module")
def client(relay):
    with peers.client_sync(relay.port, relay.secret) as ws:
        assert json.loads(ws.recv())["method"] == "hello"
        yield ws


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=messages)
def test_every_client_message_gets_a_clean_answer_or_none(client, raw):
    client.send(raw)
    client.send(json.dumps({"id": 424242, "method": "tab.sync", "params": {"browserId": "none"}}))
    replies = []
    while True:
        reply = json.loads(client.recv(timeout=5))
        replies.append(reply)
        if reply.get("id") == 424242:
            break
    for reply in replies:  # whatever came back is a well-formed error with a known code
        assert set(reply) <= {"id", "error", "result", "method", "params"}
        if "error" in reply:
            assert reply["error"]["code"] in CODES and reply["error"]["message"]
    assert replies[-1]["error"]["code"] == "NOT_CONNECTED"  # and the relay still answers


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(messages, min_size=1, max_size=5))
def test_a_browser_sending_garbage_does_not_break_the_relay(relay, client, batch):
    with peers.browser_sync(relay.port, relay.secret, "fuzzed") as browser:
        for raw in batch:
            browser.send(raw)
    client.send(json.dumps({"id": 7, "method": "tab.sync", "params": {"browserId": "nobody"}}))
    while (reply := json.loads(client.recv(timeout=5))).get("id") != 7:
        pass
    assert reply["error"]["code"] == "NOT_CONNECTED"
