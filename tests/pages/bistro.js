document.addEventListener('submit', (event) => {
  event.preventDefault();
  if (event.respondWith) event.respondWith(Promise.resolve(`Hello ${event.target.name.value}, see you soon.`));
});
document.modelContext.registerTool({
  name: 'menu',
  description: "Today's menu.",
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => ({ content: [{ type: 'text', text: 'Soup of the day' }] }),
});
document.modelContext.registerTool({
  name: 'kitchen',
  description: 'Ask the kitchen.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => ({ isError: true, content: [{ type: 'text', text: 'kitchen closed' }] }),
});
document.modelContext.registerTool({
  name: 'waitlist',
  description: 'How long the waitlist is (the host takes a moment to look).',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => new Promise((resolve) => setTimeout(() => resolve({ waiting: 2 }), 1500)),
});
