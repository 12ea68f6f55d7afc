"""Mutual authentication between the relay and its peers, with no I/O in it.

Both sides know a secret that only the user's account can read (the 0600 file in :func:`webmcp_nb.link.home.home`,
handed to the user's Chrome by the native-messaging host, or a fresh one per ``launch()``). Before anything
else crosses a socket, each proves it knows the secret without sending it, over nonces both chose:

1. peer → relay ``auth.hello {role, nonce}`` (``role`` is ``browser`` or ``client``; the nonce is fresh)
2. relay → peer ``auth.challenge {nonce, proof}``: the relay's proof, an HMAC over both nonces
3. the peer checks it and only then sends ``auth.proof {proof}``, its own HMAC over the same nonces
4. relay → peer ``auth.ok {relayVersion, pid}``; then the usual ``hello`` follows.

A listener that does not know the secret (another account's process squatting the port) learns one nonce and
nothing it can replay: every proof covers a nonce the other side chose, and the two proofs differ by who made
them. ``extension/worker/auth.js`` computes the same proofs with WebCrypto; a test keeps the two in step.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any

from .protocol import Method

__all__ = [
    "AUTH_VERSION",
    "AuthError",
    "new_nonce",
    "relay_proof",
    "peer_proof",
    "lane_key_id",
    "lane_proof",
    "check",
    "hello",
    "challenge",
    "proof",
    "ok",
    "read_nonce",
]

AUTH_VERSION = 1
NONCE_BYTES = 32


class AuthError(Exception):
    """The other side did not prove it knows the secret, or broke the exchange."""


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def new_nonce() -> str:
    """A fresh random nonce, base64url without padding."""
    return _b64(secrets.token_bytes(NONCE_BYTES))


def _mac(secret: str, label: str) -> str:
    return _b64(hmac.new(secret.encode(), label.encode(), hashlib.sha256).digest())


def relay_proof(secret: str, role: str, peer_nonce: str, relay_nonce: str) -> str:
    """What the relay sends to show it knows ``secret``."""
    return _mac(secret, f"webmcp-nb/{AUTH_VERSION} relay {role} {peer_nonce} {relay_nonce}")


def peer_proof(secret: str, role: str, peer_nonce: str, relay_nonce: str) -> str:
    """What a browser or client sends, after checking the relay's proof."""
    return _mac(secret, f"webmcp-nb/{AUTH_VERSION} {role} {peer_nonce} {relay_nonce}")


def lane_key_id(key: str) -> str:
    """The name under which a lane's one-time key is looked up (the key itself never crosses the lane)."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def lane_proof(key: str, who: str, nonce: str) -> str:
    """A lane's proof of its key (``who`` is ``frame`` or ``relay``), as lowercase hex: it travels in a
    WebSocket subprotocol token."""
    return hmac.new(key.encode(), f"webmcp-nb/lane {who} {nonce}".encode(), hashlib.sha256).hexdigest()


def check(expected: str, given: Any) -> bool:
    """Constant-time comparison of a proof with what the other side sent."""
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode())


def read_nonce(value: Any) -> str:
    """A nonce the other side sent, checked for shape."""
    if (
        not isinstance(value, str)
        or not 32 <= len(value) <= 64
        or not value.replace("-", "").replace("_", "").isalnum()
    ):
        raise AuthError("a malformed nonce")
    return value


def hello(role: str, nonce: str) -> dict[str, Any]:
    return {"method": Method.AUTH_HELLO.value, "params": {"role": role, "nonce": nonce, "version": AUTH_VERSION}}


def challenge(nonce: str, relay_proof_: str) -> dict[str, Any]:
    return {"method": Method.AUTH_CHALLENGE.value, "params": {"nonce": nonce, "proof": relay_proof_}}


def proof(peer_proof_: str) -> dict[str, Any]:
    return {"method": Method.AUTH_PROOF.value, "params": {"proof": peer_proof_}}


def ok(relay_version: str, pid: int) -> dict[str, Any]:
    return {"method": Method.AUTH_OK.value, "params": {"relayVersion": relay_version, "pid": pid}}
