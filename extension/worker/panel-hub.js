// The worker's hub for side panels: each open panel holds a port to the worker. The hub keeps the last events
// of the session (pushed by notebooks through the relay, and made by panels themselves), sends them and tab and
// skill updates and the relay's MCP sessions to every panel, and acts for a panel: call a tool, re-read a tab's
// tools, answer a confirmation, switch a skill, record an event, focus a session's tab, close a session, check a
// site's grant for the chat, answer an ask, revoke a grant (the relay keeps the grants: the file in the user's home).
// Events a panel causes go to the relay as `panel.event`, so the notebook's session records them; only the
// kinds in PANEL_EVENT_KINDS (generated from webmcp_nb/protocol.py, which checks their fields again).
import { Method, PANEL_EVENT_KINDS } from '../shared/protocol.js';
import { connectionState, isConnected, notify, request, wakeRelay } from './relay.js';
import { callTool } from './calls.js';
import { panelTabInfo, setPanelsOpen, tabs } from './mirror.js';
import { skillHandlers, skillsState } from './skills.js';
import { tabHandlers } from './tab-actions.js';

const LOG_SIZE = 500;
const log = [];
const panels = new Set();
let clients = 0;
let sessions = []; // the relay's MCP sessions (sessions.updated), as it sent them
let grants = null; // the per-site grants as the relay last sent them (grants.updated); null while it is away

const NO_RELAY = 'Site grants are kept by the webmcp-nb relay, which is not connected and could not be started '
  + 'from here: run `webmcp-nb relay` (or wm.connect() in a notebook), then ask again.';

function broadcast(message) {
  for (const port of panels) port.postMessage(message);
}

function status() {
  return { type: 'status', relay: isConnected(), connection: connectionState(), clients };
}

// Events from the notebook (`events.push`) or from a panel.
export function addEvents(events) {
  for (const event of events) {
    log.push(event);
    broadcast({ type: 'event', event });
  }
  log.splice(0, Math.max(0, log.length - LOG_SIZE));
}

export function setClients(count) {
  clients = count;
  broadcast(status());
}

export function setSessions(list) {
  sessions = list;
  broadcast({ type: 'sessions', sessions });
}

export function setGrants(state) {
  grants = state && typeof state === 'object' ? state : null;
  broadcast({ type: 'grants', grants });
}

export const relayChanged = () => broadcast(status());
export const tabChanged = (tabId) => panels.size && broadcast({ type: 'tab', tab: panelTabInfo(tabId) });
export const tabClosed = (tabId) => panels.size && broadcast({ type: 'tabClosed', tabId });
export const skillsChanged = () => panels.size && broadcast({ type: 'skills', skills: skillsState() });

function emit(kind, tabId, data, durationMs = null) {
  const event = {
    kind, tab_id: tabId ?? null, url: tabs.get(tabId)?.url ?? null, ts: Date.now() / 1000,
    duration_ms: durationMs, data: { ...data, origin: 'sidepanel' },
  };
  addEvents([event]);
  notify(Method.PANEL_EVENT, { event });
  return event;
}

// A call by hand, or the chat's (which names the frame and document of the tool it showed its model).
async function callForPanel({ tabId, name, frameId, documentId, args }) {
  emit('tool.called', tabId, { tool: name, arguments: args ?? {} });
  const started = performance.now();
  try {
    const { text } = await callTool({ tabId, name, frameId, documentId, args: args ?? {}, timeoutMs: 10_000 });
    emit('tool.returned', tabId, { tool: name, text }, performance.now() - started);
    return { ok: true, text };
  } catch (error) {
    const failure = { code: error.code ?? 'INTERNAL', message: String(error.message ?? error) };
    emit('tool.failed', tabId, { tool: name, ...failure }, performance.now() - started);
    return { ok: false, error: failure };
  }
}

const failure = (error) => ({ ok: false, error: { code: error.code ?? 'INTERNAL', message: String(error.message ?? error) } });

// The chat's check before it reads a page or calls a tool (the relay asks the user when the site was never
// granted). A browser whose relay does not enforce grants (launched by webmcp-nb) needs no round trip.
async function checkGrant({ tabId, url, need, model, action, tool, risk, held, heldSite, timeoutMs }) {
  if (grants?.enforced === false) return { ok: true, level: 'exempt' };
  if (!isConnected() && !(await wakeRelay())) return { ok: false, error: { code: 'PERMISSION_DENIED', message: NO_RELAY } };
  const where = typeof url === 'string' ? { url } : { tabId }; // a URL's site: a cross-origin frame's, for its tool
  const params = { ...where, need, who: { kind: 'sidepanel', name: String(model ?? 'the chat') }, action, timeoutMs };
  for (const [key, value] of Object.entries({ tool, risk, held, heldSite })) if (value) params[key] = value;
  try {
    return { ok: true, ...(await request(Method.GRANTS_CHECK, params, Number(timeoutMs) + 10_000)) };
  } catch (error) {
    return failure(error);
  }
}

const actions = {
  call: callForPanel,
  grant: checkGrant,
  grantAnswer: ({ id, answer }) => request(Method.GRANTS_ANSWER, { id, answer }).then((r) => ({ ok: true, ...r }), failure),
  grantRevoke: ({ origin }) => request(Method.GRANTS_REVOKE, { origin }).then((r) => ({ ok: true, ...r }), failure),
  // A confirmation raised by a notebook agent: the notebook applies the first answer it gets.
  confirm: ({ id, approved, tabId }) => (emit('confirmation.answer', tabId, { id, approved: !!approved }), { ok: true }),
  skill: async ({ name, enabled, disabledTools }) => ({ ok: true, skill: await skillHandlers[Method.SKILL_UPDATE]({ name, enabled, disabledTools }) }),
  emit: ({ kind, tabId, data }) => {
    if (!PANEL_EVENT_KINDS.includes(kind)) return { ok: false, error: { code: 'BAD_REQUEST', message: `a panel does not report ${String(kind).slice(0, 100)} events` } };
    emit(kind, tabId, data ?? {});
    return { ok: true };
  },
  // An MCP session's tab, brought to the front of its window; a session the user ends (its client sees it gone).
  focus: async ({ tabId }) => {
    const tab = await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
    return { ok: true };
  },
  closeSession: ({ sessionId }) => {
    if (!isConnected()) return { ok: false, error: { code: 'NOT_CONNECTED', message: 'The relay is not connected' } };
    notify(Method.SESSION_CLOSE, { sessionId: String(sessionId) });
    return { ok: true };
  },
  // After a chat step that may have changed the page: the relay's tab.sync (the tab's frames report their
  // tools), then the tab as it is now.
  sync: async ({ tabId }) => {
    await tabHandlers[Method.TAB_SYNC]({ tabId });
    return { ok: true, tab: panelTabInfo(tabId) };
  },
};

export function attachPanel(port) {
  panels.add(port);
  setPanelsOpen(true);
  port.onDisconnect.addListener(() => {
    panels.delete(port);
    setPanelsOpen(panels.size > 0);
  });
  port.postMessage({ ...status(), type: 'init', events: log, tabs: Array.from(tabs.keys(), panelTabInfo), skills: skillsState(), sessions, grants });
  port.onMessage.addListener(async (message) => {
    const action = Object.hasOwn(actions, message?.type) ? actions[message.type] : null;
    if (!action) return;
    let reply;
    try {
      reply = await action(message);
    } catch (error) {
      reply = { ok: false, error: { code: error.code ?? 'INTERNAL', message: String(error.message ?? error) } };
    }
    port.postMessage({ type: 'reply', reqId: message.reqId, ...reply });
  });
}
