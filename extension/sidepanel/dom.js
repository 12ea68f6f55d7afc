// DOM helpers for the side panel. Page- and tool-provided text reaches the DOM only as textContent or a title
// attribute (never as HTML), with its bidirectional controls shown as <U+202E> so no name reads backwards:
// `el()` does both, and code that sets textContent itself passes the text through `visible()`.

const MAX_SHOWN_CHARS = 100_000;
const RISK_BADGES = {
  low: ['read-only', 'Low risk: readOnlyHint, the page says it changes nothing'],
  medium: ['medium risk', 'Medium risk: it changes the page (not marked read-only)'],
  high: ['high risk', 'High risk: destructiveHint or consequentialHint, or declared high (submit, send, pay, delete, publish); always asks first'],
};

export const $ = (id) => document.getElementById(id);

// Text as shown: bidirectional controls (U+202E shows `exe.txt` for `txt.exe`) made visible, as
// webmcp_nb/display.py does for the notebook.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
export const visible = (text) => String(text ?? '').replace(BIDI_CONTROLS, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);

// An element with text (never HTML) and attributes.
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = visible(value);
    else if (key === 'title') node.title = visible(value);
    else if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

export const short = (text, n = 80) => {
  const s = String(text ?? '').replace(/\s+/g, ' ').trim();
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
};

export const json = (value) => {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (_) {
    return String(value);
  }
};

// JSON text indented (any other text as it is), cut to what a panel can show.
export const pretty = (text) => {
  let out;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch (_) {
    out = String(text ?? '');
  }
  return out.length > MAX_SHOWN_CHARS ? `${out.slice(0, MAX_SHOWN_CHARS)}\n… [${out.length - MAX_SHOWN_CHARS} more characters]` : out;
};

export const clock = (ts) => new Date((Number(ts) || Date.now() / 1000) * 1000).toLocaleTimeString([], { hour12: false });

export function badge(text, cls, title) {
  return el('span', { class: `badge ${cls}`, text, title });
}

export const isRisk = (risk) => Object.hasOwn(RISK_BADGES, risk);

export function riskBadge(risk) {
  const [text, title] = RISK_BADGES[isRisk(risk) ? risk : 'medium'];
  const node = badge(text, `risk risk-${risk}`, title);
  node.dataset.risk = risk;
  return node;
}
