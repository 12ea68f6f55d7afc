// A reusable search skill, configured by selectors (see SKILL.md):
//   config.input       the search box
//   config.submit      a button to click to search (null: submit the box's form, or press Enter)
//   config.results     one element per result (null: search only submits; readResults is unavailable)
//   config.resultText  where a result's text is, inside each result (null: the whole result)
//   config.settleMs    how long the results must stay unchanged before they count as loaded

// @webmcp-nb fragment helpers
const DEFAULT_TIMEOUT_MS = 5000;
const MAX_TIMEOUT_MS = 30000;
const POLL_MS = 50;
const settleMs = Number(config.settleMs ?? 300);

const squash = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();

function toolError(code, message) {
  return Object.assign(new Error(message), { code });
}

// querySelector that turns a bad selector into a message about the config key that holds it.
function query(key, all = false, root = document) {
  try {
    return all ? [...root.querySelectorAll(config[key])] : root.querySelector(config[key]);
  } catch {
    throw toolError('INVALID_INPUT', `config.${key} ${JSON.stringify(config[key])} is not a valid CSS selector; `
      + `fix it with skill.configure(${key}="...") and inject the skill again.`);
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal?.removeEventListener('abort', abort); resolve(); }, ms);
    function abort() { clearTimeout(timer); reject(signal.reason); }
    signal?.addEventListener('abort', abort, { once: true });
  });
}

const isVisible = (el) => el.getClientRects().length > 0 && el.checkVisibility({ visibilityProperty: true });

function resultElements() {
  if (!config.results) {
    throw toolError('INVALID_INPUT', 'This skill does not know where the results are: config.results is not set. '
      + 'Configure it from Python, e.g. skill.configure(results=".result"), and inject the skill again.');
  }
  return query('results', true).filter(isVisible);
}

// A result as {text, href?}: the text at config.resultText inside it (or all of it), and its link if any.
function resultRecord(el) {
  const textEl = config.resultText ? (query('resultText', false, el) ?? el) : el;
  const link = el.closest('a[href]') ?? el.querySelector('a[href]');
  return { text: squash(textEl.innerText), ...(link ? { href: link.href } : {}) };
}

function readResults(limit) {
  const elements = resultElements();
  return { count: elements.length, truncated: elements.length > limit, results: elements.slice(0, limit).map(resultRecord) };
}

// Does this mutation add, remove or change a result element?
function touchesResults(record) {
  const isResult = (node) => node.nodeType === Node.ELEMENT_NODE && (node.matches(config.results) || node.querySelector(config.results));
  const target = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
  return !!target?.closest(config.results) || [...record.addedNodes, ...record.removedNodes].some(isResult);
}

function typeInto(input, text) {
  input.focus();
  // The prototype's setter, so frameworks that wrap the element's value property notice the change.
  const proto = input instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(input, text);
  input.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

// Starts the search the way this page expects it; returns how, for the result.
function submitSearch(input) {
  if (config.submit) {
    const button = query('submit');
    if (!button) {
      throw toolError('TARGET_NOT_FOUND', `config.submit ${JSON.stringify(config.submit)} matches no element, so the search `
        + 'could not be started (the query was typed). Fix it with skill.configure(submit=...), or set submit=None to use Enter.');
    }
    if (button.disabled) throw toolError('TARGET_NOT_INTERACTABLE', `The search button (${config.submit}) is disabled.`);
    button.click();
    return `clicked ${config.submit}`;
  }
  if (input.form) {
    input.form.requestSubmit();
    return 'submitted the form';
  }
  // Synthetic keys reach the page's key handlers but never trigger the browser's own form submission.
  for (const type of ['keydown', 'keypress', 'keyup']) {
    input.dispatchEvent(new KeyboardEvent(type, { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true }));
  }
  return 'pressed Enter';
}

// @webmcp-nb fragment health-check
healthCheck(() => {
  for (const key of ['submit', 'results', 'resultText']) {
    if (config[key]) query(key); // throws (and so fails the check) on a selector that is not valid CSS
  }
  if (!config.input) return 'config.input is empty: set the search box selector with skill.configure(input="...")';
  if (!query('input')) {
    return `config.input ${JSON.stringify(config.input)} matches no element on this page; set the search box selector `
      + 'with skill.configure(input="...") and inject again';
  }
  return true;
});

// @webmcp-nb fragment search
defineTool({
  name: 'search',
  title: 'Search',
  description: 'Type a query into the page\'s search box, start the search, wait until the results have changed '
    + 'and settled (at most timeoutMs), and return them as {text, href?} records. If the page loads a new '
    + 'document for the results, returns navigating: URL instead; call readResults there.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What to search for.' },
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 20, description: 'Most results to return.' },
      timeoutMs: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_MS, default: DEFAULT_TIMEOUT_MS, description: 'Longest wait for the results.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false, untrustedContentHint: true },
}, async ({ query: text, limit = 20, timeoutMs = DEFAULT_TIMEOUT_MS }, { signal }) => {
  const input = query('input');
  if (!input) throw toolError('TARGET_NOT_FOUND', `The search box (config.input ${JSON.stringify(config.input)}) is no longer on the page.`);
  if (input.disabled || input.readOnly) throw toolError('TARGET_NOT_INTERACTABLE', `The search box (${config.input}) is disabled or read-only.`);

  // Watch before typing: many pages already update their results on "input".
  let changedAt = null;
  const observer = config.results && new MutationObserver((records) => {
    if (records.some(touchesResults)) changedAt = performance.now();
  });
  observer?.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  // A search that loads a new document: answer at once, before that document replaces this one (a form
  // submission starts its navigation a task after requestSubmit, so the wait below must wake for it).
  let leavingTo = null;
  let wake = () => {};
  const leaving = new Promise((resolve) => { wake = resolve; });
  const onNavigate = (event) => { if (!event.destination.sameDocument) { leavingTo = event.destination.url; wake(); } };
  window.navigation?.addEventListener('navigate', onNavigate);

  const started = performance.now();
  const limitMs = Math.min(Math.max(timeoutMs, 0), MAX_TIMEOUT_MS);
  try {
    typeInto(input, text);
    const how = submitSearch(input);
    // Done when the results changed and then stayed still for settleMs, when the page leaves, or at the limit.
    while (!leavingTo && config.results) {
      const now = performance.now();
      if (changedAt !== null && now - changedAt >= settleMs) break;
      if (now - started >= limitMs) break;
      await Promise.race([sleep(POLL_MS, signal), leaving]);
    }
    const waitedMs = Math.round(performance.now() - started);
    if (leavingTo) return { query: text, how, navigating: leavingTo, note: 'The results are on a new page; call readResults once it has loaded.' };
    if (!config.results) return { query: text, how, note: 'config.results is not set, so the results cannot be read; configure it to get them.' };
    const changed = changedAt !== null;
    return {
      query: text, how, changed, waitedMs, ...readResults(limit),
      ...(changed ? {} : { note: `The results did not change within ${limitMs} ms: the same query as before, a slow page, or config.results does not match its results.` }),
    };
  } finally {
    observer?.disconnect();
    window.navigation?.removeEventListener('navigate', onNavigate);
  }
});

// @webmcp-nb fragment readResults
defineTool({
  name: 'readResults',
  title: 'Read the results',
  description: 'The search results the page shows now, as {text, href?} records, without searching.',
  inputSchema: {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 20, description: 'Most results to return.' } },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, untrustedContentHint: true },
}, async ({ limit = 20 }) => ({ query: query('input')?.value, ...readResults(limit) }));
