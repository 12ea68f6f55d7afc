// Three tools registered out of their names' order, and an iframe's two; then, once the iframe registered them, if
// the address names a port (?beacon=PORT), a request to it says they are registered.
const none = { type: 'object', properties: {} };
for (const name of ['zulu', 'alpha', 'mike']) {
  document.modelContext.registerTool({ name, description: `The ${name} tool`, inputSchema: none, execute: () => name });
}
const beacon = new URLSearchParams(location.search).get('beacon');
window.addEventListener('load', () => {
  if (beacon) fetch(`http://127.0.0.1:${Number(beacon)}/registered`, { mode: 'no-cors' }).catch(() => {});
});
