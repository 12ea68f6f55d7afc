"""The bound ``stdio_bound.py`` keeps on a stdio server, kept on a Streamable HTTP one: a JSON reply longer than
the bound is refused as it arrives, never held whole (the SDK reads a reply whole before anyone can look at its
size), and the client gets the same JSON-RPC error in its place. Replies on an event stream are bounded by the
SDK itself (``max_sse_event_size``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

from .stdio_bound import refusal

__all__ = ["bounded_http_client"]

TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own defaults: a server may hold an event stream open for minutes (each request has its own limit)."""


class _Bounded(httpx2.AsyncBaseTransport):
    """HTTP that reads a JSON reply up to ``limit`` bytes; past it, the reply is dropped unread and the refusal
    for the request's id stands in for it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"  # the bound counts what will be parsed, not a zip of it
        response = await self.inner.handle_async_request(request)
        if not response.headers.get("content-type", "").lower().startswith("application/json"):
            return response
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":
            await response.aclose()
            why = (
                f"the server compressed its reply ({encoding}) though asked not to; refused unread, since it could "
                "unpack to any size"
            )
            return self._refused(response, request, 0, why)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:  # said up front: nothing of it is read
            await response.aclose()
            return self._refused(response, request, int(declared))
        body = bytearray()
        async for chunk in response.stream:  # type: ignore[union-attr]
            body += chunk
            if len(body) > self.limit:  # the rest is never read: the connection is dropped instead
                await response.aclose()
                why = (
                    f"the server's message passed the {self.limit:,}-byte bound of this client "
                    "(wm.mcp.connect(max_result_chars=...) raises it)"
                )
                return self._refused(response, request, len(body), why)
        await response.aclose()
        return httpx2.Response(response.status_code, headers=response.headers, content=bytes(body))

    def _refused(
        self, response: httpx2.Response, request: httpx2.Request, size: int, why: str | None = None
    ) -> httpx2.Response:
        """The reply that stands in for a refused one: the JSON-RPC error for the request's id."""
        content = refusal(_id(request), size, self.limit, why)
        return httpx2.Response(response.status_code, headers={"content-type": "application/json"}, content=content)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the request this client sent (its own message: small, and valid JSON)."""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        return json.loads(request.content).get("id")
    return None


@contextlib.asynccontextmanager
async def bounded_http_client(url: str, limit: int) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP client transport on ``url``, with replies bounded at ``limit`` bytes."""
    async with (
        httpx2.AsyncClient(transport=_Bounded(limit), timeout=TIMEOUT) as http,
        streamable_http_client(url, http_client=http, max_sse_event_size=limit) as streams,
    ):
        yield streams
