// The worker's one WebSocket to the relay: connect (config.json from launch(), else the options page's port,
// else the default), reconnect with backoff, a keepalive *sent by the worker* every 20 s (Chrome kills an
// idle worker ~30 s after its last event, open socket or not; server pings do not count), and dispatch of
// relay requests to handlers.
import { DEFAULT_PORT, ErrorCode, Method } from './protocol.js';

const KEEPALIVE_MS = 20_000;

export class RelayError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

let socket = null;
let settings = null; // {relayUrl, lanes} of the current connection
let ready = false; // true once hello is sent: the relay refuses a browser whose first message is not hello
let connecting = null;
let backoff = 250;
let keepalive = 0;
let handlers = {};
let notificationHandlers = {};
let hooks = { opened: async () => {}, closed: () => {} };

export const isConnected = () => ready;
export const relaySettings = () => settings;

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// Notifications before hello are dropped: hello carries the whole state, built when it is sent.
export function notify(method, params) {
  if (ready || method === Method.HELLO) send({ method, params });
}

// `requestHandlers` maps method → async (params) → result, `notifications` method → (params) → void;
// `opened` runs before anything else is sent.
export function configure(requestHandlers, notifications, { opened, closed }) {
  handlers = requestHandlers;
  notificationHandlers = notifications;
  hooks = { opened, closed };
}

// Where the relay is and which frames may open lanes to it (see lanes.js): config.json written by
// launch(), else the options page's port and lanes for loopback pages only.
async function loadSettings() {
  let config = {};
  try {
    config = await (await fetch(chrome.runtime.getURL('config.json'))).json();
  } catch (_) { /* no config file: the user's own browser */ }
  const { port } = config.relayUrl ? {} : await chrome.storage.local.get('port');
  return {
    relayUrl: config.relayUrl ?? `ws://127.0.0.1:${port || DEFAULT_PORT}/browser`,
    lanes: ['off', 'loopback', 'all'].includes(config.lanes) ? config.lanes : 'loopback',
  };
}

export function connect() {
  if (socket || connecting) return connecting;
  connecting = (async () => {
    settings = await loadSettings();
    const ws = new WebSocket(settings.relayUrl);
    ws.onopen = async () => {
      socket = ws;
      backoff = 250;
      await hooks.opened();
      ready = true;
      clearInterval(keepalive);
      keepalive = setInterval(() => notify(Method.PING, {}), KEEPALIVE_MS);
    };
    ws.onmessage = (event) => dispatch(event.data);
    ws.onclose = () => {
      if (socket === ws) {
        socket = null;
        ready = false;
      }
      clearInterval(keepalive);
      connecting = null;
      hooks.closed();
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 10_000);
    };
  })().catch(() => { connecting = null; });
  return connecting;
}

async function dispatch(raw) {
  let message;
  try {
    message = JSON.parse(raw);
  } catch (_) {
    return;
  }
  const { id, method, params } = message ?? {};
  if (!method) return;
  if (id === undefined) {
    if (Object.hasOwn(notificationHandlers, method)) notificationHandlers[method](params ?? {});
    return;
  }
  try {
    const handler = Object.hasOwn(handlers, method) ? handlers[method] : null;
    if (!handler) throw new RelayError(ErrorCode.UNKNOWN_METHOD, `Unknown method ${method}`);
    send({ id, result: await handler(params ?? {}) });
  } catch (error) {
    const code = error instanceof RelayError ? error.code : ErrorCode.INTERNAL;
    send({ id, error: { code, message: String(error?.message ?? error), data: error?.data } });
  }
}
