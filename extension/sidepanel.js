// The side panel: the current tab's tools (call one by hand), its skills (switch them), the operation log
// of the session, confirmations (from a notebook agent and from this panel's chat), and the chat itself
// (chat-loop.js). Everything goes through the worker's hub (panel.js) over one runtime port; the hub records
// what the panel does as events, which reach the notebook's session when a notebook is connected.
//
// Page- and tool-provided text is only ever rendered with textContent (and in title attributes), with its
// bidirectional controls shown as <U+202E> so no name reads backwards. The chat's API key stays in
// model-io.js's request headers: it is never read into this page's DOM, events or logs.
import { CONFIRM } from './agent-rules.js';
import { normalizeSchema, riskOf } from './agent-core.js';
import { ChatLoop, checkSettings } from './chat-loop.js';

const PANEL = 'webmcp-nb-panel';
const MAX_EVENTS = 500;
const MAX_SHOWN_CHARS = 100_000;
const KEEP_RESOLVED_CARDS = 3;
const RISK_BADGES = {
  low: ['read-only', 'Low risk: readOnlyHint, the page says it changes nothing'],
  medium: ['medium risk', 'Medium risk: it changes the page (not marked read-only)'],
  high: ['high risk', 'High risk: destructiveHint or consequentialHint, or declared high (submit, send, pay, delete, publish); always asks first'],
};
// What the chat asks about, by policy (high risk asks under every one of them: the panel never waives it).
const POLICY_LABELS = {
  high: 'high-risk tools',
  medium: 'medium- and high-risk tools',
  always: 'every tool',
  never: 'high-risk tools only (never otherwise)',
};
const SILENT_KINDS = new Set(['model.delta', 'model.tool_call']); // streamed pieces: the chat shows them

const $ = (id) => document.getElementById(id);

// Text as shown: bidirectional controls (U+202E shows `exe.txt` for `txt.exe`) made visible, as
// webmcp_nb/display.py does for the notebook.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const visible = (text) => String(text ?? '').replace(BIDI_CONTROLS, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);

// An element with text (never HTML) and attributes.
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = visible(value);
    else if (key === 'title') node.title = visible(value);
    else if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

const short = (text, n = 80) => {
  const s = String(text ?? '').replace(/\s+/g, ' ').trim();
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
};
const json = (value) => {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (_) {
    return String(value);
  }
};
const pretty = (text) => {
  let out;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch (_) {
    out = String(text ?? '');
  }
  return out.length > MAX_SHOWN_CHARS ? `${out.slice(0, MAX_SHOWN_CHARS)}\n… [${out.length - MAX_SHOWN_CHARS} more characters]` : out;
};
const clock = (ts) => new Date((Number(ts) || Date.now() / 1000) * 1000).toLocaleTimeString([], { hour12: false });

const state = {
  hubUp: false,
  relay: false,
  clients: 0,
  tabs: new Map(), // tab id → the hub's tab info
  skills: [], // installed skills
  events: [],
  seen: new Set(),
  tabId: null,
  pinned: false,
  windowId: null,
  chromeTab: null, // chrome.tabs.Tab of the current tab: title and URL while the hub knows nothing of it
  selected: null, // the selected tool's name
  argsFor: null, // the tool whose template is in the textarea
  cards: new Map(), // confirmation id → {node, origin, tabId, resolved, answer?}
  chatBubble: null, // the assistant message being streamed by the chat
  notebookBubble: null, // the same for a notebook agent's turn
  chatSettings: { problem: 'No model endpoint is set up.' },
};

const currentTab = () => state.tabs.get(state.tabId) ?? null;
const onCurrentTab = (event) => event.tab_id === null || event.tab_id === undefined || event.tab_id === state.tabId;
const fromPanel = (event) => event?.data?.origin === 'sidepanel';

// ----- the hub -----

let port = null;
let reqSeq = 0;
let retryMs = 250;
const pending = new Map();

