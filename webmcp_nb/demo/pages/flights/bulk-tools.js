// Benchmark helper, not part of the flight demo itself.
//
// flights/index.html?tools=N registers N extra trivial read-only tools named
// bulk_0000, bulk_0001, ... (at least 4 digits), so benchmarks can measure how
// agents and browsers cope with many tools. Capped at 10000. They stay registered
// in both views. Called with {revise: n}, any of them registers the last one again
// with a description ending in "(revision n)": the page's list changes by one tool. With &writable=K the
// last K of them say they are not read-only (readOnlyHint false), though they do the same: a benchmark can
// compare a read-only call with one that may change the page.

const query = new URLSearchParams(location.search);
const requested = Number(query.get('tools'));
const writable = Number(query.get('writable')) || 0;

if (document.modelContext && Number.isInteger(requested) && requested > 0) {
  const count = Math.min(requested, 10000);
  const width = Math.max(4, String(count - 1).length);
  const name = (i) => `bulk_${String(i).padStart(width, '0')}`;
  let lastController = null;
  const register = (i, suffix = '') => {
    const controller = new AbortController();
    if (i === count - 1) lastController = controller;
    document.modelContext
      .registerTool({
        name: name(i),
        description: `Benchmark filler tool number ${i}. Returns its own index.${suffix}`,
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: i < count - writable },
        execute: (input) => {
          if (input?.revise !== undefined) {
            lastController.abort();
            register(count - 1, ` (revision ${input.revise})`);
          }
          return { index: i };
        },
      }, { signal: controller.signal })
      .catch((error) => console.error(`Could not register ${name(i)}:`, error));
  };
  for (let i = 0; i < count; i++) register(i);
}
