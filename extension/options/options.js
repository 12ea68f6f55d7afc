// Options page: the connection and pairing state (kept by the worker in chrome.storage.session), pairing now or
// forgetting it, the relay port (read by the worker when it connects) and the side panel chat's endpoint
// (`sidecar` = {baseUrl, model, apiKey}), both in chrome.storage.local. Neither the pairing secret nor the API
// key is ever shown, except the key in its password input here. Listeners are attached before anything is
// awaited, and stored values fill only fields nobody has typed into yet, so a fast user (or test) never loses
// input.
import { DEFAULT_PORT } from '../shared/protocol.js';
import { forgetPairing, pair } from '../worker/pairing.js';
import { PROVIDERS } from '../chat/agent-rules.js';
import { checkSettings } from '../chat/chat-loop.js';

const $ = (id) => document.getElementById(id);

// ----- connection and pairing -----

const STATES = {
  connecting: (url) => `Connecting to the relay at ${url}…`,
  connected: (url) => `Connected to the relay at ${url}.`,
  offline: (url) => `The relay at ${url} is not running. A notebook starts it with wm.connect().`,
  unpaired: () => 'Not paired with this computer\'s webmcp-nb.',
  untrusted: (url) => `The program at ${url} is not your webmcp-nb relay: nothing was sent to it.`,
};

function since(ms) {
  const seconds = Math.max(0, (Date.now() - ms) / 1000);
  if (seconds < 90) return 'just now';
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  return new Date(ms).toLocaleString();
}

async function showConnection() {
  const [{ connection }, { pairing, pairingPaused }] = await Promise.all([
    chrome.storage.session.get('connection'), chrome.storage.local.get(['pairing', 'pairingPaused']),
  ]);
  const state = connection ?? { status: 'connecting', relayUrl: '', detail: '' };
  const line = $('connection-state');
  line.dataset.status = state.status;
  line.textContent = `${(STATES[state.status] ?? STATES.connecting)(state.relayUrl || 'ws://127.0.0.1')} ${state.detail ?? ''}`.trim();
  let launched = false;
  try {
    launched = !!(await (await fetch(chrome.runtime.getURL('config.json'))).json()).relayUrl;
  } catch (_) { /* the user's own browser */ }
  $('pairing-state').textContent = launched
    ? 'This browser was launched by webmcp-nb: it needs no pairing.'
    : pairing?.secret
      ? `Paired with this computer's webmcp-nb ${since(pairing.pairedAt)}${pairing.home ? ` (${pairing.home})` : ''}.`
      : pairingPaused ? 'Pairing forgotten: nothing pairs until you click "Pair now".' : 'Not paired yet.';
  $('forget-pairing').disabled = launched || !pairing?.secret;
  $('pair-now').disabled = launched;
}

const pairingStatus = $('pairing-status');
$('pair-now').addEventListener('click', async () => {
  pairingStatus.textContent = 'Pairing…';
  const { problem } = await pair();
  pairingStatus.textContent = problem ?? 'Paired. The extension reconnects now.';
  pairingStatus.classList.toggle('bad', !!problem);
});
$('forget-pairing').addEventListener('click', async () => {
  await forgetPairing();
  pairingStatus.textContent = 'Forgotten. Nothing pairs again until you click "Pair now".';
  pairingStatus.classList.remove('bad');
});
chrome.storage.onChanged.addListener((changes, area) => {
  if ((area === 'session' && 'connection' in changes) || (area === 'local' && ('pairing' in changes || 'pairingPaused' in changes))) showConnection();
});
showConnection();

// ----- relay port -----

const input = $('port');
const status = $('status');

$('save').addEventListener('click', async () => {
  const value = Number(input.value);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    status.textContent = 'A port is a whole number from 1 to 65535.';
    return;
  }
  await chrome.storage.local.set({ port: value });
  status.textContent = 'Saved. The extension reconnects to that port now.';
});

// ----- side panel chat endpoint -----

const baseUrl = $('sidecar-base-url');
const model = $('sidecar-model');
const apiKey = $('sidecar-api-key');
const sidecarStatus = $('sidecar-status');
const touched = new Set();
for (const field of [input, baseUrl, model, apiKey]) field.addEventListener('input', () => touched.add(field));

function say(text, bad = false) {
  sidecarStatus.textContent = text;
  sidecarStatus.classList.toggle('bad', bad);
}

// The provider presets the notebook's agent has (webmcp_nb/agent_rules.py); the chat recognises a preset's
// quirks by the base URL's host, so filling in its URL is all a preset needs.
const PRESETS = Object.entries(PROVIDERS).filter(([, preset]) => preset.base_url);
for (const [name, preset] of PRESETS) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = name;
  button.dataset.preset = name;
  button.title = `${preset.base_url} — ${preset.about}`;
  button.addEventListener('click', () => {
    baseUrl.value = preset.base_url;
    touched.add(baseUrl);
    if (!model.value.trim() || PRESETS.some(([, p]) => p.default_model === model.value.trim())) {
      model.value = preset.default_model;
      touched.add(model);
    }
    say(`${name}: base URL filled in; check the model, add the key, then Save.`);
  });
  $('sidecar-presets').append(button);
}

$('sidecar-save').addEventListener('click', async () => {
  const checked = checkSettings({ baseUrl: baseUrl.value, model: model.value, apiKey: apiKey.value });
  if (checked.problem) {
    say(checked.problem, true);
    return;
  }
  await chrome.storage.local.set({ sidecar: { baseUrl: checked.baseUrl, model: checked.model, apiKey: checked.apiKey } });
  baseUrl.value = checked.baseUrl;
  say(`Saved. The side panel's chat uses ${checked.model} at ${checked.baseUrl}.`);
});

$('sidecar-clear').addEventListener('click', async () => {
  await chrome.storage.local.remove('sidecar');
  for (const field of [baseUrl, model, apiKey]) field.value = '';
  say('Forgotten.');
});

// ----- stored values -----

const stored = await chrome.storage.local.get(['port', 'sidecar']);
const fill = (field, value) => touched.has(field) || (field.value = value);
fill(input, stored.port || DEFAULT_PORT);
fill(baseUrl, stored.sidecar?.baseUrl ?? '');
fill(model, stored.sidecar?.model ?? '');
fill(apiKey, stored.sidecar?.apiKey ?? '');
