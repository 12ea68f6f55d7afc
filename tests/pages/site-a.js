// Site a's tools: a read-only greeting, and showFrame, which shows a URL (another site's page) over the top-left
// quarter of the page and answers once it has loaded there; `?frame=URL` shows one from the start.
const show = (url) => new Promise((resolve) => {
  const frame = Object.assign(document.createElement('iframe'), { src: url });
  frame.addEventListener('load', () => resolve(`showing ${url}`), { once: true });
  document.body.append(frame);
});
document.modelContext.registerTool({
  name: 'readGreeting',
  description: 'A greeting.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  execute: () => 'hello from site a',
});
document.modelContext.registerTool({
  name: 'showFrame',
  description: 'Shows a page in a frame.',
  inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  execute: ({ url }) => show(url),
});
const framed = new URLSearchParams(location.search).get('frame');
if (framed) show(framed);
