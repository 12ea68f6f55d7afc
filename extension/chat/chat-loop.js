// The side panel's chat loop: an OpenAI-compatible model using the current tab's tools, by the rules the Python
// agent follows (agent-rules.js, generated from webmcp_nb/agent_rules.py; applied by agent-core.js): the same
// prompt, limits, texts, risk levels and confirmation policies, provider quirks and framing of page text.
// However a turn ends — an answer, the call limit, the time limit, an error, Stop — every tool call in the
// history keeps a result saying what became of it, so the next turn is accepted.
//
// The endpoint comes from chrome.storage.local.sidecar = {baseUrl, model, apiKey}, written by the options page
// (the key keeps the module's old name, so stored settings stay). The key goes into the Authorization header of
// requests to `${baseUrl}/chat/completions` and nowhere else: not into events, the DOM, the console, or error
// messages (text the endpoint sends back is scrubbed of it).
//
// This module does no I/O of its own besides model-io.js's fetch; the panel gives it a host:
//   tab(tabId) → tab info {id, url, title, tools} or null     call(tabId, name, args) → {ok, text?, error?}
//   emit(kind, tabId, data)                                    confirm({id, tool, arguments, risk, tabId}, signal) → boolean
//   settle(tabId) → resolves once the worker re-read the tab's tools, after a step that may have changed them
//   allow({tabId | url, need, model, action, tool?, risk?, held?, heldSite?, timeoutMs}) → {ok, answer?, site?, error?}: the
//     site's grant (the relay's grants.check; it asks the user when the site was never granted)
//   readable(url) → whether the grants, as the relay last sent them, let a model read url's site (no ask)
//   startAssistant(), delta(text), step({tool, status, summary}), notice(text)   — transcript updates
import { CONFIRM, LIMITS, PROVIDERS, SYSTEM_PROMPT, TEXTS } from './agent-rules.js';
import {
  addUsage, assistantMessage, fill, isUntrusted, needsConfirmation, offeredTools, openCallText, pageArguments,
  pageContext, parseArguments, providerFor, resolvePolicy, resultText, siteOf, stopNote, toolSpecs,
} from './agent-core.js';
import { ModelIO } from './model-io.js';
import { GRANT_ASK_TIMEOUT_S } from '../shared/protocol.js';

const TURN_TIMEOUT_MS = LIMITS.turn_timeout_s * 1000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

