// Frames every input of a vector file with the side panel's own code (extension/sidecar.js, imported as it
// ships) and prints the texts as JSON, in order: `node frame.mjs VECTORS.json SIDECAR.js`.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [vectorsPath, sidecarPath] = process.argv.slice(2);
const sidecar = await import(pathToFileURL(sidecarPath).href);
const expand = (value) => {
  if (Array.isArray(value)) return value.map(expand).join('');
  if (value && typeof value === 'object') return value.repeat[0].repeat(value.repeat[1]);
  return value;
};
const vectors = JSON.parse(readFileSync(vectorsPath, 'utf8'));
process.stdout.write(JSON.stringify({
  tool_results: vectors.tool_results.map((v) => sidecar.resultText(v.tool, v.status, expand(v.body), v.untrusted, v.limit)),
  page_contexts: vectors.page_contexts.map((v) => sidecar.pageContext(expand(v.title), expand(v.url))),
}));
