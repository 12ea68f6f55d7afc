// The side panel's chat: the transcript, the input and its buttons, the confirmation policy, and the chat loop
// (chat-loop.js) that runs each turn with the shown tab's tools. A notebook agent's turns on the shown tab are
// shown in the same transcript, from their events. Of the endpoint's settings this module keeps what is wrong
// with them and shows the model's name; the API key is neither kept nor shown.
import { CONFIRM, LIMITS } from '../chat/agent-rules.js';
import { ChatLoop, checkSettings } from '../chat/chat-loop.js';
import { addCard } from './cards.js';
import { $, el, short, visible } from './dom.js';
import { grantReadable } from './grants.js';
import { request } from './hub.js';
import { fromPanel } from './log.js';
import { onCurrentTab, shown, tabs } from './tabs.js';


let chatBubble = null; // the assistant message being streamed by the chat
let notebookBubble = null; // the same for a notebook agent's turn
let settingsProblem = 'No model endpoint is set up.';
let tabUpdated = () => {};

function scrollTranscript() {
  const box = $('chat-transcript');
  box.scrollTop = box.scrollHeight;
}

function addMessage(kind, text, label) {
  const node = el('div', { class: `message ${kind}` },
    label ? el('span', { class: 'label', text: label }) : null,
    el('div', { class: 'body', text }));
  $('chat-transcript').append(node);
  scrollTranscript();
  return node;
}

const loop = new ChatLoop({
  tab: (tabId) => tabs.get(tabId) ?? null,
  call: (tabId, { name, frameId, documentId }, args) => request({ type: 'call', tabId, name, frameId, documentId, args, timeoutMs: LIMITS.tool_timeout_s * 1000 }),
  emit: (kind, tabId, data) => void request({ type: 'emit', kind, tabId, data }),
  confirm: (req, signal) => new Promise((resolve) => addCard({ ...req, origin: 'chat', decide: resolve, signal })),
  // The site's grant (the relay asks the user, in this panel and the notebook's, when it was never granted).
  allow: (ask) => request({ type: 'grant', ...ask }),
  readable: grantReadable,
  // After a step that may have changed the page's tools: the worker asks the tab's frames to report them (as
  // Python's tab.refresh_tools() does) and answers with the tab once they have.
  settle: async (tabId) => {
    const reply = await request({ type: 'sync', tabId });
    if (reply.ok && reply.tab) tabUpdated(reply.tab);
  },
  startAssistant: () => {
    chatBubble = null;
  },
  delta: (text) => {
    chatBubble ??= addMessage('assistant', '');
    chatBubble.querySelector('.body').textContent += visible(text);
    scrollTranscript();
  },
  step: ({ tool, status, summary }) => {
    chatBubble = null;
    const mark = status === 'ok' ? '✓' : status === 'refused' ? '⊘' : '✗';
    addMessage(`step ${status}`, `${mark} ${tool} ${short(summary, 100)}`);
  },
  notice: (text) => addMessage('notice', text),
});

function setBusy(busy) {
  $('chat-send').hidden = busy;
  $('chat-stop').hidden = !busy;
  document.body.classList.toggle('chat-busy', busy);
}

async function sendChat() {
  const input = $('chat-input');
  const text = input.value.trim();
  if (!text || loop.busy) return;
  await loadChatSettings();
  if (settingsProblem) {
    $('chat-settings-missing').hidden = false;
    return;
  }
  if (shown.tabId === null) {
    addMessage('error', 'No tab to work on.');
    return;
  }
  input.value = '';
  addMessage('user', text);
  chatBubble = null;
  setBusy(true);
  const result = await loop.send(text, shown.tabId);
  setBusy(false);
  const body = chatBubble?.querySelector('.body');
  if (result.answer && (!body || body.textContent !== visible(result.answer))) {
    (body ?? addMessage('assistant', '').querySelector('.body')).textContent = visible(result.answer);
  }
  if (result.error) addMessage('error', result.error);
  else if (!result.answer && !result.stopped) addMessage('notice', 'The model gave no answer.');
  chatBubble = null;
}

// The chat's confirmation policy: chosen next to the chat, kept in storage.local.
export async function loadChatPolicy() {
  const select = $('chat-confirm');
  select.replaceChildren(...Object.keys(CONFIRM.policies).map((name) => el('option', { value: name, text: CONFIRM.labels[name] ?? name })));
  const { chatConfirm } = await chrome.storage.local.get('chatConfirm');
  select.value = loop.setPolicy(chatConfirm ?? CONFIRM.default);
}

// The endpoint as the options page stored it, checked; what is wrong with it, or its model, is shown.
export async function loadChatSettings() {
  const { sidecar: raw } = await chrome.storage.local.get('sidecar');
  const checked = checkSettings(raw);
  settingsProblem = checked.problem;
  const missing = $('chat-settings-missing');
  missing.hidden = !checked.problem;
  missing.querySelector('span').textContent = checked.problem
    ? `${checked.problem} Set one up to chat with this page's tools.` : '';
  $('chat-model').textContent = checked.model ?? '';
}

// A notebook agent's turn on the shown tab, as its events tell it: the task, the streamed answer, a stop.
export function trackNotebookTurn(event) {
  if (fromPanel(event) || !onCurrentTab(event)) return;
  const d = event.data ?? {};
  if (event.kind === 'agent.turn.started') {
    notebookBubble = null;
    addMessage('user notebook', d.task ?? '', 'notebook');
  } else if (event.kind === 'model.delta') {
    notebookBubble ??= addMessage('assistant notebook', '', 'notebook agent');
    notebookBubble.querySelector('.body').textContent += visible(d.text);
    scrollTranscript();
  } else if (event.kind === 'model.response') {
    if (d.tool_calls?.length) notebookBubble = null;
  } else if (event.kind === 'agent.turn.finished') {
    const body = notebookBubble?.querySelector('.body');
    if (d.answer && (!body || body.textContent !== visible(d.answer))) {
      (body ?? addMessage('assistant notebook', '', 'notebook agent').querySelector('.body')).textContent = visible(d.answer);
    }
    if (d.stopped) addMessage('notice', `The notebook agent stopped: ${d.stopped}`);
    notebookBubble = null;
  }
}

// The chat's controls. `onTab(tab)`: the worker re-read a tab's tools after a chat step.
export function setUpChat({ onTab }) {
  tabUpdated = onTab;
  $('chat-send').addEventListener('click', sendChat);
  $('chat-stop').addEventListener('click', () => loop.stop());
  $('chat-confirm').addEventListener('change', (e) => {
    const policy = loop.setPolicy(e.target.value);
    chrome.storage.local.set({ chatConfirm: policy });
  });
  $('chat-clear').addEventListener('click', () => {
    loop.reset();
    $('chat-transcript').replaceChildren();
    chatBubble = null;
    notebookBubble = null;
  });
  $('chat-input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      sendChat();
    }
  });
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && changes.sidecar) loadChatSettings();
    if (area === 'local' && changes.chatConfirm) $('chat-confirm').value = loop.setPolicy(changes.chatConfirm.newValue ?? CONFIRM.default);
  });
}
