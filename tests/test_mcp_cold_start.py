"""``webmcp-nb mcp``'s cold start: the wire is taken before the MCP SDK is imported, and a client's first
``initialize`` is answered there with the SDK's own answer (the SDK still sees it); with ``--launch`` Chromium is
started first, on the ``--url``, while the rest is imported. What is checked is behaviour (what is on the wire, in
what order, what the browser was started on), never time: bench/cold_start.py measures that."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from eventually import eventually
from fastmcp import Client as FastMCPClient
from mcp_peers import server_env
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from webmcp_nb.browser.chromium import find_chromium
from webmcp_nb.mcp.early import CAPABILITIES, CLIENT_INFO, HANDSHAKE_VERSIONS, early_answer, initialize_result

NOWHERE = "/nonexistent/chromium"  # a browser that cannot start: the server must still answer, and say so


def _initialize(version: str, ident: Any = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "cold", "version": "1"}}
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": params}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _server(*args: str, stdin: Any = subprocess.PIPE, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "webmcp_nb", "mcp", *args],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(**env),
    )  # fmt: skip


def _answer(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, process.stderr.read().decode() if process.stderr else "no answer"
    return json.loads(line)  # (a line that is not JSON-RPC fails here: stdout carries nothing else)


def test_the_handshake_versions_answered_early_are_the_sdks() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


def test_only_a_well_formed_first_initialize_is_answered_early() -> None:
    good = _initialize("2025-06-18")
    assert initialize_result(good)["protocolVersion"] == "2025-06-18"  # type: ignore[index]
    modern = {**good, "method": "server/discover"}
    enveloped = _initialize("2025-11-25")
    enveloped["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    unnamed = _initialize("2025-11-25")
    del unnamed["params"]["clientInfo"]
    for refused in (
        modern, enveloped, unnamed, _initialize("2026-07-28"), _initialize("1999-01-01"),
        _initialize("2025-11-25", True),
        {"jsonrpc": "2.0", "method": "initialize", "params": good["params"]},  # a notification
    ):  # fmt: skip
        assert initialize_result(refused) is None, refused


def _with(**params: Any) -> bytes:
    request = _initialize("2025-06-18", 0)
    request["params"] |= params
    return _line(request)


GOOD = _line(_initialize("2025-06-18"))
FIRST_LINES = {
    "plain": GOOD,
    "a string id": _line(_initialize("2025-11-25", "first")),
    "every capability": _with(
        capabilities={
            "roots": {"listChanged": True},
            "sampling": {"context": {}, "tools": None},
            "elicitation": {"form": {}},
            "experimental": {"x": {"y": 1}},
            "extensions": {},
        },
        clientInfo={"name": "c", "version": "1", "title": "C", "websiteUrl": "https://c.example/"},
    ),
    "a byte order mark": b"\xef\xbb\xbf" + GOOD,
    "a lone surrogate": GOOD.replace(b'"cold"', b'"\\ud800"'),
    "not UTF-8": GOOD.replace(b'"cold"', b'"c\xffld"'),
    "no jsonrpc": GOOD.replace(b'"jsonrpc": "2.0", ', b""),
    "JSON-RPC 1.0": GOOD.replace(b'"2.0"', b'"1.0"'),
    "roots not an object": _with(capabilities={"roots": 5}),
    "listChanged not a boolean": _with(capabilities={"roots": {"listChanged": "yes"}}),
    "an experimental capability not an object": _with(capabilities={"experimental": {"x": 1}}),
    "icons not a list": _with(clientInfo={"name": "c", "version": "1", "icons": 5}),
    "a name not a text": _with(clientInfo={"name": 5, "version": "1"}),
    "tasks": _with(capabilities={"tasks": {"list": {}}}),
    "a _meta": _with(_meta={"progressToken": 1}),
    "trailing text": GOOD.rstrip() + b" x\n",
}


def _sdk_takes(line: bytes) -> bool:
    """Whether the SDK answers ``line`` with a result: its parser reads it (as the transport decodes it), and its
    initialize parameters pass the SDK's models (each handshake version's, and the one it answers from)."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False)
        params = getattr(message, "params", None)
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            methods.validate_client_request("initialize", version, params)
        types.InitializeRequestParams.model_validate(params, by_name=False)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("line", FIRST_LINES.values(), ids=FIRST_LINES.keys())
