"""A scripted OpenAI-compatible chat-completions server, for tests, examples and offline notebooks.

The script says what the "model" does on each request — answer, call tools, fail with a status — and the
server renders it the way a given provider would (its quirks), streamed as SSE with tool-call deltas or
as one JSON body, whichever the request asks for::

    from webmcp_nb.testing import ScriptedServer, call, say
    with ScriptedServer([call("listFlights"), say("The cheapest is BA117.")], quirks="deepseek") as model:
        agent = wm.Agent(tab, base_url=model.base_url, api_key="test", model="scripted")

A step of a script may also be a function of the request: ``reads("setFilters", "nonstop", then=..., otherwise=...)``
answers by what a tool's description and schema say, so a stand-in model acts on a tool's wording the way a real
one may (what an eval of tool variants measures). ``script_from(data)`` reads the same scripts from a file's data
(``webmcp-nb eval -m scripted:FILE``; the format is in its docstring).

Requests the endpoint would refuse get the provider's 400 answer: a quirk the client did not honour, and — as
every real provider does — a ``tool_call`` in the history without a tool message answering it right after, or a
tool message that answers no call. Replies report token usage (counted roughly: four characters a token), in
the body or, when a streamed request asks for it (``stream_options``), in a last chunk; ``usages`` keeps each.
It answers pages too (CORS, any origin): the demo chat site (``chat/?model=BASE_URL`` among the demo pages)
streams its answers from it.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Reply",
    "Quirks",
    "QUIRKS",
    "ScriptedServer",
    "say",
    "call",
    "calls",
    "fail",
    "slow",
    "by_task",
    "reads",
    "script_from",
    "SCRIPT_FORMAT",
    "ScriptError",
]


@dataclass(frozen=True)
class Reply:
    """What the model does on one request."""

    content: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    reasoning: str | None = None
    status: int = 200
    error: str = ""
    retry_after_ms: int | None = None
    delay: float = 0.0


def say(text: str, *, reasoning: str | None = None) -> Reply:
    """Answer with ``text``."""
    return Reply(content=text, reasoning=reasoning)


def call(name: str, *, say: str | None = None, reasoning: str | None = None, **arguments: Any) -> Reply:
    """Call one tool (optionally saying something first)."""
    return Reply(content=say, tool_calls=((name, arguments),), reasoning=reasoning)


def calls(*pairs: tuple[str, dict[str, Any]]) -> Reply:
    """Call several tools in one reply (parallel tool calls)."""
    return Reply(tool_calls=tuple(pairs))


def fail(status: int, message: str = "", *, retry_after_ms: int | None = 10) -> Reply:
    """Answer with an HTTP error (e.g. 429 with a short Retry-After)."""
    return Reply(status=status, error=message or f"scripted {status}", retry_after_ms=retry_after_ms)


def slow(reply: Reply, seconds: float) -> Reply:
    """``reply`` after ``seconds``."""
    return Reply(**{**reply.__dict__, "delay": seconds})


Step = Reply | Callable[[dict[str, Any]], Reply]
"""One reply of a script: a ``Reply``, or a function of the request that returns one."""


def _tool_text(body: dict[str, Any], tool: str) -> str | None:
    """What the request tells the model about ``tool`` (its function's description and parameters), or ``None``
    when it does not offer that tool. In prompt mode the tools are in the system message."""
    for offered in body.get("tools") or []:
        function = offered.get("function") if isinstance(offered, dict) else None
        if isinstance(function, dict) and function.get("name") == tool:
            return json.dumps(function, ensure_ascii=False)
    system = next((m.get("content") for m in body.get("messages", []) if m.get("role") == "system"), None)
    if isinstance(system, str) and f"- {tool}:" in system:
        return system.split(f"- {tool}:", 1)[1].split("\n- ", 1)[0]
    return None


def reads(tool: str, text: str, *, then: Reply, otherwise: Reply) -> Callable[[dict[str, Any]], Reply]:
    """A step that answers ``then`` when the request offers ``tool`` and its description or schema says ``text``
    (case-insensitive), else ``otherwise``: a stand-in model that acts on what the tool says."""

    def step(body: dict[str, Any]) -> Reply:
        said = _tool_text(body, tool)
        return then if said is not None and text.lower() in said.lower() else otherwise

    return step


def by_task(scripts: Mapping[str, Sequence[Step]], default: Reply | None = None) -> Callable[[dict[str, Any]], Reply]:
    """A script for many conversations at once (an eval's concurrent runs): the first key of ``scripts`` found in
    a request's first user message picks the script, and the number of assistant messages in its history picks
    the reply (past the end, or for no key: ``default``, which answers "Done." unless given)."""

    def script(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        first = next(
            (m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)), ""
        )
        for key, replies in scripts.items():
            if key in first:
                step = sum(1 for m in messages if m.get("role") == "assistant")
                if step < len(replies):
                    found = replies[step]
                    return found if isinstance(found, Reply) else found(body)
                break
        return default or say("Done.")

    return script


SCRIPT_FORMAT = "webmcp-nb-scripted-model"
"""The ``format:`` of a scripted model's file."""


class ScriptError(ValueError):
    """A scripted model's file that is not what it should be; the message names the place."""


def _step(where: str, raw: Any) -> Step:
    if not isinstance(raw, dict):
        raise ScriptError(
            f"{where}: a step is {{say: TEXT}}, {{call: TOOL, arguments: {{...}}}}, {{calls: [...]}} or {{if: ...}}"
        )
    if "if" in raw:
        condition = raw["if"]
        if (
            not isinstance(condition, dict)
            or not isinstance(condition.get("tool"), str)
            or not isinstance(condition.get("says"), str)
        ):
            raise ScriptError(f"{where}: if: is {{tool: NAME, says: TEXT}}")
        if "then" not in raw or "else" not in raw:
            raise ScriptError(f"{where}: an if: step needs then: and else: (a step each)")
        then, otherwise = _step(f"{where} then", raw["then"]), _step(f"{where} else", raw["else"])
        if not isinstance(then, Reply) or not isinstance(otherwise, Reply):
            raise ScriptError(f"{where}: then: and else: are plain steps (no if: inside)")
        return reads(condition["tool"], condition["says"], then=then, otherwise=otherwise)
    if "call" in raw:
        arguments = raw.get("arguments") or {}
        if not isinstance(raw["call"], str) or not isinstance(arguments, dict):
            raise ScriptError(f"{where}: call: is a tool's name, arguments: an object")
        return Reply(content=raw.get("say"), tool_calls=((raw["call"], arguments),))
    if "calls" in raw and isinstance(raw["calls"], list):
        pairs = []
        for i, item in enumerate(raw["calls"]):
            if not isinstance(item, dict) or not isinstance(item.get("call"), str):
                raise ScriptError(f"{where} calls[{i}]: each is {{call: TOOL, arguments: {{...}}}}")
            pairs.append((item["call"], dict(item.get("arguments") or {})))
        return calls(*pairs)
    if "say" in raw:
        return say(str(raw["say"]))
    raise ScriptError(f"{where}: unknown step {sorted(raw)}; a step is say:, call:, calls: or if:")


def script_from(data: Any, where: str = "scripted model") -> Callable[[dict[str, Any]], Reply]:
    """A ``by_task`` script from a scripted model's data (YAML or JSON)::

    format: webmcp-nb-scripted-model
    tasks:                               # by text found in a task's prompt (its first user message)
      direct flights:
        - call: searchFlights            # one step per model request: calls, then an answer
          arguments: {origin: LON, destination: NYC}
        - if: {tool: setFilters, says: nonstop}      # by what the tool's description or schema says
          then: {call: setFilters, arguments: {stops: [0]}}
          else: {call: listFlights}
        - say: There are 4 direct flights.
    default: {say: "I cannot help with that."}      # a task no key matches (optional)
    """
    if not isinstance(data, dict) or data.get("format") != SCRIPT_FORMAT:
        raise ScriptError(f"{where}: not a scripted model: expected a mapping with format: {SCRIPT_FORMAT}")
    if unknown := set(data) - {"format", "version", "tasks", "default"}:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}; a scripted model has format, tasks, default")
    tasks = data.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise ScriptError(f"{where}: tasks: maps text found in a task's prompt to its steps")
    scripts: dict[str, list[Step]] = {}
    for key, steps in tasks.items():
        if not isinstance(steps, list) or not steps:
            raise ScriptError(f"{where}: tasks[{key!r}] must be a non-empty list of steps")
        scripts[str(key)] = [_step(f"{where}: tasks[{key!r}][{i}]", step) for i, step in enumerate(steps)]
    default = _step(f"{where}: default", data["default"]) if "default" in data else None
    if default is not None and not isinstance(default, Reply):
        raise ScriptError(f"{where}: default is a plain step")
    return by_task(scripts, default)


@dataclass(frozen=True)
class Quirks:
    """How one provider differs from OpenAI's own API, as far as the agent loop must care."""

    arguments_as_object: bool = False
    """Tool-call arguments come as a JSON object instead of a string (seen from GLM)."""
    omit_tool_call_ids: bool = False
    """Tool calls come without ids (some local servers)."""
    reasoning_content: bool = False
    """Replies carry ``reasoning_content`` (DeepSeek reasoner, Kimi thinking models)."""
    reject_reasoning_in_history: bool = False
    """400 when an assistant message in the history still has ``reasoning_content`` (DeepSeek)."""
    require_reasoning_in_history: bool = False
    """400 when an assistant tool-call message in the history lacks its ``reasoning_content`` (Kimi)."""
    reject_tool_choice: bool = False
    """400 when ``tool_choice`` is sent (DeepSeek's limited support)."""
    require_parallel_off: bool = False
    """400 unless ``parallel_tool_calls`` is false (Moonshot, Qwen)."""
    require_body: dict[str, Any] = field(default_factory=dict)
    """Fields the request must carry with these values (Qwen's ``enable_search: false`` with tools)."""
    no_function_calling: bool = False
    """400 when ``tools`` is sent; tool calls are written in the text as ``<tool_call>{...}</tool_call>``."""
    reject_stream_options: bool = False
    """400 when ``stream_options`` is sent (endpoints that cannot report usage while streaming)."""


QUIRKS: dict[str, Quirks] = {
    "openai": Quirks(),
    "deepseek": Quirks(reasoning_content=True, reject_reasoning_in_history=True, reject_tool_choice=True),
    "qwen": Quirks(require_parallel_off=True, require_body={"enable_search": False}),
    "glm": Quirks(arguments_as_object=True),
    "moonshot": Quirks(require_parallel_off=True, reasoning_content=True, require_reasoning_in_history=True),
    "ollama": Quirks(omit_tool_call_ids=True),
    "vllm": Quirks(),
    "any": Quirks(),
    "prompt": Quirks(no_function_calling=True),
}

Script = Sequence[Reply] | Callable[[dict[str, Any]], Reply]


class ScriptedServer:
    """The server, on 127.0.0.1 in a background thread. ``requests`` holds every request body received."""

    def __init__(self, script: Script, *, quirks: str | Quirks = "openai", port: int = 0) -> None:
        self.quirks = QUIRKS[quirks] if isinstance(quirks, str) else quirks
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []
        """The usage reported with each reply, in order."""
        self.refusals: list[str] = []
        """Why each request answered with a 400 was refused, in order."""
        self._script = script
        self._next = 0
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._http = _Server(("127.0.0.1", port), handler)
        self._http.daemon_threads = True
        self.port = self._http.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._http.serve_forever, args=(0.05,), name="scripted-model", daemon=True).start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if callable(self._script):
                return self._script(body)
            if self._next >= len(self._script):
                return fail(500, "the script has no more replies", retry_after_ms=None)
            reply = self._script[self._next]
            self._next += 1
            return reply

    # ----- what a provider with these quirks refuses -----

    def refusal(self, body: dict[str, Any]) -> str | None:
        q = self.quirks
        unanswered = _unanswered_tool_calls(body.get("messages", []))
        if unanswered:
            return unanswered
        if q.reject_stream_options and "stream_options" in body:
            return "stream_options is not supported"
        if "tools" in body:
            if q.no_function_calling:
                return "this model does not support tools"
            if q.reject_tool_choice and "tool_choice" in body:
                return "tool_choice is not supported"
            if q.require_parallel_off and body.get("parallel_tool_calls") is not False:
                return "parallel_tool_calls must be false for this model"
            for key, value in q.require_body.items():
                if body.get(key) != value:
                    return f"{key} must be {json.dumps(value)} when tools are used"
        for message in body.get("messages", []):
            if message.get("role") != "assistant":
                continue
            if q.reject_reasoning_in_history and "reasoning_content" in message:
                return "reasoning_content must not be sent back in messages"
            if q.require_reasoning_in_history and message.get("tool_calls") and not message.get("reasoning_content"):
                return "reasoning_content is missing in an assistant tool call message"
            for tool_call in message.get("tool_calls") or []:
                if not isinstance(tool_call.get("function", {}).get("arguments"), str):
                    return "tool call arguments must be a JSON string"
        return None

    # ----- rendering a reply -----

    def message(self, reply: Reply) -> dict[str, Any]:
        q = self.quirks
        content = reply.content
        tool_calls = []
        if q.no_function_calling and reply.tool_calls:
            blocks = [f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in reply.tool_calls]
            content = "\n".join(([content] if content else []) + blocks)
        else:
            for name, arguments in reply.tool_calls:
                entry: dict[str, Any] = {
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": arguments if q.arguments_as_object else json.dumps(arguments),
                    },
                }
                if not q.omit_tool_call_ids:
                    entry["id"] = f"call_{uuid.uuid4().hex[:12]}"
                tool_calls.append(entry)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if q.reasoning_content:
            message["reasoning_content"] = reply.reasoning or "Let me think about which tool to use."
        return message

    def usage(self, body: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
        """Token counts for one reply (four characters a token), recorded in ``usages``."""
        prompt = max(1, len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4)
        completion = max(1, len(json.dumps(message, ensure_ascii=False)) // 4)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        with self._lock:
            self.usages.append(usage)
        return usage

    def chunks(self, message: dict[str, Any], model: str) -> Iterator[dict[str, Any]]:
        """The message as streaming deltas: reasoning, content in pieces, then each tool call in pieces."""
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
            "object": "chat.completion.chunk",
            "model": model,
            "created": int(time.time()),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        if "reasoning_content" in message:
            yield chunk({"reasoning_content": message["reasoning_content"]})
        text = message.get("content") or ""
        for start in range(0, len(text), 12):
            yield chunk({"content": text[start : start + 12]})
        for index, tool_call in enumerate(message.get("tool_calls") or []):
            head: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": tool_call["function"]["name"]},
            }
            if "id" in tool_call:
                head["id"] = tool_call["id"]
            arguments = tool_call["function"]["arguments"]
            if isinstance(arguments, str):
                head["function"]["arguments"] = ""
                yield chunk({"tool_calls": [head]})
                for start in range(0, len(arguments), 16):
                    piece = {"index": index, "function": {"arguments": arguments[start : start + 16]}}
                    yield chunk({"tool_calls": [piece]})
            else:
                head["function"]["arguments"] = arguments
                yield chunk({"tool_calls": [head]})
        yield chunk({}, "tool_calls" if message.get("tool_calls") else "stop")


class _Server(http.server.ThreadingHTTPServer):
    """A client that gives up on a (slow) reply is normal here: no traceback for the connection it closed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    server_ref: ScriptedServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")  # a page may be the client (the demo chat site)
        super().end_headers()

    def do_OPTIONS(self) -> None:
        """A browser's preflight before a page's JSON POST: allowed from any page (the server holds nothing)."""
        self.send_response(204)
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "content-type, authorization")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "webmcp-nb"}]}
            )
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        server = self.server_ref
        refusal = server.refusal(body)
        if refusal:
            with server._lock:
                server.requests.append(body)
                server.refusals.append(refusal)
            self._json(400, {"error": {"message": refusal, "type": "invalid_request_error", "code": "invalid_request"}})
            return
        reply = server.next_reply(body)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            headers = {"retry-after-ms": str(reply.retry_after_ms)} if reply.retry_after_ms is not None else {}
            self._json(reply.status, {"error": {"message": reply.error, "type": "scripted_error"}}, headers)
            return
        message = server.message(reply)
        usage = server.usage(body, message)
        model = body.get("model", "scripted")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            chunks = list(server.chunks(message, model))
            if (body.get("stream_options") or {}).get("include_usage"):
                last = chunks[-1]
                chunks.append({**{k: v for k, v in last.items() if k != "choices"}, "choices": [], "usage": usage})
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        self._json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:8]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )


def _unanswered_tool_calls(messages: list[dict[str, Any]]) -> str | None:
    """What OpenAI answers (400) when an assistant's ``tool_calls`` are not each answered by the tool messages
    right after it, or when a tool message answers no such call; ``None`` when the history is sound."""
    expected: set[str] = set()
    for message in [*messages, {"role": "end"}]:
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in expected:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceding message with "
                    f"'tool_calls' (tool_call_id {call_id!r})."
                )
            expected.discard(call_id)
            continue
        if expected:
            missing = ", ".join(sorted(expected))
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {missing}"
            )
        if message.get("role") == "assistant":
            expected = {c.get("id") for c in message.get("tool_calls") or []}
    return None
