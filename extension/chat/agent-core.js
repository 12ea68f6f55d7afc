// The side panel chat's rules applied: the JavaScript twin of the functions in webmcp_nb/agent_rules.py,
// model_tools.py and model_io.py (assistant_message), over the data both read (agent-rules.js, generated from
// agent_rules.py). tests/vectors/agent_rules.json holds the cases both implementations must reproduce exactly.
// Pure functions: no I/O, no extension API, so Node runs this module as it ships.
import { CONFIRM, FRAMING, LIMITS, NAMES, PROVENANCE, PROVIDERS, RISK, SCHEMA, TEXTS, USAGE_FIELDS } from './agent-rules.js';

// `template` with each {name} replaced by its value, in one pass (a value's own braces stay as they are).
export function fill(template, values = {}) {
  return template.replace(/\{(\w+)\}/g, (_, key) => {
    if (!Object.hasOwn(values, key)) throw new Error(`no value for {${key}}`);
    return String(values[key]);
  });
}

// ----- page text inside the model's data blocks (tests/vectors/tool_results.json too) -----

const escapeText = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text) => escapeText(text).replace(/"/g, '&quot;');
// eslint-disable-next-line no-control-regex -- control characters are what it finds (as agent_rules.py's does)
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f\u2028\u2029]+/g;

// The first `limit` characters of `text`, counted as Python counts them (code points, not UTF-16 units), and
// how many characters it has in all.
function codePoints(text, limit) {
  let end = 0;
  let n = 0;
  for (; n < limit && end < text.length; n++) end += text.codePointAt(end) > 0xffff ? 2 : 1;
  if (end >= text.length) return { head: text, total: n };
  let total = n;
  for (let i = end; i < text.length; total++) i += text.codePointAt(i) > 0xffff ? 2 : 1;
  return { head: text.slice(0, end), total };
}

function cut(text, limit) {
  if (text.length <= limit) return text;
  const { head, total } = codePoints(text, limit);
  return total <= limit ? text : head + fill(FRAMING.cut, { more: total - limit });
}

// A tool's result for the model: cut to `limit` characters and escaped, so nothing in it can close the
// <tool_result> block or open another; marked untrusted when the page says so.
export function resultText(toolName, status, body, untrusted = false, limit = LIMITS.max_result_chars) {
  const head = fill(FRAMING.result_open, {
    tool: escapeAttribute(toolName), status: escapeAttribute(status), untrusted: untrusted ? FRAMING.untrusted_mark : '',
  });
  return `${head}\n${escapeText(cut(String(body), limit))}\n${FRAMING.result_close}`;
}

// The page's title and URL as a data block for the conversation (never the system message); then `hidden`
// (hiddenNote), if any.
export function pageContext(title, url, hidden = null) {
  const line = (text) => escapeText(cut(String(text ?? '').replace(CONTROL_CHARACTERS, ' '), LIMITS.max_page_field_chars));
  const block = fill(FRAMING.page_context, { title: line(title), url: line(url) });
  return hidden ? `${block}\n${fill(FRAMING.hidden, { note: hidden })}` : block;
}

// ----- risk and confirmation -----

// A tool's risk from its annotations: low (readOnlyHint), high (destructiveHint or consequentialHint), else
// medium; a declared `risk` can raise it, never lower it.
export function riskOf(annotations) {
  const notes = annotations && typeof annotations === 'object' ? annotations : {};
  const { levels } = RISK;
  let level = RISK.default;
  if (notes[RISK.low_hint] === true) level = 'low';
  if (RISK.high_hints.some((hint) => notes[hint] === true)) level = 'high';
  const declared = notes[RISK.declared];
  if (levels.includes(declared) && levels.indexOf(declared) > levels.indexOf(level)) level = declared;
  return level;
}

// The policy's name (old names mapped to new ones), or null when there is no such policy.
export function resolvePolicy(policy) {
  const name = Object.hasOwn(CONFIRM.aliases, policy) ? CONFIRM.aliases[policy] : policy;
  return Object.hasOwn(CONFIRM.policies, name) ? name : null;
}

// Whether a call of a tool of `risk` asks the user first under `policy`: the risks the policy names, and high
// risk always unless the caller allows it explicitly.
export function needsConfirmation(policy, risk, allowHighRisk = false) {
  const name = resolvePolicy(policy);
  if (name === null) throw new Error(`unknown confirmation policy ${JSON.stringify(policy)}`);
  return CONFIRM.policies[name].includes(risk) || (risk === 'high' && !allowHighRisk);
}

// ----- providers -----

