// Describes every event of a vector file with the side panel's own code (extension/sidepanel/describe.js, as it
// ships) and prints [describe, actor, family] per event as JSON: `node describe.mjs VECTORS.json DESCRIBE.js`.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [vectorsPath, modulePath] = process.argv.slice(2);
const words = await import(pathToFileURL(modulePath).href);
const { events } = JSON.parse(readFileSync(vectorsPath, 'utf8'));
process.stdout.write(JSON.stringify(events.map((e) => [words.describe(e), words.actor(e), words.family(e.kind)])));
