// The service worker: one WebSocket to the relay, a mirror of every tab's tools, call routing.
// Chrome kills an idle worker about 30 s after its last event, open socket or not, so the worker itself
// sends a keepalive every 20 s while connected; an alarm restarts it to retry when the relay is away.
// After a restart memory is empty: the mirror is rebuilt by asking every frame to announce itself.
import { DEFAULT_PORT, ErrorCode, Method, PROTOCOL_VERSION } from './protocol.js';

const KEEPALIVE_MS = 20_000;
const PUSH_DELAY_MS = 5;
const LOAD_TIMEOUT_MS = 30_000;
const SYNC_TIMEOUT_MS = 2_000;

const tabs = new Map(); // tab id → {id, url, title, active, status, windowId}
const frames = new Map(); // tab id → Map(frame id → {port, tools, url})
const calls = new Map(); // call id → {tabId, frameId, port, finish(reply)}
const syncs = new Map(); // sync id → resolve
let nextId = 1;

// ---------- relay connection ----------

let socket = null;
let connecting = null;
let backoff = 250;
let keepalive = 0;

async function relayUrl() {
  try {
    const config = await (await fetch(chrome.runtime.getURL('config.json'))).json();
    if (config.relayUrl) return config.relayUrl;
  } catch (_) { /* no config file: the user's own browser */ }
  const { port } = await chrome.storage.local.get('port');
  return `ws://127.0.0.1:${port || DEFAULT_PORT}/browser`;
}

async function browserId() {
  let { browserId: id } = await chrome.storage.session.get('browserId');
  if (!id) {
    id = crypto.randomUUID();
    await chrome.storage.session.set({ browserId: id });
  }
  return id;
}

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function connect() {
  if (socket || connecting) return connecting;
  connecting = (async () => {
    const url = await relayUrl();
    const ws = new WebSocket(url);
    ws.onopen = async () => {
      socket = ws;
      backoff = 250;
      tellFrames({ type: 'relay', connected: true });
      await resyncAll();
      send({ method: Method.HELLO, params: await hello() });
      clearInterval(keepalive);
      keepalive = setInterval(() => send({ method: Method.PING, params: {} }), KEEPALIVE_MS);
    };
    ws.onmessage = (event) => onRelayMessage(event.data);
    ws.onclose = () => {
      if (socket === ws) socket = null;
      tellFrames({ type: 'relay', connected: false });
      clearInterval(keepalive);
      connecting = null;
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 10_000);
    };
  })().catch(() => { connecting = null; });
  return connecting;
}

function tellFrames(message) {
  for (const byFrame of frames.values()) for (const frame of byFrame.values()) frame.port.postMessage(message);
}

async function hello() {
  return {
    id: await browserId(),
    protocolVersion: PROTOCOL_VERSION,
    userAgent: navigator.userAgent,
    extensionVersion: chrome.runtime.getManifest().version,
    tabs: Array.from(tabs.keys(), tabInfo),
  };
}

async function onRelayMessage(raw) {
  let message;
  try {
    message = JSON.parse(raw);
  } catch (_) {
    return;
  }
  const { id, method, params } = message;
  if (id === undefined || !method) return;
  const handler = handlers[method];
  try {
    if (!handler) throw new RelayError(ErrorCode.UNKNOWN_METHOD, `Unknown method ${method}`);
    send({ id, result: await handler(params ?? {}) });
  } catch (error) {
    const code = error instanceof RelayError ? error.code : ErrorCode.INTERNAL;
    send({ id, error: { code, message: String(error?.message ?? error), data: error?.data } });
  }
}

class RelayError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// ---------- the tab mirror ----------

function tabInfo(tabId) {
  const tab = tabs.get(tabId);
  const tools = [];
  const byFrame = frames.get(tabId) ?? new Map();
  for (const frameId of [...byFrame.keys()].sort((a, b) => a - b)) {
    const frame = byFrame.get(frameId);
    for (const tool of frame.tools) tools.push({ ...tool, frameId, frameUrl: frame.url });
  }
  return { id: tabId, url: tab?.url ?? '', title: tab?.title ?? '', active: !!tab?.active, status: tab?.status ?? '', tools };
}

