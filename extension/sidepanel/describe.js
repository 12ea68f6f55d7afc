// Events in words, as the notebook's log and the session report say them (webmcp_nb/describe.py; a shared vector
// file, tests/vectors/log_lines.json, keeps the two saying the same): the URL of a navigation, the tools a page
// added and removed, a call's arguments and a preview of its result, who acted. Plain text; the log renders it as
// text. No DOM here, so node can run it.
import {
  ASKERS, GRANT_ANSWERED, GRANT_LEVELS, GRANT_WHY_NOT, LOG_FAMILIES, LOG_PROBLEMS, LOG_QUIET, ORIGINS,
} from '../shared/protocol.js';

const PREVIEW = 140;
export const PROBLEMS = new Set(LOG_PROBLEMS);
export const QUIET = new Set(LOG_QUIET);
export const FAMILY_NAMES = [...new Set(Object.values(LOG_FAMILIES)), 'other'];

export const family = (kind) => LOG_FAMILIES[String(kind).split('.')[0]] ?? 'other';

const chars = (text) => Array.from(String(text)); // code points, as Python counts
function cut(text, limit) {
  const all = chars(text);
  return all.length <= limit ? String(text) : `${all.slice(0, limit - 1).join('')}…`;
}
function clip(text, limit) {
  const all = chars(text);
  return all.length <= limit ? String(text) : `${all.slice(0, limit).join('')}… [${all.length - limit} more characters]`;
}

// JSON with Python's separators (", " and ": "), as describe.py writes it.
function spaced(value) {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
  return JSON.stringify(value) ?? 'null';
}
const jsonText = (value, limit) => cut(spaced(value), limit);
const words = (text) => String(text).split(/\s+/).filter(Boolean).join(' ');
const thousands = (n) => Number(n).toLocaleString('en-US');

export function preview(value, limit = PREVIEW) {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (_) {
      return cut(words(value), limit);
    }
  }
  return jsonText(value, limit);
}

export function callText(tool, args, limit = PREVIEW) {
  let inner;
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    inner = Object.entries(args).map(([k, v]) => `${k}=${jsonText(v, limit)}`).join(', ');
  } else if (args === null || args === undefined || args === '') {
    inner = '';
  } else {
    inner = jsonText(args, limit);
  }
  return `${tool}(${cut(inner, limit)})`;
}

// Who acted, as a person would say it, or null when nobody did (the page changed on its own).
export function actor(event) {
  const d = event.data ?? {};
  const said = (who) => (Object.hasOwn(ORIGINS, who) ? ORIGINS[who] : who);
  if (typeof d.origin === 'string') return said(d.origin);
  if (event.kind === 'confirmation.answered' && d.by) return said(String(d.by));
  if (['agent', 'model', 'confirmation'].includes(String(event.kind).split('.')[0])) return 'agent';
  return null;
}

const said = (words, key) => (Object.hasOwn(words, String(key)) ? words[String(key)] : String(key));

// Who asks for a site ("MCP client Claude Desktop") and what it asks to do ("call searchFlights [medium risk]").
export const asker = (d) => `${said(ASKERS, d.origin ?? '')} ${d.who ?? ''}`.trim();
export const doing = (d) => `${d.action ?? ''}${d.tool ? ` ${d.tool}` : ''}${d.risk ? ` [${d.risk} risk]` : ''}`;

const names = (list) => (Array.isArray(list) ? list.map(String).join(', ') : '');
const tokens = (usage) => (Number.isSafeInteger(usage?.total_tokens) ? usage.total_tokens : 0);

function finished(d) {
  const outcome = d.error ? `failed: ${d.error}` : d.stopped ? `stopped (${d.stopped})` : `answered: ${words(d.answer ?? '')}`;
  const total = tokens(d.usage) ? `, ${thousands(d.usage.total_tokens)} tokens` : '';
  const steps = d.steps ?? 0;
  return `${clip(outcome, 300)} (${steps} tool call${steps === 1 ? '' : 's'}${total})`;
}

// An MCP client's session: who started it, the tab it drives, its end.
function session(kind, tabId, d) {
  const who = `${clip(String(d.client || 'an MCP client'), 100)} (pid ${d.pid ?? '?'})`;
  const tab = tabId !== null && tabId !== undefined ? `tab ${tabId}` : 'no tab';
  if (kind === 'mcp.session.started') return `${who} connected, on ${tab}`;
  if (kind === 'mcp.session.bound') return `${who} now drives ${tab}`;
  return `${who} disconnected`;
}

