// Generic DOM tools for any page: read it, find elements, act on them, extract records.
//
// The "helpers" fragment holds everything the tools share: refs (stable handles for elements), target
// resolution, visibility checks and the error helper. Every tool is its own fragment below, so a notebook
// cell can replace one of them (%%webmcp_skill dom click) without touching the rest.

// @webmcp-nb fragment helpers
const DEFAULT_TIMEOUT_MS = 5000;
const MAX_TIMEOUT_MS = 30000;
const POLL_MS = 100; // how often waits re-check the page
const CLICK_SETTLE_MS = 150; // after a click: time for the page to react before we report the URL
const SUBMIT_SETTLE_MS = 500; // after a submit: time for a same-page handler to show its result
const NAVIGATION_DELAY_MS = 50; // navigate/back start this long after the call has returned its result
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link']);
const INTERACTIVE_ROLES = new Set([
  'button', 'link', 'textbox', 'searchbox', 'spinbutton', 'checkbox', 'radio', 'switch', 'combobox',
  'listbox', 'option', 'slider', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem',
]);
// Asking for role "textbox" also finds the other fields one types into.
const ROLE_ALIASES = { textbox: ['textbox', 'searchbox', 'spinbutton'] };
// A text match inside one of these is promoted to it: the clickable thing, not the <span> in it.
const CLICKABLE = 'a[href], button, summary, label, select, textarea, input, [role=button], [role=link], '
  + '[role=checkbox], [role=radio], [role=switch], [role=tab], [role=menuitem], [role=option], [contenteditable=""], [contenteditable=true]';

function toolError(code, message) {
  return Object.assign(new Error(message), { code });
}

const squash = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();
const norm = (text) => squash(text).toLowerCase();
const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const quote = (text) => JSON.stringify(clip(squash(text), 60));

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal?.removeEventListener('abort', abort); resolve(); }, ms);
    function abort() { clearTimeout(timer); reject(signal.reason); }
    signal?.addEventListener('abort', abort, { once: true });
  });
}

function boundedTimeout(timeoutMs) {
  return Math.min(Math.max(Number(timeoutMs ?? DEFAULT_TIMEOUT_MS) || 0, 0), MAX_TIMEOUT_MS);
}

// ----- refs: "e12" → element, weakly held so a removed element can be collected -----

const refToElement = new Map();
const elementToRef = new WeakMap();
let nextRef = 1;

function refFor(el) {
  let ref = elementToRef.get(el);
  if (!ref) {
    ref = `e${nextRef++}`;
    elementToRef.set(el, ref);
    refToElement.set(ref, new WeakRef(el));
  }
  return ref;
}

function elementForRef(ref) {
  const el = refToElement.get(ref)?.deref();
  if (el?.isConnected) return el;
  refToElement.delete(ref);
  throw toolError('TARGET_NOT_FOUND', `ref ${quote(ref)} no longer names an element of this page: it was removed or `
    + 're-rendered, or the page reloaded (refs last one page load). Call findElements or readPage again for fresh refs.');
}

// ----- what an element is -----

// Every element under root, in document order, including the contents of open shadow roots.
function* allElements(root = document.body ?? document.documentElement) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let node = root.nodeType === Node.ELEMENT_NODE ? root : walker.nextNode(); node; node = walker.nextNode()) {
    if (SKIPPED_TAGS.has(node.localName)) continue;
    yield node;
    if (node.shadowRoot) yield* allElements(node.shadowRoot);
  }
}

function isVisible(el) {
  if (!el?.isConnected) return false;
  const box = el.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) return false;
  return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
}

// A box hidden by custom styling still counts when its <label> shows: users click the label.
const visibleLabel = (el) => [...(el.labels ?? [])].find(isVisible) ?? null;
const isShown = (el) => isVisible(el) || (el.matches('input[type=checkbox], input[type=radio]') && visibleLabel(el) !== null);

function isEnabled(el) {
  return !el.matches(':disabled') && el.getAttribute('aria-disabled') !== 'true' && !el.closest('[inert]');
}

const INPUT_ROLES = {
  button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
  range: 'slider', number: 'spinbutton', search: 'searchbox', hidden: null,
};
const TAG_ROLES = {
  button: 'button', summary: 'button', textarea: 'textbox', ul: 'list', ol: 'list', li: 'listitem', nav: 'navigation',
  main: 'main', dialog: 'dialog', table: 'table', tr: 'row', td: 'cell', th: 'columnheader', img: 'img',
  form: 'form', option: 'option', progress: 'progressbar', article: 'article', aside: 'complementary',
  h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading',
};

function roleOf(el) {
  const explicit = el.getAttribute('role')?.trim().split(/\s+/)[0];
  if (explicit) return explicit;
  const tag = el.localName;
  if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : null;
  if (tag === 'input') return el.type in INPUT_ROLES ? INPUT_ROLES[el.type] : (el.list ? 'combobox' : 'textbox');
  if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
  if (el.isContentEditable && !el.parentElement?.isContentEditable) return 'textbox';
  return TAG_ROLES[tag] ?? null;
}

function roleMatches(el, wanted) {
  const role = roleOf(el);
  return role !== null && (ROLE_ALIASES[wanted] ?? [wanted]).includes(role);
}

// The text of a <label>, without the option texts of a <select> (or the value of a textarea) inside it.
function labelText(label) {
  const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
  let text = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest('select, textarea, script, style')) text += ` ${node.data}`;
  }
  return squash(text);
}

const FORM_CONTROL = 'input, select, textarea, button';

// What an element is called, most specific first: aria-labelledby, aria-label, <label>s, placeholder,
// name (form controls only), title.
function labelsOf(el) {
  const found = [];
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const root = el.getRootNode();
    found.push(labelledBy.split(/\s+/).map((id) => root.getElementById?.(id)?.textContent ?? '').join(' '));
  }
  found.push(el.getAttribute('aria-label'));
  for (const label of el.labels ?? []) found.push(labelText(label));
  found.push(el.getAttribute('placeholder'));
  if (el.matches(FORM_CONTROL)) found.push(el.getAttribute('name'));
  found.push(el.getAttribute('title'));
  return found.map(squash).filter(Boolean);
}

function textOf(el) {
  if (el.matches('input[type=button], input[type=submit], input[type=reset]')) return squash(el.value);
  if (el.localName === 'img') return squash(el.alt);
  return squash(el.innerText ?? el.textContent);
}

