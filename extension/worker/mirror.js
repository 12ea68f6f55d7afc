// The worker's mirror of every tab: its url/title/state and the endpoints that report tools in it — a
// content script per frame (the page's own tools) and a skill runtime per frame (injected skills' tools).
// A frame bridge reports what changed in its list; the mirror keeps each tab's merged list (a "view") and pushes
// `tab.updated` to the relay, debounced, with only what changed in the view since the last push (ToolChanges in
// webmcp_nb/protocol.py). The hello carries every view whole. After a worker restart memory is empty:
// `resyncAll` asks every frame to announce itself again.
import { Method, PAGE_SOURCES } from '../shared/protocol.js';
import { isConnected, notify, relaySettings } from './relay.js';
import { laneReport, offerLane, reofferLane } from './lanes.js';

const PUSH_DELAY_MS = 1;
const STATUS_RECHECK_MS = 100;
const STATUS_RECHECKS = 300;
const SYNC_TIMEOUT_MS = 2_000;
// What the mirror keeps of one frame: pages are untrusted, and one page must not be able to swamp the relay.
// Tools past these bounds are left out of the mirror, counted (`toolsOmitted`), and still callable by name.
const MAX_TOOLS = 50_000;
const MAX_FRAME_CHARS = 16_000_000;
const MAX_DESCRIPTION_CHARS = 8_000;
const MAX_SCHEMA_CHARS = 200_000;
// Which WebMCP a frame's bridge found (bridge.js): the browser's own, Chrome 146-149's testing API, the polyfill.
const APIS = new Set(['native', 'testing', 'polyfill']);
export const PAGE = 'webmcp-nb';
export const SKILLS = 'webmcp-nb-skills';

export const tabs = new Map(); // tab id → {id, url, title, active, status, windowId}
const endpoints = new Map(); // tab id → Set of {port, kind, frameId, documentId, origin, url, tools: FrameTools, skills, lane}
const views = new Map(); // tab id → Map of key → record: the tab's tools as last pushed, in order
const syncs = new Map(); // sync id → resolve
let nextSyncId = 1;

// In a browser launch() started with its DevTools pipe (config.json's `devtools`), the relay lists and calls the
// page's own native tools through the DevTools protocol: the worker names each tab's DevTools target
// (chrome.debugger.getTargets, a permission only that browser's copy of the extension has; it never attaches) and
// leaves native tools out of what it tells the relay of such a tab, and out of the tools it counts as left out.
// Its own view keeps them, for the side panels and their calls.
const targets = new Map(); // tab id → DevTools target id
let lookingUp = null; // the lookup under way, and whether another must follow it
const viaDevtools = (tabId) => targets.has(tabId);
// Such a tab's frames need not list their native tools on every change (a listing costs the page a pass over all of
// them, in the page's own thread), unless a side panel is open to show them: they are told to wait for a sync.
let panelsOpen = false;
const devtoolsMode = () => relaySettings()?.devtools === true && !!chrome.debugger?.getTargets;

export function lookUpTargets() {
  if (!devtoolsMode()) return Promise.resolve();
  if (lookingUp) {
    lookingUp.again = true;
    return lookingUp.done;
  }
  const run = { again: false };
  run.done = (async () => {
    do {
      run.again = false;
      let found = [];
      try {
        found = await chrome.debugger.getTargets();
      } catch (_) { /* leaves the tabs to the extension's way */ }
      const now = new Map(found.filter((t) => t.type === 'page' && Number.isInteger(t.tabId)).map((t) => [t.tabId, t.id]));
      for (const tabId of new Set([...targets.keys(), ...now.keys()])) {
        if (targets.get(tabId) === now.get(tabId)) continue;
        if (now.has(tabId)) targets.set(tabId, now.get(tabId));
        else targets.delete(tabId);
        if (tabs.has(tabId)) markDirty(tabId);
        for (const endpoint of endpoints.get(tabId) ?? []) tellLazy(endpoint, tabId);
      }
    } while (run.again);
    lookingUp = null;
  })();
  lookingUp = run;
  return run.done;
}

