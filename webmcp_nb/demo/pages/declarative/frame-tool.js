// Runs inside the iframe of iframe-host.html: registers frameGreeting in this frame's document.

(() => {
  const modelContext = document.modelContext;
  if (!modelContext) {
    document.getElementById('webmcp-missing').hidden = false;
    return;
  }

  modelContext
    .registerTool({
      name: 'frameGreeting',
      title: 'Greeting from the frame',
      description: 'Returns a greeting for the given name, produced inside the embedded frame.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, description: 'Who to greet.' } },
        required: ['name'],
      },
      annotations: { readOnlyHint: true },
      execute(input) {
        const name = typeof input?.name === 'string' && input.name.trim() ? input.name.trim() : 'stranger';
        const greeting = `Hello, ${name} from the frame`;
        document.getElementById('last-greeting').textContent = greeting;
        return greeting;
      },
    })
    .catch((error) => console.error('Could not register frameGreeting:', error));
})();
