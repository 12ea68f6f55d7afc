// A page with its own tool `greet`; a skill that also defines `greet` must not shadow it.
document.modelContext.registerTool({
  name: 'greet', description: "The page's own greeting", inputSchema: { type: 'object', properties: {} },
  execute: () => 'from the page',
});
