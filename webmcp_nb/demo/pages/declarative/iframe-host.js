// Host page of the iframe demo: registers one read-only tool, hostInfo.
// The embedded frame-tool.html registers frameGreeting in its own document.

(() => {
  const modelContext = document.modelContext;
  if (!modelContext) {
    document.getElementById('webmcp-missing').hidden = false;
    return;
  }

  let calls = 0;

  modelContext
    .registerTool({
      name: 'hostInfo',
      title: 'Host page info',
      description: 'Describes this host page and the frame it embeds.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      execute() {
        calls += 1;
        document.getElementById('host-last-call').textContent = `${calls} call(s), last at ${new Date().toLocaleTimeString()}`;
        return {
          page: 'iframe-host',
          title: document.title,
          frames: [{ id: 'tool-frame', src: 'frame-tool.html', tool: 'frameGreeting' }],
        };
      },
    })
    .catch((error) => console.error('Could not register hostInfo:', error));
})();
