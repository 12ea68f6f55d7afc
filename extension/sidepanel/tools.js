// The side panel's tools section: the shown tab's tools with their marks (source, risk, frame), the selected
// tool's description and schema, an argument template made from its schema, and a call by hand through the
// worker's hub (which records it as events, as the notebook's calls are).
import { SCHEMA } from '../chat/agent-rules.js';
import { normalizeSchema, provenance, riskOf } from '../chat/agent-core.js';
import { $, badge, el, pretty, riskBadge, visible } from './dom.js';
import { request } from './hub.js';
import { currentTab, shown, tabs } from './tabs.js';

let selected = null; // the selected tool's name
let argsFor = null; // the tool whose template is in the textarea

// The buttons and the argument box; the list is built by renderTools.
export function setUpTools() {
  $('call-button').addEventListener('click', callSelected);
  $('reset-args').addEventListener('click', () => {
    argsFor = null;
    renderToolDetail();
  });
  $('tool-args').addEventListener('input', fitArgs);
  $('tool-args').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) callSelected();
  });
}

// Another tab is shown: nothing is selected.
export function forgetSelection() {
  selected = null;
  argsFor = null;
  $('tool-result').hidden = true;
}

// A tool's marks: its source, risk, untrusted results, its frame — marked when the frame's origin is not the
// page's own — and, in the selected tool's details (`detail`), the origin it comes from.
function toolMarks(tool, detail = false) {
  const marks = [badge(tool.source ?? '?', `source source-${tool.source === 'native' || tool.source === 'polyfill' ? tool.source : 'skill'}`, 'Where the tool comes from')];
  marks.push(riskBadge(riskOf(tool.annotations)));
  if (tool.annotations?.untrustedContentHint) marks.push(badge('untrusted', 'untrusted', 'untrustedContentHint: returns content the page does not vouch for'));
  const pageOrigin = currentTab()?.origin ?? '';
  const from = provenance(tool.origin, pageOrigin);
  if (tool.origin && pageOrigin && tool.origin !== pageOrigin) marks.push(badge(`frame of ${tool.origin}`, 'frame cross-origin', from));
  else if (tool.frameId) marks.push(badge(`frame ${tool.frameId}`, 'frame', tool.frameUrl ?? ''));
  if (detail && from) marks.push(badge(`from ${from}`, 'from', 'The origin of the frame that registered it'));
  return marks;
}

export function renderTools() {
  const tools = currentTab()?.tools ?? [];
  const list = $('tools');
  list.replaceChildren(...tools.map((tool) => el(
    'li',
    {
      dataset: { tool: tool.name }, tabindex: 0, role: 'option',
      class: tool.name === selected ? 'selected' : '', 'aria-selected': String(tool.name === selected),
      title: `${tool.title || tool.description || tool.name}\n(from ${provenance(tool.origin, currentTab()?.origin ?? '') || '?'})`,
      onclick: () => selectTool(tool.name),
      onkeydown: (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), selectTool(tool.name)),
    },
    el('span', { class: 'name', text: tool.name }),
    el('span', { class: 'marks' }, toolMarks(tool)),
  )));
  $('tools-count').textContent = tools.length ? String(tools.length) : '';
  $('tools-empty').hidden = tools.length > 0;
  $('tools-empty').textContent = tabs.has(shown.tabId)
    ? 'This page has no WebMCP tools yet. Some pages register them after loading or after a search; for a page '
      + 'without any, give it a skill from a notebook: tab.inject(wm.Skill.builtin("dom")).'
    : 'The extension does not see this tab (a browser page, or one opened before the extension loaded: reload it).';
  renderToolDetail();
}

function selectTool(name) {
  selected = name;
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
  const tool = (currentTab()?.tools ?? []).find((t) => t.name === selected);
  $('tool-detail').hidden = !tool;
  if (!tool) return;
  $('tool-name').textContent = visible(tool.title && tool.title !== tool.name ? `${tool.name} — ${tool.title}` : tool.name);
  $('tool-marks').replaceChildren(...toolMarks(tool, true));
  $('tool-description').textContent = visible(tool.description || '(no description)');
  $('tool-schema').textContent = visible(JSON.stringify(tool.inputSchema ?? {}, null, 2));
  if (argsFor !== tool.name) {
    $('tool-args').value = JSON.stringify(argumentTemplate(tool.inputSchema), null, 2);
    argsFor = tool.name;
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
  return wrapped ? placeholder(schema.properties[SCHEMA.wrapped], 0) : objectTemplate(schema, 0);
}

function showResult(kind, text) {
  const box = $('tool-result');
  box.hidden = false;
  box.className = kind;
  box.dataset.state = kind;
  box.textContent = visible(text);
}

async function callSelected() {
  const name = selected;
  const { tabId } = shown;
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
  if (selected !== name || shown.tabId !== tabId) return;
  if (reply.ok) showResult('ok', pretty(reply.text));
  else showResult('error', `${reply.error?.code ?? 'INTERNAL'}: ${reply.error?.message ?? 'the call failed'}`);
}
