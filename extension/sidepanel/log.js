// The side panel's log: the session's events (pushed by notebooks through the relay, and made by panels), the
// last 500 kept, those of the shown tab listed with a one-line summary and the whole event on demand.
import { $, clock, el, json, pretty, short } from './dom.js';
import { onCurrentTab } from './tabs.js';

const MAX_EVENTS = 500;
const SILENT_KINDS = new Set(['model.delta', 'model.tool_call']); // streamed pieces: the chat shows them

const events = [];
let seen = new Set();

export const fromPanel = (event) => event?.data?.origin === 'sidepanel';

// Keeps an event; false when it is not one or was seen before (the hub's init repeats what a panel has).
export function remember(event) {
  if (!event || typeof event.kind !== 'string') return false;
  const key = `${event.ts}|${event.kind}|${event.seq ?? ''}|${event.tab_id ?? ''}|${event.data?.id ?? ''}`;
  if (seen.has(key)) return false;
  seen.add(key);
  events.push(event);
  if (events.length > MAX_EVENTS) {
    events.splice(0, events.length - MAX_EVENTS);
    if (seen.size > MAX_EVENTS * 4) seen = new Set([...seen].slice(-MAX_EVENTS * 2));
  }
  return true;
}

const shownInLog = (event) => onCurrentTab(event) && !SILENT_KINDS.has(event.kind);
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
      event.duration_ms !== null && event.duration_ms !== undefined ? el('span', { class: 'ms', text: `${Math.round(event.duration_ms)} ms` }) : null,
      fromPanel(event) ? el('span', { class: 'origin', text: 'panel', title: 'done in a side panel' }) : null));
  details.addEventListener('toggle', () => { // the full event, rendered when first opened
    if (details.open && details.childElementCount === 1) details.append(el('pre', { text: pretty(JSON.stringify(event)) }));
  });
  return el('li', { dataset: { kind: event.kind }, class: outcome }, details);
}

// A new event, at the end of the list if it belongs there.
export function appendLog(event) {
  if (!shownInLog(event)) return;
  const list = $('log');
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
  list.append(logItem(event));
  while (list.childElementCount > MAX_EVENTS) list.firstElementChild.remove();
  if (atBottom) list.scrollTop = list.scrollHeight;
  $('log-empty').hidden = true;
  $('log-count').textContent = String(list.childElementCount);
}

export function renderLog() {
  const list = $('log');
  const shown = events.filter(shownInLog);
  list.replaceChildren(...shown.map(logItem));
  list.scrollTop = list.scrollHeight;
  $('log-empty').hidden = shown.length > 0;
  $('log-count').textContent = shown.length ? String(shown.length) : '';
}
