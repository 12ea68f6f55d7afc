// The worker's one WebSocket to the relay: where it is and the secret to prove (config.json from launch(), else
// the pairing from pairing.js and the options page's port), mutual authentication before anything else crosses
// (auth.js), reconnect with backoff, a keepalive *sent by the worker* every 20 s (Chrome kills an idle worker
// ~30 s after its last event, open socket or not; server pings do not count), and dispatch of relay requests.
// The connection's state (connected, unpaired, a port held by something else…) is kept in
// chrome.storage.session for the options page and the side panel.
import { DEFAULT_PORT, ErrorCode, Method } from '../shared/protocol.js';
import { AuthError, authenticate } from './auth.js';
import { pair, pairingPaused, pairingState, startRelay, storedPairing } from './pairing.js';

const KEEPALIVE_MS = 20_000;
const AUTH_TIMEOUT_MS = 5_000;
const MAX_BACKOFF_MS = 10_000;

export class RelayError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

let socket = null; // the authenticated socket
let dialing = null; // the socket being opened and authenticated, then the open one
let settings = null; // {relayUrl, lanes, secret, source, devtools} of the current connection
let ready = false; // true once hello is sent: the relay refuses a browser whose first message is not hello
let connecting = null;
let backoff = 250;
let retryTimer = 0;
let keepalive = 0;
let handlers = {};
let notificationHandlers = {};
let lastId = 0;
const waiting = new Map(); // the worker's own requests to the relay (grants): id → {resolve, reject, timer}
let hooks = { opened: async () => {}, closed: () => {}, tick: () => {}, stateChanged: () => {} };

export const isConnected = () => ready;
export const relaySettings = () => settings;

// What the options page and the side panel show: {status, detail, relayUrl, since}. `status` is one of
// connecting, connected, unpaired, untrusted (the port's listener did not prove the secret), offline.
let state = { status: 'connecting', detail: '', relayUrl: '', since: Date.now() };
export const connectionState = () => state;
function setState(status, detail = '') {
  if (state.status === status && state.detail === detail && state.relayUrl === (settings?.relayUrl ?? '')) return;
  state = { status, detail, relayUrl: settings?.relayUrl ?? '', since: Date.now() };
  chrome.storage.session.set({ connection: state }).catch(() => {});
  hooks.stateChanged();
}

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// Notifications before hello are dropped: hello carries the whole state, built when it is sent.
export function notify(method, params) {
  if (ready || method === Method.HELLO) send({ method, params });
}

// A request the relay answers itself (the side panel's grant checks and answers): resolves to its result, rejects
// with a RelayError (its code and message); with the relay away, NOT_CONNECTED at once.
export function request(method, params, timeoutMs = 10_000) {
  if (!ready) return Promise.reject(new RelayError(ErrorCode.NOT_CONNECTED, 'The relay is not connected.'));
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new RelayError(ErrorCode.TIMEOUT, `The relay did not answer ${method} within ${timeoutMs / 1000} s.`));
    }, timeoutMs);
    waiting.set(id, { resolve, reject, timer });
    send({ id, method, params });
  });
}

function settle(id, result, error) {
  const pending = waiting.get(id);
  if (!pending) return;
  waiting.delete(id);
  clearTimeout(pending.timer);
  if (error) pending.reject(new RelayError(String(error.code ?? ErrorCode.INTERNAL), String(error.message ?? ''), error.data));
  else pending.resolve(result);
}

// `requestHandlers` maps method → async (params) → result, `notifications` method → (params) → void;
// `opened` runs once the relay proved itself and before anything else is sent; `tick` with each keepalive;
// `stateChanged` whenever the connection's state does.
export function configure(requestHandlers, notifications, { opened, closed, tick, stateChanged }) {
  handlers = requestHandlers;
  notificationHandlers = notifications;
  hooks = { opened, closed, tick, stateChanged };
}

// Where the relay is, which frames may open lanes to it (see lanes.js) and the secret both sides prove:
// config.json written by launch(), else the pairing and the options page's port, with lanes for loopback pages.
// `devtools`: launch() reaches the page's native tools through the browser's DevTools pipe (see mirror.js).
async function loadSettings() {
  let config = {};
  try {
    config = await (await fetch(chrome.runtime.getURL('config.json'))).json();
  } catch (_) { /* no config file: the user's own browser */ }
  if (config.relayUrl) {
    const lanes = ['off', 'loopback', 'all'].includes(config.lanes) ? config.lanes : 'loopback';
    return { relayUrl: config.relayUrl, lanes, secret: config.secret ?? null, source: 'launch', devtools: config.devtools === true };
  }
  const [{ port }, pairing] = await Promise.all([chrome.storage.local.get('port'), storedPairing()]);
  const relayUrl = `ws://127.0.0.1:${port || pairing?.port || DEFAULT_PORT}/browser`;
  return { relayUrl, lanes: 'loopback', secret: pairing?.secret ?? null, source: 'pairing', devtools: false };
}