// The worker may stop and restart (Chrome stops idle workers); the panel reconnects with backoff.
function connectHub() {
  port = chrome.runtime.connect({ name: PANEL });
  port.onMessage.addListener(onHubMessage);
  port.onDisconnect.addListener(() => {
    void chrome.runtime.lastError;
    port = null;
    state.hubUp = false;
    state.relay = false;
    state.clients = 0;
    for (const resolve of pending.values()) resolve({ ok: false, error: { code: 'NOT_CONNECTED', message: 'The extension restarted; try again.' } });
    pending.clear();
    renderStatus();
    setTimeout(connectHub, retryMs);
    retryMs = Math.min(retryMs * 2, 5_000);
  });
}

function request(message) {
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

function onHubMessage(message) {
  // The first message is `init`; a hub whose init spreads its status last labels it 'status' instead.
  const type = message?.type === 'status' && Array.isArray(message.tabs) ? 'init' : message?.type;
  switch (type) {
    case 'init':
      state.hubUp = true;
      retryMs = 250;
      state.relay = !!message.relay;
      state.connection = message.connection ?? null;
      state.clients = Number(message.clients) || 0;
      state.tabs = new Map((message.tabs ?? []).map((tab) => [tab.id, tab]));
      state.skills = message.skills ?? [];
      for (const event of message.events ?? []) addEvent(event, false);
      renderAll();
      break;
    case 'event':
      addEvent(message.event, true);
      break;
    case 'tab':
      if (!message.tab) break;
      state.tabs.set(message.tab.id, message.tab);
      if (message.tab.id === state.tabId) renderTab();
      break;
    case 'tabClosed':
      state.tabs.delete(message.tabId);
      if (message.tabId === state.tabId) renderTab();
      break;
    case 'skills':
      state.skills = message.skills ?? [];
      renderSkills();
      break;
    case 'status':
      state.relay = !!message.relay;
      state.connection = message.connection ?? null;
      state.clients = Number(message.clients) || 0;
      renderStatus();
      break;
    case 'reply': {
      const resolve = pending.get(message.reqId);
      pending.delete(message.reqId);
      resolve?.(message);
      break;
    }
    default:
  }
}

// ----- the current tab -----

async function followActiveTab() {
  const pinned = Number(new URLSearchParams(location.search).get('tab'));
  if (Number.isInteger(pinned) && pinned > 0) {
    state.tabId = pinned;
    state.pinned = true;
  } else {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    state.tabId = tab?.id ?? null;
    state.windowId = tab?.windowId ?? null;
    state.chromeTab = tab ?? null;
    chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
      if (state.windowId === null || windowId === state.windowId) setCurrentTab(tabId);
    });
  }
  chrome.tabs.onUpdated.addListener((tabId, _change, tab) => {
    if (tabId !== state.tabId) return;
    state.chromeTab = tab;
    renderHeader();
  });
  if (state.tabId !== null && !state.chromeTab) state.chromeTab = await chrome.tabs.get(state.tabId).catch(() => null);
}

async function setCurrentTab(tabId) {
  if (tabId === state.tabId) return;
  state.tabId = tabId;
  state.chromeTab = await chrome.tabs.get(tabId).catch(() => null);
  state.selected = null;
  state.argsFor = null;
  $('tool-result').hidden = true;
  renderTab();
  renderLog();
}

// After a step that may have changed the page's tools: the worker asks the tab's frames to report them (as
// Python's tab.refresh_tools() does) and answers with the tab once they have.
async function syncTools(tabId) {
  const reply = await request({ type: 'sync', tabId });
  if (!reply.ok || !reply.tab) return;
  state.tabs.set(reply.tab.id, reply.tab);
  if (reply.tab.id === state.tabId) renderTab();
}

// ----- rendering: status -----