const byFrame = (a, b) => a.frameId - b.frameId;

// What the mirror asks of the modules above it and tells them. worker.js connects these, so the mirror imports
// none of those modules: whether a skill's tool is shown (skills.js), a call's result arriving on an endpoint's
// port and a port that closed (calls.js), a tab that changed or closed (panel-hub.js).
const wiring = {
  skillToolVisible: () => false,
  result: () => {},
  portClosed: () => {},
  tabChanged: () => {},
  tabClosed: () => {},
};
export const wireMirror = (callbacks) => Object.assign(wiring, callbacks);

// One endpoint's tools by name, in the order they joined, within the bounds. `count` is how many the frame
// says it has; the difference is what was left out.
class FrameTools extends Map {
  chars = 0;
  count = 0;
  get omitted() { return Math.max(0, this.count - this.size); }

  put(record) {
    const old = this.get(record.tool.name);
    const chars = this.chars - (old?.size ?? 0) + record.size;
    if (chars > MAX_FRAME_CHARS || (!old && this.size >= MAX_TOOLS)) {
      if (old) this.drop(old.tool.name); // a changed tool that no longer fits is left out too
      return;
    }
    this.set(record.tool.name, record); // a changed tool keeps its place
    this.chars = chars;
  }

  drop(name) {
    const old = this.get(name);
    if (!old) return;
    this.delete(name);
    this.chars -= old.size;
  }

  clear() {
    super.clear();
    this.chars = 0;
  }
}

const isPage = (tool) => PAGE_SOURCES.includes(tool.source);
const keyOf = (frameId, name) => `${frameId}\n${name}`;

// One reported tool, bounded and labelled by what the worker knows rather than what the page says: page
// endpoints may only claim native/polyfill; a skill tool's source must be an installed skill's name; the frame,
// its document and its origin are the port's. Null when it is not a tool at all.
function toRecord(raw, endpoint) {
  if (typeof raw?.name !== 'string' || raw.name.length > 128) return null;
  const tool = {
    name: raw.name,
    title: typeof raw.title === 'string' ? raw.title.slice(0, 200) : undefined,
    description: String(raw.description ?? '').slice(0, MAX_DESCRIPTION_CHARS),
    inputSchema: raw.inputSchema && typeof raw.inputSchema === 'object' ? raw.inputSchema : undefined,
    annotations: raw.annotations && typeof raw.annotations === 'object' ? raw.annotations : {},
    source: endpoint.kind === PAGE ? (raw.source === 'native' ? 'native' : 'polyfill') : String(raw.source ?? ''),
    frameId: endpoint.frameId,
    frameUrl: endpoint.url,
    documentId: endpoint.documentId,
    origin: endpoint.origin,
  };
  let size;
  try {
    if (JSON.stringify(tool.inputSchema ?? null).length > MAX_SCHEMA_CHARS) throw new RangeError();
    size = JSON.stringify(tool).length;
  } catch (_) { // too large, or a cycle (a skill runtime's report is a structured clone)
    tool.inputSchema = { type: 'object', description: 'The schema was too large to mirror.' };
    size = JSON.stringify(tool).length;
  }
  return { tool, size, endpoint, key: keyOf(endpoint.frameId, tool.name) };
}

// A frame bridge sends what changed as JSON text (one copy per hop instead of a structured clone of every tool).
function parseList(text) {
  try {
    const list = JSON.parse(text);
    return Array.isArray(list) ? list : [];
  } catch (_) {
    return [];
  }
}

