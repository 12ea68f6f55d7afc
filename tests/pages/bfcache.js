// Served cacheable so Chrome keeps it in the back/forward cache; `restored` says whether it came back from it.
let restored = false;
window.addEventListener('pageshow', (event) => { if (event.persisted) restored = true; });
document.modelContext.registerTool({
  name: 'wasRestored', description: 'Whether this page came back from the back/forward cache',
  inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true },
  execute: () => restored,
});
document.modelContext.registerTool({
  name: 'historyLength', description: 'history.length', inputSchema: { type: 'object', properties: {} },
  execute: () => history.length,
});
