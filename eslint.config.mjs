// ESLint for the extension and the skills that ship with it: `npm run lint`. Each file is checked as what it is
// where it runs, so a name that does not exist there is an error: a module of the service worker, a module of an
// extension page, a pure module (also run by Node in the tests), a classic script in a page's MAIN or ISOLATED
// world, or code in the USER_SCRIPT world. A folder that is one context (worker/, page/main/, page/isolated/,
// page/user-script/, sidepanel/, options/, shared/) is named whole; chat/ holds pure modules and page modules, so
// its files are named one by one. A file in none of the groups below gets no globals at all, so a new file fails
// until it is put where it belongs.
import js from '@eslint/js';
import globals from 'globals';

const chrome = { chrome: 'readonly' };

// The service worker (background.service_worker in manifest.json, an ES module) and what it imports.
// (The options page imports pairing.js too: it uses only chrome.runtime, chrome.storage and navigator, which both
// contexts have.)
const WORKER = ['extension/worker/*.js'];
// Pure modules: data and functions, no I/O. The worker or the pages import them, and Node runs them in tests.
// They get only what Node and browsers share (URL, structuredClone, …), never `chrome` or the DOM.
const PURE = ['extension/shared/*.js', 'extension/chat/agent-rules.js', 'extension/chat/agent-core.js'];
// Extension pages (the side panel, the options page) and the modules only they import.
const PAGES = [
  'extension/sidepanel/*.js', 'extension/options/*.js', 'extension/chat/chat-loop.js', 'extension/chat/model-io.js',
];
// Classic scripts the manifest declares in the page's MAIN world: no extension API there. (bridge-serialize.js is
// also injected before skill-runtime.js in the USER_SCRIPT world; what passes here passes there.)
const MAIN_WORLD = ['extension/page/main/*.js'];

export default [
  js.configs.recommended,
  {
    files: ['extension/**/*.js', 'skills/**/*.js'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: {} },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A name read before its declaration in the same scope (a closure that runs later may use it).
      'no-use-before-define': ['error', { functions: false, classes: false, variables: false }],
      'no-self-compare': 'error',
      'no-template-curly-in-string': 'error',
      'no-unreachable-loop': 'error',
    },
  },
  { files: WORKER, languageOptions: { globals: { ...globals.serviceworker, ...chrome } } },
  { files: PAGES, languageOptions: { globals: { ...globals.browser, ...chrome } } },
  { files: PURE, languageOptions: { globals: globals['shared-node-browser'] } },
  {
    files: MAIN_WORLD,
    languageOptions: { sourceType: 'script', globals: globals.browser },
    rules: { 'no-implicit-globals': 'error', strict: ['error', 'function'] },
  },
  {
    // The ISOLATED world (content.js) and the USER_SCRIPT worlds (skill-runtime.js, and the chat-site bridge's
    // chat-bridge.js in a world of its own; configureWorld({messaging: true}) lets each open a port to the
    // worker): classic scripts with chrome.runtime.
    files: ['extension/page/isolated/*.js', 'extension/page/user-script/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser, ...chrome } },
    rules: { 'no-implicit-globals': 'error', strict: ['error', 'function'] },
  },
  {
    // A skill's tools.js runs in the USER_SCRIPT world as the body of
    // `function (defineTool, healthCheck, config) { … }` (skills.js in the worker): those three are its API, and
    // it may return at its top level. It gets no extension API.
    files: ['skills/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      parserOptions: { ecmaFeatures: { globalReturn: true } },
      globals: { ...globals.browser, defineTool: 'readonly', healthCheck: 'readonly', config: 'readonly' },
    },
  },
];