function renderStatus() {
  const relay = $('relay-state');
  relay.dataset.ok = String(state.relay);
  const problem = { unpaired: 'Not paired', untrusted: 'Port taken' }[state.connection?.status];
  relay.textContent = !state.hubUp ? 'Extension restarting' : state.relay ? 'Relay connected' : problem ?? 'Relay offline';
  relay.title = state.connection?.detail || 'Is the extension connected to the webmcp-nb relay? (details: options page)';
  const notebook = $('notebook-state');
  notebook.dataset.ok = String(state.clients > 0);
  notebook.textContent = state.clients > 1 ? `${state.clients} notebooks` : state.clients === 1 ? 'Notebook connected' : 'No notebook';
}

function renderHeader() {
  const tab = currentTab();
  const title = tab?.title || state.chromeTab?.title || '';
  const url = tab?.url || state.chromeTab?.url || '';
  $('tab-title').textContent = state.tabId === null ? 'No tab' : visible(title || url || `Tab ${state.tabId}`);
  $('tab-title').title = visible(title);
  $('tab-url').textContent = visible(url);
  $('tab-url').title = visible(url);
  document.body.dataset.pinned = String(state.pinned);
}

function renderTab() {
  renderHeader();
  renderTools();
  renderSkills();
}

function renderAll() {
  renderStatus();
  renderTab();
  renderLog();
}

// ----- rendering: tools -----

function badge(text, cls, title) {
  return el('span', { class: `badge ${cls}`, text, title });
}

function riskBadge(risk) {
  const [text, title] = RISK_BADGES[risk] ?? RISK_BADGES.medium;
  const node = badge(text, `risk risk-${risk}`, title);
  node.dataset.risk = risk;
  return node;
}

function toolMarks(tool) {
  const marks = [badge(tool.source ?? '?', `source source-${tool.source === 'native' || tool.source === 'polyfill' ? tool.source : 'skill'}`, 'Where the tool comes from')];
  marks.push(riskBadge(riskOf(tool.annotations)));
  if (tool.annotations?.untrustedContentHint) marks.push(badge('untrusted', 'untrusted', 'untrustedContentHint: returns content the page does not vouch for'));
  if (tool.frameId) marks.push(badge(`frame ${tool.frameId}`, 'frame', tool.frameUrl ?? ''));
  return marks;
}

function renderTools() {
  const tools = currentTab()?.tools ?? [];
  const list = $('tools');
  list.replaceChildren(...tools.map((tool) => el(
    'li',
    {
      dataset: { tool: tool.name }, tabindex: 0, role: 'option',
      class: tool.name === state.selected ? 'selected' : '', 'aria-selected': String(tool.name === state.selected),
      title: tool.title || tool.description || tool.name,
      onclick: () => selectTool(tool.name),
      onkeydown: (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), selectTool(tool.name)),
    },
    el('span', { class: 'name', text: tool.name }),
    el('span', { class: 'marks' }, toolMarks(tool)),
  )));
  $('tools-count').textContent = tools.length ? String(tools.length) : '';
  $('tools-empty').hidden = tools.length > 0;
  $('tools-empty').textContent = state.tabs.has(state.tabId) ? 'This page has no WebMCP tools.' : 'The extension does not see this tab (no tools).';
  renderToolDetail();
}

function selectTool(name) {
  state.selected = name;
  for (const li of $('tools').children) {
    const on = li.dataset.tool === name;
    li.classList.toggle('selected', on);
    li.setAttribute('aria-selected', String(on));
  }
  $('tool-result').hidden = true;
  $('call-state').textContent = '';
  renderToolDetail();
}

function renderToolDetail() {
  const tool = (currentTab()?.tools ?? []).find((t) => t.name === state.selected);
  $('tool-detail').hidden = !tool;
  if (!tool) return;
  $('tool-name').textContent = visible(tool.title && tool.title !== tool.name ? `${tool.name} — ${tool.title}` : tool.name);
  $('tool-marks').replaceChildren(...toolMarks(tool));
  $('tool-description').textContent = visible(tool.description || '(no description)');
  $('tool-schema').textContent = visible(JSON.stringify(tool.inputSchema ?? {}, null, 2));
  if (state.argsFor !== tool.name) {
    $('tool-args').value = JSON.stringify(argumentTemplate(tool.inputSchema), null, 2);
    state.argsFor = tool.name;
    fitArgs();
  }
}

