// Benchmark helper, not part of the flight demo itself.
//
// flights/index.html?tools=N registers N extra trivial read-only tools named
// bulk_0000, bulk_0001, ... (at least 4 digits), so benchmarks can measure how
// agents and browsers cope with many tools. Capped at 10000. They stay registered
// in both views.

const requested = Number(new URLSearchParams(location.search).get('tools'));

if (document.modelContext && Number.isInteger(requested) && requested > 0) {
  const count = Math.min(requested, 10000);
  const width = Math.max(4, String(count - 1).length);
  for (let i = 0; i < count; i++) {
    const name = `bulk_${String(i).padStart(width, '0')}`;
    document.modelContext
      .registerTool({
        name,
        description: `Benchmark filler tool number ${i}. Returns its own index.`,
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
        execute: () => ({ index: i }),
      })
      .catch((error) => console.error(`Could not register ${name}:`, error));
  }
}
