// USER_SCRIPT world, injected before each skill's code (once per document; later injections reuse it).
// `define(meta, body)` runs a skill's tools.js with its API as arguments — defineTool(meta, handler),
// healthCheck(fn), config — runs the health check, and replaces any earlier definition of the same skill
// in this document, so re-injecting never duplicates tools. Tools are reported to the worker on a port
// and run from there; results leave as JSON text (bridge-serialize.js).
(() => {
  'use strict';
  const slot = globalThis.__webmcpNb;
  delete globalThis.__webmcpNb;
  if (globalThis.__webmcpNbSkills) return;
  const { toText } = slot;
  const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
  const skills = new Map(); // skill name → {meta, tools: Map(name → {info, handler}), ok, reason}
  const running = new Map(); // call id → AbortController
  let port = null;
  let relayUp = false;

  function openPort() {
    port = chrome.runtime.connect({ name: 'webmcp-nb-skills' });
    port.onMessage.addListener(onMessage);
    port.onDisconnect.addListener(() => {
      port = null;
      if (relayUp) setTimeout(() => port || report(), 200); // a restarted worker learns our tools again
      relayUp = false;
    });
  }

  function post(message) {
    if (!port) openPort();
    port.postMessage(message);
  }

  function report(syncId) {
    const ordered = [...skills.values()].sort((a, b) => (b.meta.priority ?? 0) - (a.meta.priority ?? 0));
    post({
      type: 'tools',
      syncId,
      url: location.href,
      tools: ordered.flatMap((s) => Array.from(s.tools.values(), (t) => ({ ...t.info, source: s.meta.name }))),
      skills: ordered.map((s) => ({ name: s.meta.name, version: s.meta.version, ok: s.ok, reason: s.reason, tools: [...s.tools.keys()] })),
    });
  }

  function failure(error) {
    const code = typeof error?.code === 'string' && /^[A-Z_]+$/.test(error.code) ? error.code : undefined;
    return { code: 'TOOL_ERROR', message: String(error?.message ?? error), data: { name: error?.name ?? 'Error', ...(code ? { code } : {}) } };
  }

  async function call({ id, name, input, maxChars }) {
    const owner = [...skills.values()].find((s) => s.tools.has(name));
    if (!owner) return post({ type: 'result', id, ok: false, error: { code: 'TOOL_NOT_FOUND', message: `No skill tool named "${name}"` } });
    const controller = new AbortController();
    running.set(id, controller);
    try {
      const text = toText(await owner.tools.get(name).handler(input ?? {}, { signal: controller.signal }));
      if (text.length > maxChars) {
        return post({ type: 'result', id, ok: false, error: { code: 'RESULT_TOO_LARGE',
          message: `The result of "${name}" is ${text.length} characters, over the ${maxChars} limit`,
          data: { size: text.length, limit: maxChars } } });
      }
      post({ type: 'result', id, ok: true, text });
    } catch (error) {
      post({ type: 'result', id, ok: false, error: failure(error) });
    } finally {
      running.delete(id);
    }
  }

  function onMessage(message) {
    if (message?.type === 'relay') relayUp = message.connected === true;
    else if (message?.type === 'call') call(message);
    else if (message?.type === 'cancel') running.get(message.id)?.abort(new DOMException('Call timed out', 'AbortError'));
    else if (message?.type === 'remove' && skills.delete(message.skill)) report();
  }

  async function check(health) {
    if (!health) return null;
    try {
      const verdict = await health();
      if (verdict === true || verdict === undefined) return null;
      return typeof verdict === 'string' ? verdict : 'the health check returned false';
    } catch (error) {
      return `the health check threw: ${error?.message ?? error}`;
    }
  }

  async function define(meta, body) {
    const tools = new Map();
    let health = null;
    const defineTool = (info, handler = info?.handler) => {
      if (!NAME.test(info?.name ?? '')) throw new TypeError(`Invalid tool name ${JSON.stringify(info?.name)}`);
      if (typeof handler !== 'function') throw new TypeError(`Tool "${info.name}" needs a handler function`);
      const { name, title, description = '', inputSchema, annotations: declared = {}, risk } = info;
      // `risk: 'high'` (submit, send, pay, delete, publish) travels as an annotation, as a page could declare it.
      const annotations = risk === undefined ? declared : { ...declared, risk };
      tools.set(name, { info: JSON.parse(toText({ name, title, description, inputSchema, annotations })), handler });
    };
    const healthCheck = (fn) => { health = fn; };
    let reason = null;
    try {
      body(defineTool, healthCheck, meta.config ?? {});
    } catch (error) {
      reason = `tools.js threw: ${error?.message ?? error}`;
    }
    reason ??= await check(health);
    const ok = reason === null;
    skills.set(meta.name, { meta, tools: ok ? tools : new Map(), ok, reason });
    report(meta.syncId);
    return { ok, reason, tools: [...tools.keys()] };
  }

  // Restored from the back/forward cache: the worker closed our port meanwhile (posting on it would be
  // lost silently), so report on a fresh one.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    port?.disconnect();
    port = null;
    report();
  });
  globalThis.__webmcpNbSkills = { define };
})();
