// Frames every input of a vector file with the side panel chat's own code (extension/chat/agent-core.js, imported as
// it ships) and prints the texts as JSON, in order: `node frame.mjs VECTORS.json AGENT-CORE.js`.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [vectorsPath, corePath] = process.argv.slice(2);
const core = await import(pathToFileURL(corePath).href);
const expand = (value) => {
  if (Array.isArray(value)) return value.map(expand).join('');
  if (value && typeof value === 'object') return value.repeat[0].repeat(value.repeat[1]);
  return value;
};
const vectors = JSON.parse(readFileSync(vectorsPath, 'utf8'));
process.stdout.write(JSON.stringify({
  tool_results: vectors.tool_results.map((v) => core.resultText(v.tool, v.status, expand(v.body), v.untrusted, v.limit)),
  page_contexts: vectors.page_contexts.map((v) => core.pageContext(expand(v.title), expand(v.url))),
}));