def test_a_first_line_is_answered_early_only_when_the_sdk_answers_it_with_that_result(line: bytes) -> None:
    """A first line the SDK would answer with an error (or not read) got the early success anyway, and the session
    then refused every request: now only a line every field of which the SDK's models take is answered early."""
    answer = early_answer(line.rstrip(b"\n"))
    if answer is not None:
        assert _sdk_takes(line) and answer[1] == initialize_result(json.loads(line))
    assert (answer is not None) == (line in (GOOD, FIRST_LINES["a string id"], FIRST_LINES["every capability"]))


def test_what_the_early_answer_judges_are_the_sdks_fields() -> None:
    """The capabilities and client fields the early answer judges are the SDK's (but those it leaves to the SDK)."""
    sdk = {field.alias or name for name, field in types.ClientCapabilities.model_fields.items()}
    assert set(CAPABILITIES) == sdk - {"tasks"}
    sdk = {field.alias or name for name, field in types.Implementation.model_fields.items()}
    assert set(CLIENT_INFO) == sdk - {"icons"}


@pytest.mark.parametrize("line", [FIRST_LINES["no jsonrpc"], FIRST_LINES["roots not an object"]], ids=["rpc", "roots"])
def test_a_first_line_the_sdk_refuses_gets_the_sdks_answer_on_the_wire(line: bytes, tmp_path: Path) -> None:
    """End to end: what a client gets for a first line the SDK refuses is the SDK's own answer (on a pipe, where
    the early wire reads it, as from a file, where the SDK's own transport does), and the session's next answer."""
    rest = _line({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    (tmp_path / "requests.jsonl").write_bytes(line + rest)
    with open(tmp_path / "requests.jsonl", "rb") as requests:
        from_file = _server("--launch", stdin=requests, WEBMCP_NB_CHROMIUM=NOWHERE).communicate(timeout=60)[0]
    on_pipe = _server("--launch", WEBMCP_NB_CHROMIUM=NOWHERE).communicate(line + rest, timeout=60)[0]
    sdks, sent = ([json.loads(said) for said in out.splitlines()] for out in (from_file, on_pipe))
    first = [said for said in sent if said.get("id") != 7]  # (a file's end may end the session before id 7's answer)
    assert first == [said for said in sdks if said.get("id") != 7] and not any("result" in said for said in sent)


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_the_early_answer_to_initialize_is_the_sdks_and_a_browser_that_cannot_start_is_said(
    version: str, tmp_path: Path
) -> None:
    request = _initialize(version, "first")
    (tmp_path / "requests.jsonl").write_bytes(_line(request))
    with open(tmp_path / "requests.jsonl", "rb") as stdin:  # a file, not a pipe: the SDK's own transport answers
        sdk = _server("--launch", stdin=stdin, WEBMCP_NB_CHROMIUM=NOWHERE)
        sdks = _answer(sdk)
        sdk.communicate(timeout=60)
    assert sdks["id"] == "first" and sdks["result"] == initialize_result(request)

    early = _server("--launch", "--url", "http://127.0.0.1:9/", WEBMCP_NB_CHROMIUM=NOWHERE)
    assert early.stdin is not None
    early.stdin.write(_line(request))
    early.stdin.flush()
    assert _answer(early) == sdks  # the same, from the wire taken before the SDK is imported
    early.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "screenshot", "arguments": {}}}
    early.stdin.write(_line(call))
    early.stdin.flush()
    said = _answer(early)  # the next line is this answer: the SDK's own answer to initialize was not sent again
    assert said["id"] == 2 and said["result"]["isError"], said
    assert f"no browser at {NOWHERE}" in said["result"]["content"][0]["text"]
    _, stderr = early.communicate(timeout=60)
    assert early.returncode == 0 and b"early answer" not in stderr, stderr  # the SDK's was the one sent


