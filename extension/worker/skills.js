// Skills: tools the user gives pages that lack them. A skill's tools.js runs in the USER_SCRIPT world
// through chrome.userScripts: it sees the page's DOM but not the page's JavaScript, the page's CSP and
// Trusted Types do not apply to it, and page scripts cannot reach it. It is registered for the skill's URL
// patterns (auto-injection on every matching load) and executed at once in matching open tabs and in tabs
// it was injected into by hand. Enable/disable and per-tool disable only change what the mirror shows.
import { ErrorCode, Method } from '../shared/protocol.js';
import { RelayError, isConnected, notify } from './relay.js';
import { expectReport, flushDirty, markAllDirty, tabs, tellEndpoints } from './mirror.js';
import { requireTop } from './sites.js';

const RUNTIME = [{ file: 'page/main/bridge-serialize.js' }, { file: 'page/user-script/skill-runtime.js' }];
const installed = new Map(); // name → {name, version, description, match, priority, config, source, enabled, disabledTools, tabs}
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

// Who hears that the installed skills changed (worker.js connects the side panels' hub), so that this module
// imports nothing above it.
const wiring = { changed: () => {} };
export const wireSkills = (callbacks) => Object.assign(wiring, callbacks);

export function skillToolVisible(skillName, toolName) {
  const skill = installed.get(skillName);
  return !!skill && skill.enabled && !skill.disabledTools.includes(toolName);
}

export function skillsState() {
  return Array.from(installed.values(), ({ source, ...rest }) => rest);
}

async function userScriptsAvailable() {
  try {
    await chrome.userScripts.getScripts();
    return true;
  } catch (_) {
    return false;
  }
}

// Chrome's "Allow User Scripts" toggle can change at any time without restarting this worker (the API appears
// and disappears). Each check configures the USER_SCRIPT world once it is on (its messaging is what lets a
// skill's runtime answer) and tells the relay when the state changed; hello carries it too.
let reported = null;
let worldReady = false;
export async function checkUserScripts({ announce = true } = {}) {
  const available = await userScriptsAvailable();
  if (available && !worldReady) {
    await chrome.userScripts.configureWorld({ messaging: true });
    worldReady = true;
  }
  if (!available) worldReady = false;
  if (announce && available !== reported && isConnected()) notify(Method.BROWSER_UPDATED, { userScripts: available });
  reported = available;
  return available;
}

const USER_SCRIPTS_OFF = 'Skills need the "Allow User Scripts" toggle of the webmcp-nb extension: open '
  + `chrome://extensions/?id=${chrome.runtime.id} and turn it on (Chrome 138+; older Chrome: Developer mode).`;

export async function requireUserScripts() {
  if (!(await checkUserScripts())) throw new RelayError(ErrorCode.PERMISSION_DENIED, USER_SCRIPTS_OFF);
}

async function persist() {
  await chrome.storage.session.set({ skills: [...installed.values()] });
  notify(Method.SKILLS_UPDATED, { skills: skillsState() });
  wiring.changed();
}

export async function restoreSkills() {
  const { skills = [] } = await chrome.storage.session.get('skills');
  for (const skill of skills) installed.set(skill.name, skill);
  await checkUserScripts({ announce: false });
}

// The code that runs after the runtime: tools.js inside a function whose parameters are its API.
// `syncId` tags the runtime's report of this injection, so the worker can wait for it.
function code(skill, syncId) {
  const meta = { name: skill.name, version: skill.version, priority: skill.priority, config: skill.config, syncId };
  return `globalThis.__webmcpNbSkills.define(${JSON.stringify(meta)}, function (defineTool, healthCheck, config) {\n`
    + `${skill.source}\n});`;
}

function scriptFor(skill) {
  return { id: `skill:${skill.name}`, matches: skill.match, js: [...RUNTIME, { code: code(skill) }], runAt: 'document_idle', world: 'USER_SCRIPT' };
}

async function register(skill) {
  const script = scriptFor(skill);
  await chrome.userScripts.unregister({ ids: [script.id] }).catch(() => {});
  if (skill.match.length) await chrome.userScripts.register([script]);
}

// Runs the skill in a tab now (in its top frame's document `documentId`, if given) and resolves once the mirror
// has the tools it reported. `broken` marks a failure of the machinery (the script did not run, or its runtime
// never answered), not a health verdict.
async function inject(skill, tabId, documentId) {
  const report = expectReport(tabId);
  try {
    const [injection] = await chrome.userScripts.execute({
      target: documentId ? { tabId, documentIds: [documentId] } : { tabId },
      js: [...RUNTIME, { code: code(skill, report.syncId) }],
      world: 'USER_SCRIPT',
    });
    if (injection?.error) return { tabId, ok: false, reason: String(injection.error), tools: [], broken: true };
    await report.arrived;
    return { tabId, ...(injection?.result ?? { ok: false, reason: 'the skill runtime gave no answer', tools: [], broken: true }) };
  } catch (error) {
    return { tabId, ok: false, reason: String(error?.message ?? error), tools: [], broken: true };
  } finally {
    report.cancel();
  }
}