const dirty = new Set();
let pushTimer = 0;
function markDirty(tabId) {
  dirty.add(tabId);
  if (!pushTimer) pushTimer = setTimeout(flushDirty, PUSH_DELAY_MS);
}
function flushDirty() {
  pushTimer = 0;
  for (const tabId of dirty) {
    if (tabs.has(tabId)) send({ method: Method.TAB_UPDATED, params: { tab: tabInfo(tabId) } });
  }
  dirty.clear();
}

function rememberTab(tab) {
  tabs.set(tab.id, { id: tab.id, url: tab.url ?? tab.pendingUrl ?? '', title: tab.title ?? '', active: tab.active, status: tab.status, windowId: tab.windowId });
}

chrome.tabs.onCreated.addListener((tab) => { rememberTab(tab); markDirty(tab.id); });
chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  rememberTab(tab);
  if ('url' in change || 'title' in change || 'status' in change) markDirty(tabId);
});
chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
  for (const tab of tabs.values()) {
    if (tab.windowId !== windowId) continue;
    const active = tab.id === tabId;
    if (tab.active !== active) { tab.active = active; markDirty(tab.id); }
  }
});
chrome.tabs.onRemoved.addListener((tabId) => {
  tabs.delete(tabId);
  frames.delete(tabId);
  dirty.delete(tabId);
  send({ method: Method.TAB_REMOVED, params: { tabId } });
});

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== 'webmcp-nb' || !port.sender?.tab) return port.disconnect();
  const tabId = port.sender.tab.id;
  const frameId = port.sender.frameId ?? 0;
  if (!tabs.has(tabId)) rememberTab(port.sender.tab);
  if (!frames.has(tabId)) frames.set(tabId, new Map());
  const frame = { port, tools: [], url: port.sender.url };
  frames.get(tabId).set(frameId, frame);
  port.postMessage({ type: 'relay', connected: socket !== null });
  port.onMessage.addListener((message) => {
    if (message?.type === 'tools') {
      frame.tools = Array.isArray(message.tools) ? message.tools : [];
      frame.url = message.url ?? frame.url;
      markDirty(tabId);
      syncs.get(message.syncId)?.();
    } else if (message?.type === 'result') {
      const call = calls.get(message.id);
      if (call?.port === port) call.finish(message);
    }
  });
  port.onDisconnect.addListener(() => {
    if (frames.get(tabId)?.get(frameId) === frame) {
      frames.get(tabId).delete(frameId);
      markDirty(tabId);
    }
    for (const call of calls.values()) {
      if (call.port === port) {
        call.finish({ ok: false, error: { code: ErrorCode.NAVIGATED, message: 'The page navigated away or closed during the call' } });
      }
    }
  });
});

// Ask a tab's frames (all of them, or one) to send their tools again; resolves when the frame answers.
function sync(tabId, frameId) {
  const syncId = nextId++;
  const options = frameId === undefined ? {} : { frameId };
  return new Promise((resolve) => {
    const done = () => { syncs.delete(syncId); clearTimeout(timer); resolve(); };
    const timer = setTimeout(done, SYNC_TIMEOUT_MS);
    syncs.set(syncId, done);
    chrome.tabs.sendMessage(tabId, { type: 'sync', syncId }, options).catch(done);
  });
}

async function resyncAll() {
  for (const tab of await chrome.tabs.query({})) rememberTab(tab);
  await Promise.all(Array.from(tabs.keys(), (tabId) => sync(tabId, 0)));
  for (const tabId of tabs.keys()) sync(tabId); // iframes: their answers arrive as updates
}

// ---------- requests from the relay ----------