NOISY_IMPORT = """
import sys

class Noisy:  # says something on stdout when the MCP SDK's types are imported, as a careless module might
    def find_spec(self, name, path=None, target=None):
        if name == "mcp_types":
            print("printed while the server imports", flush=True)
        return None

sys.meta_path.insert(0, Noisy())
"""


@pytest.mark.parametrize("flushed", [True, False], ids=["flushed", "buffered"])
def test_what_is_printed_while_the_server_imports_misses_the_wire(flushed: bool, tmp_path: Path) -> None:
    """Printed and flushed, it goes to stderr at once; printed and left in Python's buffer (a pipe's stdout is
    block-buffered unless PYTHONUNBUFFERED is set, which a desktop client does not set), it is written out to stderr
    before the wire is put back on fd 1 as the server ends (it reached the client after the last answer)."""
    (tmp_path / "sitecustomize.py").write_text(NOISY_IMPORT if flushed else NOISY_IMPORT.replace(", flush=True", ""))
    path = os.pathsep.join([str(tmp_path), server_env()["PYTHONPATH"]])
    process = _server("--launch", PYTHONPATH=path, WEBMCP_NB_CHROMIUM=NOWHERE, PYTHONUNBUFFERED="")
    assert process.stdin is not None
    process.stdin.write(_line(_initialize("2025-11-25")))
    process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_tabs", "arguments": {}}}
    process.stdin.write(_line(call))
    process.stdin.flush()
    assert _answer(process)["id"] == 1 and _answer(process)["id"] == 2  # JSON-RPC, and nothing else, on stdout
    rest, stderr = process.communicate(timeout=60)
    assert b"printed while the server imports" in stderr and rest == b""


HELD_CHROMIUM = """#!/bin/sh
echo $$ > "{folder}/pid"
printf '%s\\n' "$@" > "{folder}/args.part" && mv "{folder}/args.part" "{folder}/args"
while [ ! -e "{folder}/go" ]; do sleep 0.02; done
exec "{chromium}" "$@"
"""


@pytest.mark.browser
@pytest.mark.slow  # the server launches its own Chromium, as a desktop client's would
def test_a_launched_server_answers_while_chromium_starts_on_the_url_and_stops_it_when_stdin_closes(
    server: Any, tmp_path: Path
) -> None:
    held = tmp_path / "chromium"  # the real Chromium, held back until the test lets it start
    held.write_text(HELD_CHROMIUM.format(folder=tmp_path, chromium=find_chromium()))
    held.chmod(0o700)
    url = server.url("flights/?tools=3&writable=1")
    process = _server("--launch", "--native-webmcp", "--url", url, WEBMCP_NB_CHROMIUM=str(held))
    assert process.stdin is not None
    try:
        process.stdin.write(_line(_initialize("2025-11-25")))
        process.stdin.flush()
        assert _answer(process)["result"]["serverInfo"]["name"] == "webmcp-nb"  # while the browser is held
        eventually(lambda: (tmp_path / "args").exists(), 30, "the browser's start")
        assert (tmp_path / "args").read_text().splitlines()[-1] == url  # started on it: no second load
        (tmp_path / "go").touch()
        process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "page_bulk_0001"}}
        process.stdin.write(_line(call))
        process.stdin.flush()
        result = _answer(process)["result"]
        assert not result["isError"] and json.loads(result["content"][0]["text"]) == {"index": 1}, result
    finally:
        process.stdin.close()  # how a client leaves: the server stops the browser it started
        process.wait(60)
    pid = int((tmp_path / "pid").read_text())
    eventually(lambda: not _alive(pid), 30, "the browser to stop")


