// The chat-site bridge's pipe (webmcp_nb/bridge): `bridge.open` injects page/user-script/visible-text.js and
// chat-bridge.js into a tab's USER_SCRIPT world — a world of its own, apart from skills, which page scripts cannot
// reach — with the notebook's config; `bridge.send` posts a message to it; what it says comes back as `bridge.event`, which the
// relay delivers to the client that opened it alone. Nothing here reads or decides anything about the chat.
import { ErrorCode, Method } from '../shared/protocol.js';
import { RelayError, notify } from './relay.js';
import { requireUserScripts } from './skills.js';

export const BRIDGE = 'webmcp-nb-bridge';
const WORLD = 'webmcp-nb-bridge';
const MAX_MESSAGE_CHARS = 512 * 1024; // a reply's text is at most 200 k characters (chat-bridge.js)
const LOAD_WAIT_MS = 10_000;
const bridges = new Map(); // tab id → {bridgeId, port}

// A tab still loading gets the bridge once it has loaded (a script injected now would land in the old document).
async function loaded(tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab ${tabId}`);
  if (tab.status === 'complete') return;
  await new Promise((resolve) => {
    const done = () => {
      chrome.tabs.onUpdated.removeListener(listen);
      clearTimeout(timer);
      resolve();
    };
    const listen = (id, change) => id === tabId && change.status === 'complete' && done();
    const timer = setTimeout(done, LOAD_WAIT_MS);
    chrome.tabs.onUpdated.addListener(listen);
  });
}

// The bridge starts only on its chat site (`origin`): the page side checks its own document's origin first, so a
// tab that went to another site in the meantime does not get the tools and the instructions.
async function open({ tabId, bridgeId, config, origin }) {
  await requireUserScripts();
  await chrome.userScripts.configureWorld({ worldId: WORLD, messaging: true });
  await loaded(tabId);
  bridges.get(tabId)?.port?.postMessage({ type: 'close' }); // one bridge per tab: a new one replaces it
  // The page side's port must name this key, which only the script injected here knows: another user-script
  // world (a skill's) cannot pose as it, and the key is taken once.
  const portKey = crypto.randomUUID();
  bridges.set(tabId, { bridgeId, port: null, portKey });
  const site = typeof origin === 'string' ? origin : null;
  const start = `globalThis.__webmcpNbChatBridge(${JSON.stringify({ ...config, bridgeId, portKey })}, ${JSON.stringify(site)});`;
  const [injection] = await chrome.userScripts.execute({
    target: { tabId }, world: 'USER_SCRIPT', worldId: WORLD,
    js: [{ file: 'page/user-script/visible-text.js' }, { file: 'page/user-script/chat-bridge.js' }, { code: start }],
  });
  if (injection?.error || !injection?.result) {
    bridges.delete(tabId);
    throw new RelayError(ErrorCode.INTERNAL, `The chat bridge could not start in tab ${tabId}: ${injection?.error ?? 'no answer'}`);
  }
  if (injection.result.elsewhere) {
    bridges.delete(tabId);
    const elsewhere = injection.result.elsewhere;
    throw new RelayError(ErrorCode.PERMISSION_DENIED, `Tab ${tabId} shows ${elsewhere} now, not the chat site ${site}`, { elsewhere });
  }
  return injection.result; // the page side's first check of the site's selectors
}

function send({ tabId, bridgeId, message }) {
  const bridge = bridges.get(tabId);
  if (bridge?.bridgeId !== bridgeId || !bridge.port) {
    if (message?.type === 'close') return {};
    throw new RelayError(ErrorCode.NOT_CONNECTED, `The chat bridge is not running in tab ${tabId}: the page navigated or closed`);
  }
  bridge.port.postMessage(message);
  if (message?.type === 'close') bridges.delete(tabId);
  return {};
}

export const bridgeHandlers = { [Method.BRIDGE_OPEN]: open, [Method.BRIDGE_SEND]: send };
export const bridgeNotifications = { [Method.BRIDGE_SEND]: (params) => { try { send(params); } catch (_) { /* gone */ } } };

// The page side's port (`webmcp-nb-bridge/<key>`): in the top frame of a tab that has a bridge, naming the key
// its injection was given; a key is good for one port.
export function attachBridge(port) {
  const tabId = port.sender?.tab?.id;
  const bridge = bridges.get(tabId);
  if (!bridge?.portKey || port.sender.frameId !== 0 || port.name !== `${BRIDGE}/${bridge.portKey}`) {
    port.disconnect();
    return;
  }
  bridge.portKey = null;
  bridge.port = port;
  port.onMessage.addListener((message) => {
    let size = Infinity;
    try {
      size = JSON.stringify(message).length;
    } catch (_) { /* not JSON: dropped */ }
    if (size <= MAX_MESSAGE_CHARS) notify(Method.BRIDGE_EVENT, { bridgeId: bridge.bridgeId, message });
  });
  port.onDisconnect.addListener(() => {
    if (bridge.port !== port) return;
    bridge.port = null;
    notify(Method.BRIDGE_EVENT, { bridgeId: bridge.bridgeId, message: { type: 'gone' } });
  });
}
