// More than the mirror keeps of one frame: 3,000 tools with 8,000-character descriptions (24 M characters).
// `?risky`: the last one, which the mirror leaves out, is high risk (destructiveHint).
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
const risky = new URLSearchParams(location.search).has('risky');
for (let i = 0; i < 3000; i += 1) {
  const name = `big_${String(i).padStart(5, '0')}`;
  const annotations = risky && i === 2999 ? { destructiveHint: true } : {};
  mc.registerTool({ name, description: `${name} `.padEnd(8000, '.'), inputSchema: none, annotations, execute: () => i });
}
