// The side panel's Sites section: the per-site grants as the relay keeps them (the file in the user's home,
// grants.updated), each with Revoke, so the site asks again from the next action. A browser launched by
// webmcp-nb is exempt unless it was launched with grants=True: the section says so. Sites are shown as text only.
import { siteOf } from '../chat/agent-core.js';
import { GRANT_LEVELS } from '../shared/protocol.js';
import { $, badge, clock, el, visible } from './dom.js';
import { request } from './hub.js';

let state = null; // {enforced, grants: [{origin, level, since, by}], problem, path} or null while the relay is away

export function setGrants(grants) {
  state = grants && typeof grants === 'object' ? grants : null;
}

// Whether the grants, as the relay last sent them, let a model read `url`'s site (all of them where the relay
// does not enforce grants; none while the relay is away): what the chat is offered of a frame (offeredTools).
export function grantReadable(url) {
  if (state?.enforced === false) return true;
  const site = siteOf(url);
  const level = (Array.isArray(state?.grants) ? state.grants : []).find((grant) => grant?.origin === site)?.level;
  return level === 'read' || level === 'act';
}

export function renderGrants() {
  const list = Array.isArray(state?.grants) ? state.grants : [];
  $('grants').replaceChildren(...list.map(grantItem));
  $('grants-count').textContent = list.length ? String(list.length) : '';
  $('grants-empty').hidden = list.length > 0 || !state;
  const note = $('grants-note');
  const text = !state ? 'The relay is not connected: the grants it keeps cannot be shown, and nothing is granted meanwhile.'
    : state.problem ? `The grant file is refused, so no site is granted: ${state.problem}`
      : state.enforced === false ? 'This browser was launched by webmcp-nb: grants are not enforced here (launch(grants=True) enforces them).'
        : '';
  note.textContent = visible(text);
  note.hidden = !text;
  note.classList.toggle('bad', !!state?.problem);
}

function grantItem(grant) {
  const message = el('div', { class: 'skill-error' });
  const revoke = async () => {
    const reply = await request({ type: 'grantRevoke', origin: grant.origin });
    if (!reply.ok) message.textContent = visible(`${reply.error?.code}: ${reply.error?.message}`);
  };
  const cls = grant.level === 'act' ? 'grant-act' : grant.level === 'read' ? 'risk-low' : 'bad';
  return el(
    'li',
    { dataset: { site: String(grant.origin), level: String(grant.level) } },
    el('div', { class: 'skill-head' },
      el('span', { class: 'name site', text: String(grant.origin) }),
      badge(String(grant.level), cls, GRANT_LEVELS[grant.level] ?? ''),
      el('button', { type: 'button', class: 'grant-revoke', text: 'Revoke', title: 'Forget this grant: the site asks again', onclick: revoke })),
    el('div', { class: 'muted small', text: `since ${clock(grant.since)}${grant.by ? `, by ${grant.by}` : ''}` }),
    message,
  );
}
