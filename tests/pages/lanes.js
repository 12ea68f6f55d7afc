// Tools for the lane tests: results in any script, calls that finish out of order, and a page script that
// knocks on the relay's /lane path itself (it carries this page's Origin, but it has no key).
const mc = document.modelContext;
const text = { type: 'object', properties: { text: { type: 'string' } } };
mc.registerTool({ name: 'echo', description: 'Returns its text', inputSchema: text, execute: ({ text }) => ({ text }) });
mc.registerTool({
  name: 'later', description: 'Answers with its tag after ms milliseconds',
  inputSchema: { type: 'object', properties: { ms: { type: 'number' }, tag: { type: 'string' } } },
  execute: ({ ms, tag }) => {
    window.waiting = (window.waiting ?? 0) + 1;
    return new Promise((resolve) => setTimeout(() => resolve({ tag }), ms));
  },
});
mc.registerTool({
  name: 'waiting', description: 'How many later calls reached the page', inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true }, execute: () => window.waiting ?? 0,
});
mc.registerTool({
  name: 'knock', description: 'Opens url offering the given subprotocols, reports how it ended',
  inputSchema: { type: 'object', properties: { url: { type: 'string' }, protocols: { type: 'array' } } },
  execute: ({ url, protocols }) => new Promise((resolve) => {
    const ws = new WebSocket(url, protocols);
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ id: 'l1', ok: true, n: 2 }) + '\n{}');
    };
    ws.onclose = (event) => resolve({ opened, code: event.code });
  }),
});