// A report from an endpoint: a page bridge's changes (`reset`, `removed` names, `upsertJson`, `count`), or a
// skill runtime's whole list (`tools`).
function applyReport(endpoint, message) {
  const { tools } = endpoint;
  const whole = endpoint.kind === SKILLS;
  const upserts = whole ? (Array.isArray(message.tools) ? message.tools : []) : parseList(message.upsertJson);
  if (whole || message.reset === true) tools.clear();
  if (!whole && Array.isArray(message.removed)) for (const name of message.removed) tools.drop(name);
  for (const raw of upserts) {
    const record = toRecord(raw, endpoint);
    if (record) tools.put(record);
  }
  const count = whole ? upserts.length : message.count; // none on all but the last part of a report: kept
  tools.count = Math.max(tools.size, Number.isSafeInteger(count) ? count : tools.count);
  if (whole) endpoint.skills = Array.isArray(message.skills) ? message.skills.slice(0, 100) : [];
  else if (APIS.has(message.api)) endpoint.api = message.api;
}

// What a tab's view should hold now: the page's own tools first (top frame first, each frame's in the order they
// joined), then skill tools whose names the page does not already use, unless the user disabled them. The relay's
// view of a tab reached through the DevTools pipe leaves out the native ones (the pipe tells the relay of those).
function currentRecords(tabId, forRelay = true) {
  const all = [...(endpoints.get(tabId) ?? [])];
  const out = new Map();
  const taken = new Set();
  const piped = forRelay && viaDevtools(tabId);
  for (const endpoint of all.filter((e) => e.kind === PAGE).sort(byFrame)) {
    for (const [name, record] of endpoint.tools) {
      if (!out.has(record.key) && !(piped && record.tool.source === 'native')) out.set(record.key, record);
      taken.add(name);
    }
  }
  for (const endpoint of all.filter((e) => e.kind === SKILLS).sort(byFrame)) {
    for (const [name, record] of endpoint.tools) {
      if (taken.has(name) || !wiring.skillToolVisible(record.tool.source, name)) continue;
      out.set(record.key, record);
      taken.add(name);
    }
  }
  return out;
}

const byGroup = (a, b) => (isPage(a.tool) ? 0 : 1) - (isPage(b.tool) ? 0 : 1) || a.tool.frameId - b.tool.frameId;
const keyPair = (record) => [record.tool.frameId, record.tool.name];

// Brings a tab's view up to date and returns what changed (ToolChanges). The relay and clients apply it as
// webmcp_nb.protocol.apply_tool_changes does: tools that stay keep their place, changed ones too, new ones are
// appended, then sorted by group if that put one out of place. When that order is not the view's (a tool that
// left and came back between two pushes), the changes also carry the whole `order`.
function updateView(tabId) {
  const before = views.get(tabId) ?? new Map();
  const view = currentRecords(tabId);
  const removed = [];
  const upserted = [];
  const kept = [];
  for (const [key, record] of before) {
    const current = view.get(key);
    if (!current) removed.push(keyPair(record));
    else {
      if (current !== record) upserted.push(current.tool);
      kept.push(current);
    }
  }
  const added = [];
  for (const [key, record] of view) if (!before.has(key)) added.push(record);
  for (const record of added) upserted.push(record.tool);
  let order = kept.concat(added);
  if (added.length && order.some((r, i) => i > 0 && byGroup(order[i - 1], r) > 0)) order = order.sort(byGroup);
  views.set(tabId, view);
  const changes = { removed, upserted };
  let i = 0;
  for (const record of view.values()) {
    if (order[i++] !== record) return { ...changes, order: Array.from(view.values(), keyPair) };
  }
  return changes;
}

