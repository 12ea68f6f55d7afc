// Pairing with the user's webmcp-nb: the pairing secret comes from the native-messaging host that
// `webmcp-nb pair` installs (Chrome starts it as the user, for this extension only, and it reads the 0600 secret
// file), and is kept in chrome.storage.local, which web pages and content scripts cannot read. A launched
// browser gets its secret in config.json instead (see relay.js). Nothing is ever copied by hand. The same host
// starts the relay daemon when the side panel needs it and none runs.
import { HOST_NAME } from '../shared/protocol.js';

// {secret, port, pairedAt} or null.
export async function storedPairing() {
  const { pairing } = await chrome.storage.local.get('pairing');
  return pairing?.secret ? pairing : null;
}

// Whether the user asked to forget the pairing: then nothing pairs again until they ask for it.
export async function pairingPaused() {
  return (await chrome.storage.local.get('pairingPaused')).pairingPaused === true;
}

// The stored pairing and the pause, read together: the options page's "Pair now" stores a pairing and lifts the
// pause in one write, so a reader never sees the pause lifted without the pairing that came with it.
export async function pairingState() {
  const { pairing, pairingPaused: paused } = await chrome.storage.local.get(['pairing', 'pairingPaused']);
  return { pairing: pairing?.secret ? pairing : null, paused: paused === true };
}

// Ask the host for the current secret; resolves to {pairing} or {problem}.
export async function pair() {
  let reply;
  try {
    reply = await chrome.runtime.sendNativeMessage(HOST_NAME, {
      type: 'pair', extensionVersion: chrome.runtime.getManifest().version, userAgent: navigator.userAgent,
    });
  } catch (error) {
    const text = String(error?.message ?? error);
    const missing = /not found|forbidden|native messaging host/i.test(text);
    return { problem: missing ? 'Not paired: run `webmcp-nb pair` on this computer, then wait a few seconds.' : `Pairing failed: ${text}` };
  }
  if (typeof reply?.secret !== 'string' || reply.secret.length < 32) return { problem: `Pairing failed: ${reply?.error ?? 'the host gave no secret'}` };
  const pairing = { secret: reply.secret, port: Number(reply.port) || null, pairedAt: Date.now(), home: String(reply.home ?? '') };
  await chrome.storage.local.set({ pairing, pairingPaused: false });
  return { pairing };
}

// Ask the host to start the relay daemon on `port` when nothing listens there (the side panel's chat needs the
// relay: it keeps the user's site grants); resolves to {started} or {problem}.
export async function startRelay(port) {
  try {
    const reply = await chrome.runtime.sendNativeMessage(HOST_NAME, { type: 'relay', port });
    return reply?.error ? { problem: String(reply.error) } : { started: reply?.started === true };
  } catch (error) {
    return { problem: String(error?.message ?? error) };
  }
}

// Paused first: removing the pairing makes the worker dial again, and it must find the pause already there (else it
// pairs again at once through the host, undoing the user's click; seen on a loaded machine).
export async function forgetPairing() {
  await chrome.storage.local.set({ pairingPaused: true });
  await chrome.storage.local.remove('pairing');
}