function fitArgs() {
  const box = $('tool-args');
  box.rows = Math.min(14, Math.max(2, box.value.split('\n').length));
}

// A placeholder value for a schema: its default/const/first enum value, else one per type.
function placeholder(schema, depth) {
  if (!schema || typeof schema !== 'object') return null;
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  let type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? schema.type[0]) : schema.type;
  if (!type && Array.isArray(alternatives) && alternatives.length) return placeholder(alternatives[0], depth);
  if (!type) type = schema.properties ? 'object' : schema.items ? 'array' : 'string';
  switch (type) {
    case 'string':
      return schema.format === 'date' ? new Date().toISOString().slice(0, 10)
        : schema.format === 'date-time' ? new Date().toISOString() : '';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return depth < 3 ? objectTemplate(schema, depth + 1) : {};
    case 'null':
      return null;
    default:
      return null;
  }
}

function objectTemplate(schema, depth) {
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((k) => Object.hasOwn(properties, k)) : [];
  const keys = [...new Set([...required, ...Object.keys(properties)])];
  return Object.fromEntries(keys.map((key) => [key, placeholder(properties[key], depth)]));
}

// The argument template of a tool: required properties first.
function argumentTemplate(inputSchema) {
  const { schema, wrapped } = normalizeSchema(inputSchema);
  return wrapped ? placeholder(schema.properties.input, 0) : objectTemplate(schema, 0);
}

function showResult(kind, text) {
  const box = $('tool-result');
  box.hidden = false;
  box.className = kind;
  box.dataset.state = kind;
  box.textContent = visible(text);
}

async function callSelected() {
  const name = state.selected;
  const tabId = state.tabId;
  if (!name || tabId === null) return;
  let args;
  try {
    args = $('tool-args').value.trim() ? JSON.parse($('tool-args').value) : {};
  } catch (error) {
    showResult('error', `INVALID_JSON: ${error.message}`);
    return;
  }
  const button = $('call-button');
  button.disabled = true;
  $('call-state').textContent = 'Calling…';
  const started = performance.now();
  const reply = await request({ type: 'call', tabId, name, args });
  button.disabled = false;
  $('call-state').textContent = `${Math.round(performance.now() - started)} ms`;
  if (state.selected !== name || state.tabId !== tabId) return;
  if (reply.ok) showResult('ok', pretty(reply.text));
  else showResult('error', `${reply.error?.code ?? 'INTERNAL'}: ${reply.error?.message ?? 'the call failed'}`);
}

// ----- rendering: skills -----

function renderSkills() {
  const here = new Map((currentTab()?.skills ?? []).map((s) => [s.name, s]));
  const installed = new Map(state.skills.map((s) => [s.name, s]));
  const names = [...new Set([...installed.keys(), ...here.keys()])];
  $('skills').replaceChildren(...names.map((name) => skillItem(name, installed.get(name), here.get(name))));
  $('skills-count').textContent = names.length ? String(names.length) : '';
  $('skills-empty').hidden = names.length > 0;
}