// A short CSS selector for the element: unique in its document (or shadow root) when one is found within
// five levels (an id, a telling attribute or classes, else a path of :nth-of-type steps).
function selectorHint(el) {
  const steps = [];
  for (let node = el; node?.nodeType === Node.ELEMENT_NODE && steps.length < 5; node = node.parentElement) {
    const own = uniqueSelector(node);
    if (own) return [own, ...steps].join(' > ');
    const sameTag = node.parentElement ? [...node.parentElement.children].filter((c) => c.localName === node.localName) : [node];
    steps.unshift(sameTag.length > 1 ? `${node.localName}:nth-of-type(${sameTag.indexOf(node) + 1})` : node.localName);
  }
  return steps.join(' > ');
}

function uniqueSelector(el) {
  const root = el.getRootNode();
  const unique = (selector) => {
    try { return root.querySelectorAll(selector).length === 1 ? selector : null; } catch { return null; }
  };
  const tag = el.localName;
  if (el.id && unique(`#${CSS.escape(el.id)}`)) return `#${CSS.escape(el.id)}`;
  for (const attr of ['name', 'data-testid', 'data-test', 'aria-label', 'data-id']) {
    const value = el.getAttribute(attr)?.replace(/["\\]/g, '\\$&'); // a quoted CSS string needs only " and \ escaped
    if (value && unique(`${tag}[${attr}="${value}"]`)) return `${tag}[${attr}="${value}"]`;
  }
  const classes = [...el.classList].slice(0, 3).map((c) => `.${CSS.escape(c)}`).join('');
  return classes ? unique(`${tag}${classes}`) : null;
}

// The element as tools report it (and the ref that targets it later).
function describe(el) {
  const info = {
    ref: refFor(el),
    tag: el.localName,
    role: roleOf(el) ?? undefined,
    text: clip(textOf(el), 80) || undefined,
    label: labelsOf(el)[0],
    visible: isVisible(el),
    enabled: isEnabled(el),
    selector: selectorHint(el),
  };
  if (el.matches('input[type=checkbox], input[type=radio]')) info.checked = el.checked;
  else if (el.matches('input:not([type=password]), textarea, select')) info.value = clip(el.value, 200);
  return info;
}

// "button "Add to cart" (ref e7)": one line of a candidate list in an error message.
function shortName(el) {
  const name = labelsOf(el)[0] || textOf(el);
  return `${roleOf(el) ?? el.localName}${name ? ` ${quote(name)}` : ''} (ref ${refFor(el)})`;
}

// ----- matching -----

// 2 = exact, 1 = contains, 0 = no match (case- and whitespace-insensitive).
function matchScore(strings, needle) {
  let best = 0;
  for (const s of strings) {
    const text = norm(s);
    if (text === needle) return 2;
    if (text.includes(needle)) best = 1;
  }
  return best;
}

function ranked(scored) {
  return scored.filter(([, score]) => score > 0).sort((a, b) => b[1] - a[1]).map(([el]) => el); // sort is stable
}

function byLabel(needle) {
  const scored = [];
  for (const el of allElements()) {
    const score = matchScore(labelsOf(el), needle);
    if (score) scored.push([el, score]);
  }
  return ranked(scored);
}

function byRole(role, needle) {
  const scored = [];
  for (const el of allElements()) {
    if (!roleMatches(el, role)) continue;
    scored.push([el, needle ? matchScore([...labelsOf(el), textOf(el)], needle) : 1]);
  }
  return ranked(scored);
}

// Elements whose text contains the needle and that have no descendant that does too (the <span>, not
// the <body>), each promoted to the clickable element around it; exact matches first.
function byText(needle) {
  const containing = [];
  for (const el of allElements()) {
    const own = el.matches('input[type=button], input[type=submit], input[type=reset]') ? el.value : el.textContent;
    if (norm(own).includes(needle)) containing.push(el);
  }
  const hasMatchingChild = new Set();
  for (const el of containing) {
    for (let up = el.parentElement; up && !hasMatchingChild.has(up); up = up.parentElement) hasMatchingChild.add(up);
  }
  const scored = new Map();
  for (const el of containing) {
    if (hasMatchingChild.has(el)) continue;
    const target = el.closest(CLICKABLE) ?? el;
    const score = norm(textOf(el) || el.textContent) === needle || norm(textOf(target)) === needle ? 2 : 1;
    scored.set(target, Math.max(score, scored.get(target) ?? 0));
  }
  return ranked([...scored]);
}

function bySelector(selector) {
  try {
    return [...document.querySelectorAll(selector)];
  } catch (error) {
    throw toolError('INVALID_INPUT', `${quote(selector)} is not a valid CSS selector (${error.message}). `
      + 'Use label, role or text instead, or fix the selector.');
  }
}

const visibleFirst = (elements) => [...elements.filter(isVisible), ...elements.filter((el) => !isVisible(el))];

// All elements a target could mean, best first: {how, matches, hidden}. Label, role and text searches
// keep only visible elements unless includeHidden; ref and selector keep hidden ones (last).
function findCandidates(target, includeHidden = false) {
  const { ref, selector, label, role, text } = target ?? {};
  if (ref) return { how: `ref ${quote(ref)}`, matches: [elementForRef(ref)], hidden: 0 };
  const needle = text ? norm(text) : null;
  let how;
  let found;
  if (selector) {
    how = `selector ${quote(selector)}`;
    found = bySelector(selector);
  } else if (label) {
    how = `label ${quote(label)}`;
    found = byLabel(norm(label));
  } else if (role) {
    how = `role "${role}"${text ? ` named ${quote(text)}` : ''}`;
    found = byRole(role, needle);
  } else if (text) {
    how = `text ${quote(text)}`;
    found = byText(needle);
  } else {
    throw toolError('INVALID_INPUT', 'The target names no element: give ref, selector, label, role or text.');
  }
  // Criteria the chosen strategy did not use narrow its matches.
  if (role && (selector || label)) {
    found = found.filter((el) => roleMatches(el, role));
    how += ` with role "${role}"`;
  }
  if (text && (selector || label)) {
    found = ranked(found.map((el) => [el, matchScore([textOf(el), ...labelsOf(el)], needle)]));
    how += ` and text ${quote(text)}`;
  }
  if (selector) return { how, matches: visibleFirst(found), hidden: 0 };
  const visible = found.filter(isShown);
  return { how, matches: includeHidden ? found : visible, hidden: found.length - visible.length };
}

// Bigram (Dice) similarity of two strings, 0..1: ranks the candidates an error message suggests.
function similarity(a, b) {
  const x = norm(a);
  const y = norm(b);
  if (!x || !y) return 0;
  if (x.length >= 3 && y.length >= 3 && (x.includes(y) || y.includes(x))) return 0.9;
  const grams = (s) => Array.from({ length: s.length - 1 }, (_, i) => s.slice(i, i + 2));
  const pool = grams(y);
  let shared = 0;
  for (const gram of grams(x)) {
    const at = pool.indexOf(gram);
    if (at >= 0) { shared++; pool.splice(at, 1); }
  }
  return (2 * shared) / Math.max(x.length + y.length - 2, 1);
}

// Visible controls and headings that look most like what was asked for (or simply the first few).
function closeCandidates(target, limit = 5) {
  const wanted = [target.label, target.text, target.role, target.selector?.replace(/[#.[\]="'>:]+/g, ' ')].filter(Boolean);
  const scored = [];
  for (const el of allElements()) {
    const role = roleOf(el);
    if (!INTERACTIVE_ROLES.has(role) && role !== 'heading') continue;
    if (!isVisible(el)) continue;
    const strings = [...labelsOf(el), textOf(el), el.id, role];
    const score = Math.max(...wanted.flatMap((w) => strings.map((s) => similarity(w, s))));
    scored.push([el, score]);
    if (scored.length > 2000) break; // enough to pick from on a huge page
  }
  const close = scored.filter(([, score]) => score >= 0.3).sort((a, b) => b[1] - a[1]);
  return (close.length ? close : scored).slice(0, limit).map(([el]) => el);
}

function notFound(target, how, hidden) {
  const candidates = closeCandidates(target);
  const hiddenNote = hidden ? ` ${hidden} hidden element(s) match; they may show after another action (waitFor them).` : '';
  const list = candidates.length ? ` Visible candidates: ${candidates.map(shortName).join('; ')}.` : ' The page shows no controls.';
  return toolError('TARGET_NOT_FOUND', `No ${target.selector || target.ref ? '' : 'visible '}element matches ${how}.${hiddenNote}${list} `
    + 'Target one of them by ref, or call findElements/readPage to see what the page has.');
}

// The one element a target means: {el, matches}. Throws TARGET_NOT_FOUND at once (no waiting).
function resolveTarget(target) {
  const { how, matches, hidden } = findCandidates(target);
  if (!matches.length) throw notFound(target, how, hidden);
  const index = target.index ?? 0;
  if (index >= matches.length) {
    throw toolError('TARGET_NOT_FOUND', `${how} has ${matches.length} match(es), so index ${index} is out of range (indexes start at 0).`);
  }
  return { el: matches[index], matches: matches.length };
}

// Scrolls the element into view and checks that a user could act on it.
function assertInteractable(el) {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (!isVisible(el)) {
    throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is hidden or has no size. It may appear after `
      + 'another action (open its menu or section, then waitFor it); readPage shows what is visible now.');
  }
  assertEnabled(el);
}

function assertEnabled(el) {
  if (!isEnabled(el)) {
    throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is disabled. Something else on the page probably `
      + 'has to be done first (a required field, a selection); readPage may show a hint.');
  }
}

// Notices a cross-document navigation that starts while it listens: {url, wait(ms, signal), stop()}.
// wait(ms) lets the page react to an action but returns as soon as it starts leaving, because the
// result has to be sent before the new document replaces this one. (Form submissions start their
// navigation a task later, so checking once right after the action is not enough.)
function watchNavigation() {
  let wake = () => {};
  const seen = { url: null };
  const leaving = (url) => { seen.url ??= url; wake(); };
  const onNavigate = (event) => { if (!event.destination.sameDocument) leaving(event.destination.url); };
  const onUnload = () => leaving('(unknown)');
  window.navigation?.addEventListener('navigate', onNavigate);
  window.addEventListener('beforeunload', onUnload);
  seen.wait = (ms, signal) => new Promise((resolve, reject) => {
    if (seen.url) return resolve();
    if (signal?.aborted) return reject(signal.reason);
    const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', abort); resolve(); };
    const abort = () => { clearTimeout(timer); reject(signal.reason); };
    const timer = setTimeout(done, ms);
    wake = done;
    signal?.addEventListener('abort', abort, { once: true });
  });
  seen.stop = () => {
    window.navigation?.removeEventListener('navigate', onNavigate);
    window.removeEventListener('beforeunload', onUnload);
  };
  return seen;
}

// What a reader should know after an action: where the page is, and any alert/status text it shows.
function pageState(navigation) {
  if (navigation.url) return { navigating: navigation.url, note: 'The page is loading a new document; call readPage once it has loaded.' };
  const messages = [...document.querySelectorAll('[role=alert], [role=status], [aria-live]:not([aria-live=off]), output')]
    .filter(isVisible).map((el) => clip(textOf(el), 300)).filter(Boolean).slice(0, 5);
  return { url: location.href, title: document.title, ...(messages.length ? { messages } : {}) };
}

function clickLikeAUser(el) {
  const box = el.getBoundingClientRect();
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  const init = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, button: 0, view: window };
  el.dispatchEvent(new PointerEvent('pointerdown', { ...init, pointerType: 'mouse', isPrimary: true, buttons: 1 }));
  el.dispatchEvent(new MouseEvent('mousedown', { ...init, buttons: 1 }));
  el.focus?.({ preventScroll: true });
  el.dispatchEvent(new PointerEvent('pointerup', { ...init, pointerType: 'mouse', isPrimary: true }));
  el.dispatchEvent(new MouseEvent('mouseup', init));
  // The click event, plus the element's default action (follow the link, toggle, submit); SVG has no click().
  if (el.click) el.click();
  else el.dispatchEvent(new MouseEvent('click', init));
}

// Something drawn over the element's centre (a modal, a cookie banner) would get a real user's click.
function coveringElement(el) {
  const box = el.getBoundingClientRect();
  const top = el.getRootNode().elementFromPoint?.(box.left + box.width / 2, box.top + box.height / 2);
  return top && top !== el && !el.contains(top) && !top.contains(el) && !(el.labels && [...el.labels].includes(top)) ? top : null;
}

function setNativeValue(el, value) {
  // The prototype's setter, not el.value =: frameworks that wrap the property on the element still notice.
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype
    : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, value);
}

// The events typing (data: the text) or choosing an option (no data) fires.
function fireInputEvents(el, data) {
  const input = data === undefined
    ? new Event('input', { bubbles: true, composed: true })
    : new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data });
  el.dispatchEvent(input);
  el.dispatchEvent(new Event('change', { bubbles: true }));
}