// The preset whose hosts include `baseUrl`'s host ('any' when none does).
export function providerFor(baseUrl) {
  let url;
  try {
    url = new URL(baseUrl);
  } catch (_) {
    return 'any';
  }
  const host = url.hostname.toLowerCase();
  const port = url.port || { 'http:': '80', 'https:': '443' }[url.protocol];
  for (const [name, preset] of Object.entries(PROVIDERS)) {
    for (const entry of preset.hosts) {
      if (entry.includes(':') ? `${host}:${port}` === entry : host === entry || host.endsWith(`.${entry}`)) return name;
    }
  }
  return 'any';
}

// The fields a request carries besides model, messages and tools.
export function requestFields(quirks, { tools, stream }) {
  const fields = {};
  if (tools) {
    if (quirks.tool_choice !== null) fields.tool_choice = quirks.tool_choice;
    if (quirks.parallel_tool_calls !== null) fields.parallel_tool_calls = quirks.parallel_tool_calls;
    Object.assign(fields, quirks.extra_body);
  }
  if (stream) {
    fields.stream = true;
    if (quirks.stream_usage) fields.stream_options = { include_usage: true };
  }
  return fields;
}

// ----- stopped turns -----

function stopValues(values) {
  return values.error === undefined ? values : { ...values, error: cut(String(values.error), LIMITS.max_error_chars) };
}

// The result of a call a stopped turn left open: how far it got and why the turn stopped.
export function openCallText(state, reason, values = {}) {
  return fill(TEXTS.open_call[state], { why: fill(TEXTS.why[reason], stopValues(values)) });
}

// The user message that tells the next turn's model why the previous one ended without an answer.
export function stopNote(reason, values = {}) {
  return fill(TEXTS.note[reason], stopValues(values));
}

// ----- which page tools a model is offered (webmcp_nb/browser/gate.py's Offer) -----

// A URL's site, as a grant names it (the relay normalises sites itself); null for a page of no site.
export function siteOf(url) {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch (_) {
    return null;
  }
}

// The tools of `tab` ({url, origin, tools}) a model may be offered, and what is said of those held back:
// none while `readable(tab.url)` is false; a tool a cross-origin frame registered only while `readable(its
// origin)` too. A held-back tool's name and description are its site's text: the note gives counts and sites.
export function offeredTools(tab, readable) {
  if (!tab || !readable(tab.url)) return { tools: [], note: null };
  const frames = new Map();
  const hidden = {};
  const tools = (tab.tools ?? []).filter(({ origin }) => {
    if (!origin || !tab.origin || origin === tab.origin) return true; // the page's own
    if (!frames.has(origin)) frames.set(origin, !!readable(origin));
    if (frames.get(origin)) return true;
    const site = siteOf(origin) ?? 'null';
    hidden[site] = (hidden[site] ?? 0) + 1;
    return false;
  });
  return { tools, note: hiddenNote(hidden) };
}

// What a listing says of the tools it held back ({site: count}): how many, of which sites, and how the user
// grants one; null when none was.
export function hiddenNote(hidden) {
  const sites = Object.keys(hidden).sort();
  if (!sites.length) return null;
  const words = TEXTS.hidden;
  const count = sites.reduce((sum, site) => sum + hidden[site], 0);
  const grantable = sites.filter((site) => site !== 'null');
  const how = grantable.length ? fill(words.grant, { site: grantable[0] }) : words.no_site;
  const tools = count === 1 ? words.one : fill(words.many, { count });
  return fill(words.note, { tools, sites: sites.map((site) => `${site} (${hidden[site]})`).join(', '), how });
}

// ----- tools as the model sees them -----

const META_KEYS = new Set(SCHEMA.meta_keys);
const NOT_ALLOWED = new RegExp(NAMES.not_allowed, 'gu'); // code points, as Python counts them

// `name` made to fit ^[a-zA-Z0-9_-]{1,64}$, unique in `taken`.
export function modelName(name, taken) {
  const limit = NAMES.max_length;
  const base = String(name).replace(NOT_ALLOWED, NAMES.replacement).slice(0, limit) || NAMES.fallback;
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `_${n}`;
    candidate = base.slice(0, limit - suffix.length) + suffix;
  }
  return candidate;
}

