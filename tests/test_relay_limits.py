"""Limits before authentication: a peer that has not proved the secret may send a few kilobytes, for a few
seconds, and only a few such peers are served at once. Run against the real daemon (`webmcp-nb relay`) in its
own process, so its memory can be read."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port

import webmcp_nb as wm
from webmcp_nb.link.protocol import EXTENSION_ID
from webmcp_nb.link.relay import AUTH_TIMEOUT, MAX_UNAUTHENTICATED
from webmcp_nb.own_chrome.connect import relay_status
from webmcp_nb.own_chrome.doctor import Diagnosis, _check_relay

FLOOD_PEERS = 8
FLOOD_BYTES = 16 * 1024 * 1024  # what each forged peer pushes of an unfinished 20 MB message
RSS_BOUND_MB = 32  # documented in docs/security.md


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[int, int]]:
    port = free_port()
    env = {**os.environ, "WEBMCP_NB_HOME": str(tmp_path)}
    with open(tmp_path / "relay.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "webmcp_nb", "relay", "--port", str(port)], env=env, stdout=log, stderr=log
        )
    deadline = time.monotonic() + 20
    while not (tmp_path / f"relay-{port}.pid").exists():
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "relay.log").read_text()
        time.sleep(0.05)
    try:
        yield port, process.pid
    finally:
        process.kill()
        process.wait(10)


def _upgrade(port: int, path: str = "/browser") -> tuple[socket.socket, int]:
    """A forged peer's socket, after the HTTP handshake, and the status it got. On ``/browser`` it claims the
    extension's Origin (trivial outside a browser)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    origin = f"Origin: chrome-extension://{EXTENSION_ID}\r\n" if path == "/browser" else ""
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{origin}\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, int(head.split()[1]) if head else 0


def _frame_header(length: int) -> bytes:
    """A masked binary frame's header announcing ``length`` bytes."""
    return bytes([0x82, 0x80 | 127]) + length.to_bytes(8, "big") + os.urandom(4)


def _push(sock: socket.socket, total: int) -> int:
    """Send an unfinished message of which ``total`` bytes arrive; returns how many the relay accepted."""
    sent = 0
    try:
        sock.sendall(_frame_header(total + 4 * 1024 * 1024))
        chunk = b"\0" * (1024 * 1024)
        while sent < total:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:  # the relay closed the socket: it would not hold the message
        pass
    return sent


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except TimeoutError:
        return False
    except OSError:
        return True


def test_forged_peers_cannot_make_the_relay_hold_their_messages(daemon):
    port, pid = daemon
    time.sleep(0.5)
    before = _rss_mb(pid)
    peers, statuses = zip(*(_upgrade(port) for _ in range(FLOOD_PEERS)), strict=True)
    assert set(statuses) == {101}
    accepted = [_push(p, FLOOD_BYTES) for p in peers]
    time.sleep(1.0)
    grown = _rss_mb(pid) - before
    print(f"relay RSS {before:.0f} MB → +{grown:.1f} MB after {FLOOD_PEERS} peers pushed {sum(accepted) >> 20} MB")
    assert grown < RSS_BOUND_MB, f"the relay grew by {grown:.0f} MB"
    assert all(_closed_within(p, AUTH_TIMEOUT + 5) for p in peers)
    for p in peers:
        p.close()


def test_an_incomplete_message_is_cut_off_by_the_auth_time_limit(daemon):
    port, _ = daemon
    peer, _ = _upgrade(port, "/client")
    peer.sendall(bytes([0x81, 0x80 | 126]) + (1000).to_bytes(2, "big") + os.urandom(4) + b"x" * 10)  # 10 of 1000
    assert _closed_within(peer, AUTH_TIMEOUT + 5)
    peer.close()


def test_only_a_few_peers_may_be_authenticating_at_once(daemon):
    port, _ = daemon
    waiting, statuses = zip(*(_upgrade(port, "/client") for _ in range(MAX_UNAUTHENTICATED)), strict=True)
    time.sleep(0.3)
    extra, refused = _upgrade(port, "/client")
    assert set(statuses) == {101} and refused == 503
    # While it is busy (for the 5 s its waiting peers have), the relay is said to be there and busy: not absent
    # (`webmcp-nb browsers` said "no relay is running"), nor another program (doctor said "stop that program")
    with pytest.raises(wm.NotConnectedError, match=f"the relay on port {port} is busy authenticating others"):
        asyncio.run(relay_status(port))
    diagnosis = Diagnosis()
    asyncio.run(_check_relay(diagnosis, port))
    (relay,) = diagnosis.checks
    assert relay.status == "warn" and "busy authenticating others" in relay.detail, relay
    for p in (*waiting, extra):
        p.close()
    time.sleep(0.3)
    again, status = _upgrade(port, "/client")
    assert status == 101
    again.close()
