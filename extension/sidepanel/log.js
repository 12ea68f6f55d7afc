// The side panel's log: the session's events (pushed by notebooks through the relay, and made by panels), the
// last 500 kept, those of the shown tab listed with a line in the notebook log's words (describe.js) and the
// whole event on demand; filtered by group or to what went wrong; it follows the newest line unless the reader
// scrolled up.
import { $, clock, el, pretty } from './dom.js';
import { actor, describe, family, FAMILY_NAMES, PROBLEMS, QUIET } from './describe.js';
import { onCurrentTab } from './tabs.js';

const MAX_EVENTS = 500;

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

// The filter: every kind, one group of kinds (describe.py's groups), or what went wrong.
let filter = 'all';
const passes = (event) => filter === 'all' || (filter === 'problems' ? PROBLEMS.has(event.kind) : family(event.kind) === filter);
const shownInLog = (event) => onCurrentTab(event) && !QUIET.has(event.kind) && passes(event);

function logItem(event) {
  const d = event.data ?? {};
  const outcome = PROBLEMS.has(event.kind) || (event.kind === 'confirmation.answered' && !d.approved) ? 'bad'
    : event.kind === 'tool.returned' ? 'good' : '';
  const who = actor(event);
  const said = describe(event); // (el() shows invisible characters of text and title)
  const details = el('details', {},
    el('summary', {},
      el('time', { text: clock(event.ts) }),
      el('span', { class: 'kind', text: event.kind }),
      el('span', { class: 'text', text: said, title: said }),
      event.duration_ms !== null && event.duration_ms !== undefined ? el('span', { class: 'ms', text: `${Math.round(event.duration_ms)} ms` }) : null,
      who ? el('span', { class: 'origin', text: who, title: `done by the ${who}` }) : null));
  details.addEventListener('toggle', () => { // the full event, rendered when first opened
    if (details.open && details.childElementCount === 1) details.append(el('pre', { text: pretty(JSON.stringify(event)) }));
  });
  return el('li', { dataset: { kind: event.kind }, class: outcome }, details);
}

// The filter's choices (the log keeps following the newest line unless the reader scrolled up).
export function setUpLog() {
  const select = $('log-filter');
  select.replaceChildren(...['all', ...FAMILY_NAMES, 'problems'].map((name) => el('option', { value: name, text: name })));
  select.addEventListener('change', () => {
    filter = select.value;
    renderLog();
  });
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