const FORMAT_HINTS = {
  date: 'YYYY-MM-DD', time: 'HH:MM (24-hour)', 'datetime-local': 'YYYY-MM-DDTHH:MM', month: 'YYYY-MM',
  week: 'YYYY-Www', number: 'a plain number like 42 or 3.5', range: 'a number within the range', color: '#rrggbb',
  email: 'an e-mail address',
};

// A text or label target often lands on the <label> around a field: act on its field.
const fieldOf = (el) => (el instanceof HTMLLabelElement && el.control ? el.control : el);
// What holds a value a user sets (not a button).
const isField = (el) => el.matches('select, textarea, input:not([type=hidden], [type=submit], [type=button], [type=reset], [type=image])');

function chooseOptions(select, wanted) {
  const options = [...select.options];
  const pick = (want) => {
    const needle = norm(want);
    return options.find((o) => o.value === String(want)) ?? options.find((o) => norm(o.label) === needle)
      ?? options.find((o) => norm(o.label).includes(needle));
  };
  const chosen = wanted.map((want) => {
    const option = pick(want);
    if (!option) {
      const available = options.slice(0, 20).map((o) => `${quote(o.label)} (value ${quote(o.value)})`).join(', ');
      throw toolError('TARGET_NOT_FOUND', `${shortName(select)} has no option ${quote(want)}. Its options: ${available}${options.length > 20 ? ', …' : ''}.`);
    }
    if (option.disabled) throw toolError('TARGET_NOT_INTERACTABLE', `Option ${quote(option.label)} of ${shortName(select)} is disabled.`);
    return option;
  });
  if (chosen.length > 1 && !select.multiple) {
    throw toolError('INVALID_INPUT', `${shortName(select)} takes one option; give a single value or label.`);
  }
  if (select.multiple) for (const option of options) option.selected = chosen.includes(option);
  else setNativeValue(select, chosen[0].value);
  fireInputEvents(select);
  return chosen.map((o) => ({ value: o.value, label: squash(o.label) }));
}