function skillItem(name, skill, here) {
  const enabled = skill ? skill.enabled !== false : true;
  const disabled = new Set(skill?.disabledTools ?? []);
  const status = !here ? badge('not on this page', 'idle')
    : here.ok === false ? badge('unhealthy', 'bad', here.reason ?? '')
      : badge(`active · ${here.tools?.length ?? 0} tools`, 'good');
  const checkbox = el('input', { type: 'checkbox', title: enabled ? 'Disable this skill' : 'Enable this skill', 'aria-label': `Enable ${name}` });
  checkbox.checked = enabled;
  checkbox.disabled = !skill;
  const message = el('div', { class: 'skill-error' });
  checkbox.addEventListener('change', async () => {
    checkbox.disabled = true;
    const reply = await request({ type: 'skill', name, enabled: checkbox.checked });
    checkbox.disabled = false;
    if (!reply.ok) {
      checkbox.checked = !checkbox.checked;
      message.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
    }
  });
  const tools = here?.tools ?? [];
  const toggles = tools.map((tool) => {
    const on = !disabled.has(tool);
    return el('button', {
      type: 'button', class: 'tool-toggle', dataset: { tool }, 'aria-pressed': String(on), disabled: !skill || !enabled,
      title: on ? `Hide ${tool} from agents` : `Offer ${tool} again`, text: tool,
      onclick: async () => {
        const next = new Set(disabled);
        if (on) next.add(tool);
        else next.delete(tool);
        const reply = await request({ type: 'skill', name, disabledTools: [...next] });
        if (!reply.ok) message.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
      },
    });
  });
  return el(
    'li',
    { dataset: { skill: name }, class: enabled ? '' : 'off' },
    el('label', { class: 'skill-head' }, checkbox, el('span', { class: 'name', text: name }),
      skill?.version ? el('span', { class: 'muted', text: `v${skill.version}` }) : null, status),
    here?.ok === false && here.reason ? el('div', { class: 'reason', text: here.reason }) : null,
    here?.shadowed?.length ? el('div', { class: 'muted small', text: `The page's own tools win: ${here.shadowed.join(', ')}` }) : null,
    skill?.description ? el('div', { class: 'muted small', text: short(skill.description, 140) }) : null,
    toggles.length ? el('div', { class: 'tool-toggles' }, toggles) : null,
    message,
  );
}

// ----- events: log, confirmations, notebook turns -----

function addEvent(event, live) {
  if (!event || typeof event.kind !== 'string') return;
  const key = `${event.ts}|${event.kind}|${event.seq ?? ''}|${event.tab_id ?? ''}|${event.data?.id ?? ''}`;
  if (state.seen.has(key)) return;
  state.seen.add(key);
  state.events.push(event);
  if (state.events.length > MAX_EVENTS) {
    state.events.splice(0, state.events.length - MAX_EVENTS);
    if (state.seen.size > MAX_EVENTS * 4) state.seen = new Set([...state.seen].slice(-MAX_EVENTS * 2));
  }
  trackConfirmations(event);
  trackNotebookTurn(event);
  if (live && onCurrentTab(event) && !SILENT_KINDS.has(event.kind)) appendLog(event);
}

const tokens = (usage) => (Number.isInteger(usage?.total_tokens) ? ` · ${usage.total_tokens} tokens` : '');

function summary(event) {
  const d = event.data ?? {};
  switch (event.kind) {
    case 'tool.called': return `${d.tool}(${short(json(d.arguments ?? {}), 70)})`;
    case 'tool.returned': return `${d.tool} → ${short(d.text, 90)}`;
    case 'tool.failed': return `${d.tool} ✗ ${d.code ?? ''}: ${short(d.error ?? d.message, 90)}`;
    case 'tool.denied': return `${d.tool} denied`;
    case 'agent.turn.started': return short(d.task, 90);
    case 'chat.message': return `${d.role ?? 'user'}: ${short(d.text, 90)}`;
    case 'model.request': return `${d.messages ?? '?'} messages, ${(d.tools ?? []).length} tools`;
    case 'model.response':
      return (d.tool_calls?.length ? `calls ${d.tool_calls.map((c) => c.name).join(', ')}${d.content ? ` — ${short(d.content, 50)}` : ''}` : short(d.content, 90)) + tokens(d.usage);
    case 'confirmation.requested': return `${d.tool}(${short(json(d.arguments ?? {}), 60)})`;
    case 'confirmation.answer': return `${d.approved ? 'approve' : 'deny'} ${d.id ?? ''}`;
    case 'confirmation.answered': return `${d.tool} ${d.approved ? 'approved' : 'denied'}${d.by ? ` by ${d.by}` : ''}`;
    case 'agent.limit': return `${d.limit}${d.tool ? ` (${d.tool})` : ''}`;
    case 'agent.turn.finished': return (d.stopped ? `stopped: ${d.stopped}${d.answer ? ` — ${short(d.answer, 60)}` : ''}` : short(d.answer ?? d.error, 90)) + tokens(d.usage);
    case 'agent.error': return `${d.error ?? ''}: ${short(d.message, 80)}`;
    case 'navigation': return short(event.url ?? d.url, 90);
    case 'tools.changed': return short((d.tools ?? []).join(', '), 90);
    case 'skill.injected': case 'skill.failed': return `${d.skill ?? d.name ?? ''} ${short(d.reason ?? d.error ?? '', 70)}`;
    case 'evidence.screenshot': return `${d.phase ?? ''} ${d.tool ?? ''} ${d.file ?? ''}`;
    case 'note': return short(d.text, 90);
    default: return short(json(d), 90);
  }
}

