// Mutual authentication with the relay (webmcp_nb/auth.py computes the same proofs; a test keeps them equal).
// The worker sends a nonce, checks the relay's proof over both nonces, and only then sends its own: a program
// squatting the relay's port that does not know the pairing secret learns one nonce and nothing else.
// Lanes (lanes.js) get the same treatment with a one-time key per frame instead of the secret.
import { Method } from '../shared/protocol.js';

const AUTH_VERSION = 1;
const encoder = new TextEncoder();

function base64url(bytes) {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

export const newNonce = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

async function mac(secret, label) {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return crypto.subtle.sign('HMAC', key, encoder.encode(label));
}

export const relayProof = async (secret, role, peerNonce, relayNonce) =>
  base64url(await mac(secret, `webmcp-nb/${AUTH_VERSION} relay ${role} ${peerNonce} ${relayNonce}`));
export const peerProof = async (secret, role, peerNonce, relayNonce) =>
  base64url(await mac(secret, `webmcp-nb/${AUTH_VERSION} ${role} ${peerNonce} ${relayNonce}`));

// A lane's credentials: what the relay gets (the key, over the worker's authenticated socket), what the frame
// offers in its handshake (a key id and a proof, never the key) and the proof it must hear back first.
export async function laneCredentials() {
  const key = hex(crypto.getRandomValues(new Uint8Array(32)));
  const nonce = hex(crypto.getRandomValues(new Uint8Array(16)));
  const keyId = hex(await crypto.subtle.digest('SHA-256', encoder.encode(key))).slice(0, 32);
  const frame = hex(await mac(key, `webmcp-nb/lane frame ${nonce}`));
  const relay = hex(await mac(key, `webmcp-nb/lane relay ${nonce}`));
  return { key, protocol: `webmcp-nb.${keyId}.${nonce}.${frame}`, expect: relay };
}

// Equal strings, compared in time that does not depend on where they differ.
export function same(a, b) {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export class AuthError extends Error {}

// The browser's side of the exchange on an open socket: resolves with the relay's auth.ok params, rejects with
// AuthError (the relay did not prove the secret, or broke the exchange). `next()` resolves to the next message.
export async function authenticate(send, next, secret, role = 'browser') {
  const nonce = newNonce();
  send({ method: Method.AUTH_HELLO, params: { role, nonce, version: AUTH_VERSION } });
  const challenge = await next();
  if (challenge?.method !== Method.AUTH_CHALLENGE || typeof challenge.params?.nonce !== 'string') {
    throw new AuthError(`expected auth.challenge, got ${challenge?.method ?? 'something else'}`);
  }
  const relayNonce = challenge.params.nonce;
  if (!same(await relayProof(secret, role, nonce, relayNonce), challenge.params.proof)) {
    throw new AuthError('the relay did not prove the pairing secret');
  }
  send({ method: Method.AUTH_PROOF, params: { proof: await peerProof(secret, role, nonce, relayNonce) } });
  const ok = await next();
  if (ok?.method !== Method.AUTH_OK) throw new AuthError('the relay did not admit this browser');
  return ok.params ?? {};
}