function requireTab(tabId) {
  if (!tabs.has(tabId)) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab with id ${tabId}`);
  return tabs.get(tabId);
}

function callTool({ tabId, name, frameId, args, timeoutMs = 30_000, maxResultChars = 4_000_000 }) {
  requireTab(tabId);
  const byFrame = frames.get(tabId) ?? new Map();
  const frameIds = frameId === undefined ? [...byFrame.keys()].sort((a, b) => a - b) : [frameId];
  const target = frameIds.find((id) => byFrame.get(id)?.tools.some((t) => t.name === name));
  if (target === undefined) {
    throw new RelayError(ErrorCode.TOOL_NOT_FOUND, `Tab ${tabId} has no tool named "${name}"`);
  }
  const port = byFrame.get(target).port;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      port.postMessage({ type: 'cancel', id });
      finish({ ok: false, error: { code: ErrorCode.TIMEOUT, message: `"${name}" did not finish within ${timeoutMs} ms` } });
    }, timeoutMs);
    function finish(message) {
      clearTimeout(timer);
      calls.delete(id);
      if (message.ok) resolve({ text: message.text, frameId: target });
      else reject(new RelayError(message.error?.code ?? ErrorCode.TOOL_ERROR, message.error?.message ?? 'Tool failed', message.error?.data));
    }
    calls.set(id, { tabId, frameId: target, port, finish });
    port.postMessage({ type: 'call', id, name, input: args ?? {}, maxChars: maxResultChars });
  });
}

// Runs `start` (which returns the tab id it navigates) and resolves with that id once the tab's top
// frame has committed a new document and finished loading it. Events are recorded from before `start`
// so none is missed, whatever order Chrome delivers them in.
function loaded(start) {
  const seen = new Map(); // tab id → 'committed' | 'completed' | error text
  let tabId;
  let settle;
  const done = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  const check = () => {
    const state = seen.get(tabId);
    if (tabId === undefined || state === undefined || state === 'committed') return;
    if (state === 'completed') settle.resolve(tabId);
    else settle.reject(new RelayError(ErrorCode.NAVIGATED, `Tab ${tabId} failed to load: ${state}`));
  };
  const onCommitted = (d) => { if (d.frameId === 0) { seen.set(d.tabId, 'committed'); } };
  const onCompleted = (d) => { if (d.frameId === 0 && seen.has(d.tabId)) { seen.set(d.tabId, 'completed'); check(); } };
  const onError = (d) => { if (d.frameId === 0) { seen.set(d.tabId, d.error); check(); } };
  const onRemoved = (id) => { if (id === tabId) settle.reject(new RelayError(ErrorCode.TAB_NOT_FOUND, `Tab ${id} was closed`)); };
  chrome.webNavigation.onCommitted.addListener(onCommitted);
  chrome.webNavigation.onCompleted.addListener(onCompleted);
  chrome.webNavigation.onErrorOccurred.addListener(onError);
  chrome.tabs.onRemoved.addListener(onRemoved);
  const timer = setTimeout(() => settle.reject(new RelayError(ErrorCode.TIMEOUT, `Tab ${tabId} did not finish loading`)), LOAD_TIMEOUT_MS);
  start().then((id) => { tabId = id; check(); }, (error) => settle.reject(error));
  return done.finally(() => {
    clearTimeout(timer);
    chrome.webNavigation.onCommitted.removeListener(onCommitted);
    chrome.webNavigation.onCompleted.removeListener(onCompleted);
    chrome.webNavigation.onErrorOccurred.removeListener(onError);
    chrome.tabs.onRemoved.removeListener(onRemoved);
  });
}

async function settled(tabId) {
  rememberTab(await chrome.tabs.get(tabId));
  await sync(tabId, 0);
  flushDirty();
  return tabInfo(tabId);
}

const handlers = {
  [Method.TOOL_CALL]: callTool,

  async [Method.TAB_OPEN]({ url = 'about:blank', active = true }) {
    const tabId = await loaded(async () => {
      const created = await chrome.tabs.create({ url, active });
      rememberTab(created);
      return created.id;
    });
    return settled(tabId);
  },

  async [Method.TAB_NAVIGATE]({ tabId, url }) {
    requireTab(tabId);
    await loaded(async () => (await chrome.tabs.update(tabId, { url })).id);
    return settled(tabId);
  },

  async [Method.TAB_ACTIVATE]({ tabId }) {
    const tab = requireTab(tabId);
    await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
    return settled(tabId);
  },

  async [Method.TAB_CLOSE]({ tabId }) {
    requireTab(tabId);
    await chrome.tabs.remove(tabId);
    return {};
  },

  async [Method.TAB_SCREENSHOT]({ tabId }) {
    const tab = requireTab(tabId);
    if (!tab.active) await chrome.tabs.update(tabId, { active: true });
    const dataUrl = await chrome.tabs.captureVisibleTab(tab.windowId, { format: 'png' });
    return { data: dataUrl.slice(dataUrl.indexOf(',') + 1), mimeType: 'image/png' };
  },

  async [Method.TAB_SYNC]({ tabId }) {
    requireTab(tabId);
    return settled(tabId);
  },
};

// ---------- start ----------

chrome.alarms.create('webmcp-nb-reconnect', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connect());
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());
connect();
