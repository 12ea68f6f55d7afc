"""The agent's model I/O: one request to an OpenAI-compatible endpoint through the ``openai`` SDK, shaped by the
provider's quirks (:mod:`webmcp_nb.core.agent_rules`), streamed or in one body, and its reply normalised — tool calls
with ids, arguments as JSON text in the history, prompt-mode calls parsed out of the text, token usage. The
side panel's chat does the same in ``extension/chat/model-io.js``; the loop itself is in :mod:`webmcp_nb.agent.agent`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import openai

from ..core.agent_rules import PROMPT_MODE, USAGE_FIELDS, parse_tool_calls
from ..core.errors import ModelError
from ..core.events import Event
from .model_tools import ToolSpec, specs_text
from .providers import Provider

__all__ = ["Usage", "Reply", "ModelIO", "assistant_message", "parse_arguments"]

_TOOLS = r"\b(tools?|function.?call\w*)\b"
_NO_TOOLS = re.compile(rf"{_TOOLS}.*\bsupport|\bsupport\w*\b.*{_TOOLS}|tool.choice requires", re.I)
"""A 400 saying the endpoint does not support tools: the agent switches to prompt mode."""
_TOOL_CHOICE = re.compile(r"tool.?choice", re.I)
_STREAM_OPTIONS = re.compile(r"stream.?options", re.I)
_SDK_FIELDS = frozenset({"tool_choice", "parallel_tool_calls", "stream", "stream_options"})


@dataclass(frozen=True)
class Usage:
    """Tokens a request (or, added up, a turn) used, as the endpoint reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def from_api(cls, raw: Any) -> Usage | None:
        """The counts of a reply's ``usage`` (a dict or the SDK's object); ``None`` when it has none."""
        if raw is None:
            return None
        data = raw if isinstance(raw, dict) else getattr(raw, "model_dump", lambda: {})()
        counts = {name: data.get(name) for name in USAGE_FIELDS}
        if not any(isinstance(value, int) for value in counts.values()):
            return None
        return cls(**{name: value if isinstance(value, int) and value >= 0 else 0 for name, value in counts.items()})

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, name) + getattr(other, name) for name in USAGE_FIELDS))

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in USAGE_FIELDS}


