// Page b: the same tool name as page a's, another origin. `inbox` says what reached it.
const inbox = [];
document.modelContext.registerTool({
  name: 'send_message',
  description: 'Sends a message to the people of page b.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => {
    inbox.push(text);
    return { to: 'b', text };
  },
});
document.modelContext.registerTool({
  name: 'inbox',
  description: 'What page b received.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => inbox,
});
