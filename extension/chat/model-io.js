// The side panel chat's model I/O (as webmcp_nb/model_io.py): one request to `${baseUrl}/chat/completions`,
// shaped by the provider's quirks (agent-rules.js), streamed as server-sent events or in one JSON body, retried
// on 429/5xx/network errors, and its reply read into {content, reasoning, calls, usage}.
//
// The API key goes into the Authorization header of these requests and nowhere else.
import { LIMITS, PROVIDERS } from './agent-rules.js';
import { providerFor, requestFields, usageOf } from './agent-core.js';

export class ModelError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.status = status;
  }
}

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
});

function retryDelay(response, attempt) {
  const ms = Number(response?.headers?.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && response.headers.get('retry-after-ms') !== null) return Math.min(ms, 20_000);
  const seconds = Number(response?.headers?.get('retry-after'));
  if (Number.isFinite(seconds) && seconds >= 0 && response.headers.get('retry-after') !== null) return Math.min(seconds * 1000, 20_000);
  return Math.min(500 * 2 ** attempt, 8_000) * (0.75 + Math.random() / 2);
}

// Server-sent events of a streamed completion, as parsed JSON chunks.
async function* sseChunks(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data = [];
  for (;;) {
    const { done, value } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = done ? '' : lines.pop();
    for (const line of lines) {
      if (line === '') {
        if (data.length) {
          const text = data.join('\n');
          data = [];
          if (text.trim() === '[DONE]') return;
          try {
            yield JSON.parse(text);
          } catch (_) { /* a keep-alive or malformed line: skipped */ }
        }
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
    if (done) {
      if (data.length && data.join('\n').trim() !== '[DONE]') {
        try {
          yield JSON.parse(data.join('\n'));
        } catch (_) { /* ignored */ }
      }
      return;
    }
  }
}

// One reply, normalised: {content, reasoning, calls: [{id, name, arguments}], usage}.
async function readReply(response, onDelta) {
  const type = response.headers.get('content-type') || '';
  if (!type.includes('text/event-stream')) {
    const body = await response.json();
    if (body?.error) throw new ModelError(String(body.error.message ?? JSON.stringify(body.error)));
    const message = body?.choices?.[0]?.message ?? {};
    if (message.content) onDelta(message.content);
    const calls = (message.tool_calls ?? []).map((c) => ({ id: c.id ?? null, name: c.function?.name ?? '', arguments: c.function?.arguments ?? '' }));
    return { content: message.content ?? null, reasoning: message.reasoning_content ?? null, calls, usage: usageOf(body?.usage) };
  }
  const content = [];
  const reasoning = [];
  const calls = new Map();
  let usage = null;
  for await (const chunk of sseChunks(response)) {
    if (chunk?.error) throw new ModelError(String(chunk.error.message ?? JSON.stringify(chunk.error)));
    usage = usageOf(chunk?.usage) ?? usage;
    const delta = chunk?.choices?.[0]?.delta;
    if (!delta) continue;
    if (delta.reasoning_content) reasoning.push(delta.reasoning_content);
    if (delta.content) {
      content.push(delta.content);
      onDelta(delta.content);
    }
    for (const piece of delta.tool_calls ?? []) {
      const index = piece.index ?? 0;
      if (!calls.has(index)) calls.set(index, { id: null, name: '', arguments: '' });
      const slot = calls.get(index);
      slot.id = piece.id ?? slot.id;
      const fn = piece.function;
      if (!fn) continue;
      slot.name += fn.name ?? '';
      if (fn.arguments && typeof fn.arguments === 'object') slot.arguments = fn.arguments;
      else if (fn.arguments) slot.arguments += fn.arguments;
    }
  }
  return {
    content: content.join('') || null,
    reasoning: reasoning.join('') || null,
    calls: [...calls.keys()].sort((a, b) => a - b).map((i) => calls.get(i)),
    usage,
  };
}

// One chat's link to its endpoint. What the endpoint refuses with a 400, it stops sending (as model_io.py):
// the request for usage in streamed replies, tool_choice, streaming itself (one JSON body from then on). What
// it learns holds for that endpoint only: the options page may point the chat at another one.
export class ModelIO {
  constructor() {
    this.endpoint(null);
  }

  endpoint(baseUrl) {
    if (baseUrl === this.baseUrl) return;
    this.baseUrl = baseUrl;
    this.stream = true;
    this.streamUsage = true;
    this.toolChoice = true;
  }

  // The provider's quirks, recognised by the base URL's host as webmcp_nb/providers.py recognises it.
  quirks(settings) {
    const quirks = PROVIDERS[providerFor(settings.baseUrl)].quirks;
    return {
      ...quirks,
      stream_usage: quirks.stream_usage && this.streamUsage,
      tool_choice: this.toolChoice ? quirks.tool_choice : null,
    };
  }

  // One request: `messages` and the tool specs' functions; `onStart` when the reply begins, `onDelta` per piece.
  async complete(settings, messages, functions, signal, { onStart, onDelta }) {
    const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' };
    if (settings.apiKey) headers.Authorization = `Bearer ${settings.apiKey}`;
    this.endpoint(settings.baseUrl);
    const url = `${settings.baseUrl}/chat/completions`;
    for (let attempt = 0; ; attempt++) {
      const body = { model: settings.model, messages };
      if (functions.length) body.tools = functions.map((f) => ({ type: 'function', function: f }));
      Object.assign(body, requestFields(this.quirks(settings), { tools: functions.length > 0, stream: this.stream }));
      let response;
      try {
        response = await fetch(url, {
          method: 'POST', headers, signal, credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'no-store',
          body: JSON.stringify(body),
        });
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (attempt >= LIMITS.max_retries) throw new ModelError(`The model endpoint could not be reached (${err?.message ?? err}).`);
        await sleep(retryDelay(null, attempt), signal);
        continue;
      }
      if (response.ok) {
        onStart?.();
        return readReply(response, onDelta);
      }
      const text = await response.text().catch(() => '');
      if ((response.status === 429 || response.status >= 500) && attempt < LIMITS.max_retries) {
        await sleep(retryDelay(response, attempt), signal);
        continue;
      }
      let message = text;
      try {
        message = JSON.parse(text)?.error?.message ?? text;
      } catch (_) { /* plain text */ }
      if (response.status === 400 && body.stream_options && /stream.?options/i.test(message)) {
        this.streamUsage = false; // an endpoint that cannot report usage while streaming
        attempt -= 1;
        continue;
      }
      if (response.status === 400 && body.tool_choice && /tool.?choice/i.test(message)) {
        this.toolChoice = false; // as DeepSeek's preset has it
        attempt -= 1;
        continue;
      }
      if (this.stream && response.status === 400 && /\bstream(ing)?\b/i.test(message)) {
        this.stream = false; // an endpoint that cannot stream: one JSON body from now on
        attempt -= 1;
        continue;
      }
      throw new ModelError(`The model endpoint answered ${response.status}: ${String(message).slice(0, 500)}`, response.status);
    }
  }
}
