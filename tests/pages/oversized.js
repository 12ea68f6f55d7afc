// More than the mirror keeps of one frame: 3,000 tools with 8,000-character descriptions (24 M characters).
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
for (let i = 0; i < 3000; i += 1) {
  const name = `big_${String(i).padStart(5, '0')}`;
  mc.registerTool({ name, description: `${name} `.padEnd(8000, '.'), inputSchema: none, execute: () => i });
}