// One line saying what happened (without time, duration or actor: the log adds those).
export function describe(event) {
  const d = event.data ?? {};
  const tool = String(d.tool ?? '');
  switch (event.kind) {
    case 'tool.called': return callText(tool, d.arguments);
    case 'tool.returned': return `${tool} → ${preview(d.text ?? '')}`;
    case 'tool.failed': return `${tool} failed: ${d.code ?? ''}: ${clip(String(d.error ?? ''), 300)}`;
    case 'tool.refused': return `${callText(tool, d.arguments, 60)} refused before the page saw it: ${d.error ?? ''}`;
    case 'tool.denied': return `${callText(tool, d.arguments, 60)} denied: not run`;
    case 'navigation': {
      const where = event.url ?? '';
      if (d.opened) {
        const count = Array.isArray(d.tools) ? ` (${d.tools.length} tool${d.tools.length === 1 ? '' : 's'})` : '';
        return `opened ${where}${count}`;
      }
      return `${where} (from ${d.previous ?? '?'})`;
    }
    case 'tools.changed': {
      const added = (d.added ?? []).map((n) => `+${n}`).join(' ');
      const removed = (d.removed ?? []).map((n) => `−${n}`).join(' ');
      const total = d.count !== undefined && d.count !== null ? `(${d.count} tool${d.count === 1 ? '' : 's'})` : '';
      return [added, removed, total].filter(Boolean).join(' ');
    }
    case 'tools.omitted': return `${d.omitted} tools left out of the mirror (${d.listed} listed); call them by name`;
    case 'skill.injected': return `${d.skill} ${d.version ?? ''} → ${names(d.tools) || 'no tools'}`;
    case 'skill.failed': return `${d.skill} not active here: ${d.reason}`;
    case 'skills.changed': return `installed: ${names(d.skills) || 'none'}`;
    case 'evidence.screenshot': return `${tool} ${d.phase} → ${d.file}`;
    case 'evidence.failed': return `${tool} ${d.phase}: no screenshot (${d.error})`;
    case 'agent.turn.started': return `task: ${d.task ?? ''}`;
    case 'agent.turn.finished': return finished(d);
    case 'agent.limit': return `stopped: ${d.limit}${d.tool ? ` (${d.tool})` : ''}`;
    case 'agent.error': return `${d.error}: ${d.message}`;
    case 'model.response': {
      const calls = (d.tool_calls ?? []).filter((c) => c && typeof c === 'object').map((c) => String(c.name));
      const said = words(d.content ?? '');
      const parts = said ? [clip(said, 200)] : [];
      if (calls.length) parts.push(`→ calls ${calls.join(', ')}`);
      if (tokens(d.usage)) parts.push(`[${thousands(d.usage.total_tokens)} tokens]`);
      return parts.join(' ') || '(empty reply)';
    }
    case 'model.request': return `${d.messages} messages, ${(d.tools ?? []).length} tools`;
    case 'model.prompt_mode': return 'the endpoint refused tools: tools described in the prompt instead';
    case 'confirmation.requested': return `${callText(tool, d.arguments, 80)}? [${d.risk ?? ''} risk]${d.provenance ? ` from ${clip(String(d.provenance), 200)}` : ''}`;
    case 'confirmation.answered': return `${tool} ${d.approved ? 'approved' : 'denied'}`;
    case 'note': return String(d.text ?? '');
    case 'browser.crashed': return String(d.message ?? 'the browser is gone');
    case 'replay.diverged': return `step ${d.step} ${tool}: differs from the recording`;
    case 'mcp.session.started':
    case 'mcp.session.bound':
    case 'mcp.session.ended': return session(event.kind, event.tab_id, d);
    case 'grant.asked': return `${asker(d)} asks to ${doing(d)} on ${d.site ?? ''} (needs ${d.need ?? ''})`;
    case 'grant.answered': return `${d.site ?? ''}: ${said(GRANT_ANSWERED, d.answer)} (${doing(d)})${d.error ? `; ${d.error}` : ''}`;
    case 'grant.refused': return `${d.site ?? ''}: not granted to ${asker(d)} (${doing(d)}): ${said(GRANT_WHY_NOT, d.why)}`;
    case 'grant.changed': return `${d.site ?? ''}: ${said(GRANT_LEVELS, d.level)}${d.by ? ` (by ${d.by})` : ''}`;
    case 'bridge.opened': return `chat bridge on the ${d.site} site with ${(d.tools ?? []).length} tools: ${names(d.tools) || 'none'}`;
    case 'bridge.state': {
      const state = d.enabled ? 'on' : 'off';
      return (d.running ?? true) ? state : `${state}, not running: ${d.why ?? ''}`;
    }
    case 'bridge.sent':
      return (d.by === 'bridge' ? 'results sent to the chat' : 'the user sent a message') + (d.instructions ? ' (with the tool instructions)' : '');
    case 'bridge.answered': {
      const calls = d.calls ?? 0;
      return `the assistant answered (${calls} tool call${calls === 1 ? '' : 's'} this turn)`;
    }
    case 'bridge.closed': return 'chat bridge closed';
    case 'bridge.offered': return `${callText(tool, d.arguments, 80)} written without its tags: the user is asked whether to run it`;
    case 'bridge.problem': return `in the chat page: ${d.text ?? ''}`;
    case 'override.set': {
      const fields = d.fields && typeof d.fields === 'object' && !Array.isArray(d.fields) ? Object.keys(d.fields) : [];
      const listed = Array.isArray(d.differences) ? d.differences.map(String).join('; ') : '';
      const differs = listed ? `; its schema differs from the page's: ${listed}` : '';
      return `${tool}: ${fields.join(', ') || 'text'} overridden here (the page's own tool still runs)${differs}`;
    }
    case 'override.cleared': return `${names(d.tools)}: the page's own text again`;
    default: {
      if (String(event.kind).startsWith('verdict.')) {
        const why = Array.isArray(d.reasons) ? d.reasons.map(String).join('; ') : '';
        return `${d.by ?? 'eval'}: ${String(event.kind).slice('verdict.'.length)}${why ? ` — ${clip(why, 600)}` : ''}`;
      }
      const rest = Object.fromEntries(Object.entries(d).filter(([k]) => k !== 'origin'));
      return Object.keys(rest).length ? preview(rest) : '';
    }
  }
}