function logItem(event) {
  const d = event.data ?? {};
  const outcome = event.kind === 'tool.failed' || event.kind === 'agent.error' || (event.kind === 'confirmation.answered' && !d.approved) ? 'bad'
    : event.kind === 'tool.returned' ? 'good' : '';
  const details = el('details', {},
    el('summary', {},
      el('time', { text: clock(event.ts) }),
      el('span', { class: 'kind', text: event.kind }),
      el('span', { class: 'text', text: summary(event) }),
      event.duration_ms != null ? el('span', { class: 'ms', text: `${Math.round(event.duration_ms)} ms` }) : null,
      fromPanel(event) ? el('span', { class: 'origin', text: 'panel', title: 'done in a side panel' }) : null));
  details.addEventListener('toggle', () => { // the full event, rendered when first opened
    if (details.open && details.childElementCount === 1) details.append(el('pre', { text: pretty(JSON.stringify(event)) }));
  });
  return el('li', { dataset: { kind: event.kind }, class: outcome }, details);
}

function appendLog(event) {
  const list = $('log');
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
  list.append(logItem(event));
  while (list.childElementCount > MAX_EVENTS) list.firstElementChild.remove();
  if (atBottom) list.scrollTop = list.scrollHeight;
  $('log-empty').hidden = true;
  $('log-count').textContent = String(list.childElementCount);
}

function renderLog() {
  const list = $('log');
  const shown = state.events.filter((e) => onCurrentTab(e) && !SILENT_KINDS.has(e.kind));
  list.replaceChildren(...shown.map(logItem));
  list.scrollTop = list.scrollHeight;
  $('log-empty').hidden = shown.length > 0;
  $('log-count').textContent = shown.length ? String(shown.length) : '';
}

function trackConfirmations(event) {
  const d = event.data ?? {};
  if (event.kind === 'confirmation.requested' && !fromPanel(event) && d.id) {
    addCard({ id: String(d.id), tool: d.tool, arguments: d.arguments, risk: d.risk, tabId: event.tab_id, origin: 'notebook' });
  } else if (event.kind === 'confirmation.answered' && d.id) {
    resolveCard(String(d.id), `${d.approved ? 'Approved' : 'Denied'}${d.by ? ` (${d.by})` : ''}`, !!d.approved);
  } else if (event.kind === 'agent.turn.finished' && !fromPanel(event)) {
    for (const [id, card] of state.cards) {
      if (card.origin === 'notebook' && !card.resolved && card.tabId === event.tab_id) resolveCard(id, 'Expired: the turn ended', false);
    }
  }
}

