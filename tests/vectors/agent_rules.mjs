// Runs every case of agent_rules.json through the side panel chat's own modules (extension/chat/agent-core.js and
// the generated extension/chat/agent-rules.js, imported as they ship) and prints the results as JSON, section by
// section, in order: `node agent_rules.mjs VECTORS.json CHAT_DIR`. tests/test_agent_rules.py compares them
// with the expected values and with what Python gives.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [vectorsPath, chat] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(join(chat, name)).href);
const core = await load('agent-core.js');
const { PROVIDERS, TEXTS } = await load('agent-rules.js');

// {"repeat": [text, n]} is text repeated n times; {"join": [parts]} the parts joined.
const expand = (value) => {
  if (Array.isArray(value)) return value.map(expand);
  if (!value || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'repeat') return value.repeat[0].repeat(value.repeat[1]);
  if (keys.length === 1 && keys[0] === 'join') return value.join.map(expand).join('');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v)]));
};
const v = expand(JSON.parse(readFileSync(vectorsPath, 'utf8')));

let counter = 0;
process.stdout.write(JSON.stringify({
  risks: v.risks.map((c) => core.riskOf(c.annotations)),
  policies: v.policies.map((c) => core.resolvePolicy(c.name)),
  confirmations: v.confirmations.map((c) => Object.fromEntries(
    ['low', 'medium', 'high'].map((risk) => [risk, core.needsConfirmation(c.policy, risk, c.allow_high_risk)]),
  )),
  schemas: v.schemas.map((c) => core.normalizeSchema(c.schema)),
  names: v.names.map((c) => {
    const taken = new Set();
    return c.names.map((name) => {
      const mapped = core.modelName(name, taken);
      taken.add(mapped);
      return mapped;
    });
  }),
  tool_specs: v.tool_specs.map((c) => [...core.toolSpecs(c.tools, c.page_origin).values()].map((s) => ({ risk: s.risk, wrapped: s.wrapped, function: s.function }))),
  results: v.results.map((c) => {
    const body = c.template === undefined ? c.text : core.fill(TEXTS[c.template], c.values);
    return core.resultText(c.tool, c.status, body, c.annotations?.untrustedContentHint === true, c.limit);
  }),
  stops: v.stops.map((c) => (c.kind === 'note' ? core.stopNote(c.reason, c.values) : core.openCallText(c.state, c.reason, c.values))),
  providers: v.providers.map((c) => core.providerFor(c.base_url)),
  requests: v.requests.map((c) => core.requestFields(PROVIDERS[c.provider].quirks, { tools: c.tools, stream: c.stream })),
  assistant_messages: v.assistant_messages.map((c) => {
    counter = 0;
    const { calls, message } = core.assistantMessage(c.content, c.reasoning, c.calls, {
      sendReasoning: PROVIDERS[c.provider].quirks.send_reasoning, nextId: () => ++counter,
    });
    return { ids: calls.map((call) => call.id), message };
  }),
  usages: v.usages.map((c) => core.usageOf(c.raw)),
  offers: v.offers.map((c) => {
    const { tools, note } = core.offeredTools(c, (url) => c.readable.includes(core.siteOf(url)));
    return { tools: tools.map((tool) => tool.name), note };
  }),
}));
