// The side panel: the shown tab's tools (call one by hand), its skills (switch them), the session's log,
// confirmations (from a notebook agent and from this panel's chat), asks for a site's grant, the chat, the MCP
// clients' sessions, and the sites granted. Everything goes through the
// worker's hub (panel-hub.js) over one runtime port; the hub records what the panel does as events, which reach
// the notebook's session when a notebook is connected.
//
// This entry connects the parts: the hub's messages to the sections that show them, and each event to the
// log, the confirmation cards and the chat's transcript. Page- and tool-provided text is only ever rendered as
// text (dom.js). The chat's API key stays in model-io.js's request headers: never in this page's DOM, events or
// logs.
import { trackConfirmations, trackGrants } from './cards.js';
import { loadChatPolicy, loadChatSettings, setUpChat, trackNotebookTurn } from './chat.js';
import { $ } from './dom.js';
import { renderGrants, setGrants } from './grants.js';
import { renderHeader, renderStatus, setStatus } from './header.js';
import { connectHub } from './hub.js';
import { appendLog, remember, renderLog, setUpLog } from './log.js';
import { renderSessions, setSessions } from './sessions.js';
import { renderSkills, setSkills } from './skills.js';
import { followActiveTab, shown, tabs } from './tabs.js';
import { forgetSelection, renderTools, setUpTools } from './tools.js';

function renderTab() {
  renderHeader();
  renderTools();
  renderSkills();
}

function tabUpdated(tab) {
  tabs.set(tab.id, tab);
  if (tab.id === shown.tabId) renderTab();
  renderSessions();
}

// `live`: it just happened (an event the hub's init repeats is not appended to the log one by one).
function addEvent(event, live) {
  if (!remember(event)) return;
  trackConfirmations(event);
  trackGrants(event);
  trackNotebookTurn(event);
  if (live) appendLog(event);
}

const statusOf = (message) => ({
  relay: !!message.relay, connection: message.connection ?? null, clients: Number(message.clients) || 0,
});

function onHubMessage(message) {
  switch (message?.type) {
    case 'init':
      setStatus({ hubUp: true, ...statusOf(message) });
      tabs.clear();
      for (const tab of message.tabs ?? []) tabs.set(tab.id, tab);
      setSkills(message.skills);
      setSessions(message.sessions);
      setGrants(message.grants);
      for (const event of message.events ?? []) addEvent(event, false);
      renderTab();
      renderLog();
      renderSessions();
      renderGrants();
      break;
    case 'event':
      addEvent(message.event, true);
      break;
    case 'tab':
      if (message.tab) tabUpdated(message.tab);
      break;
    case 'tabClosed':
      tabs.delete(message.tabId);
      if (message.tabId === shown.tabId) renderTab();
      renderSessions();
      break;
    case 'sessions':
      setSessions(message.sessions);
      renderSessions();
      break;
    case 'grants':
      setGrants(message.grants);
      renderGrants();
      break;
    case 'skills':
      setSkills(message.skills);
      renderSkills();
      break;
    case 'status':
      setStatus(statusOf(message));
      break;
    default:
  }
}

setUpTools();
setUpLog();
setUpChat({ onTab: tabUpdated });
for (const id of ['open-options', 'chat-setup']) $(id).addEventListener('click', () => chrome.runtime.openOptionsPage());

renderStatus();
await Promise.all([
  followActiveTab({
    switched: () => {
      forgetSelection();
      renderTab();
      renderLog();
    },
    updated: renderHeader,
  }),
  loadChatSettings(),
  loadChatPolicy(),
]);
renderHeader();
renderGrants();
connectHub({ message: onHubMessage, lost: () => setStatus({ hubUp: false, relay: false, clients: 0 }) });