function lookup(root, ref) {
  if (!ref.startsWith('#')) return undefined; // remote references are not fetched
  let node = root;
  for (let part of ref.slice(1).split('/')) {
    if (!part) continue;
    part = part.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!node || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

function resolve(node, root, depth) {
  if (Array.isArray(node)) return node.map((item) => resolve(item, root, depth));
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    const target = depth < SCHEMA.max_ref_depth ? lookup(root, node.$ref) : undefined;
    const rest = Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$ref'));
    const merged = target && typeof target === 'object' && !Array.isArray(target) ? { ...target, ...rest } : rest;
    return resolve(merged, root, depth + 1);
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) if (!META_KEYS.has(key)) out[key] = resolve(value, root, depth);
  return out;
}

// A provider-friendly copy of `schema` (meta keys dropped, local $ref resolved, an object root) and whether
// it had to be wrapped: a non-object schema becomes {input: schema}, and the page gets the `input` value.
export function normalizeSchema(schema) {
  const wrappedKey = SCHEMA.wrapped;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || !Object.keys(schema).length) {
    return { schema: { type: 'object', properties: {} }, wrapped: false };
  }
  const resolved = resolve(structuredClone(schema), schema, 0);
  if (resolved.type !== 'object' && !('properties' in resolved)) {
    return { schema: { type: 'object', properties: { [wrappedKey]: resolved }, required: [wrappedKey] }, wrapped: true };
  }
  resolved.type = 'object';
  if (!resolved.properties || typeof resolved.properties !== 'object' || Array.isArray(resolved.properties)) resolved.properties = {};
  if ('required' in resolved && !Array.isArray(resolved.required)) delete resolved.required;
  return { schema: resolved, wrapped: false };
}

// Where a tool comes from: an MCP server, else the origin of the frame that registered it, marked when it is not
// the page's own; '' when neither is known.
export function provenance(origin, pageOrigin, server) {
  if (server) return fill(PROVENANCE.server, { server });
  if (!origin) return pageOrigin || '';
  if (pageOrigin && origin !== pageOrigin) return fill(PROVENANCE.frame, { origin, page: pageOrigin });
  return origin;
}

// The tool's description, ending with where it comes from and its risk (and a mark when its results are
// untrusted), cut for providers: the page's text is cut, never the notes (a long description must not hide its
// risk or its origin).
export function descriptionForModel(description, title, name, risk, untrusted, source = '') {
  const notes = [RISK.notes[risk], ...(untrusted ? [RISK.untrusted_note] : [])].join(', ');
  const note = source ? ` (${fill(PROVENANCE.note, { provenance: source })}; ${notes})` : ` (${notes})`;
  return codePoints(String(description || title || name).trim(), Math.max(LIMITS.max_description_chars - note.length, 0)).head + note;
}

export const isUntrusted = (tool) => tool?.annotations?.untrustedContentHint === true;

// Model name → {tool, risk, wrapped, source, function}; `pageOrigin` is the tab's own origin (a frame's tools say
// theirs); `source` is where the tool comes from (provenance).
export function toolSpecs(tools, pageOrigin = '') {
  const specs = new Map();
  for (const tool of tools ?? []) {
    const name = modelName(tool.name, new Set(specs.keys()));
    const { schema, wrapped } = normalizeSchema(tool.inputSchema);
    const risk = riskOf(tool.annotations);
    const source = provenance(tool.origin, pageOrigin);
    const description = descriptionForModel(tool.description, tool.title, tool.name, risk, isUntrusted(tool), source);
    specs.set(name, { tool, risk, wrapped, source, function: { name, description, parameters: schema } });
  }
  return specs;
}

// The page's arguments for a call: the `input` value when the schema was wrapped.
export const pageArguments = (spec, args) => (spec.wrapped ? args[SCHEMA.wrapped] : args);

// ----- replies -----

// Tool-call arguments as an object; text that is not a JSON object is returned as is (an error).
export function parseArguments(raw) {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw;
  if (raw === undefined || raw === null || raw === '') return {};
  try {
    const value = JSON.parse(raw);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch (_) { /* falls through */ }
  return String(raw);
}

// The calls of a reply (ids made up as call_N where missing) and the assistant message for the history:
// arguments as JSON text, reasoning_content only where the provider wants it back.
export function assistantMessage(content, reasoning, rawCalls, { sendReasoning, nextId }) {
  const calls = rawCalls.map((raw) => ({ id: raw.id || `call_${nextId()}`, name: raw.name, arguments: raw.arguments }));
  const message = { role: 'assistant', content };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({
      id: c.id, type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
    }));
  }
  if (reasoning && sendReasoning) message.reasoning_content = reasoning;
  return { calls, message };
}

// Token counts of a reply's `usage`, or null when it has none.
export function usageOf(raw) {
  if (!raw || typeof raw !== 'object') return null;
  if (!USAGE_FIELDS.some((name) => Number.isInteger(raw[name]))) return null;
  return Object.fromEntries(USAGE_FIELDS.map((name) => [name, Number.isInteger(raw[name]) && raw[name] >= 0 ? raw[name] : 0]));
}

export function addUsage(total, usage) {
  if (!usage) return total;
  if (!total) return { ...usage };
  return Object.fromEntries(USAGE_FIELDS.map((name) => [name, total[name] + usage[name]]));
}