// The endpoint that runs `name` (in `frameId`, if given, and in document `documentId`, if given), as the tab's
// list orders them; or, when the mirror does not list it, the page endpoints that left tools out (it may be one of
// those), in frame order; or `{stale: true}` when the frame no longer shows that document (the page changed since
// the caller listed the tool: the new document's tool of the same name is never run instead).
export function findTool(tabId, name, frameId, documentId) {
  const all = [...(endpoints.get(tabId) ?? [])].sort(byFrame);
  const inFrame = (endpoint) => frameId === undefined || endpoint.frameId === frameId;
  const current = (endpoint) => documentId === undefined || !endpoint.documentId || endpoint.documentId === documentId;
  const wanted = (endpoint) => inFrame(endpoint) && current(endpoint);
  if (documentId !== undefined && !all.some((e) => inFrame(e) && current(e))) return { stale: true };
  const pages = all.filter((e) => e.kind === PAGE);
  const page = pages.find((e) => wanted(e) && e.tools.has(name));
  if (page) return { tool: page.tools.get(name).tool, endpoint: page };
  if (!pages.some((e) => e.tools.has(name))) {
    const skill = all.find((e) => e.kind === SKILLS && e.tools.has(name) && wiring.skillToolVisible(e.tools.get(name).tool.source, name));
    if (skill) return wanted(skill) ? { tool: skill.tools.get(name).tool, endpoint: skill } : null;
  }
  const unlisted = pages.filter((e) => wanted(e) && e.tools.omitted > 0);
  return unlisted.length ? { tool: null, unlisted } : null;
}

function skillStatus(tabId) {
  const pageNames = new Set();
  const status = [];
  for (const endpoint of endpoints.get(tabId) ?? []) {
    if (endpoint.kind === PAGE) for (const name of endpoint.tools.keys()) pageNames.add(name);
  }
  for (const endpoint of endpoints.get(tabId) ?? []) {
    if (endpoint.kind !== SKILLS) continue;
    for (const skill of endpoint.skills) {
      status.push({ ...skill, frameId: endpoint.frameId, shadowed: skill.tools.filter((n) => pageNames.has(n)) });
    }
  }
  return status;
}

// The page's own origin: its top frame's port's, else its URL's.
function topOrigin(tabId) {
  const top = [...(endpoints.get(tabId) ?? [])].find((e) => e.frameId === 0 && e.origin);
  if (top) return top.origin;
  try {
    return new URL(tabs.get(tabId)?.url ?? '').origin;
  } catch (_) {
    return '';
  }
}

// A tab without its tools: what `tab.updated` carries next to the changes.
function tabFields(tabId) {
  const tab = tabs.get(tabId);
  let omitted = 0;
  let webmcp = '';
  for (const endpoint of endpoints.get(tabId) ?? []) {
    if (!(viaDevtools(tabId) && endpoint.kind === PAGE && endpoint.api === 'native')) omitted += endpoint.tools.omitted;
    if (endpoint.kind === PAGE && endpoint.frameId === 0) webmcp = endpoint.api ?? '';
  }
  return {
    id: tabId, url: tab?.url ?? '', title: tab?.title ?? '', active: !!tab?.active, status: tab?.status ?? '',
    skills: skillStatus(tabId), toolsOmitted: omitted, webmcp, origin: topOrigin(tabId),
    ...(targets.has(tabId) ? { targetId: targets.get(tabId) } : {}),
  };
}

// The whole tab, as the relay's hello gets it.
export function tabInfo(tabId) {
  return { ...tabFields(tabId), tools: Array.from(views.get(tabId)?.values() ?? [], (record) => record.tool) };
}

// The whole tab as side panels show it: every tool, native ones too.
export function panelTabInfo(tabId) {
  if (!viaDevtools(tabId)) return tabInfo(tabId);
  return { ...tabFields(tabId), tools: Array.from(currentRecords(tabId, false).values(), (record) => record.tool) };
}

