// The side panel's header: whether the extension reaches the relay and how many notebooks are connected, and
// the title and URL of the tab the panel shows.
import { $, visible } from './dom.js';
import { currentTab, shown } from './tabs.js';

const status = {
  hubUp: false, // the panel's port to the worker is open and the hub said hello
  relay: false,
  connection: null, // {status, detail} of the worker's relay connection
  clients: 0,
};

// Some of the fields above, then the header shows them.
export function setStatus(fields) {
  Object.assign(status, fields);
  renderStatus();
}

export function renderStatus() {
  const relay = $('relay-state');
  relay.dataset.ok = String(status.relay);
  const problem = { unpaired: 'Not paired', untrusted: 'Port taken' }[status.connection?.status];
  relay.textContent = !status.hubUp ? 'Extension restarting' : status.relay ? 'Relay connected' : problem ?? 'Relay offline';
  relay.title = status.connection?.detail || 'Is the extension connected to the webmcp-nb relay? (details: options page)';
  const notebook = $('notebook-state');
  notebook.dataset.ok = String(status.clients > 0);
  notebook.textContent = status.clients > 1 ? `${status.clients} notebooks` : status.clients === 1 ? 'Notebook connected' : 'No notebook';
}

export function renderHeader() {
  const tab = currentTab();
  const title = tab?.title || shown.chromeTab?.title || '';
  const url = tab?.url || shown.chromeTab?.url || '';
  $('tab-title').textContent = shown.tabId === null ? 'No tab' : visible(title || url || `Tab ${shown.tabId}`);
  $('tab-title').title = visible(title);
  $('tab-url').textContent = visible(url);
  $('tab-url').title = visible(url);
  document.body.dataset.pinned = String(shown.pinned);
}
