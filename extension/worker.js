// The service worker's entry: wires the relay connection to the tab mirror, tool calls, tab actions and
// skills. Listeners are registered at the top level so a restarted worker receives the event that woke it.
import { Method, PROTOCOL_VERSION } from './protocol.js';
import { configure, connect, isConnected, notify } from './relay.js';
import { attach, PAGE, resyncAll, SKILLS, tabInfo, tabs, tellEndpoints } from './mirror.js';
import { callTool } from './calls.js';
import { tabHandlers } from './tab-actions.js';
import { restoreSkills, skillHandlers, skillsState, userScriptsAvailable } from './skills.js';

async function browserId() {
  let { browserId: id } = await chrome.storage.session.get('browserId');
  if (!id) {
    id = crypto.randomUUID();
    await chrome.storage.session.set({ browserId: id });
  }
  return id;
}

const restored = restoreSkills();

configure(
  { [Method.TOOL_CALL]: callTool, ...tabHandlers, ...skillHandlers },
  {
    async opened() {
      await Promise.all([restored, resyncAll()]);
      notify(Method.HELLO, {
        id: await browserId(),
        protocolVersion: PROTOCOL_VERSION,
        userAgent: navigator.userAgent,
        extensionVersion: chrome.runtime.getManifest().version,
        userScripts: await userScriptsAvailable(),
        skills: skillsState(),
        tabs: Array.from(tabs.keys(), tabInfo),
      });
      tellEndpoints({ type: 'relay', connected: true });
    },
    closed() {
      tellEndpoints({ type: 'relay', connected: false });
    },
  },
);

chrome.runtime.onConnect.addListener((port) => (port.name === PAGE ? attach(port, PAGE, isConnected()) : port.disconnect()));
chrome.runtime.onUserScriptConnect?.addListener((port) => (port.name === SKILLS ? attach(port, SKILLS, isConnected()) : port.disconnect()));
chrome.alarms.create('webmcp-nb-reconnect', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connect());
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());
connect();