@dataclass
class Reply:
    """One model reply, normalised."""

    content: str | None
    calls: list[tuple[str, str, Any]]
    """``(id, name, raw arguments)`` of each tool call, ids made up where the endpoint sent none."""
    history: dict[str, Any]
    """The assistant message as it goes back to the endpoint in later requests."""
    usage: Usage | None = None


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as a dict; a string that is not a JSON object is returned as is (an error)."""
    if isinstance(raw, dict):
        return raw
    if raw in (None, ""):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):  # (nested deeper than the decoder goes)
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def assistant_message(
    content: str | None,
    reasoning: str | None,
    raw_calls: list[dict[str, Any]],
    *,
    send_reasoning: bool,
    prompt_mode: bool,
    ids: Iterator[int],
) -> tuple[list[tuple[str, str, Any]], dict[str, Any]]:
    """The calls of a reply (ids made up as ``call_N`` where missing) and the assistant message for the history:
    arguments as JSON text (GLM sends objects and wants text back), ``reasoning_content`` only where the provider
    wants it back. ``extension/chat/agent-core.js`` ``assistantMessage`` is the same function."""
    calls = [(raw["id"] or f"call_{next(ids)}", raw["name"], raw["arguments"]) for raw in raw_calls]

    def text(arguments: Any) -> str:
        if isinstance(arguments, str):
            return arguments
        return json.dumps({} if arguments is None else arguments, ensure_ascii=False, separators=(",", ":"))

    history: dict[str, Any] = {"role": "assistant", "content": content}
    if calls and not prompt_mode:
        history["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": text(arguments)},
            }
            for call_id, name, arguments in calls
        ]
    if reasoning and send_reasoning:
        history["reasoning_content"] = reasoning
    return calls, history


class ModelIO:
    """One agent's link to its endpoint. ``provider`` changes as the endpoint teaches us: what it refuses with a
    400 (``stream_options``, ``tool_choice``) is not sent again, and a refusal of ``tools`` switches to prompt mode."""

    def __init__(
        self,
        provider: Provider,
        model: str,
        api_key: str,
        max_retries: int,
        emit: Callable[..., Event],
        ids: Iterator[int],
        *,
        gate: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self._api_key = api_key
        self._max_retries = max_retries
        self._emit = emit
        self._ids = ids
        self._gate = gate
        """Entered around each request (an eval's cap on concurrent requests to one provider)."""
        self._client: openai.AsyncOpenAI | None = None

    def _client_for(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                base_url=self.provider.base_url, api_key=self._api_key, max_retries=self._max_retries
            )
        return self._client

    def system_tools_text(self, specs: dict[str, ToolSpec]) -> str | None:
        """What prompt mode adds to the system message (``None`` with native function calling or no tools)."""
        if not self.provider.prompt_mode or not specs:
            return None
        return PROMPT_MODE + specs_text(specs)

    async def complete(self, messages: Callable[[], list[dict[str, Any]]], specs: dict[str, ToolSpec]) -> Reply:
        """One model request (streamed when the provider streams), retried by the SDK on 429/5xx/timeouts.
        ``messages`` builds the request's messages (again after a switch to prompt mode)."""
        while True:
            native = bool(specs) and not self.provider.prompt_mode
            fields = self.provider.request_fields(tools=native)
            params: dict[str, Any] = {"model": self.model, "messages": messages()}
            if native:
                params["tools"] = [{"type": "function", "function": s.function} for s in specs.values()]
            extra = {k: v for k, v in fields.items() if k not in _SDK_FIELDS}
            params.update({k: v for k, v in fields.items() if k in _SDK_FIELDS})
            if extra:
                params["extra_body"] = extra
            self._emit("model.request", messages=len(params["messages"]), tools=sorted(specs) if native else [])
            started = time.perf_counter()
            try:
                async with self._gate() if self._gate is not None else nullcontext():
                    reply = await (self._stream(params) if params.get("stream") else self._once(params))
            except openai.BadRequestError as exc:
                message = str(exc)
                if "stream_options" in params and _STREAM_OPTIONS.search(message):
                    self.provider = replace(self.provider, stream_usage=False)
                    continue
                if "tool_choice" in params and _TOOL_CHOICE.search(message):
                    self.provider = replace(self.provider, tool_choice=None)  # as DeepSeek's preset has it
                    continue
                if native and _NO_TOOLS.search(message):
                    self.provider = replace(self.provider, prompt_mode=True)
                    self._emit("model.prompt_mode", reason=message[:300])
                    continue
                raise ModelError(f"the model endpoint refused the request: {exc}") from exc
            except openai.APIConnectionError as exc:
                raise ModelError(f"the model endpoint {self.provider.base_url} cannot be reached: {exc}") from exc
            except openai.OpenAIError as exc:
                raise ModelError(f"the model endpoint failed: {type(exc).__name__}: {exc}") from exc
            self._emit(
                "model.response",
                content=reply.content,
                tool_calls=[{"id": i, "name": n, "arguments": parse_arguments(a)} for i, n, a in reply.calls],
                reasoning=reply.history.get("reasoning_content"),
                usage=reply.usage.as_dict() if reply.usage else None,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
            return reply

    async def _stream(self, params: dict[str, Any]) -> Reply:
        stream = await self._client_for().chat.completions.create(**params)
        content: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: Usage | None = None
        async for chunk in stream:
            usage = Usage.from_api(chunk.usage) or usage
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            extra = delta.model_extra or {}
            if extra.get("reasoning_content"):
                reasoning.append(extra["reasoning_content"])
            if delta.content:
                content.append(delta.content)
                self._emit("model.delta", text=delta.content)
            for piece in delta.tool_calls or []:
                slot = calls.setdefault(piece.index or 0, {"id": None, "name": "", "arguments": ""})
                slot["id"] = piece.id or slot["id"]
                function = piece.function
                if function is not None:
                    slot["name"] += function.name or ""
                    arguments = function.arguments
                    if isinstance(arguments, dict):
                        slot["arguments"] = arguments
                    elif arguments:
                        slot["arguments"] += arguments
                    if function.name:
                        self._emit("model.tool_call", tool=function.name)
        raw_calls = [calls[i] for i in sorted(calls)]
        return self._reply("".join(content) or None, "".join(reasoning) or None, raw_calls, usage)

    async def _once(self, params: dict[str, Any]) -> Reply:
        response = await self._client_for().chat.completions.create(**params)
        message = response.choices[0].message
        extra = message.model_extra or {}
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []
        ]
        return self._reply(message.content, extra.get("reasoning_content"), calls, Usage.from_api(response.usage))

    def _reply(
        self, content: str | None, reasoning: str | None, raw_calls: list[dict[str, Any]], usage: Usage | None
    ) -> Reply:
        if self.provider.prompt_mode and content:
            for parsed in parse_tool_calls(content):  # the chat-site bridge reads replies with the same parser
                if "name" in parsed:
                    raw_calls.append({"id": None, "name": parsed["name"], "arguments": parsed["arguments"]})
        calls, history = assistant_message(
            content,
            reasoning,
            raw_calls,
            send_reasoning=self.provider.send_reasoning,
            prompt_mode=self.provider.prompt_mode,
            ids=self._ids,
        )
        return Reply(content, calls, history, usage)
