// Options page: the relay port (read by the worker when it connects) and the side panel chat's endpoint
// (`sidecar` = {baseUrl, model, apiKey}), both in chrome.storage.local. The key is only ever shown in the
// password input here. Listeners are attached before anything is awaited, and stored values fill only
// fields nobody has typed into yet, so a fast user (or test) never loses input.
import { DEFAULT_PORT } from './protocol.js';
import { checkSettings, PRESETS } from './sidecar.js';

const $ = (id) => document.getElementById(id);

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
  status.textContent = 'Saved. The extension reconnects on its next attempt.';
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

for (const [name, preset] of Object.entries(PRESETS)) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = name;
  button.dataset.preset = name;
  button.title = preset.baseUrl;
  button.addEventListener('click', () => {
    baseUrl.value = preset.baseUrl;
    touched.add(baseUrl);
    if (!model.value.trim() || Object.values(PRESETS).some((p) => p.model === model.value.trim())) {
      model.value = preset.model;
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

// Keep the stored key out of reach of content scripts (storage.local is open to them by default).
try {
  await chrome.storage.local.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' });
} catch (_) { /* older Chrome: the level cannot be set for this area */ }

const stored = await chrome.storage.local.get(['port', 'sidecar']);
const fill = (field, value) => touched.has(field) || (field.value = value);
fill(input, stored.port || DEFAULT_PORT);
fill(baseUrl, stored.sidecar?.baseUrl ?? '');
fill(model, stored.sidecar?.model ?? '');
fill(apiKey, stored.sidecar?.apiKey ?? '');