const dirty = new Set();
let pushTimer = 0;
// tab id → the tab's fields as last pushed (JSON text). A tab whose fields and tools are unchanged is not pushed
// again. Only what was sent while connected counts, and all is forgotten when a hello goes out.
const pushed = new Map();
export const forgetPushed = () => pushed.clear();
export function markDirty(tabId) {
  dirty.add(tabId);
  if (!pushTimer) pushTimer = setTimeout(flushDirty, PUSH_DELAY_MS);
}
export function markAllDirty() {
  for (const tabId of tabs.keys()) markDirty(tabId);
}
// Views change only here, and every change is pushed (or, while the relay is away, dropped: the hello that
// follows carries the views whole).
export function flushDirty() {
  clearTimeout(pushTimer);
  pushTimer = 0;
  for (const tabId of dirty) {
    if (!tabs.has(tabId)) continue;
    const changes = updateView(tabId);
    const tab = tabFields(tabId);
    const text = JSON.stringify(tab);
    if (pushed.get(tabId) !== text || changes.removed.length || changes.upserted.length) {
      if (isConnected()) pushed.set(tabId, text);
      else pushed.delete(tabId);
      notify(Method.TAB_UPDATED, { tab, changes });
      wiring.tabChanged(tabId); // side panels too, only when something changed
    } else if (viaDevtools(tabId)) {
      wiring.tabChanged(tabId); // the panels' view has the native tools the relay's leaves out
    }
  }
  dirty.clear();
}

export function rememberTab(tab) {
  tabs.set(tab.id, {
    id: tab.id, url: tab.url ?? tab.pendingUrl ?? '', title: tab.title ?? '', active: tab.active,
    status: tab.status, windowId: tab.windowId,
  });
}

chrome.tabs.onCreated.addListener((tab) => { rememberTab(tab); markDirty(tab.id); lookUpTargets(); });
chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  rememberTab(tab);
  if ('url' in change || 'title' in change || 'status' in change) markDirty(tabId);
  if (change.status === 'loading') lookUpTargets(); // a prerendered page shown, or the like, is another target
});
// Chrome tells a tab's load 'complete' (tabs.onUpdated) only if it followed the tab when its page committed: the
// first tab of a browser started on a URL, committed before this worker first listened, would stay 'loading' here.
// So a top frame's load has the tab read again until Chrome no longer says it is loading (its other frames may load
// on a little), or the mirror heard otherwise.
chrome.webNavigation.onCompleted.addListener(({ tabId, frameId }) => {
  if (frameId === 0) recheckLoading(tabId, STATUS_RECHECKS);
});
function recheckLoading(tabId, left) {
  if (tabs.get(tabId)?.status !== 'loading') return;
  chrome.tabs.get(tabId).then((tab) => {
    if (tabs.get(tabId)?.status !== 'loading') return;
    if (tab.status !== 'loading') {
      rememberTab(tab);
      markDirty(tabId);
    } else if (left > 0) setTimeout(() => recheckLoading(tabId, left - 1), STATUS_RECHECK_MS);
  }, () => {});
}
chrome.tabs.onReplaced.addListener(() => lookUpTargets());
chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
  for (const tab of tabs.values()) {
    if (tab.windowId !== windowId) continue;
    const active = tab.id === tabId;
    if (tab.active !== active) { tab.active = active; markDirty(tab.id); }
  }
});
chrome.tabs.onRemoved.addListener((tabId) => {
  tabs.delete(tabId);
  targets.delete(tabId);
  endpoints.delete(tabId);
  views.delete(tabId);
  dirty.delete(tabId);
  pushed.delete(tabId);
  notify(Method.TAB_REMOVED, { tabId });
  wiring.tabClosed(tabId);
});

// A port from a content script (PAGE) or from a skill runtime (SKILLS) in some frame of some tab.
export function attach(port, kind, relayUp) {
  const tab = port.sender?.tab;
  if (!tab) return port.disconnect();
  const tabId = tab.id;
  if (!tabs.has(tabId)) rememberTab(tab);
  if (!endpoints.has(tabId)) endpoints.set(tabId, new Set());
  const frameId = port.sender.frameId ?? 0;
  const { documentId, origin, url } = port.sender;
  const endpoint = {
    port, kind, frameId, documentId, origin, url, tools: new FrameTools(), skills: [], lane: null, api: '', lazy: null,
  };
  endpoints.get(tabId).add(endpoint);
  port.postMessage({ type: 'relay', connected: relayUp });
  port.onMessage.addListener((message) => {
    if (message?.type === 'tools') {
      applyReport(endpoint, message);
      markDirty(tabId);
      const waiter = syncs.get(message.syncId);
      if (waiter?.tabId === tabId) waiter.done(endpoint);
      if (kind === PAGE && !piped(endpoint, tabId)) offerLane(endpoint, tabId);
      if (kind === PAGE) tellLazy(endpoint, tabId);
    } else if (message?.type === 'result') {
      wiring.result(port, message);
    } else if (message?.type === 'lane' && kind === PAGE) {
      laneReport(endpoint, tabId, message);
    }
  });
  port.onDisconnect.addListener(() => {
    if (endpoints.get(tabId)?.delete(endpoint)) markDirty(tabId);
    wiring.portClosed(port);
  });
}

