"""Raw relay peers for tests: a client or a browser that speaks the wire protocol directly (websockets), after
proving the secret as :mod:`webmcp_nb.link.auth` says. The library's own peers are the real thing; these let a test
send what the library never would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as connect_async
from websockets.sync.client import ClientConnection as SyncConnection
from websockets.sync.client import connect as connect_sync

from webmcp_nb.link import auth
from webmcp_nb.link.protocol import EXTENSION_ID

ORIGIN = {"Origin": f"chrome-extension://{EXTENSION_ID}"}


def _check_challenge(challenge: dict[str, Any], secret: str, role: str, nonce: str) -> str:
    assert challenge["method"] == "auth.challenge", challenge
    relay_nonce = challenge["params"]["nonce"]
    assert auth.check(auth.relay_proof(secret, role, nonce, relay_nonce), challenge["params"]["proof"])
    return auth.peer_proof(secret, role, nonce, relay_nonce)


async def authenticate(ws: ClientConnection, secret: str, role: str) -> dict[str, Any]:
    nonce = auth.new_nonce()
    await ws.send(json.dumps(auth.hello(role, nonce)))
    mine = _check_challenge(json.loads(await ws.recv()), secret, role, nonce)
    await ws.send(json.dumps(auth.proof(mine)))
    ok = json.loads(await ws.recv())
    assert ok["method"] == "auth.ok", ok
    return ok["params"]


def authenticate_sync(ws: SyncConnection, secret: str, role: str) -> dict[str, Any]:
    nonce = auth.new_nonce()
    ws.send(json.dumps(auth.hello(role, nonce)))
    mine = _check_challenge(json.loads(ws.recv(timeout=5)), secret, role, nonce)
    ws.send(json.dumps(auth.proof(mine)))
    ok = json.loads(ws.recv(timeout=5))
    assert ok["method"] == "auth.ok", ok
    return ok["params"]


async def client(port: int, secret: str) -> ClientConnection:
    """An authenticated client; its ``hello`` is still to be read."""
    ws = await connect_async(f"ws://127.0.0.1:{port}/client", open_timeout=5)
    await authenticate(ws, secret, "client")
    return ws


async def browser(port: int, secret: str, browser_id: str, tabs: list | None = None) -> ClientConnection:
    """An authenticated browser that has sent its ``hello``."""
    ws = await connect_async(f"ws://127.0.0.1:{port}/browser", additional_headers=ORIGIN, open_timeout=5)
    await authenticate(ws, secret, "browser")
    await ws.send(json.dumps({"method": "hello", "params": {"id": browser_id, "tabs": tabs or []}}))
    return ws


@contextmanager
def client_sync(port: int, secret: str) -> Iterator[SyncConnection]:
    with connect_sync(f"ws://127.0.0.1:{port}/client", open_timeout=5) as ws:
        authenticate_sync(ws, secret, "client")
        yield ws


@contextmanager
def browser_sync(port: int, secret: str, browser_id: str) -> Iterator[SyncConnection]:
    with connect_sync(f"ws://127.0.0.1:{port}/browser", additional_headers=ORIGIN, open_timeout=5) as ws:
        authenticate_sync(ws, secret, "browser")
        ws.send(json.dumps({"method": "hello", "params": {"id": browser_id, "tabs": []}}))
        yield ws
