// Relay requests that act on tabs: open, navigate, activate, close, screenshot, sync. Open and navigate
// return once the top frame has loaded the new document and answered a sync, so tools registered during
// load are in the reply.
import { ErrorCode, Method } from '../shared/protocol.js';
import { RelayError } from './relay.js';
import { flushDirty, lookUpTargets, markDirty, rememberTab, sync, tabs, toolOrder } from './mirror.js';
import { requireSites } from './sites.js';

const LOAD_TIMEOUT_MS = 30_000;
const CAPTURE_SPACING_MS = 510;
let lastCapture = 0;

function requireTab(tabId) {
  if (!tabs.has(tabId)) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab with id ${tabId}`);
  return tabs.get(tabId);
}

// Runs `start` (which returns the id of the tab it navigates) and resolves with that id once the tab's top
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
    else settle.reject(new RelayError(ErrorCode.NAVIGATED, `Tab ${tabId} failed to load: ${state}. It stays open on its error page: check the address and that its server answers`, { tabId }));
  };
  const onCommitted = (d) => { if (d.frameId === 0) seen.set(d.tabId, 'committed'); };
  const onCompleted = (d) => { if (d.frameId === 0 && seen.has(d.tabId)) { seen.set(d.tabId, 'completed'); check(); } };
  const onSameDocument = (d) => { if (d.frameId === 0) { seen.set(d.tabId, 'completed'); check(); } }; // #fragment, pushState
  const onError = (d) => { if (d.frameId === 0) { seen.set(d.tabId, d.error); check(); } };
  const onRemoved = (id) => { if (id === tabId) settle.reject(new RelayError(ErrorCode.TAB_NOT_FOUND, `Tab ${id} was closed`)); };
  const events = [
    [chrome.webNavigation.onCommitted, onCommitted],
    [chrome.webNavigation.onCompleted, onCompleted],
    [chrome.webNavigation.onReferenceFragmentUpdated, onSameDocument],
    [chrome.webNavigation.onHistoryStateUpdated, onSameDocument],
    [chrome.webNavigation.onErrorOccurred, onError],
    [chrome.tabs.onRemoved, onRemoved],
  ];
  for (const [event, listener] of events) event.addListener(listener);
  const timer = setTimeout(() => settle.reject(new RelayError(ErrorCode.TIMEOUT, `Tab ${tabId} did not finish loading`, { tabId })), LOAD_TIMEOUT_MS);
  start().then((id) => { tabId = id; check(); }, (error) => settle.reject(error));
  return done.finally(() => {
    clearTimeout(timer);
    for (const [event, listener] of events) event.removeListener(listener);
  });
}

// Once the tab's top frame (or, with `everyFrame`, each of its frames) has answered a sync, the tab goes to clients
// as a `tab.updated` push, sent before this reply on the same socket, so the reply only names it: a tab with 1,000
// tools crosses the wire once, not twice. It names the tab's DevTools target as it is now (a tab's first navigation
// can move it to another), so the relay waits for that target's tools.
async function settled(tabId, everyFrame = false) {
  rememberTab(await chrome.tabs.get(tabId));
  const frames = everyFrame ? (await chrome.webNavigation.getAllFrames({ tabId }))?.map((f) => f.frameId) : null;
  const synced = (frames ?? [0]).map((frameId) => sync(tabId, frameId));
  await Promise.all([...synced, lookUpTargets()]); // (its DevTools target may be new: the relay must know it)
  markDirty(tabId);
  flushDirty();
  return { tabId };
}

export const tabHandlers = {
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

  async [Method.TAB_RELOAD]({ tabId }) {
    requireTab(tabId);
    await loaded(async () => { await chrome.tabs.reload(tabId); return tabId; });
    return settled(tabId);
  },

  async [Method.TAB_BACK]({ tabId }) {
    requireTab(tabId);
    await loaded(async () => {
      const went = await chrome.tabs.sendMessage(tabId, { type: 'back' }, { frameId: 0 })
        .catch(() => chrome.tabs.goBack(tabId).then(() => true));
      if (went === false) throw new RelayError(ErrorCode.INVALID_ARGS, `Tab ${tabId} has no previous page`);
      return tabId;
    });
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

  // `site` and `sites`, for a capture a model asked for: the site its grant check allowed (read from the relay's
  // copy of the URL, which can lag the tab) and the sites its frames may show (sites.js).
  async [Method.TAB_SCREENSHOT]({ tabId, site, sites }) {
    const tab = requireTab(tabId);
    if (!tab.active) await chrome.tabs.update(tabId, { active: true });
    // Chrome allows two captureVisibleTab calls per second; space them rather than fail. Under load Chrome may
    // still see two closer together than they were made: then wait a spacing more and try again. The wait comes
    // before the checks: a tab can go anywhere while it waits.
    for (let attempt = 0; ; attempt++) {
      const wait = lastCapture + CAPTURE_SPACING_MS - Date.now();
      lastCapture = Math.max(Date.now(), lastCapture + CAPTURE_SPACING_MS);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      try {
        // The capture is of whatever the window shows: it must be this tab, before and after (the user, or another
        // session, may switch tabs meanwhile), or the image would be of a tab nobody checked.
        await requireShown(tabId, tab.windowId);
        const before = site === undefined ? null : await requireSites(tabId, site, sites);
        const dataUrl = await chrome.tabs.captureVisibleTab(tab.windowId, { format: 'png' });
        await requireShown(tabId, tab.windowId);
        if (site !== undefined && (await requireSites(tabId, site, sites)) !== before) {
          throw new RelayError(ErrorCode.NAVIGATED, `Tab ${tabId} navigated while its picture was taken: no screenshot taken`, { tabId });
        }
        return { data: dataUrl.slice(dataUrl.indexOf(',') + 1), mimeType: 'image/png' };
      } catch (error) {
        if (attempt >= 3 || !/MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND/.test(String(error?.message))) throw error;
      }
    }
  },

  async [Method.TAB_SYNC]({ tabId }) {
    requireTab(tabId);
    return settled(tabId, true);
  },

  // The relay's own request (clients cannot send it): see toolOrder.
  async [Method.TAB_TOOL_ORDER]({ tabId }) {
    requireTab(tabId);
    return { frames: await toolOrder(tabId) };
  },
};

async function requireShown(tabId, windowId) {
  const [shown] = await chrome.tabs.query({ active: true, windowId });
  if (shown?.id !== tabId) throw new RelayError(ErrorCode.BAD_REQUEST, `Tab ${tabId} is no longer the one its window shows: no screenshot taken`);
}