const TARGET_SCHEMA = {
  type: 'object',
  description: 'Which element. Best: ref from findElements/readPage. Otherwise selector (CSS), label (label text, '
    + 'aria-label, placeholder or name), role (button, link, textbox, checkbox, radio, combobox, heading, ...) with '
    + 'optional text, or visible text. index picks among several matches (0-based).',
  properties: {
    ref: { type: 'string', description: 'Handle from findElements, readPage or extract, e.g. "e12".' },
    selector: { type: 'string', description: 'CSS selector.' },
    label: { type: 'string', description: 'Label text, aria-label, placeholder or name of the element.' },
    role: { type: 'string', description: 'ARIA role, explicit or implicit (button, link, textbox, ...).' },
    text: { type: 'string', description: 'Visible text (exact match preferred, then contains; case-insensitive).' },
    index: { type: 'integer', minimum: 0, description: 'Which match to use when several match (0-based).' },
  },
  additionalProperties: false,
};

const TIMEOUT_SCHEMA = {
  type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_MS, default: DEFAULT_TIMEOUT_MS, description: 'Longest wait in milliseconds.',
};

// @webmcp-nb fragment readPage
function fieldInfo(el) {
  const info = { ref: refFor(el), label: labelsOf(el)[0], name: el.name || undefined, type: el.type, required: el.required || undefined };
  if (el.disabled) info.disabled = true;
  if (el.type === 'checkbox' || el.type === 'radio') {
    info.value = el.value;
    info.checked = el.checked;
  } else if (el.type === 'password') {
    info.filled = el.value !== '';
  } else {
    info.value = clip(el.value, 200);
  }
  if (el.localName === 'select') {
    info.options = [...el.options].slice(0, 50).map((o) => ({ value: o.value, label: squash(o.label), ...(o.selected ? { selected: true } : {}) }));
    if (el.options.length > 50) info.optionCount = el.options.length;
  }
  return info;
}

defineTool({
  name: 'readPage',
  title: 'Read the page',
  description: 'Read the current page: title, URL, visible text (up to maxChars), links, headings, and every form '
    + 'with its fields (label, name, type, required, current value, select options, and a ref to target it). '
    + 'What to read first on a new page, and again after actions that change the page.',
  inputSchema: {
    type: 'object',
    properties: {
      maxChars: { type: 'integer', minimum: 200, maximum: 100000, default: 8000, description: 'Most characters of page text to return.' },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, untrustedContentHint: true },
}, async ({ maxChars = 8000 }) => {
  const body = document.body ?? document.documentElement;
  const lines = (body.innerText ?? '').split('\n').map(squash).filter(Boolean);
  const fullText = lines.join('\n');
  const links = [...document.querySelectorAll('a[href]')].filter(isVisible);
  const forms = [...document.forms].map((form, index) => ({
    index,
    id: form.id || undefined,
    name: form.getAttribute('name') ?? undefined,
    label: labelsOf(form)[0],
    action: form.action,
    method: form.method,
    ref: refFor(form),
    visible: isVisible(form),
    fields: [...form.elements].filter(isField).map(fieldInfo),
  }));
  const loose = [...document.querySelectorAll('input, select, textarea')].filter((el) => !el.form && isField(el) && isVisible(el));
  return {
    title: document.title,
    url: location.href,
    text: fullText.slice(0, maxChars),
    truncated: fullText.length > maxChars,
    headings: [...allElements()].filter((el) => roleOf(el) === 'heading' && isVisible(el)).slice(0, 50)
      .map((el) => ({ level: Number(el.getAttribute('aria-level') ?? el.localName.slice(1)) || undefined, text: clip(textOf(el), 120) })),
    links: links.slice(0, 50).map((a) => ({ text: clip(textOf(a) || labelsOf(a)[0] || '', 80), href: a.href, ref: refFor(a) })),
    linkCount: links.length,
    forms,
    ...(loose.length ? { fieldsOutsideForms: loose.slice(0, 50).map(fieldInfo) } : {}),
  };
});

// @webmcp-nb fragment findElements
defineTool({
  name: 'findElements',
  title: 'Find elements',
  description: 'Find elements by text, role, label or CSS selector (combine them to narrow). Returns matches best '
    + 'first with a ref for each (use it as target {ref} in click, fill, ...), plus tag, role, text, label, visible, '
    + 'enabled and a CSS selector hint. With no criteria, lists the visible controls (buttons, links, fields).',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'Visible text, exact or contained (case-insensitive).' },
      role: { type: 'string', description: 'ARIA role, explicit or implicit: button, link, textbox, checkbox, radio, combobox, heading, listitem, ...' },
      label: { type: 'string', description: 'Label text, aria-label, placeholder or name.' },
      selector: { type: 'string', description: 'CSS selector (hidden matches are included, marked visible: false).' },
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 20 },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, untrustedContentHint: true },
}, async ({ text, role, label, selector, limit = 20 }) => {
  let how;
  let matches;
  if (text || role || label || selector) {
    ({ how, matches } = findCandidates({ text, role, label, selector }));
  } else {
    how = 'visible controls';
    matches = [...allElements()].filter((el) => INTERACTIVE_ROLES.has(roleOf(el)) && isVisible(el));
  }
  const result = { query: how, matches: matches.length, elements: matches.slice(0, limit).map(describe) };
  if (!matches.length) result.closest = closeCandidates({ text, role, label, selector }).map(describe);
  return result;
});

