// The side panel's port to the worker's hub (panel-hub.js): requests that get a reply, and the hub's own
// messages (init, event, tab, tabClosed, skills, sessions, status), handed to one listener. The worker may stop and
// restart (Chrome stops idle workers): the port reconnects with backoff, and a request in flight when it goes
// gets a NOT_CONNECTED reply.

const PANEL = 'webmcp-nb-panel';

let port = null;
let reqSeq = 0;
let retryMs = 250;
const pending = new Map(); // reqId → resolve
let listener = { message: () => {}, lost: () => {} };

// `message(message)` for each message of the hub, `lost()` when the port went (it is reopened).
export function connectHub(callbacks) {
  listener = callbacks;
  open();
}

function open() {
  port = chrome.runtime.connect({ name: PANEL });
  port.onMessage.addListener(received);
  port.onDisconnect.addListener(() => {
    void chrome.runtime.lastError;
    port = null;
    for (const resolve of pending.values()) resolve({ ok: false, error: { code: 'NOT_CONNECTED', message: 'The extension restarted; try again.' } });
    pending.clear();
    listener.lost();
    setTimeout(open, retryMs);
    retryMs = Math.min(retryMs * 2, 5_000);
  });
}

function received(message) {
  if (message?.type === 'reply') {
    const resolve = pending.get(message.reqId);
    pending.delete(message.reqId);
    resolve?.(message);
    return;
  }
  // The first message is `init`; a hub whose init spreads its status last labels it 'status' instead.
  const init = message?.type === 'init' || (message?.type === 'status' && Array.isArray(message.tabs));
  if (init) retryMs = 250;
  listener.message(init ? { ...message, type: 'init' } : message);
}

// Resolves with the hub's reply ({ok, …} or {ok: false, error}); never rejects.
export function request(message) {
  const reqId = `p${++reqSeq}`;
  return new Promise((resolve) => {
    if (!port) {
      resolve({ ok: false, error: { code: 'NOT_CONNECTED', message: 'Not connected to the extension; retrying.' } });
      return;
    }
    pending.set(reqId, resolve);
    try {
      port.postMessage({ ...message, reqId });
    } catch (error) {
      pending.delete(reqId);
      resolve({ ok: false, error: { code: 'NOT_CONNECTED', message: String(error.message ?? error) } });
    }
  });
}