// The secret to prove: the stored one, or a fresh pairing through the native host (unless the user paused it).
// Read again with the pause, in one read: a pairing the options page stored since `current` was read is used as
// it is (reading the pause alone, after that write, would pair a second time through the host).
async function secretFor(current) {
  if (current.secret || current.source !== 'pairing') return current;
  const { pairing, paused } = await pairingState();
  if (pairing) return loadSettings();
  if (paused) {
    setState('unpaired', 'The pairing was forgotten. Click "Pair now" on the options page to pair again.');
    return current;
  }
  const { problem } = await pair();
  if (problem) setState('unpaired', problem);
  return problem ? current : loadSettings();
}

function retryLater() {
  clearTimeout(retryTimer);
  retryTimer = setTimeout(connect, backoff);
  backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
}

export function connect() {
  if (dialing || connecting) return connecting;
  clearTimeout(retryTimer);
  connecting = (async () => {
    try {
      settings = await secretFor(await loadSettings());
    } finally {
      connecting = null;
    }
    if (settings.secret) open(settings);
    else retryLater();
  })().catch(() => retryLater());
  return connecting;
}

// The relay, for a side panel that needs it now (it keeps the site grants): in the user's own Chrome the native
// host starts the daemon when nothing listens on its port (at most every 30 s), and this dials at once; resolves
// to whether the relay is connected within `timeoutMs`.
const WAKE_INTERVAL_MS = 30_000;
let lastWake = 0;
export async function wakeRelay(timeoutMs = 10_000) {
  if (ready) return true;
  const current = settings ?? await loadSettings();
  if (current.source === 'pairing' && current.secret && Date.now() - lastWake > WAKE_INTERVAL_MS) {
    lastWake = Date.now();
    await startRelay(Number(new URL(current.relayUrl).port) || DEFAULT_PORT);
  }
  reconnect();
  const until = Date.now() + timeoutMs;
  while (!ready && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  return ready;
}

// Drop the connection and dial again at once (the pairing or the port changed).
export function reconnect() {
  backoff = 250;
  const ws = dialing;
  if (ws && drop(ws)) ws.close();
  connect();
}

// Forget a socket: the one being dialled or the open one. False if it was already forgotten.
function drop(ws) {
  if (dialing !== ws) return false;
  dialing = null;
  if (socket === ws) {
    socket = null;
    ready = false;
    for (const id of [...waiting.keys()]) settle(id, null, { code: ErrorCode.NOT_CONNECTED, message: 'The connection to the relay was lost.' });
    hooks.closed();
  }
  clearInterval(keepalive);
  return true;
}

function open(current) {
  const ws = new WebSocket(current.relayUrl);
  dialing = ws;
  const inbox = [];
  let waiting = null;
  let admitted = false;
  const next = () => new Promise((resolve, reject) => {
    if (inbox.length) return resolve(inbox.shift());
    waiting = { resolve, reject };
  });
  const deliver = (message) => (waiting ? (waiting.resolve(message), waiting = null) : inbox.push(message));

  ws.onopen = async () => {
    const timer = setTimeout(() => ws.close(), AUTH_TIMEOUT_MS);
    try {
      await authenticate((message) => ws.send(JSON.stringify(message)), next, current.secret);
    } catch (error) {
      ws.close();
      if (error instanceof AuthError) await distrust(current);
      return;
    } finally {
      clearTimeout(timer);
    }
    if (dialing !== ws) return;
    admitted = true;
    socket = ws;
    backoff = 250;
    setState('connected');
    await hooks.opened();
    ready = true;
    clearInterval(keepalive);
    keepalive = setInterval(() => {
      notify(Method.PING, {});
      hooks.tick();
    }, KEEPALIVE_MS);
  };
  ws.onmessage = (event) => {
    if (admitted) return dispatch(event.data);
    try {
      deliver(JSON.parse(event.data));
    } catch (_) {
      deliver(null);
    }
  };
  ws.onclose = () => {
    waiting?.reject(new Error('closed'));
    if (!drop(ws)) return;
    if (state.status === 'connected' || state.status === 'connecting') {
      setState('offline', 'The relay is not running; a notebook starts it with wm.connect().');
    }
    retryLater();
  };
}

// The listener on the relay's port did not prove the secret. With a pairing, the secret may have been rotated:
// ask the host once for the current one. Otherwise (or if it is the same) this is not our relay.
// At most one such re-pairing a minute: a squatter that keeps failing must not keep starting the native host.
const REPAIR_INTERVAL_MS = 60_000;
let lastRepair = 0;
async function distrust(current) {
  if (current.source === 'pairing' && Date.now() - lastRepair > REPAIR_INTERVAL_MS && !(await pairingPaused())) {
    lastRepair = Date.now();
    const { pairing } = await pair();
    if (pairing && pairing.secret !== current.secret) {
      backoff = 250;
      return;
    }
  }
  setState('untrusted', `The program listening at ${current.relayUrl} did not prove the pairing secret, so nothing was sent to it. `
    + 'Another program may hold the port: run `webmcp-nb doctor` on this computer.');
}

async function dispatch(raw) {
  let message;
  try {
    message = JSON.parse(raw);
  } catch (_) {
    return;
  }
  const { id, method, params } = message ?? {};
  if (!method) {
    if (Number.isSafeInteger(id)) settle(id, message.result, message.error ?? null);
    return;
  }
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