// @webmcp-nb fragment click
defineTool({
  name: 'click',
  title: 'Click',
  description: 'Click an element as a user would (pointer and mouse events, then click). Returns the element, '
    + 'how many elements matched, and the URL afterwards, or navigating: URL when a new page starts loading. '
    + 'warning is set when something covers the element (a dialog or banner to deal with first).',
  inputSchema: { type: 'object', properties: { target: TARGET_SCHEMA }, required: ['target'], additionalProperties: false },
  annotations: { readOnlyHint: false },
}, async ({ target }, { signal }) => {
  const { el, matches } = resolveTarget(target);
  const clickable = isVisible(el) ? el : (visibleLabel(el) ?? el);
  assertInteractable(clickable);
  assertEnabled(el);
  const covering = coveringElement(clickable);
  const clicked = describe(el);
  const navigation = watchNavigation();
  try {
    clickLikeAUser(clickable);
    await navigation.wait(CLICK_SETTLE_MS, signal);
    return {
      clicked, matches, ...pageState(navigation),
      ...(covering ? { warning: `${shortName(covering)} covers this element; a real user would have clicked that instead.` } : {}),
    };
  } finally {
    navigation.stop();
  }
});

// @webmcp-nb fragment fill
defineTool({
  name: 'fill',
  title: 'Fill a field',
  description: 'Replace the value of a text field, textarea or contenteditable (a select element gets the matching option), '
    + 'firing input and change events like typing would. It never submits: to send the form (or run a search box), '
    + 'call submitForm with the same target next. Use check for checkboxes and radios. Dates are YYYY-MM-DD, times HH:MM.',
  inputSchema: {
    type: 'object',
    properties: {
      target: TARGET_SCHEMA,
      value: { type: ['string', 'number'], description: 'The new value (replaces what is there).' },
    },
    required: ['target', 'value'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ target, value }) => {
  const { el: found, matches } = resolveTarget(target);
  const el = fieldOf(found);
  assertInteractable(el);
  const text = String(value);
  let result;
  if (el instanceof HTMLSelectElement) {
    result = { filled: describe(el), selected: chooseOptions(el, [text]) };
  } else if (el.isContentEditable) {
    el.focus();
    document.getSelection().selectAllChildren(el);
    // insertText goes through the editor's own input handling; a plain textContent write is the fallback.
    if (!document.execCommand('insertText', false, text) || squash(el.innerText) !== squash(text)) {
      el.textContent = text;
      fireInputEvents(el, text);
    }
    result = { filled: describe(el) };
  } else if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    if (el.type === 'checkbox' || el.type === 'radio') {
      throw toolError('INVALID_INPUT', `${shortName(el)} is a ${el.type}: use check (checked: true/false) instead of fill.`);
    }
    if (el.type === 'file') throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is a file input; pages cannot be given files by these tools.`);
    if (el.readOnly) throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is read-only; it is probably set by another control (a picker or a button).`);
    el.focus();
    setNativeValue(el, text);
    fireInputEvents(el, text);
    if (text !== '' && el.value === '') {
      throw toolError('INVALID_INPUT', `${shortName(el)} (type ${el.type}) refused ${quote(text)}`
        + `${FORMAT_HINTS[el.type] ? `: it takes ${FORMAT_HINTS[el.type]}` : ''}.`);
    }
    result = { filled: describe(el) };
  } else {
    throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is not a field one can type into. `
      + 'Target the <input>/<textarea> itself, e.g. findElements with role "textbox".');
  }
  result.matches = matches;
  return result;
});

// @webmcp-nb fragment select
defineTool({
  name: 'select',
  title: 'Choose an option',
  description: 'Choose an option of a select element by value or by visible label (exact, then contains). For a '
    + 'select element with multiple, pass an array. Custom dropdowns (role combobox/listbox on a div) are not select '
    + 'elements: click them open, then click the option.',
  inputSchema: {
    type: 'object',
    properties: {
      target: TARGET_SCHEMA,
      value: { type: ['string', 'array'], items: { type: 'string' }, description: "The option's value attribute." },
      label: { type: ['string', 'array'], items: { type: 'string' }, description: "The option's visible text." },
    },
    required: ['target'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ target, value, label }) => {
  if (value === undefined && label === undefined) throw toolError('INVALID_INPUT', 'Give value or label: which option to choose.');
  const { el: found, matches } = resolveTarget(target);
  const el = fieldOf(found);
  assertInteractable(el);
  if (!(el instanceof HTMLSelectElement)) {
    throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is not a <select>. If it is a custom dropdown, click it `
      + 'to open it, then click the option (findElements with role "option" or its text).');
  }
  return { selected: chooseOptions(el, [].concat(value ?? label)), target: describe(el), matches };
});

