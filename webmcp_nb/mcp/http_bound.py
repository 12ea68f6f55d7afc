"""The bound ``stdio_bound.py`` keeps on a Streamable HTTP one: a JSON reply, or an event on an event stream,
longer than the bound is refused as it arrives, never held whole (the SDK reads a JSON reply whole before anyone
can look at its size), and the client gets the same JSON-RPC error in its place; so is a compressed reply, unread."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

from .stdio_bound import refusal

__all__ = ["BoundedTransport", "bounded_http_client"]

TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own defaults: a server may hold an event stream open for minutes (each request has its own limit)."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    """HTTP that reads a JSON reply (or each event of an event stream) up to ``limit`` bytes; past it, or
    compressed, the reply is dropped unread and the refusal for the request's id stands in for it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inner = httpx2.AsyncHTTPTransport()
        self.not_mcp: str | None = None
        """The first answer to a message that no MCP endpoint gives (an HTTP error or redirect, a web page…), in
        words (``HTTP 404 Not Found (text/html)``): the SDK's error for it does not say the status."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"  # the bound counts what will be parsed, not a zip of it
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        if request.method == "POST" and self.not_mcp is None and _not_mcp(response.status_code, kind):
            media = kind.partition(";")[0].strip()
            self.not_mcp = f"HTTP {response.status_code} {response.reason_phrase}" + (f" ({media})" if media else "")
        if not kind.startswith(("text/event-stream", "application/json")):
            return response
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":
            await response.aclose()
            why = (
                f"the server compressed its reply ({encoding}) though asked not to; refused unread, since it could "
                "unpack to any size"
            )
            return self._refused(response, request, 0, why)
        if kind.startswith("text/event-stream"):
            events = _Events(response, self.limit, _id(request))
            return httpx2.Response(response.status_code, headers=response.headers, stream=events)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:  # said up front: nothing of it is read
            await response.aclose()
            return self._refused(response, request, int(declared))
        body = bytearray()
        async for chunk in response.stream:  # type: ignore[union-attr]
            body += chunk
            if len(body) > self.limit:  # the rest is never read: the connection is dropped instead
                await response.aclose()
                return self._refused(response, request, len(body), _passed(self.limit))
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


_EVENT_END = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r)")
"""A blank line: two line ends (each CRLF, LF or CR), so an event ends there. A CR before an LF is half of a CRLF;
a CR last in what has arrived ends a line either way (an LF after it in the next read is the same line end)."""


class _Events(httpx2.AsyncByteStream):
    """An event stream passed on event by event while each is within the bound; the first past it is dropped unread
    (the connection with it), and on a request's stream the refusal for its id ends the stream in its place."""

    def __init__(self, response: httpx2.Response, limit: int, ident: Any) -> None:
        self.response, self.limit, self.ident = response, limit, ident

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = bytearray()  # the event being received: it is passed on once whole
        async for chunk in self.response.stream:  # type: ignore[union-attr]
            searched = max(0, len(pending) - 3)  # an end split between two chunks is found too
            pending += chunk
            ends = [match.end() for match in _EVENT_END.finditer(pending, searched)]
            if ends:
                yield bytes(pending[: ends[-1]])
                del pending[: ends[-1]]
            if len(pending) > self.limit:
                await self.response.aclose()
                if self.ident is not None:
                    refused = refusal(self.ident, len(pending), self.limit, _passed(self.limit)).rstrip(b"\n")
                    yield b"event: message\ndata: " + refused + b"\n\n"
                return
        if pending:
            yield bytes(pending)

    async def aclose(self) -> None:
        await self.response.aclose()


def _not_mcp(status: int, kind: str) -> bool:
    """Whether a reply to a message is none an MCP endpoint gives: an error or redirect, or a body that is neither
    JSON nor an event stream (202 Accepted, for a notification, has none)."""
    return status >= 300 or (status != 202 and not kind.startswith(("text/event-stream", "application/json")))


def _passed(limit: int) -> str:
    """Why a message read as it arrives was refused (its whole size is never known)."""
    return (
        f"the server's message passed the {limit:,}-byte bound of this client "
        "(wm.mcp.connect(max_result_chars=...) raises it)"
    )


def _id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the request this client sent (its own message: small, and valid JSON)."""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        return json.loads(request.content).get("id")
    return None


@contextlib.asynccontextmanager
async def bounded_http_client(url: str, transport: BoundedTransport) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP client transport on ``url``, its replies bounded by ``transport``."""
    async with (
        httpx2.AsyncClient(transport=transport, timeout=TIMEOUT) as http,
        streamable_http_client(url, http_client=http, max_sse_event_size=transport.limit) as streams,
    ):
        yield streams
