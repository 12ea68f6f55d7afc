// Tools that come, go and change on request: `change` removes tools, then (a task later, once WebMCP let them go)
// adds tools and re-registers others with a new description. It answers with the names the page's WebMCP lists
// (iframes' tools too): what the page itself sees, beside what the extension mirrors.
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
const controllers = new Map();

function unregister(name) {
  controllers.get(name)?.abort();
  controllers.delete(name);
}

function register(name, description = `tool ${name}`) {
  const controller = new AbortController();
  controllers.set(name, controller);
  mc.registerTool({ name, description, inputSchema: none, execute: () => name }, { signal: controller.signal });
}

mc.registerTool({
  name: 'change',
  description: 'Adds, removes or redescribes tools',
  inputSchema: {
    type: 'object',
    properties: {
      add: { type: 'array', items: { type: 'string' } },
      remove: { type: 'array', items: { type: 'string' } },
      describe: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  async execute({ add = [], remove = [], describe = {} }) {
    for (const name of [...remove, ...Object.keys(describe)]) unregister(name);
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (const name of add) register(name);
    for (const [name, text] of Object.entries(describe)) register(name, text);
    return (await mc.getTools()).map((tool) => tool.name);
  },
});
register('alpha');
register('beta');