// @webmcp-nb fragment check
// The checkbox/radio a target stands for: itself, the control of a <label>, or the only one inside it.
function toggleOf(el) {
  if (el.matches('input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch]')) return el;
  if (el instanceof HTMLLabelElement && el.control) return el.control;
  const inside = el.querySelectorAll('input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch]');
  if (inside.length === 1) return inside[0];
  throw toolError('TARGET_NOT_INTERACTABLE', `${shortName(el)} is not a checkbox, radio button or switch. `
    + 'Target the box itself or its label (findElements with role "checkbox" or "radio").');
}

const isChecked = (box) => (box instanceof HTMLInputElement ? box.checked : box.getAttribute('aria-checked') === 'true');

defineTool({
  name: 'check',
  title: 'Check or uncheck',
  description: 'Set a checkbox, switch or radio button to checked (default) or unchecked by clicking it (or its '
    + 'label when the box itself is hidden by custom styling). Does nothing when it already is.',
  inputSchema: {
    type: 'object',
    properties: { target: TARGET_SCHEMA, checked: { type: 'boolean', default: true } },
    required: ['target'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ target, checked = true }) => {
  const { el, matches } = resolveTarget(target);
  const box = toggleOf(el);
  if (isChecked(box) === checked) return { target: describe(box), checked, changed: false, matches };
  if (!checked && roleOf(box) === 'radio') {
    throw toolError('INVALID_INPUT', `${shortName(box)} is a radio button: it cannot be unchecked; check another option of its group.`);
  }
  const clickable = isVisible(box) ? box : (visibleLabel(box) ?? box);
  assertInteractable(clickable);
  assertEnabled(box);
  clickLikeAUser(clickable);
  const now = isChecked(box);
  return {
    target: describe(box), checked: now, changed: now === checked, matches,
    ...(now !== checked ? { note: 'The page undid the click (its script keeps the old state); look for what it requires first.' } : {}),
  };
});

// @webmcp-nb fragment scroll
defineTool({
  name: 'scroll',
  title: 'Scroll',
  description: 'Scroll: with only target, bring that element into view; with direction (and optional amount in '
    + 'pixels, default most of a screen), scroll the page, or the target if it is a scrollable box. Returns where '
    + 'the page is and whether it is at the top/bottom.',
  inputSchema: {
    type: 'object',
    properties: {
      target: TARGET_SCHEMA,
      direction: { type: 'string', enum: ['up', 'down'] },
      amount: { type: 'integer', minimum: 1, description: 'Pixels (default: 80% of the viewport or box height).' },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ target, direction, amount }) => {
  if (!target && !direction) throw toolError('INVALID_INPUT', 'Give target (scroll it into view) or direction (up/down).');
  const el = target ? resolveTarget(target).el : null;
  if (el && !direction) {
    el.scrollIntoView({ block: 'center', behavior: 'instant' });
    return { scrolledTo: describe(el), scrollY: Math.round(window.scrollY) };
  }
  const box = el ?? document.scrollingElement ?? document.documentElement;
  const step = (amount ?? Math.round(0.8 * (el ? el.clientHeight : window.innerHeight))) * (direction === 'up' ? -1 : 1);
  box.scrollBy({ top: step, behavior: 'instant' });
  return {
    ...(el ? { scrolled: describe(el) } : {}),
    scrollY: Math.round(box.scrollTop),
    scrollHeight: box.scrollHeight,
    viewportHeight: el ? el.clientHeight : window.innerHeight,
    atTop: box.scrollTop <= 0,
    atBottom: Math.ceil(box.scrollTop + (el ? el.clientHeight : window.innerHeight)) >= box.scrollHeight,
  };
});

// @webmcp-nb fragment waitFor
function describeTarget(target) {
  const { ref, selector, label, role, text } = target;
  if (ref) return `ref ${quote(ref)}`;
  if (selector) return `selector ${quote(selector)}`;
  if (label) return `the element labelled ${quote(label)}`;
  if (role) return `a ${role}${text ? ` named ${quote(text)}` : ''}`;
  return `text ${quote(text ?? '')}`;
}

defineTool({
  name: 'waitFor',
  title: 'Wait for an element or text',
  description: 'Wait until a target (optionally containing text), or text anywhere on the page, is visible '
    + '(default), hidden (or gone), or attached (present, maybe hidden). Checks every 100 ms; fails with TIMEOUT '
    + 'after timeoutMs (default 5000, max 30000). Use it after actions whose effect takes time.',
  inputSchema: {
    type: 'object',
    properties: {
      target: TARGET_SCHEMA,
      text: { type: 'string', description: 'Text to wait for (case-insensitive); with target, inside that element.' },
      state: { type: 'string', enum: ['visible', 'hidden', 'attached'], default: 'visible' },
      timeoutMs: TIMEOUT_SCHEMA,
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
}, async ({ target, text, state = 'visible', timeoutMs }, { signal }) => {
  if (!target && !text) throw toolError('INVALID_INPUT', 'Give target or text: what to wait for.');
  const limit = boundedTimeout(timeoutMs);
  const needle = text ? norm(text) : null;
  const what = target ? `${describeTarget(target)}${text ? ` containing ${quote(text)}` : ''}` : `text ${quote(text)}`;

  // Returns the element (or true) once the state holds, else null.
  const probe = () => {
    if (!target) {
      const body = document.body ?? document.documentElement;
      const present = norm(state === 'attached' ? body.textContent : body.innerText).includes(needle);
      return (state === 'hidden' ? !present : present) || null;
    }
    let found;
    try {
      found = findCandidates(target, true).matches;
    } catch (error) {
      if (error.code !== 'TARGET_NOT_FOUND') throw error; // a ref whose element is gone: nothing is there
      found = [];
    }
    if (needle) found = found.filter((el) => norm(el.textContent).includes(needle));
    const visible = found.filter(isVisible);
    if (state === 'hidden') return visible.length ? null : true;
    return (state === 'attached' ? found : visible)[0] ?? null;
  };

  const started = performance.now();
  for (;;) {
    const found = probe();
    const waitedMs = Math.round(performance.now() - started);
    if (found) return { state, waitedMs, ...(found instanceof Element ? { element: describe(found) } : {}) };
    if (waitedMs >= limit) {
      throw toolError('TIMEOUT', `After ${limit} ms, ${what} is still not ${state}. Check the page with readPage; `
        + 'the action before may have failed, or the page shows something else (an error, another wording).');
    }
    await sleep(Math.min(POLL_MS, limit - waitedMs), signal);
  }
});

// @webmcp-nb fragment extract
// Table rows as objects keyed by the header cells (colspan repeats a cell; rowspan is not expanded).
function tableRecords(table) {
  const cellTexts = (row) => [...row.cells].flatMap((cell) => Array(cell.colSpan || 1).fill(squash(cell.innerText)));
  const rows = [...table.rows];
  const headerRow = table.tHead?.rows[table.tHead.rows.length - 1]
    ?? (rows[0] && [...rows[0].cells].every((cell) => cell.localName === 'th') ? rows[0] : null);
  const headers = [];
  for (const [i, text] of (headerRow ? cellTexts(headerRow) : []).entries()) {
    let key = text || `column${i + 1}`;
    for (let n = 2; headers.includes(key); n++) key = `${text || `column${i + 1}`}_${n}`;
    headers.push(key);
  }
  const bodyRows = rows.filter((row) => row !== headerRow && row.parentElement !== table.tHead && row.cells.length && isVisible(row));
  const records = bodyRows.map((row) => Object.fromEntries(cellTexts(row).map((text, i) => [headers[i] ?? `column${i + 1}`, text])));
  return { headers, records };
}

// "tag product-category" → "product-category": the longest class is usually the one naming the field.
const mostSpecificClass = (el) => [...el.classList].reduce((a, b) => (b.length > a.length ? b : a));
const camel = (name) => name.replace(/[-_\s]+([a-zA-Z0-9])/g, (_, c) => c.toUpperCase()).replace(/^[^a-zA-Z]+/, '');

// One repeated item (list item, card, row) as {text, ref, fields…}: the element's data-* attributes, and for
// each descendant with a class that has no classed descendants of its own, its text under the camelCased
// first class name (and its data-* attributes). The first value for a name wins.
function itemRecord(item) {
  const record = { text: clip(squash(item.innerText), 300), ref: refFor(item) };
  const add = (key, value) => { if (key && !(key in record) && value !== '') record[key] = value; };
  for (const [key, value] of Object.entries(item.dataset)) add(key, value);
  for (const el of item.querySelectorAll('*')) {
    if (!isVisible(el)) continue;
    if (el.classList.length && !el.querySelector('[class]')) add(camel(mostSpecificClass(el)), clip(textOf(el), 200));
    for (const [key, value] of Object.entries(el.dataset ?? {})) add(key, value);
  }
  const link = item.closest('a[href]') ?? item.querySelector('a[href]');
  if (link) add('href', link.href);
  return record;
}

// The biggest group of visible children of el that share tag and classes (the cards of a grid, the <li>s).
function repeatedChildren(el) {
  const groups = new Map();
  for (const child of el.children) {
    if (SKIPPED_TAGS.has(child.localName) || !isVisible(child)) continue;
    const key = `${child.localName}.${[...child.classList].sort().join('.')}`;
    groups.set(key, [...(groups.get(key) ?? []), child]);
  }
  return [...groups.values()].sort((a, b) => b.length - a.length)[0] ?? [];
}

// The repeated group under root that holds the most text: the page's main list. A group is two or more
// like children, or the items of a <ul>/<ol> (a filtered list may show one); form controls are not one.
function bestRepeatedGroup(root) {
  let best = null;
  let bestScore = 0;
  for (const el of allElements(root)) {
    if (!el.children.length || el.matches('tr, thead, tbody, tfoot, select, datalist, form, form *')) continue;
    const items = repeatedChildren(el);
    if (items.length < (el.matches('ul, ol') ? 1 : 2)) continue;
    const score = items.reduce((sum, item) => sum + Math.min(item.textContent.length, 300), 0);
    if (score > bestScore) [best, bestScore] = [{ container: el, items }, score];
  }
  return best;
}

function largestTable(root) {
  const tables = [...root.querySelectorAll('table')].filter(isVisible);
  return tables.sort((a, b) => b.rows.length - a.rows.length)[0] ?? null;
}

// What to extract: {table} or {container, items}, from a selector, a target or the whole page.
function extractionSource(target, selector, kind) {
  if (selector && !target) {
    const matches = bySelector(selector);
    if (!matches.length) throw notFound({ selector }, `selector ${quote(selector)}`, 0);
    if (matches.length > 1 && kind !== 'table') {
      const visible = matches.filter(isVisible); // several matches: they are the items
      return { container: null, items: visible.length ? visible : matches };
    }
    target = { selector };
  }
  const root = target ? resolveTarget(target).el : document.body;
  const ownTable = root instanceof HTMLTableElement ? root : root.matches('tr, td, th, thead, tbody, tfoot, caption') ? root.closest('table') : null;
  const table = ownTable ?? largestTable(root);
  if (kind === 'table') {
    if (table) return { table };
    throw toolError('TARGET_NOT_FOUND', `No visible <table> ${target ? `in ${shortName(root)}` : 'on the page'}. `
      + 'Use kind "list" (or "auto") for lists and cards.');
  }
  if (kind === 'auto' && ownTable) return { table: ownTable };
  // A target that is itself a list (or a grid of like children) is the container; else search inside it.
  if (root.matches('ul, ol') || (target && repeatedChildren(root).length >= 2)) {
    return { container: root, items: root.matches('ul, ol') ? [...root.children].filter(isVisible) : repeatedChildren(root) };
  }
  const group = bestRepeatedGroup(root);
  if (kind === 'auto' && table && (!group || table.rows.length >= group.items.length)) return { table };
  if (group) return group;
  if (target) return { container: null, items: [root] };
  throw toolError('TARGET_NOT_FOUND', 'Found no table or repeated items (list items, cards) on the page. '
    + 'Give target or selector for the container, or read the page with readPage.');
}

defineTool({
  name: 'extract',
  title: 'Extract records',
  description: 'Extract structured records. A table becomes objects keyed by its header cells; a list or grid '
    + 'of cards becomes {text, ref, fields…} per item, fields named after class names and data-* attributes. Give '
    + 'selector matching the items (".product-card") or the container, or target; without either, the page\'s '
    + 'largest table or repeated list. kind: auto (default), table or list.',
  inputSchema: {
    type: 'object',
    properties: {
      target: TARGET_SCHEMA,
      selector: { type: 'string', description: 'CSS selector of the items (several matches) or of their container (one).' },
      kind: { type: 'string', enum: ['auto', 'table', 'list'], default: 'auto' },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, untrustedContentHint: true },
}, async ({ target, selector, kind = 'auto', limit = 50 }) => {
  const source = extractionSource(target, selector, kind);
  if (source.table) {
    const { headers, records } = tableRecords(source.table);
    return { kind: 'table', source: selectorHint(source.table), headers, count: records.length, truncated: records.length > limit, records: records.slice(0, limit) };
  }
  const { container, items } = source;
  return {
    kind: 'list',
    source: container ? selectorHint(container) : selector ?? selectorHint(items[0]),
    count: items.length,
    truncated: items.length > limit,
    records: items.slice(0, limit).map(itemRecord),
  };
});

// @webmcp-nb fragment submitForm
// requestSubmit (validation and the page's submit handlers run as for a user), then report what happened.
async function submit(form, submitter, signal) {
  if (!form.noValidate && !submitter?.formNoValidate && !form.checkValidity()) {
    const problems = [...form.elements].filter((f) => f.willValidate && !f.checkValidity())
      .map((f) => `${labelsOf(f)[0] ?? f.name ?? f.localName} (ref ${refFor(f)}): ${f.validationMessage}`);
    throw toolError('INVALID_INPUT', `The form was not submitted; the page's validation refused: ${problems.join('; ')}. `
      + 'Fill or fix those fields, then submit again.');
  }
  const navigation = watchNavigation();
  try {
    form.requestSubmit(submitter);
    await navigation.wait(SUBMIT_SETTLE_MS, signal);
    const state = pageState(navigation);
    if (!state.navigating) state.note = 'The page handled the submit without loading a new document; read the result with readPage or waitFor.';
    return { submitted: true, ...state };
  } finally {
    navigation.stop();
  }
}

// Enter in a field: the key events scripts listen for. (Synthetic keys never trigger the browser's own
// implicit submission, which is why fields in a <form> are submitted with requestSubmit instead.)
function pressEnter(el) {
  for (const type of ['keydown', 'keypress', 'keyup']) {
    el.dispatchEvent(new KeyboardEvent(type, { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true }));
  }
}

// A field in no form (a search box the page's script runs) is submitted as a user would: Enter in it.
async function pressEnterIn(el, signal) {
  if (!isField(el) && !el.isContentEditable) {
    throw toolError('TARGET_NOT_FOUND', `${shortName(el)} is not in a <form>, nor a field to press Enter in. Click the `
      + 'page\'s own submit or search button instead (findElements with role "button").');
  }
  assertInteractable(el);
  const navigation = watchNavigation();
  try {
    el.focus();
    pressEnter(el);
    await navigation.wait(SUBMIT_SETTLE_MS, signal);
    const state = pageState(navigation);
    if (!state.navigating) state.note = 'Enter was pressed in the field (it is in no form); read the result with readPage or waitFor.';
    return { pressedEnter: describe(el), ...state };
  } finally {
    navigation.stop();
  }
}

defineTool({
  name: 'submitForm',
  title: 'Submit a form',
  description: 'Submit a form as its submit button would (the page\'s validation and submit handlers run). fill, '
    + 'select and check never submit: call this after them. target: the form, a field in it, or the submit button to '
    + 'use; a field in no form (a search box run by script) gets Enter pressed in it. Returns navigating: URL when a '
    + 'new page loads, else the URL, title and any alert/status messages. Fails with INVALID_INPUT listing the fields '
    + 'the page\'s validation refused.',
  inputSchema: { type: 'object', properties: { target: TARGET_SCHEMA }, required: ['target'], additionalProperties: false },
  annotations: { readOnlyHint: false },
  risk: 'high', // a submitted form (or Enter in a search box) may send, pay or publish: agents always ask first
}, async ({ target }, { signal }) => {
  const el = fieldOf(resolveTarget(target).el);
  const form = el instanceof HTMLFormElement ? el : (el.form ?? el.closest('form'));
  if (!form) return pressEnterIn(el, signal);
  const submitter = el.matches('button[type=submit], button:not([type]), input[type=submit], input[type=image]') && el.form === form ? el : undefined;
  if (submitter) assertInteractable(submitter);
  return { form: { ref: refFor(form), id: form.id || undefined, action: form.action }, ...(await submit(form, submitter, signal)) };
});

// @webmcp-nb fragment navigate
defineTool({
  name: 'navigate',
  title: 'Go to a URL',
  description: 'Load a URL (absolute, or relative to this page) in this tab. Returns {navigating: url} at once; the '
    + 'page then loads. Tools injected by hand may need to be injected again on the new page. Only http(s) URLs '
    + '(and about:blank).',
  inputSchema: {
    type: 'object',
    properties: { url: { type: 'string', description: 'http(s) URL, or a path relative to the current page.' } },
    required: ['url'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ url }) => {
  let destination;
  try {
    destination = new URL(url, location.href);
  } catch {
    throw toolError('INVALID_INPUT', `${quote(url)} is not a URL.`);
  }
  // A model steered by a page must not open file:, data:, chrome: or javascript: URLs (issue 20): http(s) and
  // about:blank only, unless the skill is configured with allowFileUrls (then file: too).
  const allowed = ['http:', 'https:', ...(config?.allowFileUrls === true ? ['file:'] : [])];
  if (!allowed.includes(destination.protocol) && destination.href !== 'about:blank') {
    throw toolError('PERMISSION_DENIED', `${destination.protocol} URLs are not opened: only http, https and about:blank`
      + (allowed.includes('file:') ? ' and file:' : ' (file: too with this skill configured allowFileUrls: true)') + '.');
  }
  setTimeout(() => location.assign(destination.href), NAVIGATION_DELAY_MS); // after this call has answered
  return { navigating: destination.href };
});

// @webmcp-nb fragment back
defineTool({
  name: 'back',
  title: 'Go back',
  description: 'Go back one page in this tab\'s history, like the Back button. Returns {navigating: url} at once.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: false },
}, async () => {
  const { navigation } = window;
  if (navigation && !navigation.canGoBack) throw toolError('INVALID_INPUT', 'This tab has no earlier page to go back to.');
  const previous = navigation?.entries()[navigation.currentEntry.index - 1]?.url ?? 'the previous page';
  setTimeout(() => window.history.back(), NAVIGATION_DELAY_MS); // after this call has answered
  return { navigating: previous };
});
