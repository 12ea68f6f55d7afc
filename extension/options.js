// Options page: the relay port, kept in chrome.storage.local and read by the worker when it connects.
import { DEFAULT_PORT } from './protocol.js';

const input = document.getElementById('port');
const status = document.getElementById('status');
const { port } = await chrome.storage.local.get('port');
input.value = port || DEFAULT_PORT;

document.getElementById('save').addEventListener('click', async () => {
  const value = Number(input.value);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    status.textContent = 'A port is a whole number from 1 to 65535.';
    return;
  }
  await chrome.storage.local.set({ port: value });
  status.textContent = 'Saved. The extension reconnects on its next attempt.';
});
