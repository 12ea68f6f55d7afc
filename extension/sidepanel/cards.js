// Confirmation cards: a tool call waiting for the user's approval, asked by a notebook agent or the notebook's
// chat-site bridge (an event; the answer goes back through the hub and the notebook applies the first answer it
// gets, from any view) or by
// this panel's chat (a card with a `decide` callback). A card ends resolved — approved, denied or expired —
// and the last few resolved ones stay in view.
import { $, el, isRisk, pretty, riskBadge, short, visible } from './dom.js';
import { request } from './hub.js';
import { fromPanel } from './log.js';
import { shown, tabs } from './tabs.js';

const KEEP_RESOLVED_CARDS = 3;
const cards = new Map(); // confirmation id → {node, origin, tabId, resolved, decide}

// A card for a confirmation; `decide(approved)` is called for a chat's card, `signal` expires it.
export function addCard({ id, tool, arguments: args, risk, tabId, origin, who, decide, signal }) {
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
    addCard({ id: String(d.id), tool: d.tool, arguments: d.arguments, risk: d.risk, tabId: event.tab_id, origin: 'notebook', who });
  } else if (event.kind === 'confirmation.answered' && d.id) {
    resolveCard(String(d.id), `${d.approved ? 'Approved' : 'Denied'}${d.by ? ` (${d.by})` : ''}`, !!d.approved);
  } else if (event.kind === 'agent.turn.finished' && !fromPanel(event)) {
    for (const [id, card] of cards) {
      if (card.origin === 'notebook' && !card.resolved && card.tabId === event.tab_id) resolveCard(id, 'Expired: the turn ended', false);
    }
  }
}