def test_a_client_that_leaves_before_the_browser_is_up_leaves_no_browser(tmp_path: Path) -> None:
    held = tmp_path / "chromium"  # a browser that never gets past its start
    held.write_text(HELD_CHROMIUM.format(folder=tmp_path, chromium=find_chromium()))
    held.chmod(0o700)
    process = _server("--launch", "--url", "http://127.0.0.1:9/", WEBMCP_NB_CHROMIUM=str(held))
    assert process.stdin is not None
    process.stdin.write(_line(_initialize("2025-11-25")))
    process.stdin.flush()
    assert _answer(process)["result"]["protocolVersion"] == "2025-11-25"
    eventually(lambda: (tmp_path / "pid").exists(), 30, "the browser's start")
    process.stdin.close()
    assert process.wait(60) == 0
    pid = int((tmp_path / "pid").read_text())
    eventually(lambda: not _alive(pid), 30, "the browser to stop")


def test_chromium_never_starts_on_a_url_the_mcp_url_policy_refuses(tmp_path: Path) -> None:
    held = tmp_path / "chromium"
    held.write_text(HELD_CHROMIUM.format(folder=tmp_path, chromium=find_chromium()))
    held.chmod(0o700)
    secret = tmp_path / "id_ed25519"
    secret.write_text("not for pages")
    process = _server("--launch", "--url", secret.as_uri(), WEBMCP_NB_CHROMIUM=str(held))
    assert process.stdin is not None
    try:
        eventually(lambda: (tmp_path / "args").exists(), 30, "the browser's start")
        assert (tmp_path / "args").read_text().splitlines()[-1] == "about:blank"  # file: needs --allow-file-urls
    finally:
        process.stdin.close()
        process.wait(60)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_fastmcps_client_lists_and_calls_page_tools(mode: str, server: Any, tmp_path: Path) -> None:
    url = server.url("flights/?tools=3&writable=1")
    config = {"mcpServers": {"webmcp-nb": {"command": sys.executable, "env": server_env(),
              "args": ["-m", "webmcp_nb", "mcp", "--launch", "--native-webmcp", "--url", url]}}}  # fmt: skip

    async def run() -> None:
        async with FastMCPClient(config, mode=mode) as client:
            names = {tool.name for tool in await client.list_tools()}
            assert {"list_tabs", "call_page_tool", "page_bulk_0001", "page_bulk_0002"} <= names
            result = await client.call_tool("page_bulk_0001", {})
            assert json.loads(result.content[0].text) == {"index": 1}  # type: ignore[union-attr]
            relisted = await client.call_tool("call_page_tool", {"name": "bulk_0002"})
            assert json.loads(relisted.content[0].text) == {"index": 2}  # type: ignore[union-attr]

    anyio.run(run)


@pytest.mark.slow  # a Chromium of its own, started on the URL
def test_the_first_page_of_a_browser_started_on_a_url_is_said_loaded_once_it_has_loaded(server: Any) -> None:
    """Chrome tells the extension a tab's load is complete only if it followed the tab when its page committed, and an
    early Chromium's first page commits while the extension starts: the mirror said it was loading for good, so
    ``webmcp-nb mcp --launch --url`` waited 45 s for it (a client's handshake gave up at 30 s). The page here
    commits and then waits for an image held back until the browser is connected."""
    import webmcp_nb as wm
    from webmcp_nb.browser.early import start_early

    with socket.create_server(("127.0.0.1", 0)) as held:
        held.settimeout(60)
        early = start_early(server.url(f"t/held.html?port={held.getsockname()[1]}"))
        try:
            image, _ = held.accept()  # the page has committed
        except BaseException:
            early.close()
            raise
        with image, wm.launch(early=early) as browser:
            (tab,) = browser.tabs
            assert tab._info.status == "loading"
            image.recv(4096)
            image.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            eventually(lambda: tab._info.status == "complete", 30, "the tab to be said loaded")
