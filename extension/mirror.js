// The worker's mirror of every tab: its url/title/state and the endpoints that report tools in it — a
// content script per frame (the page's own tools) and a skill runtime per frame (injected skills' tools).
// Pushes `tab.updated` to the relay, debounced. After a worker restart memory is empty: `resyncAll` asks
// every frame to announce itself again.
import { Method } from './protocol.js';
import { isConnected, notify } from './relay.js';
import { failCallsOf, handleResult } from './calls.js';
import { skillToolVisible } from './skills.js';
import { tabChanged, tabClosed } from './panel.js';
import { laneReport, offerLane, reofferLane } from './lanes.js';

const PUSH_DELAY_MS = 5;
const SYNC_TIMEOUT_MS = 2_000;
// What one frame may report: pages are untrusted, and one page must not be able to swamp the relay.
const MAX_TOOLS = 2_000;
const MAX_REPORT_CHARS = 4_000_000;
const MAX_DESCRIPTION_CHARS = 8_000;
const MAX_SCHEMA_CHARS = 200_000;
export const PAGE = 'webmcp-nb';
export const SKILLS = 'webmcp-nb-skills';

export const tabs = new Map(); // tab id → {id, url, title, active, status, windowId}
const endpoints = new Map(); // tab id → Set of {port, kind, frameId, url, tools, skills}
const syncs = new Map(); // sync id → resolve
let nextSyncId = 1;

const byFrame = (a, b) => a.frameId - b.frameId;

// Every tool of a tab with the endpoint that runs it: the page's own tools first (top frame first), then
// skill tools whose names the page does not already use, unless the user disabled them.
export function toolsOf(tabId) {
  const all = [...(endpoints.get(tabId) ?? [])];
  const out = [];
  const taken = new Set();
  for (const endpoint of all.filter((e) => e.kind === PAGE).sort(byFrame)) {
    for (const tool of endpoint.tools) {
      out.push({ tool: { ...tool, frameId: endpoint.frameId, frameUrl: endpoint.url }, endpoint });
      taken.add(tool.name);
    }
  }
  for (const endpoint of all.filter((e) => e.kind === SKILLS).sort(byFrame)) {
    for (const tool of endpoint.tools) {
      if (taken.has(tool.name) || !skillToolVisible(tool.source, tool.name)) continue;
      out.push({ tool: { ...tool, frameId: endpoint.frameId, frameUrl: endpoint.url }, endpoint });
      taken.add(tool.name);
    }
  }
  return out;
}

function skillStatus(tabId) {
  const pageNames = new Set();
  const status = [];
  for (const endpoint of endpoints.get(tabId) ?? []) {
    if (endpoint.kind === PAGE) for (const tool of endpoint.tools) pageNames.add(tool.name);
  }
  for (const endpoint of endpoints.get(tabId) ?? []) {
    if (endpoint.kind !== SKILLS) continue;
    for (const skill of endpoint.skills) {
      status.push({ ...skill, frameId: endpoint.frameId, shadowed: skill.tools.filter((n) => pageNames.has(n)) });
    }
  }
  return status;
}

// A frame bridge sends its list as JSON text (one copy per hop instead of a structured clone of every tool).
function parseReport(text) {
  try {
    return JSON.parse(text);
  } catch (_) {
    return [];
  }
}

// A frame's report, bounded and labelled by what the worker knows rather than what the page says:
// page endpoints may only claim native/polyfill; a skill tool's source must be an installed skill's name.
function cleanTools(tools, kind) {
  if (!Array.isArray(tools)) return [];
  const out = [];
  let size = 0;
  for (const raw of tools.slice(0, MAX_TOOLS)) {
    if (typeof raw?.name !== 'string' || raw.name.length > 128) continue;
    const tool = {
      name: raw.name,
      title: typeof raw.title === 'string' ? raw.title.slice(0, 200) : undefined,
      description: String(raw.description ?? '').slice(0, MAX_DESCRIPTION_CHARS),
      inputSchema: raw.inputSchema && typeof raw.inputSchema === 'object' ? raw.inputSchema : undefined,
      annotations: raw.annotations && typeof raw.annotations === 'object' ? raw.annotations : {},
      source: kind === PAGE ? (raw.source === 'native' ? 'native' : 'polyfill') : String(raw.source ?? ''),
    };
    if (JSON.stringify(tool.inputSchema ?? null).length > MAX_SCHEMA_CHARS) {
      tool.inputSchema = { type: 'object', description: 'The schema was too large to mirror.' };
    }
    size += JSON.stringify(tool).length;
    if (size > MAX_REPORT_CHARS) break;
    out.push(tool);
  }
  return out;
}

export function tabInfo(tabId) {
  const tab = tabs.get(tabId);
  return {
    id: tabId, url: tab?.url ?? '', title: tab?.title ?? '', active: !!tab?.active, status: tab?.status ?? '',
    tools: toolsOf(tabId).map(({ tool }) => tool),
    skills: skillStatus(tabId),
  };
}

