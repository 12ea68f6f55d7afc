// Registers lookupOrder, which the page (bad.html) registers too: lint's name-duplicate.
document.modelContext.registerTool({
  name: 'lookupOrder',
  description: 'Looks up an order in the frame.',
  inputSchema: { type: 'object', properties: { order: { type: 'string', description: 'The order number.' } } },
  annotations: { readOnlyHint: true },
  execute: () => ({ found: false }),
});
