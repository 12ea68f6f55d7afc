// The side panel's sessions section: the MCP clients driving this browser through `webmcp-nb mcp`, as the relay
// lists them (sessions.updated): which client, which tab it is bound to, when it last did something, how many
// tool calls it made. Focus brings its tab to the front; Close ends the session (its client sees it gone).
// Client names come from the MCP client and tab titles from pages: both are shown as text only (dom.js).
import { $, badge, clock, el, short, visible } from './dom.js';
import { request } from './hub.js';
import { tabs } from './tabs.js';

let sessions = []; // as the relay last listed them

export function setSessions(list) {
  sessions = Array.isArray(list) ? list : [];
}

export function renderSessions() {
  $('sessions').replaceChildren(...sessions.map(sessionItem));
  $('sessions-count').textContent = sessions.length ? String(sessions.length) : '';
  $('sessions-empty').hidden = sessions.length > 0;
}

function sessionItem(session) {
  const tab = session.tabId === null || session.tabId === undefined ? null : tabs.get(session.tabId);
  const where = session.tabId === null || session.tabId === undefined ? 'no tab bound'
    : tab ? short(tab.title || tab.url, 60) : `tab ${session.tabId}`;
  const message = el('div', { class: 'skill-error' });
  const act = async (body) => {
    const reply = await request(body);
    if (!reply.ok) message.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
  };
  return el(
    'li',
    { dataset: { session: String(session.id) } },
    el('div', { class: 'skill-head' },
      el('span', { class: 'name', text: session.client || 'MCP client' }),
      el('span', { class: 'muted', text: `pid ${Number(session.pid) || '?'}` }),
      badge(`${Number(session.calls) || 0} calls`, 'idle')),
    el('div', { class: 'muted small session-tab', text: where, title: tab?.url ?? '' }),
    el('div', { class: 'muted small', text: `last activity ${clock(session.lastActivity)}` }),
    el('div', { class: 'row' },
      el('button', {
        type: 'button', class: 'session-focus', text: 'Focus', disabled: !tab, title: 'Show the tab this session is bound to',
        onclick: () => act({ type: 'focus', tabId: session.tabId }),
      }),
      el('button', {
        type: 'button', class: 'session-close', text: 'Close', title: 'End this session: its MCP client loses access',
        onclick: () => act({ type: 'closeSession', sessionId: session.id }),
      })),
    message,
  );
}
