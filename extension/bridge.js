// MAIN world, document_start, all frames; last of three bridge files. It runs inside every page, so it
// holds no secret and uses no extension API. It:
//   1. wraps registerTool so results leave as JSON-safe text and a thrown error keeps the page's message
//      (native WebMCP reports every failure as "UnknownError");
//   2. lists this frame's tools through every API generation (document.modelContext, native or
//      polyfill; Chrome 146-149's navigator.modelContextTesting) and pushes the list when it changes;
//   3. runs calls that arrive over a private MessageChannel from content.js. The port is handed over
//      once at document_start; later window messages are never read, so page scripts cannot forge traffic.
//      Messages cross the channel in batches: calls may arrive as an array, and what the bridge sends
//      within one task (results of calls that finish together) leaves as one array.
(() => {
  'use strict';
  const slot = window.__webmcpNb;
  delete window.__webmcpNb;

  // Page scripts run after us and may patch prototypes; keep the originals this file relies on.
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const eventData = getter(MessageEvent.prototype, 'data');
  const eventPorts = getter(MessageEvent.prototype, 'ports');
  const eventSource = getter(MessageEvent.prototype, 'source');
  const setOnMessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage').set;
  const portPost = MessagePort.prototype.postMessage;
  const stopImmediate = Event.prototype.stopImmediatePropagation;
  const removeListener = EventTarget.prototype.removeEventListener;
  const call = Function.prototype.call.bind(Function.prototype.call);
  const microtask = queueMicrotask.bind(window);
  const setTimer = setTimeout;
  const nextTask = (callback) => setTimer(callback, 0);
  const isArray = Array.isArray;

  let port = null;
  const outbox = [];
  let batch = null;
  const running = new Map(); // call id → AbortController
  const flush = () => {
    const messages = batch;
    batch = null;
    if (port) call(portPost, port, messages);
    else outbox.push(messages);
  };
  // While other calls are running, their results may come in the next tasks (native WebMCP answers
  // each from its own task): wait one task for them. Otherwise the message leaves after this task.
  const post = (message) => {
    if (!batch) {
      batch = [];
      (running.size > 1 ? nextTask : microtask)(flush);
    }
    batch.push(message);
  };
  let onPortMessage = () => {};

  // The private channel: the first port content.js posts at document_start. Taken by a capturing
  // listener registered before any page script; later window messages are never read. On pages that
  // are not secure contexts there is no WebMCP, but the port is still taken so the page never gets it.
  window.addEventListener('message', function takePort(event) {
    const ports = call(eventPorts, event);
    if (call(eventSource, event) !== window || call(eventData, event)?.type !== 'webmcp-nb:port' || !ports?.[0]) return;
    call(stopImmediate, event);
    call(removeListener, window, 'message', takePort, true);
    port = ports[0];
    call(setOnMessage, port, (e) => onPortMessage(call(eventData, e)));
    for (const messages of outbox.splice(0)) call(portPost, port, messages);
  }, true);

  if (!slot || !window.isSecureContext) return;
  const { toText, polyfilled } = slot;
  const PUSH_GATHER_MS = 10;

  // 1. Wrap execute at registration.
  const thrown = new Map(); // tool name → recent errors, consumed by the call that sees a failure

  function remember(name, error) {
    const list = thrown.get(name) ?? [];
    list.push({ at: performance.now(), name: error?.name ?? 'Error', message: String(error?.message ?? error) });
    thrown.set(name, list.slice(-8));
  }

  function wrapTool(tool) {
    if (!tool || typeof tool !== 'object' || typeof tool.execute !== 'function') return tool;
    const { execute, name } = tool;
    return {
      ...tool,
      async execute(...args) {
        try {
          return toText(await execute.apply(tool, args));
        } catch (error) {
          remember(name, error);
          throw error;
        }
      },
    };
  }

  function hook(target, method, mapArgs) {
    const original = target?.[method];
    if (typeof original !== 'function') return;
    Object.defineProperty(target, method, {
      configurable: true,
      writable: true,
      value: function (...args) { return original.apply(this, mapArgs(args)); },
    });
  }

  const mc = document.modelContext;
  const testing = navigator.modelContextTesting;
  hook(mc, 'registerTool', ([tool, ...rest]) => [wrapTool(tool), ...rest]);
  if (testing) {
    hook(navigator.modelContext, 'registerTool', ([tool, ...rest]) => [wrapTool(tool), ...rest]);
    hook(navigator.modelContext, 'provideContext', ([context, ...rest]) =>
      [{ ...context, tools: Array.from(context?.tools ?? [], wrapTool) }, ...rest]);
  }

  // 2. Backends: each lists its tools and runs them by name.
  const parseSchema = (schema) => (typeof schema === 'string' ? JSON.parse(schema || 'null') : schema) ?? undefined;
  const backends = [];
  if (mc && typeof mc.getTools === 'function') {
    const registered = new Map();
    backends.push({
      async list() {
        registered.clear();
        const tools = (await mc.getTools()).filter((t) => !t.window || t.window === window);
        for (const tool of tools) registered.set(tool.name, tool);
        return tools.map((t) => ({
          name: t.name, title: t.title, description: t.description, inputSchema: parseSchema(t.inputSchema),
          annotations: t.annotations, source: polyfilled ? 'polyfill' : 'native',
        }));
      },
      has: (name) => registered.has(name),
      execute: (name, input, signal) => mc.executeTool(registered.get(name), input, { signal }),
      onChange: (callback) => mc.addEventListener('toolchange', callback),
    });
  }
  if (testing && typeof testing.listTools === 'function') {
    let names = new Set();
    backends.push({
      async list() {
        const tools = await testing.listTools();
        names = new Set(tools.map((t) => t.name));
        return tools.map((t) => ({
          name: t.name, description: t.description, inputSchema: parseSchema(t.inputSchema),
          annotations: t.annotations, source: 'native',
        }));
      },
      has: (name) => names.has(name),
      execute: (name, input) => testing.executeTool(name, JSON.stringify(input)),
      onChange: (callback) => testing.registerToolsChangedCallback?.(callback),
    });
  }

  const listAll = () => Promise.all(backends.map((b) => b.list().catch(() => [])));

  // The list leaves as JSON text: the worker parses it once, instead of this frame parsing it back and the
  // two hops to the worker cloning a thousand objects each (a string crosses both at the cost of a copy).
  async function listText() {
    return toText((await listAll()).flat());
  }

  // 3. The messages on the channel to content.js.
  let announced = false;
  async function pushTools(syncId) {
    const toolsJson = await listText(); // always an array's text: toText of an array is one
    if (toolsJson === '[]' && !announced && syncId === undefined) return;
    announced = true;
    post({ type: 'tools', syncId, toolsJson, url: location.href, title: document.title });
  }

  // Native WebMCP fires toolchange once per registration, each in its own task: a page registering thousands
  // of tools must cost a few listings, not one per tool. Changes are gathered for a moment, one listing runs at
  // a time, and changes that arrive meanwhile cause exactly one more.
  let pushTimer = 0;
  let pushing = false;
  let changedMeanwhile = false;
  const schedulePush = () => {
    if (pushing) {
      changedMeanwhile = true;
      return;
    }
    clearTimeout(pushTimer);
    pushTimer = setTimeout(async () => {
      pushing = true;
      try {
        await pushTools();
      } finally {
        pushing = false;
        if (changedMeanwhile) {
          changedMeanwhile = false;
          schedulePush();
        }
      }
    }, PUSH_GATHER_MS);
  };
  for (const backend of backends) backend.onChange(schedulePush);
  schedulePush();


  function failure(code, message, data) {
    return { code, message, ...(data === undefined ? {} : { data }) };
  }

  async function run({ id, name, input, maxChars }) {
    const started = performance.now();
    const controller = new AbortController();
    running.set(id, controller);
    try {
      let backend = backends.find((b) => b.has(name));
      if (!backend) {
        await listAll();
        backend = backends.find((b) => b.has(name));
      }
      if (!backend) return post({ type: 'result', id, ok: false, error: failure('TOOL_NOT_FOUND', `No tool named "${name}" in this frame`) });
      const value = await backend.execute(name, input ?? {}, controller.signal);
      const text = typeof value === 'string' ? value : toText(value);
      if (text.length > maxChars) {
        return post({ type: 'result', id, ok: false, error: failure('RESULT_TOO_LARGE',
          `The result of "${name}" is ${text.length} characters, over the ${maxChars} limit`,
          { size: text.length, limit: maxChars }) });
      }
      post({ type: 'result', id, ok: true, text });
    } catch (error) {
      const own = (thrown.get(name) ?? []).find((e) => e.at >= started);
      if (own) thrown.get(name).splice(thrown.get(name).indexOf(own), 1);
      const { name: kind, message } = own ?? { name: error?.name ?? 'Error', message: String(error?.message ?? error) };
      post({ type: 'result', id, ok: false, error: failure('TOOL_ERROR', message, { name: kind }) });
    } finally {
      running.delete(id);
    }
  }

  function receive(data) {
    if (data?.type === 'call') run(data);
    else if (data?.type === 'cancel') running.get(data.id)?.abort(new DOMException('Call timed out', 'AbortError'));
    else if (data?.type === 'sync') pushTools(data.syncId);
  }

  onPortMessage = (data) => (isArray(data) ? data.forEach(receive) : receive(data));
})();
