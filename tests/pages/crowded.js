// A page with three tools of its own, registered first, and 10,000 fillers after them. Native getTools()
// lists by name, and every filler's name sorts before the page's own.
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
let stored = null;
mc.registerTool({ name: 'getter', description: 'Returns what setter stored', inputSchema: none, execute: () => ({ stored }) });
mc.registerTool({
  name: 'setter', description: 'Stores a value', execute: ({ value }) => { stored = value; return { stored }; },
  inputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
});
mc.registerTool({ name: 'whoami', description: 'Names the page', inputSchema: none, execute: () => document.title });
for (let i = 0; i < 10000; i += 1) {
  mc.registerTool({ name: `filler_${String(i).padStart(5, '0')}`, description: `filler ${i}`, inputSchema: none, execute: () => i });
}