const dirty = new Set();
let pushTimer = 0;
// tab id → the tab as last pushed (JSON text). A tab that is still exactly that is not pushed again: the relay
// and its clients have it. Only what was sent while connected counts, and all is forgotten when a hello goes out.
const pushed = new Map();
export const forgetPushed = () => pushed.clear();
export function markDirty(tabId) {
  dirty.add(tabId);
  if (!pushTimer) pushTimer = setTimeout(flushDirty, PUSH_DELAY_MS);
}
export function markAllDirty() {
  for (const tabId of tabs.keys()) markDirty(tabId);
}
export function flushDirty() {
  clearTimeout(pushTimer);
  pushTimer = 0;
  for (const tabId of dirty) {
    if (!tabs.has(tabId)) continue;
    const info = tabInfo(tabId);
    const text = JSON.stringify(info);
    if (pushed.get(tabId) !== text) {
      if (isConnected()) pushed.set(tabId, text); // else notify drops it, and the hello will carry it
      else pushed.delete(tabId);
      notify(Method.TAB_UPDATED, { tab: info });
    }
    tabChanged(tabId);
  }
  dirty.clear();
}

export function rememberTab(tab) {
  tabs.set(tab.id, {
    id: tab.id, url: tab.url ?? tab.pendingUrl ?? '', title: tab.title ?? '', active: tab.active,
    status: tab.status, windowId: tab.windowId,
  });
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
  endpoints.delete(tabId);
  dirty.delete(tabId);
  pushed.delete(tabId);
  notify(Method.TAB_REMOVED, { tabId });
  tabClosed(tabId);
});

// A port from a content script (PAGE) or from a skill runtime (SKILLS) in some frame of some tab.
export function attach(port, kind, relayUp) {
  const tab = port.sender?.tab;
  if (!tab) return port.disconnect();
  const tabId = tab.id;
  if (!tabs.has(tabId)) rememberTab(tab);
  if (!endpoints.has(tabId)) endpoints.set(tabId, new Set());
  const endpoint = { port, kind, frameId: port.sender.frameId ?? 0, url: port.sender.url, tools: [], skills: [], lane: null };
  endpoints.get(tabId).add(endpoint);
  port.postMessage({ type: 'relay', connected: relayUp });
  port.onMessage.addListener((message) => {
    if (message?.type === 'tools') {
      if (!(message.unchanged === true && kind === PAGE)) { // unchanged: what this port reported last time
        endpoint.tools = cleanTools(typeof message.toolsJson === 'string' ? parseReport(message.toolsJson) : message.tools, kind);
        endpoint.skills = kind === SKILLS && Array.isArray(message.skills) ? message.skills.slice(0, 100) : [];
      }
      markDirty(tabId);
      const waiter = syncs.get(message.syncId);
      if (waiter?.tabId === tabId) waiter.done();
      if (kind === PAGE) offerLane(endpoint, tabId);
    } else if (message?.type === 'result') {
      handleResult(port, message);
    } else if (message?.type === 'lane' && kind === PAGE) {
      laneReport(endpoint, tabId, message);
    }
  });
  port.onDisconnect.addListener(() => {
    if (endpoints.get(tabId)?.delete(endpoint)) markDirty(tabId);
    failCallsOf(port);
  });
}

export function tellEndpoints(message) {
  for (const set of endpoints.values()) for (const endpoint of set) endpoint.port.postMessage(message);
}

export function offerLanes() {
  for (const [tabId, set] of endpoints) for (const endpoint of set) if (endpoint.kind === PAGE) reofferLane(endpoint, tabId);
}

// A sync id to hand to an endpoint, and a promise that resolves when a `tools` report carrying it
// arrives (or after a timeout, so nothing waits forever on a frame that is gone).
// Only a report from that tab counts, so a page cannot answer for another tab.
export function expectReport(tabId) {
  const syncId = nextSyncId++;
  let done;
  const arrived = new Promise((resolve) => {
    const timer = setTimeout(() => done(), SYNC_TIMEOUT_MS);
    done = () => { syncs.delete(syncId); clearTimeout(timer); resolve(); };
    syncs.set(syncId, { tabId, done });
  });
  return { syncId, arrived, cancel: () => done() };
}

// Ask a tab's frames (all of them, or one) to send their tools again; resolves when the frame's report
// arrives on its port, or at once when no content script listens there (chrome:// pages and the like).
export function sync(tabId, frameId) {
  const { syncId, arrived, cancel } = expectReport(tabId);
  const options = frameId === undefined ? {} : { frameId };
  chrome.tabs.sendMessage(tabId, { type: 'sync', syncId }, options).catch(cancel);
  return arrived;
}

export async function resyncAll() {
  for (const tab of await chrome.tabs.query({})) rememberTab(tab);
  await Promise.all(Array.from(tabs.keys(), (tabId) => sync(tabId, 0)));
  for (const tabId of tabs.keys()) sync(tabId); // iframes: their answers arrive as updates
}