function trackNotebookTurn(event) {
  if (fromPanel(event) || !onCurrentTab(event)) return;
  const d = event.data ?? {};
  if (event.kind === 'agent.turn.started') {
    state.notebookBubble = null;
    addMessage('user notebook', d.task ?? '', 'notebook');
  } else if (event.kind === 'model.delta') {
    state.notebookBubble ??= addMessage('assistant notebook', '', 'notebook agent');
    state.notebookBubble.querySelector('.body').textContent += visible(d.text);
    scrollTranscript();
  } else if (event.kind === 'model.response') {
    if (d.tool_calls?.length) state.notebookBubble = null;
  } else if (event.kind === 'agent.turn.finished') {
    const body = state.notebookBubble?.querySelector('.body');
    if (d.answer && (!body || body.textContent !== visible(d.answer))) {
      (body ?? addMessage('assistant notebook', '', 'notebook agent').querySelector('.body')).textContent = visible(d.answer);
    }
    if (d.stopped) addMessage('notice', `The notebook agent stopped: ${d.stopped}`);
    state.notebookBubble = null;
  }
}

// ----- confirmation cards -----

function addCard({ id, tool, arguments: args, risk, tabId, origin, decide, signal }) {
  if (state.cards.has(id)) return;
  const approve = el('button', { type: 'button', class: 'approve primary', text: 'Approve' });
  const deny = el('button', { type: 'button', class: 'deny', text: 'Deny' });
  const note = el('span', { class: 'card-state muted' });
  const otherTab = tabId !== state.tabId && tabId !== null && tabId !== undefined;
  const where = otherTab ? (state.tabs.get(tabId)?.title || `tab ${tabId}`) : null;
  const node = el(
    'div',
    { class: 'card', dataset: { id, origin, risk: RISK_BADGES[risk] ? risk : 'unknown' }, role: 'group', 'aria-label': `Confirm ${tool}` },
    el('div', { class: 'card-head' },
      el('span', { class: 'who', text: origin === 'notebook' ? 'Notebook agent' : 'Chat' }),
      el('span', { text: ' wants to run ' }),
      el('strong', { text: String(tool ?? '?') }),
      where ? el('span', { class: 'muted', text: ` on ${short(where, 40)}` }) : null,
      RISK_BADGES[risk] ? riskBadge(risk) : null),
    el('pre', { class: 'card-args', text: pretty(JSON.stringify(args ?? {})) }),
    el('div', { class: 'row' }, approve, deny, note),
  );
  const card = { node, origin, tabId, resolved: false, decide };
  state.cards.set(id, card);
  const answer = async (approved) => {
    approve.disabled = true;
    deny.disabled = true;
    if (origin === 'notebook') {
      note.textContent = approved ? 'Approving…' : 'Denying…';
      const reply = await request({ type: 'confirm', id, approved, tabId });
      if (card.resolved) return;
      if (!reply.ok) {
        note.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
        approve.disabled = false;
        deny.disabled = false;
      } else {
        note.textContent = `${approved ? 'Approved' : 'Denied'}; waiting for the notebook…`;
      }
    } else {
      resolveCard(id, approved ? 'Approved' : 'Denied', approved);
      decide?.(approved);
    }
  };
  approve.addEventListener('click', () => answer(true));
  deny.addEventListener('click', () => answer(false));
  signal?.addEventListener('abort', () => {
    if (!card.resolved) {
      resolveCard(id, 'Expired: the turn stopped', false);
      decide?.(false);
    }
  }, { once: true });
  $('confirmations').append(node);
  $('confirmations').hidden = false;
  node.scrollIntoView({ block: 'nearest' });
}

function resolveCard(id, text, approved) {
  const card = state.cards.get(id);
  if (!card || card.resolved) return;
  card.resolved = true;
  card.node.classList.add('resolved', approved ? 'approved' : 'denied');
  for (const button of card.node.querySelectorAll('button')) button.disabled = true;
  card.node.querySelector('.card-state').textContent = text;
  const resolved = [...state.cards].filter(([, c]) => c.resolved);
  for (const [oldId, old] of resolved.slice(0, Math.max(0, resolved.length - KEEP_RESOLVED_CARDS))) {
    old.node.remove();
    state.cards.delete(oldId);
  }
}

// ----- chat -----

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

