// Confirmation cards: a tool call waiting for the user's approval, asked by a notebook agent or the notebook's
// chat-site bridge (an event; the answer goes back through the hub and the notebook applies the first answer it
// gets, from any view) or by
// this panel's chat (a card with a `decide` callback). A card ends resolved — approved, denied or expired —
// and the last few resolved ones stay in view.
//
// Asking cards: a site never granted, and someone (an MCP client, an agent, this panel's chat) wants to read it or
// act on it (a `grant.asked` event from the relay). The card names the site, who asks and what; its answer — once,
// this site read, this site act, never — goes to the relay, which takes the first answer from any view.
import { asker, doing } from './describe.js';
import { $, el, isRisk, pretty, riskBadge, short, visible } from './dom.js';
import { request } from './hub.js';
import { fromPanel } from './log.js';
import { shown, tabs } from './tabs.js';

const KEEP_RESOLVED_CARDS = 3;
const cards = new Map(); // confirmation id → {node, origin, tabId, resolved, decide}

// A card for a confirmation; `decide(approved)` is called for a chat's card, `signal` expires it. `provenance`
// says where the tool comes from (its frame's origin, or an MCP server), so the user knows whose tool runs.
export function addCard({ id, tool, arguments: args, risk, provenance, tabId, origin, who, decide, signal }) {
  if (cards.has(id)) return;
  const approve = el('button', { type: 'button', class: 'approve primary', text: 'Approve' });
  const deny = el('button', { type: 'button', class: 'deny', text: 'Deny' });
  const note = el('span', { class: 'card-state muted' });
  const otherTab = tabId !== shown.tabId && tabId !== null && tabId !== undefined;
  const where = otherTab ? (tabs.get(tabId)?.title || `tab ${tabId}`) : null;
  const node = el(
    'div',
    { class: 'card', dataset: { id, origin, risk: isRisk(risk) ? risk : 'unknown' }, role: 'group', 'aria-label': `Confirm ${tool}` },
    el('div', { class: 'card-head' },
      el('span', { class: 'who', text: who ?? (origin === 'notebook' ? 'Notebook agent' : 'Chat') }),
      el('span', { text: ' wants to run ' }),
      el('strong', { text: String(tool ?? '?') }),
      where ? el('span', { class: 'muted', text: ` on ${short(where, 40)}` }) : null,
      isRisk(risk) ? riskBadge(risk) : null),
    provenance ? el('div', { class: 'card-from muted small', text: `from ${short(String(provenance), 200)}` }) : null,
    el('pre', { class: 'card-args', text: pretty(JSON.stringify(args ?? {})) }),
    el('div', { class: 'row' }, approve, deny, note),
  );
  const card = { node, origin, tabId, resolved: false, decide };
  cards.set(id, card);
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

const GRANT_ANSWERS = [
  ['once', 'Once', 'Allow this action only'],
  ['read', 'Read this site', 'It may list tools, call read-only ones and take screenshots here, from now on'],
  ['act', 'Act on this site', 'It may call every tool here from now on (high-risk ones still ask each time)'],
  ['never', 'Never', 'Refuse, and never ask again for this site'],
];

// A card for an ask (a grant.asked event's data): the site, who asks, what, and the four answers.
function addGrantCard(d, tabId) {
  const id = `grant-${d.id}`;
  if (cards.has(id)) return;
  const note = el('span', { class: 'card-state muted' });
  const buttons = GRANT_ANSWERS.map(([answer, text, title]) => el('button', {
    type: 'button', class: `grant-${answer}${answer === 'never' ? '' : ' primary'}`, text, title, dataset: { answer },
  }));
  const needs = d.need === 'act' ? 'act on this site' : 'read this site';
  const node = el(
    'div',
    { class: 'card grant', dataset: { id, origin: 'grant', site: String(d.site ?? ''), need: String(d.need ?? ''), risk: isRisk(d.risk) ? d.risk : 'unknown' }, role: 'group', 'aria-label': `Grant ${d.site}?` },
    el('div', { class: 'card-head' },
      el('span', { class: 'who', text: short(asker(d), 120) }),
      el('span', { text: ' asks to ' }),
      el('strong', { text: short(`${d.action ?? ''}${d.tool ? ` ${d.tool}` : ''}`, 120) }),
      isRisk(d.risk) ? riskBadge(d.risk) : null),
    el('div', { class: 'grant-site' }, el('span', { class: 'muted', text: 'on ' }), el('strong', { class: 'site', text: String(d.site ?? '?') })),
    el('div', { class: 'muted small', text: `This site was never granted; it needs to ${needs}. Unanswered, it is refused in ${Math.round(Number(d.timeout_s) || 60)} s.` }),
    el('div', { class: 'row' }, ...buttons, note),
  );
  const card = { node, origin: 'grant', tabId, resolved: false };
  cards.set(id, card);
  for (const button of buttons) {
    button.addEventListener('click', async () => {
      for (const b of buttons) b.disabled = true;
      note.textContent = 'Answering…';
      const reply = await request({ type: 'grantAnswer', id: String(d.id), answer: button.dataset.answer });
      if (card.resolved) return;
      if (!reply.ok) {
        note.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
        for (const b of buttons) b.disabled = false;
      }
    });
  }
  $('confirmations').append(node);
  $('confirmations').hidden = false;
  node.scrollIntoView({ block: 'nearest' });
}

// Asks as the relay's events tell them: asked, answered (in either view), or refused without an answer.
export function trackGrants(event) {
  const d = event.data ?? {};
  if (!d.id) return;
  if (event.kind === 'grant.asked') addGrantCard(d, event.tab_id);
  else if (event.kind === 'grant.answered') {
    const by = d.origin === 'sidepanel' ? 'side panel' : d.origin === 'panel' ? 'notebook panel' : String(d.origin ?? '');
    resolveCard(`grant-${d.id}`, `${describeAnswer(d)}${by ? ` (${by})` : ''}`, !!d.allowed);
  } else if (event.kind === 'grant.refused') {
    resolveCard(`grant-${d.id}`, d.why === 'timeout' ? 'Not granted: nobody answered in time' : 'Not granted: the asker gave up', false);
  }
}

function describeAnswer(d) {
  const words = { once: 'Allowed once', read: 'Granted: read this site', act: 'Granted: act on this site', never: 'Never for this site' };
  return `${words[d.answer] ?? String(d.answer)}${d.error ? ` (${d.error})` : ''}: ${doing(d)} on ${d.site ?? ''}`;
}

function resolveCard(id, text, approved) {
  const card = cards.get(id);
  if (!card || card.resolved) return;
  card.resolved = true;
  card.node.classList.add('resolved', approved ? 'approved' : 'denied');
  for (const button of card.node.querySelectorAll('button')) button.disabled = true;
  card.node.querySelector('.card-state').textContent = text;
  const resolved = [...cards].filter(([, c]) => c.resolved);
  for (const [oldId, old] of resolved.slice(0, Math.max(0, resolved.length - KEEP_RESOLVED_CARDS))) {
    old.node.remove();
    cards.delete(oldId);
  }
}

// A notebook agent's confirmations as its events tell them: asked, answered (in either view), or expired with
// the turn that asked.
export function trackConfirmations(event) {
  const d = event.data ?? {};
  if (event.kind === 'confirmation.requested' && !fromPanel(event) && d.id) {
    const who = d.origin === 'bridge' ? 'Chat bridge' : 'Notebook agent';
    addCard({ id: String(d.id), tool: d.tool, arguments: d.arguments, risk: d.risk, provenance: d.provenance, tabId: event.tab_id, origin: 'notebook', who });
  } else if (event.kind === 'confirmation.answered' && d.id) {
    resolveCard(String(d.id), `${d.approved ? 'Approved' : 'Denied'}${d.by ? ` (${d.by})` : ''}`, !!d.approved);
  } else if (event.kind === 'agent.turn.finished' && !fromPanel(event)) {
    for (const [id, card] of cards) {
      if (card.origin === 'notebook' && !card.resolved && card.tabId === event.tab_id) resolveCard(id, 'Expired: the turn ended', false);
    }
  }
}
