// One tool of each risk level: readNote (read-only: low), setNote (changes the page: medium), sendPayment
// (destructiveHint, and consequentialHint, which native WebMCP keeps: high) and publishNote (declares risk
// "high", which native WebMCP drops). What ran is on the page, for tests to read.
const mc = document.modelContext;
const none = { type: 'object', properties: {} };
const note = document.getElementById('note');
const payments = document.getElementById('payments');
mc.registerTool({
  name: 'readNote', description: 'The note', inputSchema: none, annotations: { readOnlyHint: true },
  execute: () => ({ note: note.textContent }),
});
mc.registerTool({
  name: 'setNote', description: 'Replaces the note',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => { note.textContent = text; return { note: text }; },
});
mc.registerTool({
  name: 'sendPayment', description: 'Sends money', annotations: { destructiveHint: true, consequentialHint: true },
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  execute: ({ amount }) => { payments.append(Object.assign(document.createElement('li'), { textContent: String(amount) })); return { sent: amount }; },
});
mc.registerTool({
  name: 'publishNote', description: 'Publishes the note', inputSchema: none, annotations: { risk: 'high' },
  execute: () => ({ published: note.textContent }),
});