const chat = new ChatLoop({
  tab: (tabId) => state.tabs.get(tabId) ?? null,
  call: (tabId, name, args) => request({ type: 'call', tabId, name, args }),
  emit: (kind, tabId, data) => void request({ type: 'emit', kind, tabId, data }),
  confirm: (req, signal) => new Promise((resolve) => addCard({ ...req, origin: 'chat', decide: resolve, signal })),
  settle: (tabId) => syncTools(tabId),
  startAssistant: () => {
    state.chatBubble = null;
  },
  delta: (text) => {
    state.chatBubble ??= addMessage('assistant', '');
    state.chatBubble.querySelector('.body').textContent += visible(text);
    scrollTranscript();
  },
  step: ({ tool, status, summary: text }) => {
    state.chatBubble = null;
    const mark = status === 'ok' ? '✓' : status === 'refused' ? '⊘' : '✗';
    addMessage(`step ${status}`, `${mark} ${tool} ${short(text, 100)}`);
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
  if (!text || chat.busy) return;
  await loadChatSettings();
  if (state.chatSettings.problem) {
    $('chat-settings-missing').hidden = false;
    return;
  }
  if (state.tabId === null) {
    addMessage('error', 'No tab to work on.');
    return;
  }
  input.value = '';
  addMessage('user', text);
  state.chatBubble = null;
  setBusy(true);
  const result = await chat.send(text, state.tabId);
  setBusy(false);
  const body = state.chatBubble?.querySelector('.body');
  if (result.answer && (!body || body.textContent !== visible(result.answer))) {
    (body ?? addMessage('assistant', '').querySelector('.body')).textContent = visible(result.answer);
  }
  if (result.error) addMessage('error', result.error);
  else if (!result.answer && !result.stopped) addMessage('notice', 'The model gave no answer.');
  state.chatBubble = null;
}

// The chat's confirmation policy: chosen next to the chat, kept in storage.local.
async function loadChatPolicy() {
  const select = $('chat-confirm');
  select.replaceChildren(...Object.keys(CONFIRM.policies).map((name) => el('option', { value: name, text: POLICY_LABELS[name] ?? name })));
  const { chatConfirm } = await chrome.storage.local.get('chatConfirm');
  select.value = chat.setPolicy(chatConfirm ?? CONFIRM.default);
}

async function loadChatSettings() {
  const { sidecar: raw } = await chrome.storage.local.get('sidecar');
  const checked = checkSettings(raw);
  state.chatSettings = { problem: checked.problem, model: checked.model }; // never the key
  const missing = $('chat-settings-missing');
  missing.hidden = !checked.problem;
  missing.querySelector('span').textContent = checked.problem
    ? `${checked.problem} Set one up to chat with this page's tools.` : '';
  $('chat-model').textContent = checked.model ?? '';
}

// ----- wiring -----

$('call-button').addEventListener('click', callSelected);
$('reset-args').addEventListener('click', () => {
  state.argsFor = null;
  renderToolDetail();
});
$('tool-args').addEventListener('input', fitArgs);
$('tool-args').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) callSelected();
});
$('chat-send').addEventListener('click', sendChat);
$('chat-stop').addEventListener('click', () => chat.stop());
$('chat-confirm').addEventListener('change', (e) => {
  const policy = chat.setPolicy(e.target.value);
  chrome.storage.local.set({ chatConfirm: policy });
});
$('chat-clear').addEventListener('click', () => {
  chat.reset();
  $('chat-transcript').replaceChildren();
  state.chatBubble = null;
  state.notebookBubble = null;
});
$('chat-input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    sendChat();
  }
});
for (const id of ['open-options', 'chat-setup']) $(id).addEventListener('click', () => chrome.runtime.openOptionsPage());
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes.sidecar) loadChatSettings();
  if (area === 'local' && changes.chatConfirm) $('chat-confirm').value = chat.setPolicy(changes.chatConfirm.newValue ?? CONFIRM.default);
});

renderStatus();
await Promise.all([followActiveTab(), loadChatSettings(), loadChatPolicy()]);
renderHeader();
connectHub();