export function tellEndpoints(message) {
  for (const set of endpoints.values()) for (const endpoint of set) endpoint.port.postMessage(message);
}

// A frame whose tools the relay calls through the DevTools pipe needs no lane.
const piped = (endpoint, tabId) => viaDevtools(tabId) && endpoint.api === 'native';

// Tell a page endpoint whether to report its changes as they come (`lazy: false`) or only when synced.
function tellLazy(endpoint, tabId) {
  const lazy = endpoint.kind === PAGE && piped(endpoint, tabId) && !panelsOpen;
  if (endpoint.lazy === lazy) return;
  endpoint.lazy = lazy;
  try {
    endpoint.port.postMessage({ type: 'lazy', lazy });
  } catch (_) { /* the frame went */ }
}

// Whether a side panel is open (panel-hub.js): frames of tabs the pipe lists report changes only while one is.
export function setPanelsOpen(open) {
  panelsOpen = open;
  for (const [tabId, set] of endpoints) for (const endpoint of set) tellLazy(endpoint, tabId);
}

export function offerLanes() {
  for (const [tabId, set] of endpoints) {
    for (const endpoint of set) if (endpoint.kind === PAGE && !piped(endpoint, tabId)) reofferLane(endpoint, tabId);
  }
}

// A sync id to hand to an endpoint, and a promise that resolves when a `tools` report carrying it
// arrives, with the endpoint that sent it (or after a timeout, with nothing, so nothing waits forever on a frame
// that is gone). Only a report from that tab counts, so a page cannot answer for another tab.
export function expectReport(tabId) {
  const syncId = nextSyncId++;
  let done;
  const arrived = new Promise((resolve) => {
    const timer = setTimeout(() => done(), SYNC_TIMEOUT_MS);
    done = (endpoint) => { syncs.delete(syncId); clearTimeout(timer); resolve(endpoint); };
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

// The order in which each frame of a tab registered its page tools, as its bridge saw them: for the relay's
// DevTools pipe, which gets a document's tools sorted by name when the browser reports them all at once (a tab
// whose first page ran before the pipe could follow it, a page back from the back/forward cache). Each frame is
// synced first, so the names are its current document's.
export async function toolOrder(tabId) {
  const pages = () => [...(endpoints.get(tabId) ?? [])].filter((e) => e.kind === PAGE);
  const frameIds = new Set([0, ...pages().map((e) => e.frameId)]);
  const answered = await Promise.all(Array.from(frameIds, (frameId) => sync(tabId, frameId)));
  return Array.from(frameIds, (frameId, i) => answered[i] ?? pages().findLast((e) => e.frameId === frameId))
    .filter((endpoint) => endpoint && endpoints.get(tabId)?.has(endpoint))
    .map((endpoint) => ({ frameId: endpoint.frameId, url: endpoint.url ?? '', names: [...endpoint.tools.keys()] }));
}

export async function resyncAll() {
  for (const tab of await chrome.tabs.query({})) rememberTab(tab);
  await lookUpTargets();
  await Promise.all(Array.from(tabs.keys(), (tabId) => sync(tabId, 0)));
  for (const tabId of tabs.keys()) sync(tabId); // iframes: their answers arrive as updates
}
