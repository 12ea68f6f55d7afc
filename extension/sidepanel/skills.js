// The side panel's skills section: every installed skill, whether it is active on the shown tab (healthy or
// not, which of its tools the page's own tools shadow), and switches for the skill and each of its tools.
// A switch only changes what the worker's mirror offers; nothing is injected again.
import { $, badge, el, short, visible } from './dom.js';
import { request } from './hub.js';
import { currentTab } from './tabs.js';

let installed = []; // the skills installed in the worker, as its hub last listed them

export function setSkills(skills) {
  installed = skills ?? [];
}

export function renderSkills() {
  const here = new Map((currentTab()?.skills ?? []).map((s) => [s.name, s]));
  const byName = new Map(installed.map((s) => [s.name, s]));
  const names = [...new Set([...byName.keys(), ...here.keys()])];
  $('skills').replaceChildren(...names.map((name) => skillItem(name, byName.get(name), here.get(name))));
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
