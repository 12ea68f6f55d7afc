// MAIN world, document_start, all frames; last of three bridge files. It runs inside every page, so it
// holds no secret and uses no extension API. It:
//   1. wraps registerTool so results leave as JSON-safe text and a thrown error keeps the page's message
//      (native WebMCP reports every failure as "UnknownError");
//   2. lists this frame's tools through every API generation (document.modelContext, native or
//      polyfill; Chrome 146-149's navigator.modelContextTesting) and, when they change, sends what changed:
//      tools added or changed (new ones in registration order, which native getTools does not keep) and
//      names removed;
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
  const addListener = EventTarget.prototype.addEventListener;
  const removeListener = EventTarget.prototype.removeEventListener;
  const call = Function.prototype.call.bind(Function.prototype.call);
  const microtask = queueMicrotask.bind(window);
  const setTimer = setTimeout;
  const clearTimer = clearTimeout;
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
  // Which WebMCP this frame has: the browser's own, Chrome 146-149's testing API (beside the polyfill, which
  // then stands in for the missing document.modelContext), or the extension's polyfill alone.
  const API = !polyfilled ? 'native' : navigator.modelContextTesting ? 'testing' : 'polyfill';

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

  // Registration order: native getTools() lists tools sorted by name, so remember when each name was last
  // registered (tools that never pass here, such as native declarative forms, come after, as listed).
  const registeredAt = new Map(); // name → sequence number
  let registrations = 0;
  function wrapAndNote(tool) {
    changes++;
    if (typeof tool?.name === 'string') registeredAt.set(tool.name, registrations++);
    return wrapTool(tool);
  }

  // Changes to this frame's tools, counted as they happen (a registration, an AbortSignal that unregisters, an
  // unregister call, the backends' change events): the result of a call during which the count moved says so
  // (`toolsChanged`), and its caller asks for the tools before it goes on; other calls need no such round trip.
  let changes = 0;
  const noteChange = () => { changes++; };
  function noteAbort(options) {
    try {
      options?.signal?.addEventListener?.('abort', noteChange, { once: true });
    } catch (_) { /* the page's own odd options: registration goes on without the note */ }
  }

  const mc = document.modelContext;
  const testing = navigator.modelContextTesting;
  hook(mc, 'registerTool', ([tool, ...rest]) => (noteAbort(rest[0]), [wrapAndNote(tool), ...rest]));
  if (testing) {
    hook(navigator.modelContext, 'registerTool', ([tool, ...rest]) => [wrapAndNote(tool), ...rest]);
    hook(navigator.modelContext, 'provideContext', ([context, ...rest]) =>
      [{ ...context, tools: Array.from(context?.tools ?? [], wrapAndNote) }, ...rest]);
    for (const method of ['unregisterTool', 'clearContext']) hook(navigator.modelContext, method, (args) => (noteChange(), args));
  }

  // 2. Backends: each lists its tools and runs them by name.
  const parseSchema = (schema) => (typeof schema === 'string' ? JSON.parse(schema || 'null') : schema) ?? undefined;
  const backends = [];
  if (mc && typeof mc.getTools === 'function') {
    let registered = new Map(); // name → the tool as getTools gave it, which executeTool takes
    backends.push({
      async list() {
        const tools = (await mc.getTools()).filter((t) => !t.window || t.window === window);
        registered = new Map(tools.map((tool) => [tool.name, tool]));
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

  // A listing that does not settle (a page's own getTools, or native WebMCP's in a frame it lost track of) must
  // not hold up every later report of this frame: past LIST_TIMEOUT_MS it fails, and its report is dropped (not
  // sent empty); the next change or sync lists again.
  const LIST_TIMEOUT_MS = 5_000;
  const listAll = () => new Promise((resolve, reject) => {
    const timer = setTimer(() => reject(new Error('listing timed out')), LIST_TIMEOUT_MS);
    Promise.all(backends.map((b) => b.list().catch(() => []))).then((lists) => { clearTimer(timer); resolve(lists); });
  });

  // 3. The messages on the channel to content.js. A report says what changed since the previous one: `upsertJson`
  // (JSON text of the tools added or changed: the worker parses it once, instead of this frame parsing it back and
  // two hops cloning every tool) and `removed` names; `reset` means it starts from nothing (the first report,
  // and the first on each new port to the worker: content.js asks with `reset`). Tools keep the place they were
  // first reported in, new ones follow in registration order. `count` is how many tools the frame has, so a mirror
  // that keeps fewer can say how many it left out.
  // Messages to the worker stay well under Chrome's 64 MB: a report is sent in parts of at most MESSAGE_CHARS of
  // tools (only the last one has the count), and a tool longer than that (which the worker would cut down
  // anyway) is not sent, only counted.
  const MESSAGE_CHARS = 8_000_000;
  let sent = new Map(); // name → the tool's JSON text, as reported, in the order reported
  let reset = true;
  const bySequence = (a, b) => (registeredAt.get(a) ?? Infinity) - (registeredAt.get(b) ?? Infinity);

  let current = null; // the listing waiting for the page's tools: its sync ids and the change count it began at
  async function report(syncIds) {
    const names = new Set();
    const listed = new Map();
    current = { syncIds, changes };
    let lists;
    try {
      lists = await listAll();
    } finally {
      current = null;
    }
    for (const tool of lists.flat()) {
      if (names.has(tool.name)) continue;
      names.add(tool.name);
      const text = toText(tool);
      if (text.length <= MESSAGE_CHARS) listed.set(tool.name, text);
    }
    const kept = [...sent.keys()].filter((name) => listed.has(name));
    const added = [...listed.keys()].filter((name) => !sent.has(name)).sort(bySequence); // stable: unknown ones as listed
    const removed = reset ? [] : [...sent.keys()].filter((name) => !listed.has(name));
    const changed = reset ? kept : kept.filter((name) => sent.get(name) !== listed.get(name));
    const parts = [[]];
    let size = 0;
    for (const text of changed.concat(added).map((name) => listed.get(name))) {
      if (size + text.length > MESSAGE_CHARS) {
        parts.push([]);
        size = 0;
      }
      parts[parts.length - 1].push(text);
      size += text.length;
    }
    const [first, ...others] = syncIds;
    if (first === undefined && !parts[0].length && !removed.length) return;
    const base = { type: 'tools', url: location.href, title: document.title, count: names.size, api: API };
    parts.forEach((part, i) => {
      const last = i === parts.length - 1; // the frame's count, and the sync answer, once every part is there
      post({ ...base, ...(last ? { syncId: first } : { count: undefined }), reset: reset && i === 0,
        removed: i === 0 ? removed : [], upsertJson: `[${part.join(',')}]` });
    });
    for (const syncId of others) post({ ...base, syncId, removed: [], upsertJson: '[]' });
    sent = new Map(kept.concat(added).map((name) => [name, listed.get(name)]));
    reset = false;
  }

  // One listing at a time, in order, so a report never overtakes a newer one. A change starts one once the
  // current script is done; changes and sync requests that arrive meanwhile join the one queued after it. Native
  // WebMCP fires toolchange once per registration, each in its own task, so a page registering thousands of tools
  // costs a few listings, not one per tool.
  // The first listing waits until this document is parsed: native getTools() while a frame's document is still
  // loading makes Chromium 156 lose that iframe's registrations now and then, or never settle (without this
  // extension, 11 of 240 tabs of t/changing.html lost them, against none without the early call). A document still
  // parsing after PARSE_WAIT_MS (one streamed without end) is listed then. Changes and sync requests that come
  // earlier join that listing.
  const PARSE_WAIT_MS = 3_000;
  let chain = document.readyState !== 'loading' ? Promise.resolve() : new Promise((resolve) => {
    call(addListener, window, 'DOMContentLoaded', () => resolve(), { capture: true, once: true });
    setTimer(resolve, PARSE_WAIT_MS);
  });
  let queued = null; // the sync ids of the listing that has not started yet
  function requestReport(syncId) {
    // A sync asked while a listing waits for the page's tools, with nothing changed since it began, is answered by
    // that listing's report (a call that changed the tools asks for them while the change's own listing runs).
    if (syncId !== undefined && !queued && current?.changes === changes) {
      current.syncIds.push(syncId);
      return;
    }
    if (!queued) {
      const syncIds = (queued = []);
      chain = chain.then(() => { queued = null; return report(syncIds); }).catch(() => {});
    }
    if (syncId !== undefined) queued.push(syncId);
  }
  // `lazy`: the worker said nobody needs this frame's tools as they change (the relay lists them through the browser's
  // DevTools protocol, and no side panel is open): a change is only counted, and reported with the next sync.
  let lazy = false;
  for (const backend of backends) backend.onChange(() => (noteChange(), lazy || requestReport()));
  requestReport();

  function failure(code, message, data) {
    return { code, message, ...(data === undefined ? {} : { data }) };
  }

  async function run({ id, name, input, maxChars }) {
    const started = performance.now();
    const changesBefore = changes;
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
      post({ type: 'result', id, ok: true, text, ...(changes !== changesBefore ? { toolsChanged: true } : {}) });
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
    else if (data?.type === 'sync') requestReport(data.syncId);
    else if (data?.type === 'reset') reset = true;
    else if (data?.type === 'lazy') {
      if (lazy && data.lazy !== true) requestReport(); // what changed meanwhile
      lazy = data.lazy === true;
    }
  }

  onPortMessage = (data) => (isArray(data) ? data.forEach(receive) : receive(data));
})();
