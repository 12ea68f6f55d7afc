// The service worker's entry: wires the relay connection to the tab mirror, tool calls, tab actions, skills
// and the side panels' hub. Listeners are registered at the top level so a restarted worker receives the event
// that woke it.
//
// Each module imports only the ones below it (tests/test_extension_imports.py fails on a cycle):
//   protocol.js, auth.js, pairing.js → relay.js → lanes.js → mirror.js → calls.js, tab-actions.js, skills.js
//   → chat-bridge.js, panel-hub.js → worker.js
// What a lower module must ask or tell a higher one is connected here.
import { Method, PROTOCOL_VERSION } from '../shared/protocol.js';
import { configure, connect, isConnected, notify, reconnect } from './relay.js';
import { attach, forgetPushed, offerLanes, PAGE, resyncAll, SKILLS, tabInfo, tabs, tellEndpoints, wireMirror } from './mirror.js';
import { callTool, cancelCall, failCallsOf, handleResult } from './calls.js';
import { tabHandlers } from './tab-actions.js';
import { checkUserScripts, restoreSkills, skillHandlers, skillsState, skillToolVisible, wireSkills } from './skills.js';
import { attachBridge, BRIDGE, bridgeHandlers, bridgeNotifications } from './chat-bridge.js';
import {
  addEvents, attachPanel, relayChanged, setClients, setGrants, setSessions, skillsChanged, tabChanged, tabClosed,
} from './panel-hub.js';

const PANEL = 'webmcp-nb-panel';

async function browserId() {
  let { browserId: id } = await chrome.storage.session.get('browserId');
  if (!id) {
    id = crypto.randomUUID();
    await chrome.storage.session.set({ browserId: id });
  }
  return id;
}

wireMirror({ skillToolVisible, result: handleResult, portClosed: failCallsOf, tabChanged, tabClosed });
wireSkills({ changed: skillsChanged });

const restored = restoreSkills();

configure(
  { [Method.TOOL_CALL]: callTool, ...tabHandlers, ...skillHandlers, ...bridgeHandlers },
  {
    ...bridgeNotifications,
    [Method.EVENTS_PUSH]: ({ events }) => Array.isArray(events) && addEvents(events.slice(-100)),
    [Method.RELAY_CLIENTS]: ({ count }) => setClients(Number(count) || 0),
    [Method.TOOL_CANCEL]: cancelCall,
    [Method.SESSIONS_UPDATED]: ({ sessions }) => setSessions(Array.isArray(sessions) ? sessions : []),
    [Method.GRANTS_UPDATED]: (state) => setGrants(state),
    // An ask, answer, refusal or change of a site's grant, made by the relay: the panels' log and cards.
    [Method.GRANT_EVENT]: ({ event }) => event && typeof event === 'object' && String(event.kind).startsWith('grant.') && addEvents([event]),
  },
  {
    async opened() {
      await Promise.all([restored, resyncAll()]);
      forgetPushed();
      notify(Method.HELLO, {
        id: await browserId(),
        protocolVersion: PROTOCOL_VERSION,
        userAgent: navigator.userAgent,
        extensionVersion: chrome.runtime.getManifest().version,
        userScripts: await checkUserScripts({ announce: false }),
        skills: skillsState(),
        tabs: Array.from(tabs.keys(), tabInfo),
      });
      tellEndpoints({ type: 'relay', connected: true });
      relayChanged();
      setTimeout(offerLanes); // once `ready`: grants are notifications, sent only after hello went out
    },
    closed() {
      tellEndpoints({ type: 'relay', connected: false });
      setClients(0);
      setSessions([]);
      setGrants(null);
    },
    tick: () => checkUserScripts(),
    stateChanged: relayChanged,
  },
);

// A new pairing (from the native host, or the options page) or another port: dial again with it.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && ('pairing' in changes || 'port' in changes)) reconnect();
});

chrome.runtime.onConnect.addListener((port) => {
  if (port.name === PAGE) attach(port, PAGE, isConnected());
  else if (port.name === PANEL && port.sender?.id === chrome.runtime.id && port.sender.url?.startsWith(chrome.runtime.getURL(''))) {
    attachPanel(port); // our own page (the side panel, or the same page opened in a tab); never a content script
  }
  else port.disconnect();
});
chrome.runtime.onUserScriptConnect?.addListener((port) => {
  if (port.name === SKILLS) attach(port, SKILLS, isConnected());
  else if (port.name.startsWith(`${BRIDGE}/`)) attachBridge(port);
  else port.disconnect();
});
chrome.sidePanel?.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
// storage.local holds the pairing secret and the side panel chat's API key: keep content scripts out of it.
chrome.storage.local.setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => {});
chrome.alarms.create('webmcp-nb-reconnect', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connect());
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());
connect();