async function matchingTabs(patterns) {
  if (!patterns.length) return [];
  try {
    return (await chrome.tabs.query({ url: patterns })).map((t) => t.id);
  } catch (error) {
    throw new RelayError(ErrorCode.INVALID_ARGS, `Bad URL pattern in match: ${error.message}`);
  }
}

// Put back what was installed under `name` before a failed install (or nothing), in `targets` too.
async function restore(name, previous, targets) {
  if (previous) {
    installed.set(name, previous);
    await register(previous).catch(() => {});
    await Promise.all([...targets].map((id) => inject(previous, id)));
  } else {
    installed.delete(name);
    await chrome.userScripts.unregister({ ids: [`skill:${name}`] }).catch(() => {});
    tellEndpoints({ type: 'remove', skill: name });
  }
  markAllDirty();
  flushDirty();
}

export const skillHandlers = {
  // Install or replace a skill, then run it in every open tab it matches and in `tabId` if given. With `site` (a
  // model's injection: the site its grant check allowed), it runs in `tabId` only in the document that shows
  // that site now, and nothing is installed when the tab shows another.
  async [Method.SKILL_INSTALL]({ skill, tabId, site }) {
    await requireUserScripts();
    if (!NAME.test(skill?.name ?? '')) throw new RelayError(ErrorCode.INVALID_ARGS, `Bad skill name ${JSON.stringify(skill?.name)}`);
    const bound = site === undefined || tabId === undefined ? undefined : await requireTop(tabId, site, 'the skill was not injected');
    const previous = installed.get(skill.name);
    const entry = {
      name: skill.name,
      version: String(skill.version ?? '0.0.0'),
      description: String(skill.description ?? ''),
      match: Array.isArray(skill.match) ? skill.match.map(String) : [],
      priority: Number(skill.priority ?? 0),
      config: skill.config ?? {},
      source: String(skill.source ?? ''),
      enabled: previous?.enabled ?? true,
      disabledTools: previous?.disabledTools ?? [],
      tabs: [...new Set([...(previous?.tabs ?? []), ...(tabId === undefined ? [] : [tabId])])].filter((id) => tabs.has(id)),
    };
    const targets = new Set([...(await matchingTabs(entry.match)), ...entry.tabs]);
    installed.set(entry.name, entry);
    let results;
    try {
      await register(entry);
      results = await Promise.all([...targets].map((id) => inject(entry, id, id === tabId ? bound : undefined)));
    } catch (error) {
      await restore(entry.name, previous, targets);
      throw error;
    }
    const wanted = results.find((r) => r.tabId === tabId);
    if (wanted?.broken) { // the skill could not run where it was asked to: leave nothing half-installed
      await restore(entry.name, previous, targets);
      throw new RelayError(ErrorCode.SKILL_UNHEALTHY, `The skill ${entry.name} could not run in tab ${tabId}: ${wanted.reason}`);
    }
    flushDirty(); // the tabs' new tools reach clients before this reply
    await persist();
    return { skill: entry.name, results };
  },

  async [Method.SKILL_UNINSTALL]({ name }) {
    if (!installed.delete(name)) throw new RelayError(ErrorCode.INVALID_ARGS, `No skill named ${JSON.stringify(name)}`);
    if (await userScriptsAvailable()) await chrome.userScripts.unregister({ ids: [`skill:${name}`] }).catch(() => {});
    tellEndpoints({ type: 'remove', skill: name });
    markAllDirty();
    await persist();
    return {};
  },

  // Show or hide a skill or some of its tools; nothing is re-injected.
  async [Method.SKILL_UPDATE]({ name, enabled, disabledTools }) {
    const skill = installed.get(name);
    if (!skill) throw new RelayError(ErrorCode.INVALID_ARGS, `No skill named ${JSON.stringify(name)}`);
    if (typeof enabled === 'boolean') skill.enabled = enabled;
    if (Array.isArray(disabledTools)) skill.disabledTools = disabledTools.map(String);
    markAllDirty();
    await persist();
    return skillsState().find((s) => s.name === name);
  },
};

// A skill injected into a tab by hand follows that tab to its next documents; pages its match patterns
// cover get it from the registered user script instead.
chrome.webNavigation.onCompleted.addListener(async ({ tabId, frameId }) => {
  if (frameId !== 0) return;
  for (const skill of installed.values()) {
    if (!skill.tabs.includes(tabId)) continue;
    if (!(await matchingTabs(skill.match).catch(() => [])).includes(tabId)) await inject(skill, tabId);
  }
  flushDirty();
});
