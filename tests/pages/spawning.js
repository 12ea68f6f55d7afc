// A read-only tool that registers tools, as a page may do lazily: `spawn` registers `count` tools s0, s1, …, each
// described by `size` characters and then `label`, in place of those of the same name. With many long descriptions
// their report takes longer to reach Python than an MCP client takes to ask for the list again. And `scalar`, whose
// input schema is a string rather than an object (a tool webmcp-nb lists but cannot call).
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
const controllers = new Map();

mc.registerTool({
  name: 'spawn',
  description: 'Registers tools',
  annotations: { readOnlyHint: true },
  inputSchema: {
    type: 'object',
    properties: { count: { type: 'integer' }, size: { type: 'integer' }, label: { type: 'string' } },
  },
  execute({ count = 1, size = 10, label = '' }) {
    for (let i = 0; i < count; i += 1) {
      const name = `s${i}`;
      controllers.get(name)?.abort();
      const controller = new AbortController();
      controllers.set(name, controller);
      const description = `${'x'.repeat(size)} ${label}`;
      mc.registerTool({ name, description, inputSchema: none, execute: () => i }, { signal: controller.signal });
    }
    return count;
  },
});
mc.registerTool({ name: 'scalar', description: 'Takes a bare string', inputSchema: { type: 'string' }, execute: (x) => x });