// The settings as stored, checked: {baseUrl, model, apiKey} or {problem}.
export function checkSettings(raw) {
  const baseUrl = String(raw?.baseUrl ?? '').trim().replace(/\/+$/, '');
  const model = String(raw?.model ?? '').trim();
  const apiKey = String(raw?.apiKey ?? '').trim();
  if (!baseUrl || !model) return { problem: 'No model endpoint is set up.' };
  let url;
  try {
    url = new URL(baseUrl);
  } catch (_) {
    return { problem: 'The base URL is not a URL.' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'The base URL must start with https:// (or http:// for a local server).' };
  if (url.protocol === 'http:' && apiKey && !LOOPBACK.has(url.hostname)) {
    return { problem: 'An API key is only sent over https:// (plain http:// is allowed for 127.0.0.1/localhost).' };
  }
  return { baseUrl, model, apiKey };
}

export async function readSettings() {
  const { sidecar } = await chrome.storage.local.get('sidecar');
  return checkSettings(sidecar);
}

// The messages of a request: the page context block starts the conversation (its first user message), with
// what the tool list held back (`hidden`).
function conversation(tab, history, hidden) {
  const system = { role: 'system', content: tab ? SYSTEM_PROMPT : `${SYSTEM_PROMPT}\n\n${TEXTS.no_page}` };
  if (!tab) return [system, ...history];
  const context = pageContext(tab.title, tab.url, hidden);
  const [first, ...rest] = history;
  if (first?.role === 'user' && typeof first.content === 'string') {
    return [system, { ...first, content: `${context}\n\n${first.content}` }, ...rest];
  }
  return [system, { role: 'user', content: context }, ...history];
}

const aborted = (signal) => new Promise((_, reject) => {
  if (signal.aborted) reject(signal.reason);
  signal.addEventListener('abort', () => reject(signal.reason), { once: true });
});

export class ChatLoop {
  constructor(host) {
    this.host = host;
    this.messages = []; // the conversation without the system message
    this.busy = false;
    this.abort = null;
    this.ids = 0;
    this.io = new ModelIO();
    this.confirm = CONFIRM.default; // which risks ask first; high risk asks under every policy here
  }

  // A new conversation; a running turn is stopped and keeps writing to the old one.
  reset() {
    this.stop('the conversation was cleared');
    this.messages = [];
  }

  stop(reason = 'stopped by the user') {
    this.abort?.abort(new DOMException(reason, 'AbortError'));
  }

  // Which risks ask the user first ('high', 'medium', 'always' or 'never'); an unknown name keeps the last.
  setPolicy(policy) {
    this.confirm = resolvePolicy(policy) ?? this.confirm;
    return this.confirm;
  }

  scrub(text, key) {
    let out = String(text ?? '');
    if (key) out = out.split(key).join('[redacted]');
    return out.slice(0, 2000);
  }

  // One user turn. Resolves to {answer, stopped, error, usage}; never rejects.
  async send(task, tabId) {
    if (this.busy) return { answer: null, stopped: null, error: 'A turn is already running.', usage: null };
    this.busy = true; // before any await: a second send meanwhile is refused
    const settings = await readSettings();
    if (settings.problem) {
      this.busy = false;
      return { answer: null, stopped: null, error: settings.problem, usage: null };
    }
    const controller = new AbortController();
    this.abort = controller;
    const timer = setTimeout(() => controller.abort(new DOMException('turn_timeout', 'TimeoutError')), TURN_TIMEOUT_MS);
    const { host } = this;
    const emit = (kind, data) => host.emit(kind, tabId, data);
    const turn = {
      tabId, settings, history: this.messages, signal: controller.signal, deadline: Date.now() + TURN_TIMEOUT_MS,
      steps: 0, open: new Map(), answer: null, stopped: null, usage: null, // open: call id → {name, state}
      held: new Map(), // site → what an answer of `once` allowed for the rest of this turn
      allowed: new Set(), // every site a check of this turn allowed (the grants the relay sends may come later)
    };
    turn.history.push({ role: 'user', content: task });
    emit('chat.message', { role: 'user', text: task, model: settings.model });
    let error = null;
    try {
      await this.steps(turn);
    } catch (err) {
      if (controller.signal.aborted) {
        const timedOut = controller.signal.reason?.message === 'turn_timeout';
        const seconds = LIMITS.turn_timeout_s;
        this.close(turn, timedOut ? 'turn_timeout' : 'cancelled', { seconds });
        if (timedOut) emit('agent.limit', { limit: 'turn_timeout', seconds });
        host.notice(timedOut ? `Stopped after ${seconds} s, before an answer.` : 'Stopped.');
      } else {
        error = this.scrub(err?.message ?? err, settings.apiKey);
        this.close(turn, 'error', { error });
        emit('agent.error', { error: err?.name ?? 'Error', message: error });
      }
    } finally {
      clearTimeout(timer);
      this.busy = false;
      this.abort = null;
    }
    const { answer, stopped, usage } = turn;
    emit('agent.turn.finished', { answer, stopped, steps: turn.steps, usage, ...(error ? { error } : {}) });
    return { answer, stopped, error, usage };
  }

  // Requests and tool calls until the model answers (or the call limit makes it).
  async steps(turn) {
    const { host } = this;
    const { tabId, settings, history, signal } = turn;
    const emit = (kind, data) => host.emit(kind, tabId, data);
    let toolsOffered = true;
    for (;;) {
      const tab = host.tab(tabId);
      if (tab) {
        const check = await this.allow(turn, tab, 'read', { action: 'read the page' }); // its title, address, tools
        if (!check.ok) throw new Error(`${check.error?.code ?? 'PERMISSION_DENIED'}: ${check.error?.message ?? 'not granted'}`);
      }
      const offer = toolsOffered ? offeredTools(tab, (url) => this.readable(turn, url)) : { tools: [], note: null };
      const specs = toolSpecs(offer.tools, tab?.origin);
      const functions = [...specs.values()].map((s) => s.function);
      const reply = await this.io.complete(settings, conversation(tab, history, offer.note), functions, signal, {
        onStart: () => host.startAssistant?.(),
        onDelta: (text) => host.delta(text),
      });
      turn.usage = addUsage(turn.usage, reply.usage);
      const { quirks } = PROVIDERS[providerFor(settings.baseUrl)];
      const { calls, message } = assistantMessage(reply.content, reply.reasoning, reply.calls, {
        sendReasoning: quirks.send_reasoning, nextId: () => ++this.ids,
      });
      emit('model.response', {
        content: reply.content,
        tool_calls: calls.map(({ id, name, arguments: a }) => ({ id, name, arguments: parseArguments(a) })),
        usage: reply.usage,
      });
      history.push(message);
      if (!calls.length) {
        turn.answer = reply.content;
        return;
      }
      turn.open = new Map(calls.map((c) => [c.id, { name: c.name, state: 'waiting' }]));
      let changed = false;
      let denied = null;
      for (const call of calls) {
        let content;
        if (!toolsOffered || turn.steps >= LIMITS.max_tool_calls) {
          turn.stopped = 'max_tool_calls';
          content = resultText(call.name, 'error', fill(TEXTS.call_limit, { limit: LIMITS.max_tool_calls }));
          emit('agent.limit', { limit: 'max_tool_calls', tool: call.name });
          host.step({ tool: call.name, status: 'refused', summary: `limit of ${LIMITS.max_tool_calls} tool calls` });
        } else if (denied !== null) {
          content = resultText(call.name, 'error', fill(TEXTS.after_denial, { tool: denied }));
          host.step({ tool: call.name, status: 'refused', summary: `not run: ${denied} was denied` });
        } else {
          turn.steps += 1;
          const step = await this.step(turn, specs, call);
          content = step.content;
          changed = changed || (step.reached && step.risk !== 'low');
          if (step.denied) denied = step.tool;
        }
        history.push({ role: 'tool', tool_call_id: call.id, content });
        turn.open.delete(call.id);
      }
      if (changed) await Promise.race([host.settle(tabId), aborted(signal)]); // the page may have changed its tools
      if (turn.stopped === 'max_tool_calls') {
        if (!toolsOffered) { // it called tools when offered none: what it said is all there is
          turn.answer = reply.content;
          return;
        }
        toolsOffered = false; // one more request, without tools: the model must answer now
      }
    }
  }

  // After a stop: every call the turn left open gets a result saying what became of it, then a note tells the
  // next turn's model that this one stopped.
  close(turn, reason, values) {
    turn.stopped = reason;
    for (const [id, { name, state }] of turn.open) {
      turn.history.push({ role: 'tool', tool_call_id: id, content: resultText(name, 'error', openCallText(state, reason, values)) });
    }
    turn.open = new Map();
    turn.history.push({ role: 'user', content: stopNote(reason, values) });
  }

  // The site's grant before the chat reads the page or calls a tool on it (or, with `url`, on a frame of another
  // site): the relay decides, and asks the user when the site was never granted (for at most the turn's remaining
  // time); `once` holds for the rest of the turn.
  async allow(turn, tab, need, what, url = null) {
    const site = siteOf(url ?? tab?.url);
    const held = turn.held.get(site) ?? null;
    const timeoutMs = Math.max(100, Math.min(GRANT_ASK_TIMEOUT_S * 1000, turn.deadline - Date.now() - 1000));
    const where = url ? { url } : { tabId: tab?.id ?? turn.tabId };
    const ask = { ...where, need, model: turn.settings.model, held, heldSite: site, timeoutMs, ...what };
    const reply = await Promise.race([this.host.allow(ask), aborted(turn.signal)]);
    // Kept under the site the relay checked (the tab may have moved since `site` was read), and sent only with it.
    const answered = typeof reply.site === 'string' ? reply.site : null;
    if (reply.ok && answered) turn.allowed.add(answered);
    if (reply.ok && reply.answer === 'once' && answered) turn.held.set(answered, turn.held.get(answered) === 'act' ? 'act' : need);
    return reply;
  }

  // Whether the chat may be shown what `url`'s site offers, without asking: the grants as the relay last sent
  // them, or a check of this turn that allowed it (offeredTools).
  readable(turn, url) {
    const site = siteOf(url);
    return !!this.host.readable?.(url) || (site !== null && turn.allowed.has(site));
  }

  // One call: {content (for the model), tool, risk, reached (the page got it), denied}.
  async step(turn, specs, call) {
    const { host } = this;
    const { tabId, signal } = turn;
    const spec = specs.get(call.name);
    const args = parseArguments(call.arguments);
    const tool = spec ? spec.tool.name : call.name;
    const risk = spec ? spec.risk : null;
    const source = spec ? spec.source : '';
    const untrusted = spec ? isUntrusted(spec.tool) : false;
    const done = (status, body, extra = {}) => {
      host.step({ tool, status, summary: body });
      return { content: resultText(tool, status, body, untrusted), tool, risk, reached: false, denied: false, ...extra };
    };
    if (!spec) return done('error', fill(TEXTS.unknown_tool, { name: call.name, available: [...specs.keys()].join(', ') || TEXTS.no_tools }));
    if (typeof args === 'string') return done('error', fill(TEXTS.not_an_object, { arguments: args }));
    // The page's site, and for a tool a cross-origin frame registered, the frame's too (it acts there).
    const tab = host.tab(tabId);
    const need = risk === 'low' ? 'read' : 'act';
    let granted = await this.allow(turn, tab, need, { action: 'call', tool, risk });
    const { origin } = spec.tool;
    if (granted.ok && origin && tab?.origin && origin !== tab.origin) {
      granted = await this.allow(turn, tab, need, { action: 'call', tool, risk }, origin);
    }
    if (!granted.ok) {
      const { code = 'PERMISSION_DENIED', message = 'not granted' } = granted.error ?? {};
      return done('error', fill(TEXTS.tool_error, { code, message }));
    }
    if (needsConfirmation(this.confirm, risk)) {
      turn.open.set(call.id, { name: call.name, state: 'confirming' });
      const id = `sc-${Date.now().toString(36)}-${++this.ids}`;
      host.emit('confirmation.requested', tabId, { id, tool, arguments: args, read_only: risk === 'low', risk, provenance: source });
      const approved = await host.confirm({ id, tool, arguments: args, risk, provenance: source, tabId }, signal);
      if (signal.aborted) throw signal.reason; // nobody answered before the turn stopped
      host.emit('confirmation.answered', tabId, { id, tool, arguments: args, approved: !!approved, by: 'sidepanel' });
      if (!approved) {
        host.emit('tool.denied', tabId, { tool, arguments: args });
        return done('error', TEXTS.denied, { denied: true });
      }
      turn.open.set(call.id, { name: call.name, state: 'waiting' }); // approved, not started yet
    }
    if (signal.aborted) throw signal.reason;
    turn.open.set(call.id, { name: call.name, state: 'running' });
    const reply = await Promise.race([host.call(tabId, spec.tool, pageArguments(spec, args)), aborted(signal)]); // the tool shown, in its document
    if (!reply.ok) {
      const message = fill(TEXTS.tool_error, { code: reply.error?.code ?? 'INTERNAL', message: reply.error?.message ?? 'the call failed' });
      return done('error', message, { reached: true });
    }
    return done('ok', reply.text ?? '', { reached: true });
  }
}
