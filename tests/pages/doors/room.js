// Each room has one imperative tool of its own, named after the room.
const room = document.title;
document.modelContext.registerTool({
  name: `lookAround_${room}`, description: `Describe the ${room}.`, inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true }, execute: () => `the ${room}`,
});
